// Hostile input through the real binary, the small and fast cases (scripts/hardening.sh runs these and the big
// ones against a release build): every class of malformed JSON, raw NUL bytes, byte order marks, CRLF and blank
// lines with exact line numbers, and 100 000 levels of nesting — with both engines, a spec that writes every
// record back (identity) and one that reads a single field and skips the rest (pick).

import Foundation
import Testing

@Suite("Hardening: hostile input through the binary")
struct HardeningCLITests {
    static let identity = #"{"mapper":"identity"}"#
    static let pick = #"{"fields":{"id":{"to":"id","missing":"omit"}}}"#
    static let engines = ["stream", "tree"]

    /// A record that must be rejected, and a fragment of the reason.
    struct Bad {
        var bytes: [UInt8]
        var reason: String
        init(_ text: String, _ reason: String) { bytes = Array(text.utf8); self.reason = reason }
        init(bytes: [UInt8], _ reason: String) { self.bytes = bytes; self.reason = reason }
    }

    /// Every class of malformed JSON (the fragments are yajl's and StreamMap's messages).
    static let malformed: [Bad] = [
        // structure
        Bad(#"{"a":1,}"#, "invalid object key"), Bad(#"{"a" 1}"#, "separated by a colon"), Bad("{a:1}", "invalid char"),
        Bad("[1,,2]", "unallowed token"), Bad(#"{"a":}"#, "unallowed token"), Bad(#"{"a":1}}"#, "trailing garbage"),
        Bad("]", "unallowed token"), Bad(#"{"a":1]"#, "expect ',' or '}'"),
        // strings: raw control characters, invalid UTF-8 (overlong, surrogates, above U+10FFFF, truncated); "UTF":
        // StreamMap's "invalid UTF-8 in string" or yajl's "invalid bytes in UTF8 string", whichever layer sees it first
        Bad("\"a\tb\"", "invalid character inside string"), Bad("\"a\u{1}b\"", "invalid character inside string"),
        Bad(bytes: [0x22, 0xFF, 0x22], "UTF"), Bad(bytes: [0x22, 0xC0, 0xAF, 0x22], "UTF"),
        Bad(bytes: [0x22, 0xE0, 0x80, 0x80, 0x22], "UTF"), Bad(bytes: [0x22, 0xED, 0xA0, 0x80, 0x22], "UTF"),
        Bad(bytes: [0x22, 0xF4, 0x90, 0x80, 0x80, 0x22], "UTF"), Bad(bytes: [0x22, 0xF5, 0x80, 0x80, 0x80, 0x22], "UTF"),
        Bad(bytes: [0x22, 0xE2, 0x82, 0x22], "UTF"), Bad(bytes: [0x7B, 0x22, 0xC3, 0x22, 0x3A, 0x31, 0x7D], "UTF"),
        // escapes
        Bad(#""\x""#, "occurs before a character"), Bad(#""\q""#, "occurs before a character"), Bad(#""\u12G4""#, "non-hex"),
        Bad(#""\u12""#, "non-hex"), Bad(#""\uD800""#, #"lone surrogate \uD800"#), Bad(#""\uDC00""#, #"lone surrogate \uDC00"#),
        Bad(#""\uD888\u1234""#, #"lone surrogate \uD888"#), Bad(#""a\uDBFF""#, #"lone surrogate \uDBFF"#),
        // numbers
        Bad("01", "trailing garbage"), Bad("1.", "after the decimal point"), Bad(".5", "invalid char"), Bad("-", "after the minus sign"),
        Bad("1e", "after the exponent"), Bad("1e+", "after the exponent"), Bad("+1", "invalid char"), Bad("0x10", "trailing garbage"),
        Bad("-01", "trailing garbage"), Bad("NaN", "invalid char"), Bad("Infinity", "invalid char"), Bad("-Infinity", "after the minus sign"),
        // literals
        Bad("tru", "invalid string"), Bad("nul", "invalid string"), Bad("True", "invalid char"), Bad("NULL", "invalid char"),
        Bad("falsey", "trailing garbage"), Bad("nulll", "trailing garbage"),
        // trailing garbage
        Bad("{} x", "trailing garbage"), Bad("{}{}", "trailing garbage"), Bad("1 2", "trailing garbage"),
        Bad(#"{"a":1} //c"#, "trailing garbage"), Bad("[] ]", "trailing garbage"),
        // truncation
        Bad(#"{"a":[1,2"#, "premature EOF"), Bad(#"{"a":"b"#, "premature EOF"), Bad("[[[[", "premature EOF"),
        Bad(#"{"a""#, "premature EOF"), Bad("{", "premature EOF"), Bad(#""abc"#, "premature EOF"),
        // whitespace that is not JSON's
        Bad("\u{0C}{}", "form feed"), Bad("{}\u{0B}", "vertical tab"), Bad("{\"a\":\u{0C}1}", "form feed"),
    ]

    /// Writes `bytes` to a fresh temporary file.
    static func file(_ bytes: [UInt8], name: String) throws -> String {
        let url = try CLI.temporaryDirectory().appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    /// Checks standard error: one line per rejected record, in order, `streammap: NAME:LINE: …REASON…`; no raw
    /// control bytes (nothing from the input is echoed unescaped).
    static func expectRejects(_ r: CLIResult, name: String, _ expected: [(line: Int, reason: String)],
                              sourceLocation: SourceLocation = #_sourceLocation) {
        let lines = r.stderrLines
        #expect(lines.count == expected.count, "stderr has \(lines.count) lines, expected \(expected.count):\n\(r.stderr.prefix(2000))",
                sourceLocation: sourceLocation)
        for (got, want) in zip(lines, expected) {
            let prefix = "streammap: \(name):\(want.line): "
            #expect(got.hasPrefix(prefix) && got.dropFirst(prefix.count).contains(want.reason),
                    "\(got)\nexpected \(prefix)…\(want.reason)…", sourceLocation: sourceLocation)
        }
        #expect(!r.stderr.unicodeScalars.contains { $0.value < 0x20 && $0 != "\n" || $0.value == 0x7F },
                "raw control characters on stderr", sourceLocation: sourceLocation)
    }

    /// Each malformed record is rejected with its line number — alone on its line and inside a field the pick
    /// spec skips —, every good record between them is written, and a final bad record without a newline is
    /// rejected too.
    @Test(arguments: engines)
    func everyClassOfMalformedJSONIsRejectedWithItsLineAndEveryOtherRecordKept(_ engine: String) throws {
        var input: [UInt8] = []
        var expectedOut = ""
        var rejects: [(line: Int, reason: String)] = []
        var line = 0
        func good(_ id: Int) {
            line += 1
            input += Array("{\"id\":\(id)}\n".utf8)
            expectedOut += "{\"id\":\(id)}\n"
        }
        good(0)
        for (i, bad) in Self.malformed.enumerated() {
            line += 1
            input += bad.bytes + [0x0A]
            rejects.append((line, bad.reason))
            line += 1
            input += Array(#"{"skip":"#.utf8) + bad.bytes + Array(#","id":-1}"#.utf8) + [0x0A]
            rejects.append((line, "invalid JSON"))
            good(i + 1)
        }
        line += 1
        input += Array(#"{"id":"#.utf8)  // the last line, without a newline
        rejects.append((line, "premature EOF"))
        let path = try Self.file(input, name: "malformed.ndjson")
        for spec in [Self.identity, Self.pick] {
            let r = try CLI.run(["--spec", try CLI.temporaryFile(spec), "--engine", engine, path])
            #expect(r.status == 1)
            #expect(r.stdout == expectedOut)
            Self.expectRejects(r, name: path, rejects)
        }
    }

    @Test(arguments: engines)
    func rawNULBytesAreRejectedAndNeverEchoed(_ engine: String) throws {
        let input: [UInt8] = Array(#"{"id":1}"#.utf8) + [0x0A, 0x00, 0x0A] + Array(#"{"id":2}"#.utf8) + [0x00, 0x0A]
            + Array(#"{"id":"a"#.utf8) + [0x00] + Array(#"b"}"#.utf8) + [0x0A, 0x00] + Array(#"{"id":3}"#.utf8) + [0x0A]
            + Array(#"{"id":"a\u0000b"}"#.utf8) + [0x0A] + Array(#"{"x":"#.utf8) + [0x00, 0x7D, 0x0A] + Array(#"{"id":4}"#.utf8)
        let r = try CLI.run(["--spec", try CLI.temporaryFile(Self.identity), "--engine", engine], stdinData: Data(input))
        #expect(r.status == 1)
        #expect(r.stdout == "{\"id\":1}\n{\"id\":\"a\\u0000b\"}\n{\"id\":4}\n")
        Self.expectRejects(r, name: "<stdin>", [(2, "invalid JSON"), (3, "trailing garbage"), (4, "invalid character inside string"),
                                               (5, "invalid JSON"), (7, "invalid JSON")])
    }

    /// CRLF line ends, empty lines, CR-only and space-only lines all count; a CR inside a string or between two
    /// values rejects its record; the last line has no newline.
    @Test(arguments: engines)
    func crlfAndBlankLinesKeepExactLineNumbers(_ engine: String) throws {
        let input = "{\"id\":1}\r\n\r\n\n{\"id\":\r\n   \n{\"id\":2}\r\n{\"id\":\"x\ry\"}\n\t{\"id\":3} \r\n{\"id\":4}\r{\"id\":5}\n\r\n\n{\"id\":\n{\"id\":6}"
        let rejects: [(line: Int, reason: String)] = [(4, "premature EOF"), (7, "invalid character inside string"), (9, "trailing garbage"), (12, "premature EOF")]
        let path = try Self.file(Array(input.utf8), name: "crlf.ndjson")
        for spec in [Self.identity, Self.pick] {
            let specPath = try CLI.temporaryFile(spec)
            let fromFile = try CLI.run(["--spec", specPath, "--engine", engine, path])
            #expect(fromFile.status == 1)
            #expect(fromFile.stdout == "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":6}\n")
            Self.expectRejects(fromFile, name: path, rejects)
            let fromStdin = try CLI.run(["--spec", specPath, "--engine", engine], stdin: input)
            #expect(fromStdin.stdout == fromFile.stdout)
            Self.expectRejects(fromStdin, name: "<stdin>", rejects)
        }
    }

    /// A BOM is skipped at the start of each input (files and standard input) and rejects its record anywhere
    /// else; inside a string it is the character U+FEFF.
    @Test(arguments: engines)
    func byteOrderMarksAtTheStartAndInTheMiddle(_ engine: String) throws {
        let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
        let a = bom + Array("{\"id\":1}\n".utf8) + bom + Array("{\"id\":2}\n{\"id\":".utf8) + bom + Array("3}\n{\"id\":\"".utf8) + bom
            + Array("\"}\n{\"id\":5}".utf8) + bom + Array("\n{\"id\":6}".utf8)
        let pathA = try Self.file(a, name: "a.ndjson"), pathB = try Self.file(bom + Array("{\"id\":7}\n".utf8), name: "b.ndjson")
        let r = try CLI.run(["--spec", try CLI.temporaryFile(Self.identity), "--engine", engine, pathA, pathB, "-"],
                            stdinData: Data(bom + Array("{\"id\":8}\n".utf8)))
        #expect(r.status == 1)
        #expect(r.stdout == "{\"id\":1}\n{\"id\":\"\u{FEFF}\"}\n{\"id\":6}\n{\"id\":7}\n{\"id\":8}\n")
        Self.expectRejects(r, name: pathA, [(2, "invalid JSON"), (3, "invalid JSON"), (5, "trailing garbage")])
    }

    /// 10 000 levels are accepted; 10 001 and 100 000 levels — arrays and objects, closed and unclosed, also inside
    /// a skipped field — are rejected with a clear message, and the records around them are kept.
    @Test(arguments: engines)
    func deepNestingIsRejectedClearly(_ engine: String) throws {
        func repeated(_ s: String, _ n: Int) -> String { String(repeating: s, count: n) }
        let n = 100_000
        let lines = [
            "{\"id\":0}", repeated("[", 10_000) + repeated("]", 10_000), repeated("[", 10_001) + repeated("]", 10_001),
            repeated("[", n) + repeated("]", n), "{\"id\":1}", repeated("{\"a\":", n) + "1" + repeated("}", n), "{\"id\":2}",
            repeated("[", n), "{\"id\":3}", repeated("{\"a\":", n), "{\"id\":4,\"skip\":" + repeated("[", n) + repeated("]", n) + "}",
            "{\"id\":5}",
        ]
        let path = try Self.file(Array(lines.joined(separator: "\n").utf8), name: "deep.ndjson")
        let deep = "nesting deeper than 10000 levels"
        let identity = try CLI.run(["--spec", try CLI.temporaryFile(Self.identity), "--engine", engine, path])
        #expect(identity.status == 1)
        #expect(identity.stdout == "{\"id\":0}\n" + lines[1] + "\n{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":5}\n")
        Self.expectRejects(identity, name: path, [(3, deep), (4, deep), (6, deep), (8, deep), (10, deep), (11, deep)])
        let pick = try CLI.run(["--spec", try CLI.temporaryFile(Self.pick), "--engine", engine, path])
        #expect(pick.status == 1)
        #expect(pick.stdout == "{\"id\":0}\n{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":5}\n")
        // Line 2 is a (10 000 deep) array: the pick spec needs an object, a mapping error.
        Self.expectRejects(pick, name: path, [(2, "expected object, found array"), (3, deep), (4, deep), (6, deep), (8, deep), (10, deep), (11, deep)])
    }

    /// 1 000 bad lines among 1 000 good ones: every good one out, every bad one reported once.
    @Test(arguments: engines)
    func badLinesAmongGoodOnesAreCountedExactly(_ engine: String) throws {
        let input = (1...2000).map { $0 % 2 == 1 ? "{\"id\":\($0)}" : "{\"id\":\($0)," }.joined(separator: "\n") + "\n"
        let r = try CLI.run(["--spec", try CLI.temporaryFile(Self.pick), "--engine", engine], stdin: input)
        #expect(r.status == 1)
        #expect(r.stdoutLines.count == 1000)
        #expect(r.stdoutLines.last == "{\"id\":1999}")
        Self.expectRejects(r, name: "<stdin>", (1...1000).map { ($0 * 2, "premature EOF") })
    }
}
