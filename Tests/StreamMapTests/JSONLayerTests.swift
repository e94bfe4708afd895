import CJSONScan
import Testing
@_spi(Fuzzing) @testable import StreamMap

@Suite("JSON layer")
struct JSONLayerTests {
    /// A releasing copy (a huge record's output moving between buffers) copies every byte, whatever the source's
    /// alignment and however its length falls on pieces and pages; below the threshold it is a plain copy.
    @Test(arguments: [0, 1, 4095, 4097])
    func releasingCopiesEveryByte(offset: Int) {
        let count = ReleasingCopy.threshold + ReleasingCopy.piece + 12_345
        var source = ByteBuffer(capacity: count + offset)
        defer { source.deallocate() }
        var expected = [UInt8](repeating: 0, count: count)
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(offset + 1)
        for i in 0..<count {
            state = state &* 6364136223846793005 &+ 1442695040888963407
            expected[i] = UInt8(truncatingIfNeeded: state >> 56)
        }
        for _ in 0..<offset { source.append(0) }
        expected.withUnsafeBytes { source.append($0) }
        let text = UnsafeRawBufferPointer(rebasing: source.bytes[offset...])
        var buffer = ByteBuffer(capacity: 16)
        defer { buffer.deallocate() }
        buffer.append(UInt8(ascii: "["))
        buffer.appendReleasing(text)
        #expect(buffer.count == count + 1)
        #expect(buffer.bytes.dropFirst().elementsEqual(expected))
        #if os(Linux)
        // The source's pages went back to the system as they were copied: they read as zeros now.
        let middle = (Int(bitPattern: text.baseAddress!) + count / 2) & ~4095
        #expect(UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: middle), count: 4096).allSatisfy { $0 == 0 })
        #endif

        // The writer's version, after a first record, with room for the newline.
        for i in 0..<count { source.base[offset + i] = expected[i] }
        var writer = JSONWriter()
        writer.writeRaw([0x31, 0x0A])
        writer.writeReleasing(text)
        let capacity = writer.bytes.capacity
        writer.writeRaw(0x0A)
        #expect(writer.bytes.capacity == capacity, "the newline fits without growing the buffer")
        #expect(writer.bytes.count == count + 3)
        #expect(writer.bytes[2..<(count + 2)].elementsEqual(expected))

        // Short texts are copied plainly (from another source: `text` is spent, its pages are gone).
        var small = JSONWriter()
        expected.withUnsafeBytes { small.writeReleasing(UnsafeRawBufferPointer(rebasing: $0[..<1000])) }
        #expect(small.bytes.elementsEqual(expected[..<1000]))
    }

    /// `ByteBuffer.appendDecimal` (epoch numbers of the stream engine's dates, line numbers in messages) writes what
    /// `String(n)` does.
    @Test func bufferDecimalsAreStringsDigits() {
        var values: [Int64] = [0, 1, -1, 9, 10, 99, 100, 1_219_842_525_000, -62_135_596_800_000, .max, .min, .max - 1, .min + 1]
        var p: Int64 = 1
        for _ in 0..<18 {
            p *= 10
            values += [p - 1, p, p + 1, -p]
        }
        var buffer = ByteBuffer(capacity: 16)
        defer { buffer.deallocate() }
        for n in values {
            buffer.removeAll()
            buffer.append(UInt8(ascii: "["))
            buffer.appendDecimal(n)
            buffer.append(UInt8(ascii: "]"))
            #expect(String(decoding: buffer.bytes, as: UTF8.self) == "[\(n)]")
        }
    }

    func roundTrip(_ text: String) throws -> String { JSONWriter.string(try JSONParser.parse(text)) }

    @Test("numbers keep their exact source text", arguments: [
        "12345678901234567890123", "9007199254740993", "18446744073709551616", "-0", "1E+2", "1e-400", "0.1000000000000000000000000000000000000001",
        "-12.50e-07", "1.7976931348623157e309",
    ])
    func exactNumbers(_ lexeme: String) throws {
        #expect(try roundTrip(lexeme) == lexeme)
        #expect(try roundTrip("[\(lexeme),{\"n\":\(lexeme)}]") == "[\(lexeme),{\"n\":\(lexeme)}]")
        let v = try JSONParser.parse(lexeme)
        guard case .number(let n) = v else {
            Issue.record("not a number: \(v)")
            return
        }
        #expect(n.text == lexeme)
    }

