import Testing

@testable import StreamMap

/// The library's entry points keep the guarantee `scripts/scaling.py` holds the command line to: run at size n and
/// 16n, a feature takes at most 48 times as long (linear: ~16x; quadratic: ~256x). Each size is timed as the best of
/// a few runs, so that one slow moment of a shared machine does not decide.
@Suite("Library scaling: linear in the input")
struct LibraryScalingTests {
    static let factor = 16
    static let limit = 48.0

    /// The best time of `runs` calls of `body`, in seconds.
    static func seconds(runs: Int, _ body: () throws -> Void) rethrows -> Double {
        var best = Double.infinity
        for _ in 0..<runs {
            let clock = ContinuousClock()
            let start = clock.now
            try body()
            let d = clock.now - start
            best = min(best, Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18)
        }
        return best
    }

    /// Times `body(n)` and `body(16n)`; records an issue when the ratio is above the limit.
    static func expectLinear(_ name: String, n: Int, sourceLocation: SourceLocation = #_sourceLocation, _ body: (Int) throws -> Void) throws {
        let small = try seconds(runs: 3) { try body(n) }
        let large = try seconds(runs: 2) { try body(factor * n) }
        let ratio = large / max(small, 1e-6)
        #expect(ratio <= limit, "\(name): n=\(n) \(small) s, 16n \(large) s, x\(ratio)", sourceLocation: sourceLocation)
    }

    /// One record holding an array of `n` small objects with snake_case keys.
    static func bigRecord(_ n: Int) -> [UInt8] {
        var text = #"{"items_list":["#
        for i in 0..<n { text += (i == 0 ? "" : ",") + #"{"item_id":\#(i),"item_name":"n\#(i)","nested_obj":{"inner_key":\#(i)}}"# }
        return Array((text + "]}\n").utf8)
    }

    /// `n` records, one per line.
    static func manyRecords(_ n: Int) -> [UInt8] {
        var text = ""
        for i in 0..<n { text += #"{"user_id":\#(i),"user_name":"u\#(i)","tags":["a","b"]}"# + "\n" }
        return Array(text.utf8)
    }

    static let camel = Mapper.object(ObjectMapping(fields: [], unmapped: .keep(keyStyle: .foundationCamel, values: .keys(.foundationCamel, deep: true))))

    /// Feeds `input` in pieces of `chunk` bytes; returns the records mapped.
    static func feed<E: RecordEngine>(_ feed: MappingFeed<E>, _ input: [UInt8], chunk: Int) -> Int {
        var mapped = 0
        input.withUnsafeBytes { all in
            var at = 0
            while at < all.count {
                let end = min(at + chunk, all.count)
                for r in feed.feed(UnsafeRawBufferPointer(rebasing: all[at..<end])) { if case .mapped = r { mapped += 1 } }
                at = end
            }
        }
        for r in feed.finish() { if case .mapped = r { mapped += 1 } }
        return mapped
    }

    /// `feed` through a feed on the named engine, mapping with `camel`.
    static func feed(engine: String, _ input: [UInt8], chunk: Int) -> Int {
        engine == "stream"
            ? feed(MappingFeed(mapper: camel), input, chunk: chunk)
            : feed(MappingFeed(engine: TreeEngine(mapper: camel)), input, chunk: chunk)
    }

    @Test(arguments: ["stream", "tree"])
    func mappingFeedOneHugeRecordInTinyChunks(engine: String) throws {
        try Self.expectLinear("MappingFeed (\(engine)), one record of n objects, key style, 16-byte chunks", n: 1000) { n in
            #expect(Self.feed(engine: engine, Self.bigRecord(n), chunk: 16) == 1)
        }
    }

    @Test(arguments: ["stream", "tree"])
    func mappingFeedManyRecordsInTinyChunks(engine: String) throws {
        try Self.expectLinear("MappingFeed (\(engine)), n records, 7-byte chunks", n: 1000) { n in
            #expect(Self.feed(engine: engine, Self.manyRecords(n), chunk: 7) == n)
        }
    }

    struct Item: Codable, Equatable {
        var itemId: Int
        var itemName: String
    }

    struct Batch: Codable, Equatable {
        var itemsList: [Item]
    }

    @Test func codableBridgeDecodesAndEncodesLinearly() throws {
        let mapper = Mapper.keys(.foundationCamel, deep: true)
        try Self.expectLinear("Codable bridge, decode and encode a model with n items", n: 1000) { n in
            var text = #"{"items_list":["#
            for i in 0..<n { text += (i == 0 ? "" : ",") + #"{"item_id":\#(i),"item_name":"n\#(i)"}"# }
            let batch = try mapper.decode(Batch.self, from: Array((text + "]}").utf8))
            #expect(batch.itemsList.count == n)
            let back = try mapper.encode(batch)
            #expect(back["items_list"]?.arrayValue?.count == n)
        }
    }
}
