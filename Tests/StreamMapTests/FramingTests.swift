import Testing

@testable import StreamMap
import StreamMapTestSupport

/// One framed record, as the tests compare them: location, text, and whether it is a framing error.
private struct Framed: Equatable, CustomStringConvertible {
    var line: Int
    var offset: Int
    var text: String
    var framingError: Bool = false

    init(_ line: Int, _ offset: Int, _ text: String, framingError: Bool = false) {
        self.line = line
        self.offset = offset
        self.text = text
        self.framingError = framingError
    }

    var description: String { "(\(line), \(offset), \(text.debugDescription)\(framingError ? ", framing error" : ""))" }
}

private let chunkSizes = [1, 2, 7, 4096, Int.max]

/// Frames `input` fed in chunks of `size` bytes (and an empty chunk between every two, which must change nothing).
private func frame(_ input: [UInt8], _ framing: Framing, chunkSize size: Int) -> (records: [Framed], detected: Framing?, errors: [JSONSyntaxError]) {
    var framer = RecordFramer(framing: framing)
    var records: [Framed] = []
    var errors: [JSONSyntaxError] = []
    let empty: [UInt8] = []
    input.withUnsafeBytes { raw in
        var i = 0
        while i < raw.count {
            let end = size >= raw.count - i ? raw.count : i + size
            framer.feed(UnsafeRawBufferPointer(rebasing: raw[i..<end])) { record, location in
                records.append(Framed(location.line, location.byteOffset, String(decoding: record, as: UTF8.self)))
            }
            empty.withUnsafeBytes { framer.feed($0) { _, _ in Issue.record("an empty chunk delivered a record") } }
            i = end
        }
    }
    framer.finishReportingFramingErrors { record, location, error in
        records.append(Framed(location.line, location.byteOffset, String(decoding: record, as: UTF8.self), framingError: error != nil))
        if let error { errors.append(error) }
    }
    return (records, framer.detected, errors)
}

/// Frames `input` with every chunk size; expects the same records (and detected framing) from each, and returns them.
private func frameAllChunkings(
    _ input: String, _ framing: Framing, sourceLocation: SourceLocation = #_sourceLocation
) -> (records: [Framed], detected: Framing?, errors: [JSONSyntaxError]) {
    let bytes = Array(input.utf8)
    let whole = frame(bytes, framing, chunkSize: Int.max)
    for size in chunkSizes.dropLast() {
        let chunked = frame(bytes, framing, chunkSize: size)
        #expect(chunked.records == whole.records, "chunk size \(size)", sourceLocation: sourceLocation)
        #expect(chunked.detected == whole.detected, "chunk size \(size)", sourceLocation: sourceLocation)
        #expect(chunked.errors == whole.errors, "chunk size \(size)", sourceLocation: sourceLocation)
    }
    return whole
}

@Suite("Record framing")
struct FramingTests {
    // MARK: NDJSON

    @Test func ndjsonRecordsWithLinesAndOffsets() {
        let r = frameAllChunkings("{\"a\":1}\n{\"b\":2}\n", .ndjson)
        #expect(r.records == [Framed(1, 0, #"{"a":1}"#), Framed(2, 8, #"{"b":2}"#)])
        #expect(r.detected == .ndjson)
    }

    @Test func ndjsonCRLFBlankLinesAndFinalRecordWithoutNewline() {
        let input = "{\"a\":1}\r\n\r\n  \t\n{\"b\":2}\r\n\n[3]"
        let r = frameAllChunkings(input, .ndjson)
        #expect(r.records == [Framed(1, 0, #"{"a":1}"#), Framed(4, 15, #"{"b":2}"#), Framed(6, 25, "[3]")])
    }

    @Test func ndjsonKeepsTheLineAsItIsAndDoesNotValidate() {
        // Leading spaces, tabs and CRs are skipped, trailing spaces stay (only a trailing CR is dropped); invalid
        // JSON is the engine's business.
        let r = frameAllChunkings(" \t\r5 \nnot json\r\n{\"a\":\u{1E}}\n", .ndjson)
        #expect(r.records == [Framed(1, 3, "5 "), Framed(2, 6, "not json"), Framed(3, 16, "{\"a\":\u{1E}}")])
    }

