// AsyncFileRecords.swift — a file's records as an asynchronous sequence: `mapRecords(inFile:)` on a thread of its
// own, its results handed to the consumer in order, with back-pressure. Works wherever pthreads do (Linux has no
// `FileHandle.bytes` or `URL.resourceBytes`).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension Mapper {
    /// The records of the file at `path` as an asynchronous sequence of results, in input order: what
    /// `mapRecords(inFile:options:_:)` gives (compressed files decompressed, `options.jobs` threads mapping), read
    /// and mapped on a thread of its own while the consumer awaits them.
    ///
    /// ```swift
    /// for try await result in mapper.mappedRecords(inFile: "events.ndjson.gz") {
    ///     if case .mapped(let record) = result { print(record.text) }
    /// }
    /// ```
    ///
    /// Reading starts at the first `next()`. At most `AsyncFileRecords.bufferedResults` results wait for the
    /// consumer: a slow consumer slows the reading down, so memory stays bounded whatever the file's size.
    /// The iteration throws what `mapRecords(inFile:)` throws (`InputError`, `CompressedInputError`,
    /// `UnsupportedEncodingError`) after the results before the failure. Leaving the loop early, or cancelling the
    /// task, stops the reading (a cancelled task's `next()` throws `CancellationError`).
    public func mappedRecords(inFile path: String, options: MappingOptions = .init()) -> AsyncFileRecords {
        AsyncFileRecords(mapper: self, path: path, options: options)
    }
}

/// A file's mapped records as an asynchronous sequence (see `Mapper.mappedRecords(inFile:options:)`). Each
/// iterator reads the file anew.
public struct AsyncFileRecords: AsyncSequence, Sendable {
    /// Each record's result: mapped or rejected, with its location.
    public typealias Element = RecordResult

    /// Results read ahead of the consumer, at most.
    public static let bufferedResults = 4096

    let mapper: Mapper
    let path: String
    let options: MappingOptions

    /// An iterator that reads the file from its start (at its first `next()`).
    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: self) }

    /// Reads the file on a thread of its own and hands its results on in order; dropped, it stops the thread.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let source: AsyncFileRecords
        private var reading: Reading?
        private var taken: [RecordResult] = []
        private var position = 0
        private var ended = false

        init(source: AsyncFileRecords) { self.source = source }

        /// The next record's result; nil after the last. Throws the input's error after the results before it,
        /// and `CancellationError` once the task is cancelled.
        public mutating func next() async throws -> RecordResult? {
            if position < taken.count {
                defer { position += 1 }
                return taken[position]
            }
            guard !ended else { return nil }
            if reading == nil { reading = Reading(source) }
            let channel = reading!.channel
            let batch: ResultChannel.Batch
            do {
                batch = try await channel.take()
            } catch {
                ended = true
                reading = nil
                throw error
            }
            switch batch {
            case .results(let results):
                taken = results
                position = 1
                return results[0]
            case .end:
                ended = true
                reading = nil
                return nil
            }
        }
    }

    /// The reading thread of one iterator; let go (the iterator ended or was dropped), it stops the thread.
    final class Reading: Sendable {
        let channel = ResultChannel(capacity: AsyncFileRecords.bufferedResults)
        /// Results the reading thread gathers before it hands them over (sooner at the end of each read).
        static let batchResults = 256

        init(_ source: AsyncFileRecords) {
            let channel = channel
            var thread = WorkerThreads()
            let failed = thread.start(1) {
                // Results go over in batches (at the latest after each read), not one by one: one wake-up of the
                // consumer per batch.
                var batch: [RecordResult] = []
                batch.reserveCapacity(Self.batchResults)
                func handOver() throws {
                    guard !batch.isEmpty else { return }
                    guard channel.put(batch) else { throw CancellationError() }
                    batch.removeAll(keepingCapacity: true)
                }
                do {
                    try source.mapper.mapRecords(inFile: source.path, options: source.options,
                                                 stopRequested: { channel.isCancelled }, afterRead: { try? handOver() }) { result in
                        batch.append(result)
                        if batch.count >= Self.batchResults { try handOver() }
                    }
                    try handOver()
                    channel.finish(throwing: nil)
                } catch {
                    try? handOver()
                    channel.finish(throwing: error)
                }
            }
            if let failed {
                channel.finish(throwing: InputError(input: source.path, code: failed, bytesRead: 0))
            } else {
                thread.detach()
            }
        }

        deinit { channel.cancel() }
    }
}