    @Test func integerVersusNumberTypes() throws {
        #expect(try JSONParser.parse("12345678901234567890123").type == .integer)
        #expect(try JSONParser.parse("-0").type == .integer)
        #expect(try JSONParser.parse("1.0").type == .number)
        #expect(try JSONParser.parse("1e2").type == .number)
    }

    @Test("the writer's escaping rules", arguments: [
        ("\"\\\"\"", "\"\\\"\""),  // quote
        ("\"\\\\\"", "\"\\\\\""),  // backslash
        ("\"\\/\"", "\"/\""),  // solidus is not escaped
        ("\"\\b\\f\\n\\r\\t\"", "\"\\b\\f\\n\\r\\t\""),
        ("\"\\u0000\\u001f\\u0001\"", "\"\\u0000\\u001f\\u0001\""),
        ("\"\\u007f\"", "\"\u{7f}\""),  // DEL raw
        ("\"\\u2028\\u2029\"", "\"\u{2028}\u{2029}\""),  // raw
        ("\"\\u00e9\\ud83d\\ude00\"", "\"é😀\""),  // non-ASCII raw UTF-8
        ("\"é\"", "\"é\""),
    ])
    func escaping(_ input: String, _ expected: String) throws {
        #expect(try roundTrip(input) == expected)
    }

    /// A string with escapes is written through a block of 1 KiB (`JSONEscaping.writeEscaped`): the same bytes as
    /// escaping byte by byte, and as `ByteBuffer`'s own escaping, with a 2- or 6-byte escape at every offset around
    /// the block's end and where it is written out to keep room for the escaper (past 800 bytes), runs longer than the block, escapes back to back, and a text that is all escapes.
    @Test func escapesAtEveryOffsetAroundTheBlock() throws {
        func reference(_ raw: [UInt8]) -> [UInt8] { [0x22] + raw.withUnsafeBytes { EscapeTextCheck.reference($0) } + [0x22] }
        var texts: [[UInt8]] = [Array(repeating: 0x22, count: 3000), Array(repeating: 0x01, count: 700)]
        for length in [1000, 1017, 1018, 1024, 1030, 2100, 5000] {
            for at in Array(770..<830) + Array(990..<1030) + [0, 1, length - 1] where at < length {
                for escape: UInt8 in [0x22, 0x01, 0x5C] {
                    var text = Array(repeating: UInt8(ascii: "a"), count: length)
                    text[at] = escape
                    if at + 1 < length { text[at + 1] = 0x0A }
                    if length > 2000 { text[length / 2] = 0x1F }
                    texts.append(text)
                }
            }
        }
        var rng = SplitMix64(seed: 31)
        for _ in 0..<200 {
            texts.append((0..<Int(rng.next() % 4000)).map { _ in [0x22, 0x5C, 0x00, 0x1F, 0x41, 0xC3, 0xA9, 0x20][Int(rng.next() % 8)] })
        }
        // Bytes one bit away from those escaped (`!` `#` `[` `]` `^` DEL, and with the high bit set), beside
        // escapes, at every offset in a word: a mask that is not exact per byte marks one of them.
        let nearMisses: [UInt8] = [0x21, 0x23, 0x5B, 0x5D, 0x5E, 0x7F, 0xA2, 0xDC, 0xA0, 0x80, 0x9F, 0xFF, 0x02, 0x20, 0x62]
        for _ in 0..<300 {
            texts.append((0..<Int(rng.next() % 80)).map { _ in
                rng.next() % 4 == 0 ? [0x22, 0x5C, 0x00, 0x1F][Int(rng.next() % 4)] : nearMisses[Int(rng.next() % UInt64(nearMisses.count))]
            })
        }
        for text in texts {
            var w = JSONWriter()
            text.withUnsafeBytes { w.writeString(utf8: $0) }
            var buffer = ByteBuffer()
            defer { buffer.deallocate() }
            text.withUnsafeBytes { buffer.appendEscaped($0) }
            #expect(w.bytes == reference(text), "\(text.count) bytes")
            #expect(Array(buffer.bytes) == w.bytes)
        }
    }

