import Foundation
import Testing
import StreamMapTestSupport
#if canImport(Glibc)
import Glibc
#endif

@testable import StreamMap

/// `Mapper.mappedRecords(inFile:options:)`: a file's records as an asynchronous sequence, on Linux as anywhere —
/// the results of `mapRecords(inFile:)`, in order, with its errors; leaving the loop or cancelling stops the reading.
@Suite("Async file records")
struct AsyncFileRecordsTests {
    static let mapper = Mapper.object { Field("id", to: "id", .integer) }

    /// `n` records, every seventh rejected (a string id).
    static func text(_ n: Int) -> [UInt8] {
        Array((0..<n).map { i in i % 7 == 3 ? "{\"id\":\"x\(i)\"}\n" : "{\"id\":\(i),\"pad\":\"\(String(repeating: "p", count: i % 40))\"}\n" }.joined().utf8)
    }

    static func collect(_ path: String, _ options: MappingOptions = .init()) async throws -> [String] {
        var seen: [String] = []
        for try await result in mapper.mappedRecords(inFile: path, options: options) { seen.append("\(result)") }
        return seen
    }

    @Test func theSameResultsAsMapRecordsInFile() async throws {
        let text = Self.text(20_000)  // more results than wait for the consumer at once
        let plain = try TestScratch.file(text, suffix: ".ndjson")
        let gzip = try TestScratch.file(Compressing.compressed(text, .gzip), suffix: ".ndjson.gz")
        var expected: [String] = []
        let counts = try Self.mapper.mapRecords(inFile: plain) { expected.append("\($0)") }
        #expect(counts.recordsIn == 20_000 && counts.recordsRejected == (0..<20_000).filter { $0 % 7 == 3 }.count)
        #expect(expected.count == 20_000 && expected.count > AsyncFileRecords.bufferedResults)
        for path in [plain, gzip] {
            for jobs in [1, 2] {
                #expect(try await Self.collect(path, MappingOptions(jobs: jobs)) == expected, "\(path) jobs \(jobs)")
            }
        }
        // Each iterator reads the file anew.
        let sequence = Self.mapper.mappedRecords(inFile: plain)
        var first = sequence.makeAsyncIterator(), second = sequence.makeAsyncIterator()
        #expect(try await first.next().map { "\($0)" } == expected[0])
        #expect(try await first.next().map { "\($0)" } == expected[1])
        #expect(try await second.next().map { "\($0)" } == expected[0])
    }

    @Test func errorsComeAfterTheResultsBeforeThem() async throws {
        await #expect(throws: InputError.self) { _ = try await Self.collect("/nonexistent/streammap/in.ndjson") }
        // A gzip file cut short: its first records, then the fault.
        let packed = Compressing.compressed(Self.text(5000), .gzip)
        let cut = try TestScratch.file(Array(packed.prefix(packed.count / 2)), suffix: ".gz")
        var results = 0
        var thrown: (any Error)?
        do {
            for try await _ in Self.mapper.mappedRecords(inFile: cut) { results += 1 }
        } catch {
            thrown = error
        }
        #expect(results > 100 && results < 5000)
        #expect((thrown as? CompressedInputError)?.isTruncated == true, "\(String(describing: thrown))")
        // An empty file: no results, no error.
        #expect(try await Self.collect(try TestScratch.file([], suffix: ".ndjson")).isEmpty)
    }