    @Test func ndjsonEmptyAndBlankInputsDeliverNothing() {
        #expect(frameAllChunkings("", .ndjson).records.isEmpty)
        #expect(frameAllChunkings("\n\r\n \t \n", .ndjson).records.isEmpty)
    }

    @Test func ndjsonFramingAcrossTwoFeeds() {
        var framer = RecordFramer(framing: .ndjson)
        var records: [Framed] = []
        Array("{\"a\":1}\r\n\n{\"b\"".utf8).withUnsafeBytes { raw in
            framer.feed(raw) { records.append(Framed($1.line, $1.byteOffset, String(decoding: $0, as: UTF8.self))) }
        }
        Array(":2}".utf8).withUnsafeBytes { raw in
            framer.feed(raw) { records.append(Framed($1.line, $1.byteOffset, String(decoding: $0, as: UTF8.self))) }
        }
        framer.finish { records.append(Framed($1.line, $1.byteOffset, String(decoding: $0, as: UTF8.self))) }
        #expect(records == [Framed(1, 0, #"{"a":1}"#), Framed(3, 10, #"{"b":2}"#)])
    }

    // MARK: Array

    @Test func arrayElementsWithNestedArraysAndTrickyStrings() {
        let input = #"[1, {"a":"x]y,z\"w"}, [2,[3]],"# + "\n" + #"  "q\\" ,{"k":"[{"} ]"#
        let r = frameAllChunkings(input, .array)
        #expect(r.records == [
            Framed(1, 1, "1"),
            Framed(1, 4, #"{"a":"x]y,z\"w"}"#),
            Framed(1, 22, "[2,[3]]"),
            Framed(2, 33, #""q\\""#),
            Framed(2, 40, #"{"k":"[{"}"#),
        ])
        #expect(r.errors.isEmpty)
    }

    @Test func prettyPrintedArrayLines() {
        let r = frameAllChunkings("[\n  {\"id\":1},\n\n  {\"id\":2}\r\n]\n", .array)
        #expect(r.records == [Framed(2, 4, #"{"id":1}"#), Framed(4, 17, #"{"id":2}"#)])
    }

    @Test func malformedElementsAreDeliveredOneByOne() {
        let r = frameAllChunkings(#"[1, {"a":}, 3, tru, "x" "y", 5]"#, .array)
        #expect(r.records == [
            Framed(1, 1, "1"), Framed(1, 4, #"{"a":}"#), Framed(1, 12, "3"), Framed(1, 15, "tru"),
            Framed(1, 20, #""x" "y""#), Framed(1, 29, "5"),
        ])
    }

    @Test func emptyElementsAreEmptyRecords() {
        let r = frameAllChunkings("[1,,2,]", .array)
        #expect(r.records == [Framed(1, 1, "1"), Framed(1, 3, ""), Framed(1, 4, "2"), Framed(1, 6, "")])
        #expect(r.errors.isEmpty)
    }

    @Test func emptyArraysDeliverNothing() {
        #expect(frameAllChunkings("[]", .array).records.isEmpty)
        #expect(frameAllChunkings(" [ \n ] \n", .array).records.isEmpty)
        #expect(frameAllChunkings("", .array).records.isEmpty)
    }

    @Test func garbageAfterTheArrayIsOneRecord() {
        let r = frameAllChunkings("[1,2] x\n y \n", .array)
        #expect(r.records == [Framed(1, 1, "1"), Framed(1, 3, "2"), Framed(1, 6, "x\n y", framingError: true)])
        #expect(r.errors.map(\.message) == ["data after the top-level array"])
        // Even valid JSON after the array is not an element.
        let twice = frameAllChunkings("[1] [2]", .array)
        #expect(twice.records == [Framed(1, 1, "1"), Framed(1, 4, "[2]", framingError: true)])
    }

    @Test func missingClosingBracketDeliversTheRest() {
        let r = frameAllChunkings("[1, 2, 3 \n", .array)
        #expect(r.records == [Framed(1, 1, "1"), Framed(1, 4, "2"), Framed(1, 7, "3", framingError: true)])
        #expect(r.errors == [JSONSyntaxError(byteOffset: 1, message: "the input ends inside the top-level array (no closing ']')")])
        let object = frameAllChunkings(#"[{"a":1}, {"a":"#, .array)
        #expect(object.records == [Framed(1, 1, #"{"a":1}"#), Framed(1, 10, #"{"a":"#, framingError: true)])
        #expect(frameAllChunkings("[1,\n", .array).records == [Framed(1, 1, "1"), Framed(2, 4, "", framingError: true)])
        #expect(frameAllChunkings("[", .array).records == [Framed(1, 1, "", framingError: true)])
    }

    @Test func inputThatIsNotAnArrayIsOneRecord() {
        let r = frameAllChunkings("\n {\"a\":1}\n{\"b\":2}\n", .array)
        #expect(r.records == [Framed(2, 2, "{\"a\":1}\n{\"b\":2}", framingError: true)])
        #expect(r.errors.map(\.message) == ["the input is not a JSON array (array framing)"])
    }

    // MARK: Concatenated values

    @Test func concatenatedValues() {
        let r = frameAllChunkings("{\"a\":1}{\"b\":2} 3 \"x\"\n[1]", .concat)
        #expect(r.records == [
            Framed(1, 0, #"{"a":1}"#), Framed(1, 7, #"{"b":2}"#), Framed(1, 15, "3"), Framed(1, 17, #""x""#),
            Framed(2, 21, "[1]"),
        ])
    }

    @Test func concatenatedPrettyValuesScalarsAndStrayBytes() {
        let input = #"{"s":"}{\"]"}"# + "\n{\n  \"p\": [1, {\"q\": null}]\n}true false\tnull -1.5e3\"x\"]\n"
        let r = frameAllChunkings(input, .concat)
        #expect(r.records == [
            Framed(1, 0, #"{"s":"}{\"]"}"#),
            Framed(2, 14, "{\n  \"p\": [1, {\"q\": null}]\n}"),
            Framed(4, 41, "true"), Framed(4, 46, "false"), Framed(4, 52, "null"), Framed(4, 57, "-1.5e3"),
            Framed(4, 63, #""x""#), Framed(4, 66, "]"),
        ])
    }

    @Test func concatenatedUnfinishedValueAtTheEnd() {
        let r = frameAllChunkings("1 {\"a\": [1,\n", .concat)
        #expect(r.records == [Framed(1, 0, "1"), Framed(1, 2, "{\"a\": [1,")])
        #expect(r.errors.isEmpty)
    }

    // MARK: JSON text sequences

    @Test func jsonTextSequence() {
        let input = "\u{1E}{\"a\":1}\n\u{1E}{\"b\":\n2}\n\u{1E}\n\u{1E}\u{1E}  [3] \n\u{1E}not json"
        let r = frameAllChunkings(input, .seq)
        #expect(r.records == [
            Framed(1, 1, #"{"a":1}"#), Framed(2, 10, "{\"b\":\n2}"), Framed(5, 25, "[3]"), Framed(6, 31, "not json"),
        ])
    }

    @Test func textBeforeTheFirstRecordSeparatorIsARecord() {
        let r = frameAllChunkings("  {\"x\":1}\n\u{1E}{\"a\":1}\n", .seq)
        #expect(r.records == [Framed(1, 2, #"{"x":1}"#), Framed(2, 11, #"{"a":1}"#)])
    }

    // MARK: Auto detection

    @Test func autoDetectsSequences() {
        let r = frameAllChunkings("\n \u{1E}{\"a\":1}\n\u{1E}[2]\n", .auto)
        #expect(r.detected == .seq)
        #expect(r.records == [Framed(2, 3, #"{"a":1}"#), Framed(3, 12, "[2]")])
    }

    @Test func autoDetectsNDJSON() {
        let r = frameAllChunkings("\n\n{\"a\":1}  \r\n{\"b\":2} 7\n[1,2]", .auto)
        #expect(r.detected == .ndjson)
        #expect(r.records == [Framed(3, 2, #"{"a":1}  "#), Framed(4, 13, #"{"b":2} 7"#), Framed(5, 23, "[1,2]")])
        let scalars = frameAllChunkings("1\n2", .auto)
        #expect(scalars.detected == .ndjson)
        #expect(scalars.records == [Framed(1, 0, "1"), Framed(2, 2, "2")])
        let one = frameAllChunkings(#"{"a":1}"#, .auto)
        #expect(one.detected == .ndjson)
        #expect(one.records == [Framed(1, 0, #"{"a":1}"#)])
    }

    @Test func autoTakesLinesOfArraysAsNDJSON() {
        let r = frameAllChunkings("[1,2]\n\n[3]\n", .auto)
        #expect(r.detected == .ndjson)
        #expect(r.records == [Framed(1, 0, "[1,2]"), Framed(3, 7, "[3]")])
    }

    @Test func autoTakesASingleArrayAsAnArrayOfRecords() {
        let oneLine = frameAllChunkings(#"[{"a":1}, {"a":2}]"# + "\n\n  \n", .auto)
        #expect(oneLine.detected == .array)
        #expect(oneLine.records == [Framed(1, 1, #"{"a":1}"#), Framed(1, 10, #"{"a":2}"#)])
        let noNewline = frameAllChunkings("[1, 2]", .auto)
        #expect(noNewline.detected == .array)
        #expect(noNewline.records == [Framed(1, 1, "1"), Framed(1, 4, "2")])
        let pretty = frameAllChunkings("[\n  {\"id\":1},\n\n  {\"id\":2}\r\n]\n", .auto)
        #expect(pretty.detected == .array)
        #expect(pretty.records == [Framed(2, 4, #"{"id":1}"#), Framed(4, 17, #"{"id":2}"#)])
        let truncated = frameAllChunkings("[1, 2", .auto)
        #expect(truncated.detected == .array)
        #expect(truncated.records == [Framed(1, 1, "1"), Framed(1, 4, "2", framingError: true)])
        #expect(frameAllChunkings("[]\n", .auto).records.isEmpty)
    }

    @Test func autoDetectsConcatenatedValues() {
        let sameLine = frameAllChunkings("{\"a\":1} {\"b\":2}\n{\"c\":3}", .auto)
        #expect(sameLine.detected == .concat)
        #expect(sameLine.records == [Framed(1, 0, #"{"a":1}"#), Framed(1, 8, #"{"b":2}"#), Framed(2, 16, #"{"c":3}"#)])
        let arrays = frameAllChunkings("[1][2]", .auto)
        #expect(arrays.detected == .concat)
        #expect(arrays.records == [Framed(1, 0, "[1]"), Framed(1, 3, "[2]")])
        let pretty = frameAllChunkings("{\n  \"a\": 1\n}\n{\n  \"b\": 2\n}\n", .auto)
        #expect(pretty.detected == .concat)
        #expect(pretty.records == [Framed(1, 0, "{\n  \"a\": 1\n}"), Framed(4, 13, "{\n  \"b\": 2\n}")])
    }

    @Test func autoTakesARawNewlineInTheFirstStringAsNDJSON() {
        let r = frameAllChunkings("{\"a\":\"x\ny\"}\n{\"b\":1}\n", .auto)
        #expect(r.detected == .ndjson)
        #expect(r.records == [Framed(1, 0, "{\"a\":\"x"), Framed(2, 8, "y\"}"), Framed(3, 12, #"{"b":1}"#)])
    }

    /// A backslash before a raw LF in a string (malformed JSON either way): the LF still counts as a line, and
    /// for auto it is a newline in the first string like any other (→ ndjson).
    @Test func escapedNewlinesInStrings() {
        let values = "\"a\\\nb\" 1\n{\"k\":\"x\\\n\"}\n2"
        #expect(frameAllChunkings(values, .concat).records == [
            Framed(1, 0, "\"a\\\nb\""), Framed(2, 7, "1"), Framed(3, 9, "{\"k\":\"x\\\n\"}"), Framed(5, 21, "2"),
        ])
        let auto = frameAllChunkings(values, .auto)
        #expect(auto.detected == .ndjson)
        #expect(auto.records == [
            Framed(1, 0, "\"a\\"), Framed(2, 4, "b\" 1"), Framed(3, 9, "{\"k\":\"x\\"), Framed(4, 18, "\"}"),
            Framed(5, 21, "2"),
        ])
        let array = "[\"a\\\nb\",\n {\"k\":\"x\\\ny\"}, 3]"
        #expect(frameAllChunkings(array, .array).records == [
            Framed(1, 1, "\"a\\\nb\""), Framed(3, 10, "{\"k\":\"x\\\ny\"}"), Framed(4, 24, "3"),
        ])
        let autoArray = frameAllChunkings(array, .auto)
        #expect(autoArray.detected == .ndjson)
        #expect(autoArray.records == [
            Framed(1, 0, "[\"a\\"), Framed(2, 5, "b\","), Framed(3, 10, "{\"k\":\"x\\"), Framed(4, 19, "y\"}, 3]"),
        ])
    }

    @Test func autoOnEmptyInputDecidesNothing() {
        let empty = frameAllChunkings("", .auto)
        #expect(empty.detected == nil)
        #expect(empty.records.isEmpty)
        let blank = frameAllChunkings(" \n\t\r\n", .auto)
        #expect(blank.detected == nil)
        #expect(blank.records.isEmpty)
    }

    @Test func explicitFramingIsKnownAtOnce() {
        for framing in Framing.allCases where framing != .auto {
            #expect(RecordFramer(framing: framing).detected == framing)
        }
        #expect(RecordFramer().detected == nil)
    }

    // MARK: Chunk invariance at random

    static let mixedInputs = [
        "[{\"a\":\"x]y,z\\\"w\\\\\"}, 12, \"\\u005d\",\n [[1],{\"b\":[]}] ,tru , {\"c\":}\r\n]\n"
            + "{\"k\":1} 2 \"s\"\n\n null\n[3] x",
        "\u{1E}[{\"a\":\"x]y,z\\\"w\\\\\"}, 12,\n\u{1E} {\"c\":}\r\n\u{1E}\u{1E}\"s\"\n[3] x",
        "[\n  {\"id\": 1, \"tags\": [\"a,b\", \"]\"]},\n  {\"id\": 2, \"s\": \"\\\\\"}\n]\n",
    ]

    @Test(arguments: Framing.allCases, 0..<mixedInputs.count)
    func randomChunkingsGiveTheSameRecords(framing: Framing, inputIndex: Int) {
        let input = Array(Self.mixedInputs[inputIndex].utf8)
        let whole = frame(input, framing, chunkSize: Int.max)
        #expect(!whole.records.isEmpty)
        var generator = SplitMix64(seed: 0x5EED + UInt64(framing.rawValue.utf8.count * 10 + inputIndex))
        for _ in 0..<200 {
            var framer = RecordFramer(framing: framing)
            var records: [Framed] = []
            input.withUnsafeBytes { raw in
                var i = 0
                while i < raw.count {
                    let end = min(raw.count, i + Int(generator.next() % 9) + 1)
                    framer.feed(UnsafeRawBufferPointer(rebasing: raw[i..<end])) { record, location in
                        records.append(Framed(location.line, location.byteOffset, String(decoding: record, as: UTF8.self)))
                    }
                    i = end
                }
            }
            framer.finishReportingFramingErrors { record, location, error in
                records.append(Framed(location.line, location.byteOffset, String(decoding: record, as: UTF8.self), framingError: error != nil))
            }
            #expect(records == whole.records)
            #expect(framer.detected == whole.detected)
            if records != whole.records { break }
        }
    }

    /// What the mixed inputs frame to, to pin down the rules where they meet.
    @Test func mixedInputsFrameAsDocumented() {
        let pretty = frameAllChunkings(Self.mixedInputs[2], .auto)
        #expect(pretty.detected == .array)
        #expect(pretty.records == [
            Framed(2, 4, #"{"id": 1, "tags": ["a,b", "]"]}"#), Framed(3, 39, #"{"id": 2, "s": "\\"}"#),
        ])
        // A first array that spans lines is an array of records, even when more values follow it: they are data
        // after the array (one rejected record), not further records.
        let first = frameAllChunkings(Self.mixedInputs[0], .auto)
        #expect(first.detected == .array)
        #expect(first.records == [
            Framed(1, 1, #"{"a":"x]y,z\"w\\"}"#), Framed(1, 21, "12"), Framed(1, 25, #""\u005d""#),
            Framed(2, 36, #"[[1],{"b":[]}]"#), Framed(2, 52, "tru"), Framed(2, 58, #"{"c":}"#),
            Framed(4, 68, "{\"k\":1} 2 \"s\"\n\n null\n[3] x", framingError: true),
        ])
    }

    // MARK: Linear time

    /// One 20 MB record on one line (a long string with escapes, then many small array elements), fed in 64 KiB
    /// chunks: a framer that rescans its pending buffer on every chunk would take minutes. Timed as a ratio, so a
    /// slow or busy machine does not decide: fed in 64 KiB chunks it takes at most 4 times as long as in 4 MiB chunks
    /// (a rescanning framer: ~60 times).
    @Test(arguments: [Framing.ndjson, .array, .concat, .seq, .auto])
    func hugeRecordInSmallChunksIsLinear(framing: Framing) {
        func record(_ size: Int) -> [UInt8] {
            var record: [UInt8] = Array(#"{"id":1,"blob":""#.utf8)
            let text = Array(#"lorem ipsum \"dolor\" sit amet, [consectetur] {adipiscing} elit\\ "#.utf8)
            while record.count < size * 4 / 5 { record += text }
            record += Array(#"","list":["#.utf8)
            var n = 0
            while record.count < size {
                record += Array("\(n),".utf8)
                n += 1
            }
            return record + Array("0]}".utf8)
        }
        func input(_ record: [UInt8]) -> [UInt8] {
            switch framing {
            case .array: [UInt8(ascii: "[")] + record + [UInt8(ascii: "]")]
            case .seq: [0x1E] + record + [0x0A]
            default: record + [0x0A]
            }
        }
        func frame(_ input: [UInt8], chunk: Int = 65_536) -> [(count: Int, location: RecordLocation, last: UInt8?)] {
            var framer = RecordFramer(framing: framing)
            var delivered: [(count: Int, location: RecordLocation, last: UInt8?)] = []
            input.withUnsafeBytes { raw in
                var i = 0
                while i < raw.count {
                    let end = min(raw.count, i + chunk)
                    framer.feed(UnsafeRawBufferPointer(rebasing: raw[i..<end])) { delivered.append(($0.count, $1, $0.last)) }
                    i = end
                }
            }
            framer.finish { delivered.append(($0.count, $1, $0.last)) }
            return delivered
        }
        let large = record(20_000_000), text = input(large)
        let delivered = frame(text)
        let expectedOffset = framing == .array || framing == .seq ? 1 : 0
        #expect(delivered.count == 1)
        #expect(delivered.first?.count == large.count)
        #expect(delivered.first?.location == RecordLocation(line: 1, byteOffset: expectedOffset))
        #expect(delivered.first?.last == UInt8(ascii: "}"))
        let small = LibraryScalingTests.seconds(runs: 3) { _ = frame(text, chunk: 4 << 20) }
        let many = LibraryScalingTests.seconds(runs: 3) { _ = frame(text) }
        #expect(many / small <= 4, "\(framing): in 4 MiB chunks \(small) s, in 64 KiB chunks \(many) s")
    }
}
