import Testing
@testable import StreamMap

/// Where yajl 2.1 is laxer than RFC 8259, StreamMap rejects the record (README, "Robustness").
@Suite("Strict JSON over yajl")
struct StrictJSONTests {
    static let identity = Mapper(.object(ObjectMapping(fields: [], unmapped: .keep)))

    /// The outcome of both engines, whole and in pieces of every size; they must all agree.
    func outcomes(_ text: String) -> [RecordOutcome] { outcomesOfBytes(Array(text.utf8)) }

    func outcomesOfBytes(_ record: [UInt8]) -> [RecordOutcome] {
        var results: [RecordOutcome] = []
        var writer = JSONWriter()
        let tree = TreeEngine(mapper: Self.identity)
        results.append(record.withUnsafeBytes { tree.map(record: $0, into: &writer) })
        var stream = StreamEngine(mapper: Self.identity)
        results.append(record.withUnsafeBytes { stream.map(record: $0, into: &writer) })
        for size in [1, 2, 3, 5, 8] {
            stream.beginRecord()
            var i = 0
            while i < record.count {
                record[i..<min(i + size, record.count)].withUnsafeBytes { stream.continueRecord($0) }
                i += size
            }
            results.append(stream.endRecord(into: &writer))
        }
        return results
    }

    @Test("rejected, with the same error everywhere", arguments: [
        (#"{"a":"\ud800"}"#, 6, #"lone surrogate \uD800 in a string: not a Unicode character"#),
        (#"{"a":"x\udc00"}"#, 7, #"lone surrogate \uDC00 in a string: not a Unicode character"#),
        (#"{"a":"\ud888\u1234"}"#, 6, #"lone surrogate \uD888 in a string: not a Unicode character"#),
        (#"{"a":"\uD83Dx"}"#, 6, #"lone surrogate \uD83D in a string: not a Unicode character"#),
        (#"{"a":"\ud800\ud800\udc00"}"#, 6, #"lone surrogate \uD800 in a string: not a Unicode character"#),
        (#"{"\udfff":1}"#, 2, #"lone surrogate \uDFFF in a string: not a Unicode character"#),
        ("{\"a\":1}\u{0C}", 7, #"form feed (\f) is not JSON whitespace, nor allowed raw in a string"#),
        ("{\"a\":\u{0B}1}", 5, #"vertical tab (\v) is not JSON whitespace, nor allowed raw in a string"#),
    ])
    func rejected(_ text: String, _ offset: Int, _ message: String) {
        for outcome in outcomes(text) {
            #expect(outcome == .rejected(.syntax(JSONSyntaxError(byteOffset: offset, message: message))), "\(text)")
        }
    }

    @Test("accepted", arguments: [
        #"{"a":"\ud83d\ude00"}"#, #"{"a":"\uD83D\uDE00x"}"#, #"{"a":"\u00e9\u0000"}"#, "{\"a\":\"\\f\\u000b\"}",
        "{\"a\":\"form\u{0C}feed\"}",  // a raw control character in a string is yajl's to reject, not ours
    ])
    func notOurs(_ text: String) {
        let all = outcomes(text)
        #expect(all.allSatisfy { $0 == all[0] }, "\(all)")
        if text.contains("ud83d") || text.contains("uD83D") || text.contains("u00e9") || text.contains("000b") {
            #expect(all[0] == .mapped(warnings: []))
        }
    }

    /// Strict UTF-8 in strings and keys, mapped or skipped, however the bytes are split.
    @Test("invalid UTF-8 is rejected", arguments: [
        [0xC0, 0xAF],  // overlong "/"
        [0xE0, 0x80, 0x80],  // overlong NUL
        [0xED, 0xA0, 0x80],  // an encoded surrogate
        [0xF4, 0x90, 0x80, 0x80],  // above U+10FFFF
        [0xF5, 0x80, 0x80, 0x80],  // lead byte F5
        [0xE2, 0x82],  // truncated before the closing quote
        [0x80],  // a lone continuation byte
    ] as [[UInt8]])
    func invalidUTF8(_ bad: [UInt8]) {
        for (prefix, suffix) in [("{\"a\":\"x", "y\"}"), ("{\"skip\":[\"", "\"],\"a\":1}"), ("{\"k", "\":1}")] {
            let record = Array(prefix.utf8) + bad + Array(suffix.utf8)
            let results = outcomesOfBytes(record)
            #expect(results.allSatisfy { $0 == results[0] }, "\(results)")
            guard case .rejected(.syntax(let e)) = results[0] else {
                Issue.record("accepted invalid UTF-8 \(bad) in \(prefix)")
                continue
            }
            #expect(e.message == "invalid UTF-8 in string")
            // Reported at the first byte that cannot continue a valid character: an invalid lead byte itself, a bad
            // second byte, or the quote that cuts a character short.
            let badLead = bad[0] < 0xC2 || bad[0] > 0xF4
            let expected = prefix.utf8.count + (badLead ? 0 : bad == [0xE2, 0x82] ? 2 : 1)
            #expect(e.byteOffset == expected)
        }
    }

    @Test func validMultiByteCharactersPassInEveryPiece() {
        let results = outcomesOfBytes(Array("{\"é\":\"日本語 😀 ä\",\"skip\":[\"Ω\"]}".utf8))
        #expect(results.allSatisfy { $0 == .mapped(warnings: []) })
    }

    /// An earlier yajl error wins over a later strictness violation, however the input is split.
    @Test func anEarlierSyntaxErrorIsReportedFirst() {
        let all = outcomes(#"{"a":tru,"b":"\ud800"}"#)
        #expect(all.allSatisfy { $0 == all[0] })
        guard case .rejected(.syntax(let e)) = all[0] else {
            Issue.record("not rejected: \(all[0])")
            return
        }
        #expect(!e.message.contains("surrogate"))
    }
}

/// The push parser takes bytes in any chunks (`JSONPushParser.feed`); the strict scanner in front of yajl keeps
/// its state across them, so every verdict — accepted, or the same error at the same offset — must not depend on
/// where the input is cut. Every input is cut at every position, and into pieces of 1 to 7 bytes.
@Suite("Strict JSON: chunk invariance of the push parser")
struct StrictChunkInvarianceTests {
    struct NoOp: JSONEventHandler {
        mutating func null() {}
        mutating func bool(_ value: Bool) {}
        mutating func number(_ text: UnsafeRawBufferPointer) {}
        mutating func string(_ utf8: UnsafeRawBufferPointer) {}
        mutating func startObject() {}
        mutating func key(_ utf8: UnsafeRawBufferPointer) {}
        mutating func endObject() {}
        mutating func startArray() {}
        mutating func endArray() {}
    }

    /// nil when accepted, else the error.
    func verdict(_ bytes: [UInt8], cuts: [Int]) -> JSONSyntaxError? {
        let parser = JSONPushParser(handler: NoOp())
        do {
            var start = 0
            for cut in cuts + [bytes.count] where cut >= start {
                try parser.feed(bytes[start..<cut])
                start = cut
            }
            try parser.finish()
            return nil
        } catch {
            return error as? JSONSyntaxError ?? JSONSyntaxError(byteOffset: -1, message: "\(error)")
        }
    }

    static let inputs: [[UInt8]] = [
        #"{"a":"\ud83d\ude00 ok","b":"\u00e9\n\"\\"}"#,
        #"{"a":"x\ud800"}"#, #"{"a":"\ud800\u0041"}"#, #"{"a":"\udc00"}"#, #"{"a":"\ud800\ud800\udc00"}"#,
        #"{"a":"\ud800\uZZ00"}"#, #"{"a":"\ud800\n"}"#, #"{"a":tru,"b":"\ud800"}"#,
        "{\"a\":1}\u{0C}", "{\"a\":\u{0B}1}",
    ].map { Array($0.utf8) } + [
        Array("{\"é\":\"日本語 😀\",\"k\":[\"Ω\"]}".utf8),
        Array(#"{"a":""#.utf8) + [0xE0, 0x80, 0x80] + Array(#""}"#.utf8),
        Array(#"{"a":""#.utf8) + [0xED, 0xA0, 0x80] + Array(#""}"#.utf8),
        Array(#"{"a":"x"#.utf8) + [0xF4, 0x90, 0x80, 0x80] + Array(#""}"#.utf8),
        Array(#"{"a":"x"#.utf8) + [0xE2, 0x82] + Array(#""}"#.utf8),
    ]

    @Test(arguments: inputs)
    func everyCutGivesTheSameVerdict(_ bytes: [UInt8]) {
        let whole = verdict(bytes, cuts: [])
        for cut in 0...bytes.count {
            #expect(verdict(bytes, cuts: [cut]) == whole, "cut at \(cut) of \(String(decoding: bytes, as: UTF8.self))")
        }
        for size in 1...7 {
            #expect(verdict(bytes, cuts: Array(stride(from: size, to: bytes.count, by: size))) == whole, "pieces of \(size)")
        }
    }
}
