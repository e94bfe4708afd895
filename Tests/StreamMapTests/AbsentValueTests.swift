import Synchronization
import Testing
@testable import StreamMap

/// The stream engine works out once what an absent value maps to — but only when no closure of the user's runs
/// in the field's mapper: a default factory, a block or a post-processor may answer differently on every call,
/// and each record must see a call of its own, in the same order as the tree engine makes them. (The differential
/// tests' closures are pure, so they could not tell a kept result from a fresh one.)
@Suite("Stream engine: absent values")
struct AbsentValueTests {
    /// Counts its calls, so that every answer is new.
    final class Calls: Sendable {
        private let count = Mutex(0)
        func next() -> Int { count.withLock { $0 += 1; return $0 } }
    }

    func mapper(_ calls: Calls) -> Mapper {
        .object {
            Field("id", to: "id")
            Field("made", to: "made", .optionally(defaultFactory: { .number(JSONNumber(unchecked: String(calls.next()))) }))
            Field("seen", to: "seen", .block("count") { value in
                value == nil ? .success(.number(JSONNumber(unchecked: String(calls.next())))) : .success(value)
            })
            Field("tagged", to: "tagged", Mapper.identity.postProcessed("tag") { source, result in
                source == nil ? .success(.string("call \(calls.next())")) : result
            })
            Field("fixed", to: "fixed", .optionally(default: .string("same")))
        }
    }

    func outputs(_ engine: inout some RecordEngine, _ records: [String]) -> [String] {
        records.map { record in
            var writer = JSONWriter()
            let bytes = Array(record.utf8)
            _ = bytes.withUnsafeBytes { engine.map(record: $0, into: &writer) }
            return String(decoding: writer.bytes, as: UTF8.self)
        }
    }

    @Test func closuresAreCalledForEveryRecordLikeTheTreeEngineCallsThem() {
        let records = [#"{"id":1}"#, #"{"id":2,"seen":0}"#, #"{"id":3}"#, #"{"id":4,"made":9,"tagged":"x"}"#, #"{"id":5}"#]
        var stream = StreamEngine(mapper: mapper(Calls()))
        var tree = TreeEngine(mapper: mapper(Calls()))
        let fromStream = outputs(&stream, records)
        #expect(fromStream == outputs(&tree, records))
        // Fresh answers each record: the first record's three calls are not repeated for the third (the second
        // made calls 4 and 5; its present "seen" made none).
        #expect(fromStream[0] == #"{"id":1,"made":1,"seen":2,"tagged":"call 3","fixed":"same"}"#)
        #expect(fromStream[2] == #"{"id":3,"made":6,"seen":7,"tagged":"call 8","fixed":"same"}"#)
    }

    @Test func onlyClosureFreeMappersAreKnownDeterministic() {
        let calls = Calls()
        #expect(Mapper.optionally(default: .string("x")).isDeterministic)
        #expect(Mapper.thread(.notNull(), .check(.string), .keys(.hydrantCamel)).isDeterministic)
        #expect(!Mapper.optionally(defaultFactory: { .null }).isDeterministic)
        #expect(!Mapper.arrayOf(.block { _ in .success(nil) }).isDeterministic)
        #expect(!mapper(calls).isDeterministic)
        #expect(!Mapper.object(unmapped: .keep(keyStyle: nil, values: Mapper.identity.postProcessed { _, r in r })) {
            Field("a", to: "a")
        }.isDeterministic)
    }
}