    /// The C escaper behind `writeString` (`cjsonscan_escape_text`), its AVX2 and portable code alike, held to the
    /// rule byte by byte (`EscapeTextCheck`, which the fuzz target runs on every record too): every length to 100
    /// with an escape or a near miss at every offset, random texts, each with room for all of it and with a room
    /// that takes one chunk at a time (it stops at a chunk, says how much it consumed, never writes past its room).
    @Test func escapeTextKernelsAgreeWithTheRule() {
        var texts: [[UInt8]] = []
        for length in 0...100 {
            for at in 0..<max(length, 1) {
                for mark: UInt8 in [0x22, 0x5C, 0x00, 0x0A, 0x1F, 0x21, 0x7F, 0xDC] {
                    var text = Array(repeating: UInt8(ascii: "a"), count: length)
                    if at < length { text[at] = mark }
                    texts.append(text)
                }
            }
        }
        var rng = SplitMix64(seed: 7)
        for _ in 0..<300 {
            texts.append((0..<Int(rng.next() % 700)).map { _ in [0x22, 0x5C, 0x00, 0x1F, 0x41, 0xC3, 0x23, 0x20][Int(rng.next() % 8)] })
        }
        for text in texts {
            #expect(text.withUnsafeBytes { EscapeTextCheck.divergence($0) } == nil, "\(text)")
        }
        #expect(Array("a\"b\\c\u{1}\n".utf8).withUnsafeBytes { EscapeTextCheck.reference($0) } == Array(#"a\"b\\c\u0001\n"#.utf8))
        // Too little room: nothing written, nothing consumed.
        var consumed = 7
        var tiny = [UInt8](repeating: 0, count: 223)
        let written = tiny.withUnsafeMutableBufferPointer { cjsonscan_escape_text([0x22, 0x41], 2, $0.baseAddress, 223, &consumed) }
        #expect(written == 0 && consumed == 0)
    }

    /// A rejects line's pointers (`appendPointer`) are the pointers' strings as `writeString` writes them: keys with
    /// nothing to escape copied as they are, the others escaped as a pointer (`~0`, `~1`) and then as JSON.
    @Test func pointersWrittenAsTheirStrings() {
        let keys = ["", "id", "user", "a/b", "m~n", "~/", "quote\"d", "back\\slash", "ctl\u{1}\u{1F}", "é😀", "tab\there/~x",
                    String(repeating: "k", count: 40) + "\"" + "/"]
        var paths: [JSONPath] = [.root, [.index(0)], [.index(-1), .key("x")]]
        for (i, key) in keys.enumerated() {
            paths.append([.key(key)])
            paths.append([.key("user"), .key(key), .index(i)])
        }
        for path in paths {
            var direct = JSONWriter()
            direct.appendPointer(path)
            var reference = JSONWriter()
            reference.writeString(path.pointer)
            #expect(direct.bytes == reference.bytes, "\(path.components)")
            var buffer = ByteBuffer(capacity: 16)  // (the rejects file's destination, grown on the way)
            buffer.appendPointer(path)
            #expect(Array(buffer.bytes) == reference.bytes, "\(path.components)")
            buffer.deallocate()
        }
    }

    /// `appendDecimal`, the protocol's (any destination) and the byte buffer's own, write what `String(n)` does.
    @Test func decimalsAsTheirStrings() {
        var values: [Int64] = [0, 1, -1, 9, 10, -10, 99, 100, 101, 1_234_567_890_123, .max, .min, .max - 1, .min + 1]
        var scale: Int64 = 1
        for _ in 0..<18 { scale *= 10; values += [scale - 1, scale, -scale, -(scale - 1)] }
        for n in values {
            var writer = JSONWriter()
            writer.appendDecimal(n)
            var buffer = ByteBuffer(capacity: 16)
            buffer.appendDecimal(n)
            #expect(String(decoding: writer.bytes, as: UTF8.self) == String(n))
            #expect(String(decoding: buffer.bytes, as: UTF8.self) == String(n))
            buffer.deallocate()
        }
    }

