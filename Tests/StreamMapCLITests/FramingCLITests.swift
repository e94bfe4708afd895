import Foundation
import Testing

/// `--framing auto|ndjson|array|concat|seq`: each framing, and what `auto` (the default) picks.
@Suite("streammap framings")
struct FramingCLITests {
    static let ids = "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n"

    @Test(arguments: [
        ("ndjson", "{\"id\":1}\n\n{\"id\":2}\r\n{\"id\":3}"),
        ("array", "[\n  {\"id\":1},\n  {\"id\":2},\n  {\"id\":3}\n]\n"),
        ("array", "[{\"id\":1},{\"id\":2},{\"id\":3}]"),
        ("concat", "{\"id\":1}{\"id\":2} {\"id\":3}"),
        ("concat", "{\n  \"id\": 1\n}\n{\n  \"id\": 2\n}\n{\"id\":3}\n"),
        ("seq", "\u{1E}{\"id\":1}\n\u{1E}{\"id\":2}\n\u{1E}{\"id\":3}\n"),
    ])
    func eachFramingExplicitlyAndDetected(_ framing: String, _ input: String) throws {
        let explicit = try CLI.run(["--framing", framing, "--field", "id"], stdin: input)
        #expect(explicit.stdout == Self.ids)
        #expect(explicit.stderr == "")
        #expect(explicit.status == 0)
        let auto = try CLI.run(["--field", "id"], stdin: input)
        #expect(auto.stdout == Self.ids)
        #expect(auto.status == 0)
    }

    @Test func rejectedArrayElementsCarryTheirLine() throws {
        let input = "[\n  {\"id\":1},\n  {\"id\":\"x\"},\n  {\"id\":3}\n]\n"
        let r = try CLI.run(["--type", "id=integer"], stdin: input)
        #expect(r.stdout == "{\"id\":1}\n{\"id\":3}\n")
        #expect(r.stderr == "streammap: <stdin>:3: /id: expected integer, found string \"x\"\n")
        #expect(r.status == 1)
    }

    @Test func anUnterminatedArrayRejectsItsTail() throws {
        let r = try CLI.run(["--framing", "array"], stdin: "[{\"id\":1}, {\"id\":2}")
        #expect(r.stdout == "{\"id\":1}\n")
        #expect(r.stderr == "streammap: <stdin>:1: invalid JSON: the input ends inside the top-level array (no closing ']')\n")
        #expect(r.status == 1)
    }

    @Test func ndjsonFramingOnAPrettyPrintedArrayRejectsItsLines() throws {
        let r = try CLI.run(["--framing", "ndjson", "-q", "--stats"], stdin: "[\n  {\"id\":1}\n]\n")
        #expect(r.stdout == "{\"id\":1}\n")  // line 2 happens to be a record; lines 1 and 3 are not JSON
        #expect(r.stderr.hasPrefix(#"{"recordsIn":3,"recordsOut":1,"recordsRejected":2,"#))
        #expect(r.status == 1)
    }

    @Test func autoDecidesPerInput() throws {
        let dir = try CLI.temporaryDirectory()
        let array = dir.appendingPathComponent("a.json"), lines = dir.appendingPathComponent("b.ndjson")
        try Data("[{\"id\":1},\n{\"id\":2}]".utf8).write(to: array)
        try Data("{\"id\":3}\n{\"id\":4}\n".utf8).write(to: lines)
        let r = try CLI.run([array.path, lines.path])
        #expect(r.stdout == "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n{\"id\":4}\n")
        #expect(r.status == 0)
    }

    @Test func autoStreamsAFirstLineLongerThanItsDecisionWindow() throws {
        let pad = String(repeating: "x", count: 1_500_000)
        let input = "{\"id\":1,\"pad\":\"\(pad)\"}\n{\"id\":2}\n"
        let r = try CLI.run(["--field", "id", "--stats"], stdin: input)
        #expect(r.stdout == "{\"id\":1}\n{\"id\":2}\n")
        #expect(r.status == 0)
        let concat = try CLI.run(["--field", "id", "--framing", "concat"], stdin: "{\"id\":1,\"pad\":\"\(pad)\"}{\"id\":2}")
        #expect(concat.stdout == "{\"id\":1}\n{\"id\":2}\n")
    }

