import Testing
#if canImport(Glibc)
import Glibc
#endif

@testable import StreamMap

/// The record pipeline of the library: what the command line, `MappingFeed` and the async sequence run on.
@Suite("RecordPipeline")
struct RecordPipelineTests {
    /// Keeps every result as text: `mapped LINE:OFFSET {json}` or `rejected LINE:OFFSET <first error> <kept bytes>`.
    final class Transcript: RecordPipelineOutput {
        var mappedRecords = JSONWriter()
        var lines: [String] = []
        var stopAfter = Int.max

        func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool {
            let text = String(decoding: mappedRecords.bytes, as: UTF8.self)
            lines.append("\(input) mapped \(location.line):\(location.byteOffset) \(text.dropLast())")
            mappedRecords.removeAll()
            return lines.count < stopAfter
        }

        func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer,
                      totalBytes: Int) -> Bool {
            let first = failure.allErrors.first.map { "\($0.sourcePath.pointer) \($0.message)" } ?? ""
            lines.append("\(input) rejected \(location.line):\(location.byteOffset) \(first) [\(String(decoding: record, as: UTF8.self))] \(totalBytes)")
            return lines.count < stopAfter
        }
    }

    static let mapper = Mapper.object(unmapped: .keep(keyStyle: .foundationCamel, values: nil)) { Field("id", to: "id", .integer) }

    /// NDJSON with mapped, rejected (type, syntax), blank and CRLF lines, and a long record.
    static func input(_ n: Int) -> [UInt8] {
        var text = ""
        for i in 0..<n {
            switch i % 7 {
            case 3: text += #"{"id":"x\#(i)","some_key":1}"# + "\n"
            case 5: text += #"{"id":\#(i),"#  + "\r\n"
            case 6: text += "\n"
            default: text += #"{"id":\#(i),"some_key":"\#(String(repeating: "v", count: i % 50))"}"# + (i % 2 == 0 ? "\n" : "\r\n")
            }
        }
        text += #"{"id":-1,"long_one":"\#(String(repeating: "L", count: 3_000_000))"}"# + "\n" + #"{"id":"last"}"#
        return Array(text.utf8)
    }

    /// Runs `input` through a pipeline fed in pieces of `piece` bytes.
    static func transcript(jobs: Int, framing: Framing = .auto, piece: Int, keep: Int = 40, input: [UInt8]) -> [String] {
        let out = Transcript()
        var settings = RecordPipelineSettings(framing: framing, jobs: jobs, keptRecordBytes: keep)
        settings.batchBytes = 1 << 12  // many batches
        let mapper = Self.mapper
        var pipeline = RecordPipeline(engine: StreamEngine(mapper: mapper), settings: settings, output: out,
                                      makeEngine: { StreamEngine(mapper: mapper) })
        #expect(pipeline.threads == (jobs > 1 ? jobs : 0))
        for name in ["a", "b"] {
            pipeline.beginInput(name)
            input.withUnsafeBytes { all in
                var at = 0
                while at < all.count {
                    let end = min(at + piece, all.count)
                    pipeline.feed(UnsafeRawBufferPointer(rebasing: all[at..<end]))
                    at = end
                }
            }
            pipeline.endInput()
        }
        pipeline.finish()
        #expect(pipeline.bytesIn == 2 * input.count)
        return out.lines
    }

    @Test func jobsAndPiecesDoNotChangeWhatTheOutputSees() {
        let input = Self.input(600)
        let one = Self.transcript(jobs: 1, piece: 1 << 18, input: input)
        #expect(one.count == 2 * (600 - 600 / 7 + 2))
        #expect(one.contains { $0.hasPrefix("a rejected 4:") && $0.contains("/id expected integer") })
        #expect(one.contains { $0.hasPrefix("b mapped 1:0 ") })
        // The long record streams through the engine; its kept start is 40 bytes, its length counted.
        #expect(one.contains { $0.contains(#"mapped"#) && $0.contains(#""longOne":"LLL"#) })
        #expect(one.last?.hasPrefix("b rejected ") == true && one.last?.contains(#"[{"id":"last"}] 13"#) == true)
        for (jobs, piece) in [(2, 1 << 18), (3, 1000), (1, 7), (2, 4093)] {
            #expect(Self.transcript(jobs: jobs, piece: piece, input: input) == one, "jobs \(jobs), pieces of \(piece)")
        }
    }

    @Test func wholeRecordFramingsToo() {
        var text = "["
        for i in 0..<500 { text += (i == 0 ? "" : ",\n ") + (i % 9 == 4 ? #"{"id":true}"# : #"{"id":\#(i)}"#) }
        let input = Array((text + "]\n").utf8)
        let one = Self.transcript(jobs: 1, piece: 1 << 18, input: input)
        #expect(one.count == 1000)
        #expect(Self.transcript(jobs: 2, framing: .array, piece: 333, input: input) == one)
    }

    @Test func theOutputStopsTheRun() {
        let out = Transcript()
        out.stopAfter = 3
        var pipeline = RecordPipeline(engine: StreamEngine(mapper: Self.mapper), output: out)
        pipeline.beginInput("x")
        Self.input(50).withUnsafeBytes { pipeline.feed($0) }
        pipeline.endInput()
        pipeline.finish()
        #expect(out.lines.count == 3)
        #expect(pipeline.isStopped)
    }

    @Test func readingStopsWhenAskedAndDropsTheCutRecord() {
        let out = Transcript()
        var pipeline = RecordPipeline(engine: StreamEngine(mapper: Self.mapper), output: out)
        let reads: [[UInt8]] = [Array("{\"id\":1}\n{\"id\":2}\n{\"id\":".utf8), Array("3}\n".utf8)]
        var n = 0
        let end = pipeline.read("in", stopRequested: { n == 1 }) { room in
            let bytes = reads[n]
            bytes.withUnsafeBytes { room.copyMemory(from: $0) }
            n += 1
            return bytes.count
        }
        pipeline.finish()
        #expect(end == .interrupted)
        #expect(out.lines == ["in mapped 1:0 {\"id\":1}", "in mapped 2:9 {\"id\":2}"])
        // A failed read ends the input with its errno, after the records before it.
        var again = RecordPipeline(engine: StreamEngine(mapper: Self.mapper), output: Transcript())
        var calls = 0
        let failed = again.read("in") { room in
            calls += 1
            guard calls == 1 else {
                errno = 5
                return nil
            }
            reads[0].withUnsafeBytes { room.copyMemory(from: $0) }
            return reads[0].count
        }
        #expect(failed == .failed(errno: 5))
        #expect(again.bytesIn == reads[0].count)
    }

    /// The start of a BOM that was not one is handed on by the framer from a few bytes of its own, not from the
    /// chunk: the record it starts is mapped from a copy (it was once pointed at after its buffer was gone — a
    /// use after free found by the fuzzer under AddressSanitizer, which runs this suite too).
    @Test(arguments: [Framing.ndjson, .auto])
    func theStartOfABOMThatWasNotOneIsCopied(_ framing: Framing) {
        let record = Array("{\"id\":1}".utf8)
        for input in [[0xEF, 0xBB] + record + Array("\n{\"id\":2}\n".utf8), [0xEF, 0xBB], [0xEF]] {
            let whole = Self.transcript(jobs: 1, framing: framing, piece: 4096, input: input)
            let kept = input.count > 2 ? [0xEF, 0xBB] + record : input
            #expect(whole.first?.hasPrefix("a rejected 1:0 ") == true)
            if framing == .ndjson {  // (auto takes the first input for concatenated values)
                #expect(whole.count == (input.count > 2 ? 4 : 2))
                #expect(whole.first?.hasSuffix("[\(String(decoding: kept, as: UTF8.self))] \(kept.count)") == true)
            }
            for (jobs, piece) in [(1, 1), (1, 2), (1, 3), (2, 1), (2, 2)] {
                #expect(Self.transcript(jobs: jobs, framing: framing, piece: piece, input: input) == whole,
                        "jobs \(jobs), pieces of \(piece)")
            }
        }
    }

    /// `auto` decides within its first MiB, the same way in `RecordFramer` and in the pipeline (a huge first line
    /// is not held whole): a line starting with `[` is an array, anything else one NDJSON record.
    @Test func autoDecidesAfterOneMiB() {
        let big = String(repeating: "x", count: RecordFramer.decisionLimit + 10)
        for (text, framing) in [(#"{"id":1,"s":""# + big + #""}"#, Framing.ndjson), (#"[{"id":1,"s":""# + big + #""}]"#, .array)] {
            var framer = RecordFramer(framing: .auto)
            let bytes = Array(text.utf8)
            bytes.withUnsafeBytes { framer.feed(UnsafeRawBufferPointer(rebasing: $0[..<(RecordFramer.decisionLimit + 5)])) { _, _ in } }
            #expect(framer.detected == framing)
            let feed = MappingFeed(mapper: Self.mapper)
            let early = feed.feed(bytes).count
            #expect(feed.framing == framing)
            #expect(early + feed.finish().count == 1)
        }
    }

    /// docs/library.md's "The record pipeline" example, as written there (reading a file through its descriptor).
    @Test func readmeExample() throws {
        final class Lines: RecordPipelineOutput {
            var mappedRecords = JSONWriter()
            func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool { true }  // drain when you like
            func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer,
                          totalBytes: Int) -> Bool { true }                                          // false stops the run
        }
        let specText = #"{"fields":{"id":"id","actor.login":"user"}}"#
        let path = "/tmp/streammap-pipeline-example-\(getpid()).ndjson"
        let text = (0..<3000).map { #"{"id":\#($0),"actor":{"login":"u\#($0)"}}"# }.joined(separator: "\n") + "\n"
        let file = try #require(fopen(path, "w"))
        #expect(text.withCString { fputs($0, file) } >= 0)
        fclose(file)
        defer { unlink(path) }
        let fd = open(path, O_RDONLY)
        defer { close(fd) }

        let mapper = try Spec(json: specText).mapper
        var pipeline = RecordPipeline(engine: StreamEngine(mapper: mapper), settings: RecordPipelineSettings(jobs: 2),
                                      output: Lines(), makeEngine: { StreamEngine(mapper: mapper) })
        let end = pipeline.read("events.ndjson", fileDescriptor: fd)  // or read(name) { buffer in … }, or beginInput/feed/endInput
        pipeline.finish()

        #expect(end == .ended)
        #expect(pipeline.core.rangedInputs == 1)
        let lines = String(decoding: pipeline.output.mappedRecords.bytes, as: UTF8.self).split(separator: "\n")
        #expect(lines.count == 3000)
        #expect(lines.last == #"{"id":2999,"user":"u2999"}"#)
    }
}
