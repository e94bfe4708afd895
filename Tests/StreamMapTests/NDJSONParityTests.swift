import Testing

@testable import StreamMap
import StreamMapTestSupport

/// The two ways NDJSON is framed — `RecordFramer(framing: .ndjson)` (whole records, the library's `MappingFeed`) and
/// `NDJSONSegmenter` (records in pieces, the command line) — must cut every input into the same records with the
/// same locations, however the input is chunked. Both are also checked against a plain model of the rules.
@Suite("NDJSON: RecordFramer and NDJSONSegmenter agree")
struct NDJSONParityTests {
    struct Record: Equatable, CustomStringConvertible {
        var bytes: [UInt8]
        var line: Int
        var offset: Int

        var description: String { "(\(line), \(offset), \(String(decoding: bytes, as: UTF8.self).debugDescription))" }
    }

    /// The rules, written out plainly: a leading BOM is skipped (offsets count it); a LF ends a line and every line
    /// counts; spaces, tabs and CRs before a record's first byte are skipped, so a line of only those is no record;
    /// one CR before the LF (or before the end of the input) is dropped; a last line without LF is a record.
    static func model(_ input: [UInt8]) -> [Record] {
        var records: [Record] = []
        var i = input.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        var line = 1
        while i < input.count {
            var end = input[i...].firstIndex(of: 0x0A) ?? input.count
            let lineEnd = end
            while i < end && (input[i] == 0x20 || input[i] == 0x09 || input[i] == 0x0D) { i += 1 }
            if i < end {
                if input[end - 1] == 0x0D { end -= 1 }
                records.append(Record(bytes: Array(input[i..<end]), line: line, offset: i))
            }
            line += 1
            i = lineEnd + 1
        }
        return records
    }

    struct Gathered: RecordSegmentSink {
        var records: [Record] = []
        var open = false
        mutating func recordBegins(at location: RecordLocation) {
            #expect(!open, "a record began inside another")
            open = true
            records.append(Record(bytes: [], line: location.line, offset: location.byteOffset))
        }
        mutating func recordContinues(_ bytes: UnsafeRawBufferPointer) {
            #expect(open, "bytes outside a record")
            #expect(!bytes.isEmpty, "an empty piece")
            records[records.count - 1].bytes += bytes
        }
        mutating func recordEnds() {
            #expect(open, "a record ended twice")
            open = false
        }
    }

    /// Feeds `input` cut at `cuts` (sorted offsets; repeated ones make empty chunks).
    static func chunks(_ input: [UInt8], _ cuts: [Int], _ body: (UnsafeRawBufferPointer) -> Void) {
        input.withUnsafeBytes { raw in
            var from = 0
            for cut in cuts + [raw.count] {
                // Each chunk in memory of its own, so that a read past its end is a read past an allocation.
                Array(raw[from..<cut]).withUnsafeBytes(body)
                from = cut
            }
        }
    }

    static func segment(_ input: [UInt8], _ cuts: [Int]) -> [Record] {
        var segmenter = NDJSONSegmenter()
        var sink = Gathered()
        chunks(input, cuts) { segmenter.feed($0, into: &sink) }
        segmenter.finish(into: &sink)
        #expect(!sink.open, "a record was left open")
        return sink.records
    }

    static func frame(_ input: [UInt8], _ cuts: [Int], _ framing: Framing = .ndjson) -> (records: [Record], detected: Framing?) {
        var framer = RecordFramer(framing: framing)
        var records: [Record] = []
        chunks(input, cuts) { chunk in
            framer.feed(chunk) { records.append(Record(bytes: Array($0), line: $1.line, offset: $1.byteOffset)) }
        }
        framer.finishReportingFramingErrors { record, location, error in
            #expect(error == nil || framing != .ndjson)
            records.append(Record(bytes: Array(record), line: location.line, offset: location.byteOffset))
        }
        return (records, framer.detected)
    }