/// Results passed from one producing thread to one asynchronous consumer, in order: the producer blocks while
/// `capacity` results wait; the consumer takes all that wait at once, or suspends until there are some.
final class ResultChannel: @unchecked Sendable {
    // @unchecked: every stored var is read and written only in `monitor.withLock` (whose condition is "room freed").

    enum Batch {
        case results([RecordResult])
        case end
    }

    private let monitor = Monitor()
    private var queue: [RecordResult] = []
    private let capacity: Int
    private var waiting: CheckedContinuation<Void, Never>?
    private var finished = false
    private var failure: (any Error)?
    private var cancelled = false

    init(capacity: Int) { self.capacity = max(1, capacity) }

    /// Whether the consumer is gone.
    var isCancelled: Bool { monitor.withLock { cancelled } }

    /// Producer: adds results, then waits while the channel is full; false once the consumer is gone.
    func put(_ results: [RecordResult]) -> Bool {
        let (accepted, consumer, full) = monitor.withLock { () -> (Bool, CheckedContinuation<Void, Never>?, Bool) in
            guard !cancelled else { return (false, nil, false) }
            queue.append(contentsOf: results)
            defer { waiting = nil }
            return (true, waiting, queue.count >= capacity)
        }
        consumer?.resume()
        guard accepted else { return false }
        guard full else { return true }
        return monitor.withLock {
            while queue.count >= capacity && !cancelled { monitor.wait() }
            return !cancelled
        }
    }

    /// Producer: no more results; `error` is thrown after them (nil: the input ended).
    func finish(throwing error: (any Error)?) {
        let consumer = monitor.withLock { () -> CheckedContinuation<Void, Never>? in
            finished = true
            failure = error
            defer { waiting = nil }
            return waiting
        }
        consumer?.resume()
    }

    /// Consumer: gone; a waiting producer returns (its `put` says false).
    func cancel() {
        let consumer = monitor.withLock { () -> CheckedContinuation<Void, Never>? in
            cancelled = true
            monitor.broadcast()
            defer { waiting = nil }
            return waiting
        }
        consumer?.resume()
    }

    /// What the consumer finds: results, the end (or an error to throw), or nothing yet.
    private enum Found {
        case batch(Batch)
        case error(any Error)
        case nothing
    }

    /// Consumer: every result waiting (never an empty batch), or the end; throws the producer's error after its
    /// results, and `CancellationError` when the task is cancelled.
    func take() async throws -> Batch {
        try Task.checkCancellation()
        while true {
            let found = monitor.withLock { () -> Found in
                if !queue.isEmpty {
                    var results: [RecordResult] = []
                    swap(&results, &queue)
                    monitor.broadcast()
                    return .batch(.results(results))
                }
                guard finished || cancelled else { return .nothing }
                let error = cancelled ? CancellationError() : failure
                failure = nil
                return error.map(Found.error) ?? .batch(.end)
            }
            switch found {
            case .batch(let batch): return batch
            case .error(let error): throw error
            case .nothing: break
            }
            await withTaskCancellationHandler {
                await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                    let ready = monitor.withLock { () -> Bool in
                        if !queue.isEmpty || finished || cancelled { return true }
                        waiting = continuation
                        return false
                    }
                    if ready { continuation.resume() }
                }
            } onCancel: {
                cancel()
            }
        }
    }
}