    @Test func compactOutputWithoutWhitespace() throws {
        #expect(try roundTrip(" { \"a\" : [ 1 , true , null , { } , [ ] ] ,\n\"b\":\"x\" } ") == #"{"a":[1,true,null,{},[]],"b":"x"}"#)
    }

    @Test func duplicateKeysKeepFirstPositionAndLastValue() throws {
        #expect(try roundTrip(#"{"a":1,"b":2,"a":3}"#) == #"{"a":3,"b":2}"#)
        // Beyond the index threshold too.
        let keys = (0..<40).map { "\"k\($0)\":\($0)" }.joined(separator: ",")
        let out = try roundTrip("{\(keys),\"k3\":\"last\"}")
        #expect(out.contains(#""k2":2,"k3":"last","k4":4"#))
    }

    @Test func duplicateKeysRejectedWhenAsked() {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(Array(#"{"a":1,"a":2}"#.utf8), rejectingDuplicateKeys: true) }
    }

    @Test func keysAndStringsCompareByBytesNotCanonicalEquivalence() throws {
        let composed = try JSONParser.parse("{\"caf\\u00e9\":1}")
        let decomposed = try JSONParser.parse("{\"cafe\\u0301\":1}")
        #expect(composed != decomposed)
        #expect(composed["caf\u{e9}"] != nil)
        #expect(composed["cafe\u{301}"] == nil)
        #expect(JSONValue.string("\u{e9}") != JSONValue.string("e\u{301}"))
        // Both keys survive in one object.
        #expect(try roundTrip("{\"caf\\u00e9\":1,\"cafe\\u0301\":2}") == "{\"caf\u{e9}\":1,\"cafe\u{301}\":2}")
    }

    @Test func nullAndAbsentAreDistinct() throws {
        let v = try JSONParser.parse(#"{"a":null}"#)
        #expect(v["a"] == .null)
        #expect(v["b"] == nil)
    }

    @Test("syntax errors carry a byte offset", arguments: [
        ("{\"a\":1", 6), ("[1,2,]", 5), ("{\"a\" 1}", 5), ("tru", 3), ("1 2", 2),
    ])
    func syntaxErrors(_ text: String, _ minimumOffset: Int) {
        do {
            _ = try JSONParser.parse(text)
            Issue.record("accepted invalid JSON \(text)")
        } catch {
            #expect(error.byteOffset >= minimumOffset - 2 && error.byteOffset <= text.utf8.count)
            #expect(!error.message.isEmpty)
        }
    }

    @Test func invalidUTF8IsRejected() {
        let bytes: [UInt8] = Array("[\"a".utf8) + [0xC3, 0x28] + Array("\"]".utf8)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(bytes) }
    }

    func nested(_ depth: Int) -> String { String(repeating: "[", count: depth) + String(repeating: "]", count: depth) }

    @Test func depthLimitIsEnforcedWithAClearError() {
        for depth in [10_001, 100_000] {
            do {
                _ = try JSONParser.parse(nested(depth))
                Issue.record("accepted \(depth) levels")
            } catch {
                #expect(error.message == "nesting deeper than 10000 levels")
            }
        }
        // Unclosed deep input fails the same way, before the end of input.
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse(String(repeating: "{\"a\":", count: 100_000)) }
    }

    @Test func tenThousandLevelsBuildWriteCompareMapAndFree() throws {
        let text = nested(10_000)
        let a = try JSONParser.parse(text)
        let b = try JSONParser.parse(text)
        #expect(a == b)
        #expect(JSONWriter.string(a) == text)
        #expect(JSONWriter.string(Mapper.identity.map(a).value!) == text)
        let renamed = Mapper.keys(.foundationCamel, deep: true).map(try JSONParser.parse(String(repeating: "{\"a_b\":", count: 10_000) + "1" + String(repeating: "}", count: 10_000)))
        #expect(JSONWriter.string(renamed.value!).hasPrefix("{\"aB\":{\"aB\":"))
        #expect(JSONWriter.string(Mapper.toString.map(a).value!) == JSONWriter.string(.string(text)))
    }

    @Test func maximumDepthIsConfigurable() throws {
        let options = JSONParserOptions(maximumDepth: 3)
        _ = try JSONParser.parse("[[[1]]]", options: options)
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse("[[[[1]]]]", options: options) }
    }

