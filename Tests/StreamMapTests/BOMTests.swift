import Testing
@testable import StreamMap

/// A UTF-8 BOM at the very start of the input is skipped; anywhere else it is invalid JSON.
@Suite("Byte order mark")
struct BOMTests {
    static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]

    struct Collected: RecordSegmentSink {
        var records: [(String, RecordLocation)] = []
        var current: [UInt8] = []
        var location = RecordLocation(line: 0, byteOffset: 0)
        mutating func recordBegins(at location: RecordLocation) { self.location = location; current = [] }
        mutating func recordContinues(_ bytes: UnsafeRawBufferPointer) { current += bytes }
        mutating func recordEnds() { records.append((String(decoding: current, as: UTF8.self), location)) }
    }

    func segment(_ input: [UInt8], chunk: Int) -> [(String, RecordLocation)] {
        var segmenter = NDJSONSegmenter()
        var sink = Collected()
        var i = 0
        while i < input.count {
            input[i..<min(i + chunk, input.count)].withUnsafeBytes { segmenter.feed($0, into: &sink) }
            i += chunk
        }
        segmenter.finish(into: &sink)
        return sink.records
    }

    func frame(_ input: [UInt8], chunk: Int, framing: Framing) -> [(String, RecordLocation)] {
        var framer = RecordFramer(framing: framing)
        var out: [(String, RecordLocation)] = []
        var i = 0
        while i < input.count {
            input[i..<min(i + chunk, input.count)].withUnsafeBytes { c in
                framer.feed(c) { r, l in out.append((String(decoding: r, as: UTF8.self), l)) }
            }
            i += chunk
        }
        framer.finish { r, l in out.append((String(decoding: r, as: UTF8.self), l)) }
        return out
    }

    @Test(arguments: [1, 2, 4, 4096])
    func aLeadingBOMIsSkippedAndOffsetsStayAbsolute(_ chunk: Int) {
        let input = Self.bom + Array("{\"a\":1}\n{\"b\":2}\n".utf8)
        for records in [segment(input, chunk: chunk), frame(input, chunk: chunk, framing: .ndjson), frame(input, chunk: chunk, framing: .auto)] {
            #expect(records.map(\.0) == ["{\"a\":1}", "{\"b\":2}"])
            #expect(records.map(\.1) == [RecordLocation(line: 1, byteOffset: 3), RecordLocation(line: 2, byteOffset: 11)])
        }
        let array = Self.bom + Array("[{\"a\":1},{\"b\":2}]".utf8)
        #expect(frame(array, chunk: chunk, framing: .array).map(\.1.byteOffset) == [4, 12])
    }

    @Test(arguments: [1, 4096])
    func aBOMElsewhereIsData(_ chunk: Int) {
        let input = Array("{\"a\":1}\n".utf8) + Self.bom + Array("{\"b\":2}\n".utf8)
        let records = segment(input, chunk: chunk)
        #expect(records.count == 2)
        #expect(Array(records[1].0.utf8.prefix(3)) == Self.bom)
        var engine = StreamEngine(mapper: .identity)
        var writer = JSONWriter()
        let outcome = Array(records[1].0.utf8).withUnsafeBytes { engine.map(record: $0, into: &writer) }
        guard case .rejected(.syntax) = outcome else {
            Issue.record("a BOM inside the input was accepted: \(outcome)")
            return
        }
    }

    @Test func anIncompleteBOMIsData() {
        #expect(segment([0xEF, 0xBB], chunk: 1).count == 1)  // delivered as a record (the parser rejects it)
        #expect(segment(Array("{}".utf8), chunk: 1).map(\.0) == ["{}"])
    }
}