    /// An 80 MB NDJSON line: `{"id":1,"payload":[…],"user":{"name":"Ada"}}`, compact and canonical (identity
    /// writes it back as it is).
    static func hugeLine(in dir: URL) throws -> (path: String, bytes: Int) {
        let file = dir.appendingPathComponent("huge.ndjson")
        let item = #"{"k":"vvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv","n":[1,2.5,true,null],"o":{"a":"é"}}"#
        var record = Data(#"{"id":1,"payload":["#.utf8)
        let block = Data(Array(repeating: item, count: 1000).joined(separator: ",").utf8)
        for i in 0..<700 {
            if i > 0 { record.append(contentsOf: Array(",".utf8)) }
            record.append(block)
        }
        record.append(contentsOf: Array(#"],"user":{"name":"Ada"}}"#.utf8) + [0x0A])
        try record.write(to: file)
        return (file.path, record.count)
    }

    /// Peak RSS in KB of a command run under /usr/bin/time, its output piped to `consumer`, which must succeed.
    static func peakKB(_ command: String, outputTo consumer: String = "cat >/dev/null") throws -> Int {
        let r = try CLI.shell("set -o pipefail; { /usr/bin/time -f 'rss %M' -o /dev/fd/3 \(command) 2>/dev/null | \(consumer); } 3>&1")
        #expect(r.status == 0 && r.stdout.hasPrefix("rss "), "\(command): \(r.stdout)")
        return Int(r.stdout.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? .max
    }

    /// The default framing must not hold a huge NDJSON line: an 80 MB record that keeps two small fields is mapped
    /// in far less memory than its size (peak RSS measured by /usr/bin/time; the full 200 MB measurement is
    /// scripts/measure-memory.sh).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/time")))
    func autoStreamsAHugeLineInBoundedMemory() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (file, bytes) = try Self.hugeLine(in: dir)
        #expect(bytes > 80_000_000)
        let r = try CLI.shell("/usr/bin/time -f 'rss %M' streammap --field id --field user.name=name '\(file)' 2>&1")
        #expect(r.stdout.hasPrefix("{\"id\":1,\"name\":\"Ada\"}\nrss "))
        let kb = Int(r.stdout.split(separator: " ").last?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "") ?? .max
        #expect(kb < 48 * 1024, "peak RSS \(kb) KB for an 80 MB line")
    }

    /// A huge record that is written (almost) whole is held once: its output, which must be written whole or not at
    /// all. Passing from buffer to buffer (a kept member's, the object's, the engine's, the writer's), it is never
    /// held twice — identity, `unmapped: keep` and a rename of the big member each peak at the record plus the
    /// program's own memory (before: 2× for identity, 3× for keep).
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/time")))
    func aHugeRecordWrittenWholeIsHeldOnce() throws {
        let dir = try CLI.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let (file, bytes) = try Self.hugeLine(in: dir)
        let identity = try CLI.temporaryFile(#"{"mapper":"identity"}"#)
        // Identity writes the canonical line back as it is.
        let runs = [
            ("--spec '\(identity)'", "cmp - '\(file)'"),
            ("--keep-unmapped --field id=ident", "cat >/dev/null"),
            ("--keep-unmapped --field payload=items", "cat >/dev/null"),
        ]
        // Under AddressSanitizer (scripts/sanitize.sh, which sets ASAN_OPTIONS) the runs still check the output and
        // the copies' memory accesses, but RSS means nothing: its allocator keeps freed blocks in quarantine.
        let measured = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil
        for (flags, consumer) in runs {
            let kb = try Self.peakKB("streammap \(flags) '\(file)'", outputTo: consumer)
            // The program's own memory (a debug build, yajl, the read buffers) is well under 40 MB.
            if measured {
                #expect(kb < bytes / 1024 + 40 * 1024, "\(flags): peak RSS \(kb) KB for a \(bytes / 1_000_000) MB record")
            }
        }
    }

    @Test func autoTakesALongOneLineArrayAsAnArray() throws {
        let pad = String(repeating: "y", count: 600_000)
        let input = "[{\"id\":1,\"pad\":\"\(pad)\"},{\"id\":2,\"pad\":\"\(pad)\"},{\"id\":3}]"
        let r = try CLI.run(["--field", "id"], stdin: input)
        #expect(r.stdout == Self.ids)
        #expect(r.status == 0)
    }

    @Test func emptyAndBlankInputsHaveNoRecords() throws {
        for input in ["", "\n\n  \n", "[]"] {
            let r = try CLI.run(["--stats"], stdin: input)
            #expect(r.stdout == "")
            #expect(r.stderr.hasPrefix(#"{"recordsIn":0,"#))
            #expect(r.status == 0)
        }
    }

    @Test func unknownFramingIsAUsageError() throws {
        let r = try CLI.run(["--framing", "csv"])
        #expect(r.status == 64)
    }
}