    @Test func oneValuePerText() {
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse("{} {}") }
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse("") }
        #expect(throws: JSONSyntaxError.self) { try JSONParser.parse("   ") }
    }

    @Test func pushParserIsChunkInvariant() throws {
        let text = #"{"a":[1,2.5e10,"h\u00e9llo",true,null],"b":{"c":"12345678901234567890"}}"#
        let expected = try JSONParser.parse(text)
        for size in [1, 2, 7, 4096] {
            let parser = try pushParse(text, JSONTreeBuilder(), inPiecesOf: size)
            #expect(parser.handler.values == [expected], "chunk size \(size)")
        }
    }

    /// Feeds `text` to a push parser in pieces of `size` bytes, then finishes.
    func pushParse<H: JSONEventHandler>(_ text: String, _ handler: H, inPiecesOf size: Int) throws -> JSONPushParser<H> {
        let parser = JSONPushParser(handler: handler)
        let bytes = Array(text.utf8)
        var i = 0
        while i < bytes.count {
            try parser.feed(bytes[i..<min(i + size, bytes.count)])
            i += size
        }
        try parser.finish()
        return parser
    }

    /// Records each string and key with the parser's `verbatim` flag.
    struct VerbatimRecorder: JSONEventHandler {
        var texts: [(text: [UInt8], verbatim: Bool)] = []
        mutating func null() {}
        mutating func bool(_ value: Bool) {}
        mutating func number(_ text: UnsafeRawBufferPointer) {}
        mutating func string(_ utf8: UnsafeRawBufferPointer) { Issue.record("the parser must say whether a string is verbatim") }
        mutating func key(_ utf8: UnsafeRawBufferPointer) { Issue.record("the parser must say whether a key is verbatim") }
        mutating func string(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) { texts.append((Array(utf8), verbatim)) }
        mutating func key(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) { texts.append((Array(utf8), verbatim)) }
        mutating func startObject() {}
        mutating func endObject() {}
        mutating func startArray() {}
        mutating func endArray() {}
    }

    /// A string is `verbatim` only when its bytes are the input's own, never when yajl decoded escapes (writers
    /// copy verbatim text without escaping it). In one chunk, every string without escapes is verbatim; split
    /// into small chunks, a token cut by a chunk's end is not, but every text is the same.
    @Test func verbatimStringsAreTheInputsOwnBytes() throws {
        let text = #"{"plain":"abc","esc\"aped":"a\nb","":"","u":"\u00e9","raw":"é\#u{7F}","q":["x\\y","\/"]}"#
        func parse(inPiecesOf size: Int) throws -> [(text: String, verbatim: Bool)] {
            try pushParse(text, VerbatimRecorder(), inPiecesOf: size).handler.texts.map {
                (String(decoding: $0.text, as: UTF8.self), $0.verbatim)
            }
        }
        let whole = try parse(inPiecesOf: 4096)
        #expect(whole.map(\.text) == ["plain", "abc", "esc\"aped", "a\nb", "", "", "u", "é", "raw", "é\u{7F}", "q", "x\\y", "/"])
        #expect(whole.map(\.verbatim) == [true, true, false, false, true, true, true, false, true, true, true, false, false])
        for size in [1, 2, 3, 5] {
            let pieces = try parse(inPiecesOf: size)
            #expect(pieces.map(\.text) == whole.map(\.text))
            for (p, w) in zip(pieces, whole) where p.verbatim { #expect(w.verbatim, "\(p.text) in pieces of \(size)") }
        }
    }

    @Test func jsonPointerEscaping() {
        #expect(JSONPath([.key("a/b"), .key("m~n"), .index(3)]).pointer == "/a~1b/m~0n/3")
        #expect(JSONPath.root.pointer == "")
        #expect(JSONPath([.key(""), .key("~/"), .key("/~~"), .key("é~😀/x"), .index(0), .index(-1)]).pointer == "//~0~1/~1~0~0/é~0😀~1x/0/-1")
        #expect(JSONPath([.key("user"), .key("screen_name")]).pointer == "/user/screen_name")
    }

    /// The parser's per-event state has no dynamic exclusivity checks (for speed); debug builds assert instead that
    /// no handler feeds its own parser from inside an event, the one way to overlap that state.
    @Test func feedingAParserFromItsOwnEventTrapsInDebugBuilds() async {
        #if DEBUG
        await #expect(processExitsWith: .failure) {
            final class Hook: @unchecked Sendable { var action: () -> Void = {} }
            struct Reentrant: JSONEventHandler {
                let hook: Hook
                mutating func null() { hook.action() }
                mutating func bool(_ value: Bool) {}
                mutating func number(_ text: UnsafeRawBufferPointer) {}
                mutating func string(_ utf8: UnsafeRawBufferPointer) {}
                mutating func startObject() {}
                mutating func key(_ utf8: UnsafeRawBufferPointer) {}
                mutating func endObject() {}
                mutating func startArray() {}
                mutating func endArray() {}
            }
            let hook = Hook()
            let parser = JSONPushParser(handler: Reentrant(hook: hook))
            hook.action = { try? parser.feed(Array("[1]".utf8)) }
            try? parser.feed(Array("[null]".utf8))
        }
        #endif
    }

    /// Keys match by their UTF-8 bytes, never by Unicode's canonical equivalence: short (inline) and long strings,
    /// equal, canonically equal, and differing in their last byte only.
    @Test func keysMatchByBytes() {
        let long = String(repeating: "k", count: 40)
        let pairs: [(String, String, Bool)] = [
            ("", "", true), ("a", "a", true), ("a", "b", false), ("\u{E9}", "e\u{301}", false), ("\u{E9}", "\u{E9}", true),
            (long + "\u{E9}", long + "e\u{301}", false), (long + "x", long + "x", true), (long + "x", long + "y", false),
            ("abc", "abcd", false), (String("xabc".dropFirst()), "abc", true),
        ]
        for (a, b, equal) in pairs {
            #expect(bytesEqual(a, b) == equal, "\(a.debugDescription) \(b.debugDescription)")
            var object = JSONObject()
            object[a] = .bool(true)
            #expect((object.position(of: b) != nil) == equal)
        }
    }

    /// A string value is made from its UTF-8 as `String(validating:)` makes it, and refused exactly where that
    /// refuses: ASCII, every length of character, and every kind of invalid sequence (overlong, surrogate, beyond
    /// U+10FFFF, a lone continuation byte, a character cut short) at every place of strings around 64 bytes.
    @Test func stringsAreMadeAndRefusedAsTheStandardLibraryDoes() {
        var rng = SplitMix64(seed: 0x51_7A)
        let pieces: [[UInt8]] = [[0x61], [0x7F], [0xC3, 0xA9], [0xE2, 0x82, 0xAC], [0xF0, 0x9F, 0x98, 0x80], [0xEF, 0xBF, 0xBF],
                                 [0xC0, 0x80], [0xC1, 0xBF], [0xE0, 0x80, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
                                 [0xF5, 0x80, 0x80, 0x80], [0x80], [0xBF], [0xC3], [0xE2, 0x82], [0xF0, 0x9F, 0x98], [0xFF], [0x00]]
        for length in [0, 1, 2, 7, 31, 32, 33, 63, 64, 65, 70, 130] {
            for _ in 0..<40 {
                var bytes: [UInt8] = []
                while bytes.count < length {
                    let p = pieces[Int(rng.next() % UInt64(rng.next() % 3 == 0 ? pieces.count : 6))]
                    bytes += p
                }
                let expected = bytes.withUnsafeBytes { String(validating: $0, as: UTF8.self) }
                let made = bytes.withUnsafeBytes { try? JSONTreeBuilder.makeString($0) }
                #expect(made == expected, "\(bytes)")
                if let made { #expect(Array(made.utf8) == bytes) }
            }
        }
    }
}