    /// Leaving the loop early stops the reading thread: the file (a FIFO here) is closed, so its writer, still
    /// writing, gets EPIPE instead of blocking for ever.
    @Test func leavingTheLoopStopsTheReading() async throws {
        signal(SIGPIPE, SIG_IGN)
        let fifo = TestScratch.root + "/\(UUID().uuidString).fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let writeError = WriteOutcome()
        Thread.detachNewThread {
            let fd = open(fifo, O_WRONLY)
            let line = Array("{\"id\":1}\n".utf8)
            let block = Array(repeating: line, count: 1000).flatMap { $0 }
            while fd >= 0 {
                let n = block.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
                if n < 0 {
                    writeError.set(errno)
                    break
                }
            }
            close(fd)
        }
        var taken = 0
        for try await _ in Self.mapper.mappedRecords(inFile: fifo) {
            taken += 1
            if taken == 10 { break }
        }
        #expect(taken == 10)
        #expect(await Self.eventually { writeError.value != 0 }, "the reading thread did not stop")
        #expect(writeError.value == EPIPE)
    }

    /// Results are handed over after each read, not held back for a batch: three records written to a FIFO reach
    /// the consumer while the writer still holds it open (and waits for them).
    @Test func aTrickleIsNotHeldBack() async throws {
        let fifo = TestScratch.root + "/\(UUID().uuidString).fifo"
        #expect(mkfifo(fifo, 0o600) == 0)
        let seen = DispatchSemaphore(value: 0)
        let gotThem = WriteOutcome()
        Thread.detachNewThread {
            let fd = open(fifo, O_WRONLY)
            let first = Array("{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n".utf8)
            _ = first.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            // The consumer runs on a thread of its own (below), so a busy cooperative pool cannot delay it.
            gotThem.set(seen.wait(timeout: .now() + 300) == .success ? 1 : 0)
            let last = Array("{\"id\":4}\n".utf8)
            _ = last.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
        }
        // With the whole suite running (under ASan on CI), the pool's threads may all be busy for minutes: the loop
        // runs on a serial queue of its own instead, so the wait above measures the reading, not the pool.
        let ids = try await withTaskExecutorPreference(QueueExecutor()) {
            var ids: [String] = []
            for try await result in Self.mapper.mappedRecords(inFile: fifo) {
                if case .mapped(let record) = result { ids.append(record.text) }
                if ids.count == 3 { seen.signal() }
            }
            return ids
        }
        #expect(ids == [#"{"id":1}"#, #"{"id":2}"#, #"{"id":3}"#, #"{"id":4}"#])
        #expect(gotThem.value == 1, "the first three records came only after the writer gave up waiting")
    }

    /// A cancelled task's `next()` throws `CancellationError` (at the next batch), and the reading stops. The task
    /// cancels itself after its first result, so the test does not depend on when the pool's threads get to run.
    @Test func cancellingTheTaskStops() async throws {
        let path = try TestScratch.file(Self.text(50_000), suffix: ".ndjson")
        let task = Task {
            var n = 0
            for try await _ in Self.mapper.mappedRecords(inFile: path) {
                n += 1
                if n == 1 { withUnsafeCurrentTask { $0?.cancel() } }
            }
            return n
        }
        switch await task.result {
        case .failure(let error): #expect(error is CancellationError, "\(error)")
        case .success(let n): Issue.record("the iteration ran to the end (\(n) results) after its task was cancelled")
        }
    }

    /// Whether `condition` holds within `seconds`, asked every 10 ms (without blocking a thread of the pool).
    static func eventually(seconds: Double = 300, _ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while !condition() {
            if Date() > deadline { return false }
            try? await Task.sleep(nanoseconds: 10_000_000)
        }
        return true
    }

    /// Runs a task's jobs on a serial dispatch queue (threads of their own, outside the cooperative pool).
    final class QueueExecutor: TaskExecutor {
        let queue = DispatchQueue(label: "AsyncFileRecordsTests.consumer")
        func enqueue(_ job: consuming ExecutorJob) {
            let job = UnownedJob(job)
            let executor = asUnownedTaskExecutor()
            queue.async { job.runSynchronously(on: executor) }
        }
    }

    final class WriteOutcome: @unchecked Sendable {
        private let lock = NSLock()
        private var code: Int32 = 0
        func set(_ value: Int32) { lock.withLock { code = value } }
        var value: Int32 { lock.withLock { code } }
    }
}
