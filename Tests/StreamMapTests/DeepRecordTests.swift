import Foundation
import Testing
@testable import StreamMap

/// Deep records must not overflow small stacks anywhere: parse, map, write and free.
@Suite("Deep records on a small stack")
struct DeepRecordTests {
    /// Runs `body` on a thread with a 512 KiB stack (as small as common thread pools use) and waits.
    func onSmallStack(_ body: @escaping @Sendable () -> Void) {
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            body()
            done.signal()
        }
        thread.stackSize = 512 * 1024
        thread.start()
        done.wait()
    }

    @Test func treeEngineMapsAndFreesTenThousandLevels() {
        let box = ResultBox()
        onSmallStack {
            let depth = 5_000  // an object and an array per step: 10 000 levels
            let record = Array((String(repeating: "{\"a_b\":[", count: depth) + "1" + String(repeating: "]}", count: depth)).utf8)
            let engine = TreeEngine(mapper: .keys(.foundationCamel, deep: true))
            var writer = JSONWriter()
            let outcome = record.withUnsafeBytes { engine.map(record: $0, into: &writer) }
            box.set(outcome, writer.bytes.count, String(decoding: writer.bytes.prefix(16), as: UTF8.self))
        }
        #expect(box.outcome == .mapped(warnings: []))
        #expect(box.prefix == "{\"aB\":[{\"aB\":[{\"")
        #expect(box.count == 5_000 * 9 + 1)
    }

    @Test func freeingAMillionLevelsBuiltInCodeIsSafe() {
        onSmallStack {
            var v = JSONValue.null
            for _ in 0..<1_000_000 { v = .array([v]) }
            JSONValue.release(consume v)
        }
    }
}

final class ResultBox: @unchecked Sendable {
    private let lock = NSLock()
    private(set) var outcome: RecordOutcome?
    private(set) var count = 0
    private(set) var prefix = ""
    func set(_ o: RecordOutcome, _ c: Int, _ p: String) {
        lock.lock()
        outcome = o
        count = c
        prefix = p
        lock.unlock()
    }
}
