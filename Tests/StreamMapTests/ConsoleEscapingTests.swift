#if canImport(Glibc)
import Glibc
#endif
import StreamMapTestSupport
import Testing

@testable import StreamMap

/// The console's escaping (`Console.appendEscaped`), which finds what to rewrite a word at a time — the last 1–7
/// bytes of a text in a word of their own — held to a byte-by-byte reading of its rule at every length and offset.
@Suite struct ConsoleEscapingTests {
    /// The rule, a byte at a time: U+0000–U+001F and U+007F–U+009F as `\u00XX`; as a pointer step, `~` → `~0`
    /// and `/` → `~1`; everything else as it is.
    static func reference(_ bytes: [UInt8], pointerStep: Bool) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        func hex(_ v: UInt8) { out += Array("\\u00".utf8) + [Array("0123456789abcdef".utf8)[Int(v >> 4)], Array("0123456789abcdef".utf8)[Int(v & 15)]] }
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x20 || b == 0x7F {
                hex(b)
            } else if b == 0xC2, i + 1 < bytes.count, bytes[i + 1] < 0xA0 {
                hex(bytes[i + 1])
                i += 1
            } else if pointerStep, b == UInt8(ascii: "~") || b == UInt8(ascii: "/") {
                out += [UInt8(ascii: "~"), b == UInt8(ascii: "~") ? UInt8(ascii: "0") : UInt8(ascii: "1")]
            } else {
                out.append(b)
            }
            i += 1
        }
        return out
    }

    static func escaped(_ bytes: [UInt8], pointerStep: Bool) -> [UInt8] {
        var buffer = ByteBuffer(capacity: 16)
        defer { buffer.deallocate() }
        bytes.withUnsafeBufferPointer { Console.appendEscaped($0, to: &buffer, pointerStep: pointerStep) }
        return Array(buffer.bytes)
    }

    @Test func everyLengthAndOffset() {
        // What must be rewritten (a control byte, DEL, U+0080 and U+009F, `~` and `/`), and what must not
        // (U+00A0 and `é`, which start like U+0080–U+009F or not, a space, a letter).
        let marks: [[UInt8]] = [[0x00], [0x1F], [0x7F], [0xC2, 0x80], [0xC2, 0x9F], [UInt8(ascii: "~")], [UInt8(ascii: "/")],
                                [0xC2, 0xA0], [0xC3, 0xA9], [0x20], [UInt8(ascii: "z")]]
        var checked = 0
        for length in 0...24 {
            for offset in 0...length {
                for mark in marks {
                    let text = Array(repeating: UInt8(ascii: "a"), count: offset) + mark
                        + Array(repeating: UInt8(ascii: "b"), count: length - offset)
                    for pointerStep in [false, true] {
                        #expect(Self.escaped(text, pointerStep: pointerStep) == Self.reference(text, pointerStep: pointerStep),
                                "\(text) pointerStep \(pointerStep)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 2 * 11 * (1...25).reduce(0, +))
        // Two marks in a short tail, and a text that is nothing but marks.
        for text: [UInt8] in [[0x61, 0x01, 0x62, 0x7F], Array("x/~".utf8), [0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x1B]] {
            #expect(Self.escaped(text, pointerStep: true) == Self.reference(text, pointerStep: true), "\(text)")
        }
    }
}

/// A record's messages (`Console.recordMessages`): the location written once, and a line's end (`/pointer: `, the
/// label, the message) copied from the same place's last one when it was written from the same path, label and
/// message — held to each message written whole and escaped anew, more than the 32 places kept included. A
/// rejected record lists its fatal errors (a syntax error labelled `invalid JSON: `, the others not labelled; its
/// warnings left out), a mapped one its warnings (each labelled `warning: `).
@Suite struct ConsoleRecordMessageTests {
    /// The kinds of error a test record lists: a fatal mapping error, a fatal syntax error, a warning.
    static let kinds: [(code: MapError.Code, isFatal: Bool)] = [(.type, true), (.syntax, true), (.value, false)]
    static let paths: [JSONPath] = [
        .root, [.key("id")], [.key("id_str")], [.key("user"), .key("id")], [.key("a/b~c")], [.key("tags"), .index(3)],
        [.key("\u{1B}[31m")], [.key("caf\u{E9}")], [.key("cafe\u{301}")],
    ]
    // Messages that differ only in bytes — `é` written as one scalar and as `e` + U+0301, equal as Swift strings —,
    // control characters, and messages of every length around the escaper's words.
    static let messages: [String] = [
        "value is required, found absent", "expected integer, found string \"1449448480\"",
        "string \"caf\u{E9}\" is not a date", "string \"cafe\u{301}\" is not a date", "bell \u{7}\u{85} here", "",
        String(repeating: "x", count: 7), String(repeating: "y", count: 70),
    ]

    /// Writes `body`'s messages to a console on a file and returns the file's bytes.
    static func written(colour: Bool, _ body: (Console) -> Void) throws -> [UInt8] {
        let path = try TestScratch.file([])
        let fd = open(path, O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        do {
            let console = Console(fd: fd, colour: colour)
            body(console)
            console.flush()
        }
        close(fd)
        return try TestScratch.read(path)
    }

    /// A record message with colour: the location in bold, the label in yellow (a warning) or red.
    static func colouredLine(name: String, line: Int, source: JSONPath, label: String, message: String) -> [UInt8] {
        func escaped(_ text: String, pointerStep: Bool = false) -> [UInt8] {
            ConsoleEscapingTests.reference(Array(text.utf8), pointerStep: pointerStep)
        }
        let esc: [UInt8] = [0x1B]
        var out = Array("streammap: ".utf8) + esc + Array("[1m".utf8) + escaped(name) + Array(":\(line):".utf8) + esc
            + Array("[0m ".utf8)
        for step in source.components {
            switch step {
            case .key(let k): out += Array("/".utf8) + escaped(k, pointerStep: true)
            case .index(let i): out += Array("/\(i)".utf8)
            }
        }
        if !source.isRoot { out += Array(": ".utf8) }
        if !label.isEmpty { out += esc + Array((label.hasPrefix("w") ? "[1;33m" : "[1;31m").utf8) + Array(label.utf8) + esc + Array("[0m".utf8) }
        return out + escaped(message) + [0x0A]
    }

    /// How a test record is reported: rejected (`.mapping` of its errors, or `.syntax` of its first message alone,
    /// or `.noOutput` of its errors as warnings), or mapped with its errors as warnings.
    enum Report { case mapping, syntax, noOutput, warnings }

    @Test func copiedEndsSayWhatEachRecordSays() throws {
        var random = SplitMix64(seed: 0x5EED_C0DE)
        var records: [(name: String, line: Int, report: Report, errors: [(JSONPath, Int, String)])] = []
        for line in 1...600 {
            // Mostly the same errors as the record before (as a run of rejects has), sometimes one changed.
            var errors = records.last?.errors ?? []
            let count = Int(random.next() % (random.next() % 20 == 0 ? 40 : 6))
            while errors.count < count { errors.append((.root, 0, "")) }
            errors.removeLast(errors.count - count)
            for i in errors.indices where random.next() % 3 == 0 {
                switch random.next() % 4 {
                case 0: errors[i].0 = Self.paths[Int(random.next() % UInt64(Self.paths.count))]
                case 1: errors[i].1 = Int(random.next() % UInt64(Self.kinds.count))
                case 2:  // The same path and message, made anew (equal, in other storage).
                    errors[i].0 = JSONPath(Array(errors[i].0.components))
                    errors[i].2 = String(decoding: Array(errors[i].2.utf8), as: UTF8.self)
                default: errors[i].2 = Self.messages[Int(random.next() % UInt64(Self.messages.count))]
                }
            }
            let report: Report = switch random.next() % 16 {
            case 0: .syntax
            case 1: .noOutput
            case 2, 3: .warnings
            default: .mapping
            }
            records.append((random.next() % 50 == 0 ? "other.ndjson" : "in\u{7}.ndjson", line, report, errors))
        }
        /// Each line a record's report says: its path, label and message.
        func lines(_ record: (name: String, line: Int, report: Report, errors: [(JSONPath, Int, String)]))
            -> [(JSONPath, String, String)] {
            switch record.report {
            case .syntax: return [(.root, "invalid JSON: ", record.errors.first?.2 ?? "")]
            case .noOutput: return [(.root, "", "the mapper produced no output for this record")]
            case .warnings: return record.errors.map { ($0.0, "warning: ", $0.2) }
            case .mapping:
                return record.errors.filter { Self.kinds[$0.1].isFatal }
                    .map { ($0.0, Self.kinds[$0.1].code == .syntax ? "invalid JSON: " : "", $0.2) }
            }
        }
        for colour in [false, true] {
            let copied = try Self.written(colour: colour) { console in
                for record in records {
                    let errors = record.errors.map {
                        MapError(Self.kinds[$0.1].code, $0.2, isFatal: Self.kinds[$0.1].isFatal, sourcePath: $0.0)
                    }
                    switch record.report {
                    case .syntax:
                        let failure = RecordFailure.syntax(JSONSyntaxError(byteOffset: 0, message: record.errors.first?.2 ?? ""))
                        console.recordMessages(input: record.name, line: record.line, failure: failure)
                    case .noOutput:
                        console.recordMessages(input: record.name, line: record.line,
                                               failure: .noOutput(warnings: errors.map { var w = $0; w.isFatal = false; return w }))
                    case .warnings: console.recordMessages(input: record.name, line: record.line, warnings: errors)
                    case .mapping: console.recordMessages(input: record.name, line: record.line, failure: .mapping(errors))
                    }
                }
            }
            let whole = try Self.written(colour: colour) { console in
                for record in records {
                    for (path, label, message) in lines(record) {
                        if colour {
                            // (Colour: each line put together here, its pieces escaped by the rule's reference.)
                            console.write(Self.colouredLine(name: record.name, line: record.line, source: path, label: label,
                                                            message: message))
                        } else {
                            console.error(path.isRoot ? "\(record.name):\(record.line): \(label)\(message)"
                                                      : "\(record.name):\(record.line): \(path.pointer): \(label)\(message)")
                        }
                    }
                }
            }
            #expect(copied.count > 20_000)
            #expect(copied == whole, "colour \(colour)")
        }
    }
}