    /// A random NDJSON-ish input: records and junk, blank and whitespace-only lines, LF, CRLF, lone CRs, CR CR LF,
    /// BOMs (at the start, whole or cut short, and elsewhere), a last line with or without LF, now and then a line
    /// far longer than any chunk.
    static func input(_ rand: inout Rand) -> [UInt8] {
        var out: [UInt8] = []
        switch rand.below(10) {
        case 0: out += [0xEF, 0xBB, 0xBF]
        case 1: out += [0xEF, 0xBB]
        case 2: out += [0xEF]
        default: break
        }
        let pieces: [[UInt8]] = [
            Array(#"{"a":1}"#.utf8), Array("[1,2]".utf8), Array(#""s\"t""#.utf8), Array("x y".utf8), Array("7".utf8),
            [0x1E], [0xEF, 0xBB, 0xBF], [0xFF], [0x00], Array("é".utf8),
        ]
        let lines = rand.below(5) == 0 ? rand.below(3) : rand.int(1...12)
        for _ in 0..<lines {
            var text: [UInt8] = []
            for _ in 0..<rand.int(0...2) { text += rand.pick([[0x20], [0x09], [0x0D], [0x0D, 0x0D]]) }
            if rand.percent(80) {
                for _ in 0..<rand.int(1...3) { text += rand.pick(pieces) }
                if rand.percent(2) {
                    let size = rand.int(1_000...70_000)
                    text += (0..<size).map { UInt8(ascii: "a") + UInt8($0 % 26) }
                }
                for _ in 0..<rand.int(0...2) { text += rand.pick([[0x20], [0x09], [0x0D]]) }
            }
            out += text
            out += rand.pick([[0x0A], [0x0A], [0x0A], [0x0D, 0x0A], [0x0D, 0x0D, 0x0A], [0x0D], []])
        }
        return out
    }

    static func cuts(_ count: Int, _ rand: inout Rand) -> [Int] {
        switch rand.below(4) {
        case 0 where count < 1_000: return Array(0...count)  // byte by byte, with an empty chunk first and last
        case 1: return []
        default:
            return (0..<rand.int(1...12)).map { _ in rand.int(0...count) }.sorted()
        }
    }

    @Test func randomInputsFrameAlikeAndAsTheRulesSay() {
        var rand = Rand(seed: 0x0D15_EA5E)
        for n in 0..<2_000 {
            let input = Self.input(&rand)
            let expected = Self.model(input)
            let cuts = Self.cuts(input.count, &rand)
            let segmented = Self.segment(input, cuts)
            let framed = Self.frame(input, cuts)
            let otherCuts = Self.cuts(input.count, &rand)
            let framedOtherwise = Self.frame(input, otherCuts).records
            #expect(segmented == expected, "case \(n): segmenter, cuts \(cuts)")
            #expect(framed.records == expected, "case \(n): framer, cuts \(cuts)")
            #expect(framedOtherwise == expected, "case \(n): framer, cuts \(otherCuts)")
            #expect(framed.detected == .ndjson)
            // What `auto` takes for NDJSON it frames as NDJSON.
            let auto = Self.frame(input, otherCuts, .auto)
            if auto.detected == .ndjson {
                #expect(auto.records == expected, "case \(n): auto, cuts \(otherCuts)")
            }
            if segmented != expected || framed.records != expected { break }
        }
    }

    @Test func edgeCases() {
        let cases: [(String, [Record])] = [
            ("", []),
            ("\n", []),
            ("\r", []),
            ("\r\n\r\n", []),
            (" \t\r", []),
            ("x", [Record(bytes: Array("x".utf8), line: 1, offset: 0)]),
            ("x\r", [Record(bytes: Array("x".utf8), line: 1, offset: 0)]),
            ("x\r\r", [Record(bytes: Array("x\r".utf8), line: 1, offset: 0)]),
            ("x\r\r\n", [Record(bytes: Array("x\r".utf8), line: 1, offset: 0)]),
            ("x\ry\n", [Record(bytes: Array("x\ry".utf8), line: 1, offset: 0)]),
            ("\n \r\tx \n\n y", [
                Record(bytes: Array("x ".utf8), line: 2, offset: 4), Record(bytes: Array("y".utf8), line: 4, offset: 9),
            ]),
        ]
        for (text, expected) in cases {
            let input = Array(text.utf8)
            for cuts in [[], Array(0...input.count)] {
                #expect(Self.segment(input, cuts) == expected, "\(text.debugDescription) cut \(cuts)")
                #expect(Self.frame(input, cuts).records == expected, "\(text.debugDescription) cut \(cuts)")
                #expect(Self.model(input) == expected, "\(text.debugDescription)")
            }
        }
        // A BOM: skipped at the start (also when cut), data elsewhere; an unfinished one is data.
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        for (input, expected) in [
            (bom + Array("x\n".utf8), [Record(bytes: Array("x".utf8), line: 1, offset: 3)]),
            (bom, []),
            (bom + bom, [Record(bytes: bom, line: 1, offset: 3)]),
            ([0xEF, 0xBB], [Record(bytes: [0xEF, 0xBB], line: 1, offset: 0)]),
            ([0xEF, 0xBB, 0x0D, 0x0A], [Record(bytes: [0xEF, 0xBB], line: 1, offset: 0)]),
            (Array(" ".utf8) + bom, [Record(bytes: bom, line: 1, offset: 1)]),
        ] {
            for cuts in [[], Array(0...input.count)] {
                #expect(Self.segment(input, cuts) == expected, "\(input) cut \(cuts)")
                #expect(Self.frame(input, cuts).records == expected, "\(input) cut \(cuts)")
                #expect(Self.model(input) == expected, "\(input)")
            }
        }
    }
}
