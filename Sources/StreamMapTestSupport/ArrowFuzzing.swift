#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StreamMap

/// The fuzz target's Arrow check (public API only). The input's first 8 bytes seed a typed case (`TypedCase`: a
/// spec whose every column type is known, and records for it); the rest, cut at newlines, become hostile records
/// and hostile values of the spec's fields. Mapped with the Arrow checks (`ArrowSchema.checking`):
/// - the stream and the tree engine agree, record for record and error for error;
/// - the Arrow writer takes every record the checked mapper mapped — a value its column cannot hold must have
///   rejected its record, never reach the writer (which could only fail the run or write a wrong value);
/// - the stream or file the writer makes (batches of 1 to 8 rows) reads back, by `ArrowReading`, to the schema and
///   the NDJSON output's values, typed;
/// - the record pipeline with three jobs (small batches, the columns built on the workers) writes exactly the
///   bytes that one job writes, and that the writer alone writes.
public enum ArrowFuzzing {
    public static func check(_ data: UnsafeRawBufferPointer) -> String? {
        guard data.count >= 9 else { return nil }
        var seed: UInt64 = 0
        for i in 0..<8 { seed = seed << 8 | UInt64(data[i]) }
        let flags = data[8]
        var rng = SplitMix64(seed: seed)
        let (spec, generated, fieldCount) = TypedCase.generate(&rng)
        let records = generated + hostile(UnsafeRawBufferPointer(rebasing: data[9...]), generated, fieldCount, &rng)
        guard let mapper = try? Spec(json: spec).mapper else { return "TypedCase made a spec that does not compile: \(spec)" }
        let schema: ArrowSchema
        do {
            schema = try ArrowSchema(mapper: mapper)
        } catch {
            return "TypedCase made a spec without an Arrow schema (\(error)): \(spec)"
        }
        let checked = schema.checking(mapper)
        let input = Array((records.joined(separator: "\n") + "\n").utf8)

        // The two engines, with the checks.
        let stream = MappingFeed(engine: StreamEngine(mapper: checked))
        let tree = MappingFeed(engine: TreeEngine(mapper: checked))
        let results = stream.feed(input) + stream.finish()
        let treeResults = tree.feed(input) + tree.finish()
        if results != treeResults {
            return "Arrow-checked mapping: the engines disagree\nspec \(spec)\ninput \(EngineFuzzing.printable(input))\n"
                + "stream \(results)\ntree \(treeResults)"
        }
        let mapped = results.compactMap { r -> MappedRecord? in if case .mapped(let m) = r { return m } else { return nil } }

        // The writer alone, and its output read back.
        let format: ArrowIPCFormat = flags & 1 == 0 ? .stream : .file
        let batchRows = Int((flags >> 1) & 7) + 1
        var writer = ArrowRecordWriter(schema: schema, format: format)
        writer.batchRows = batchRows
        var written: [UInt8] = []
        for m in mapped {
            var refused: ArrowWriteError?
            m.bytes.withUnsafeBytes { bytes in
                do throws(ArrowWriteError) { try writer.append(bytes) } catch { refused = error }
            }
            if let refused {
                return "the Arrow writer refused a record the checked mapper mapped (\(refused))\nspec \(spec)\nrecord \(m)"
            }
            if writer.isBatchFull { writer.writeBatch(into: &written) }
        }
        writer.finish(into: &written)
        do {
            let table = try ArrowReading.read(written)
            if table.schema != ArrowReading.asWritten(schema) {
                return "Arrow \(format): the schema read back is \(table.schema), not \(schema)\nspec \(spec)"
            }
            let expected = try mapped.map { ArrowReading.normalized(try $0.value(), schema) }
            if table.rows != expected {
                return "Arrow \(format): the rows read back differ from the NDJSON output\nspec \(spec)\n"
                    + "read \(table.rows)\nexpected \(expected)"
            }
        } catch {
            return "Arrow \(format): the output does not read back (\(error))\nspec \(spec)\ninput \(EngineFuzzing.printable(input))"
        }

        // The pipeline, one job and three.
        let batchBytes = [1, 40, 300, 4096][Int((flags >> 4) & 3)]
        let piece = Int(flags >> 6) * 37 + 1
        let one = runPipeline(input, mapper: checked, schema: schema, format: format, batchRows: batchRows, jobs: 1,
                              batchBytes: batchBytes, piece: piece)
        let three = runPipeline(input, mapper: checked, schema: schema, format: format, batchRows: batchRows, jobs: 3,
                                batchBytes: batchBytes, piece: piece)
        if one.bytes != written || one.rejected != results.count - mapped.count {
            return "Arrow \(format) through the pipeline (one job): \(one.bytes.count) bytes and \(one.rejected) rejected, where the "
                + "writer alone wrote \(written.count) and the feed rejected \(results.count - mapped.count) (\(one.result))\nspec \(spec)\n"
                + "input \(EngineFuzzing.printable(input))"
        }
        if three.bytes != one.bytes || three.rejected != one.rejected {
            return "Arrow \(format) through the pipeline: three jobs (batches of \(batchBytes) bytes) wrote \(three.bytes.count) bytes, "
                + "rejected \(three.rejected) (\(three.result)); one job \(one.bytes.count) and \(one.rejected)\nspec \(spec)\n"
                + "input \(EngineFuzzing.printable(input))"
        }
        return nil
    }

    /// Records made of the fuzz bytes (each newline-free piece, at most 24): the piece as a record, as a field's
    /// value (alone or put first in a generated record: a key met twice then), or as a field's string's body.
    static func hostile(_ bytes: UnsafeRawBufferPointer, _ generated: [String], _ fields: Int, _ rng: inout SplitMix64) -> [String] {
        var out: [String] = []
        for piece in bytes.split(separator: 0x0A, omittingEmptySubsequences: false).prefix(24) {
            let text = String(decoding: piece, as: UTF8.self)
            let key = "\"f\(Int(rng.next() % UInt64(fields)))\""
            switch rng.next() % 4 {
            case 0: out.append(text)
            case 1: out.append("{\(key): \(text)}")
            case 2:
                let base = generated.isEmpty ? "{}" : generated[Int(rng.next() % UInt64(generated.count))]
                out.append(base == "{}" ? "{\(key): \(text)}" : "{\(key): \(text), " + base.dropFirst())
            default: out.append("{\(key): \"\(text)\"}")
            }
        }
        return out
    }

    /// The pipeline's end that writes Arrow to a file (as the library's `writeRecords` does): mapped records to the
    /// writer, rejected ones counted.
    final class ArrowFile: RecordPipelineOutput {
        var writer: RecordWriter
        var rejected = 0
        var result = WriteResult.ok

        init(_ writer: RecordWriter) { self.writer = writer }

        var mappedRecords: JSONWriter {
            get { writer.writer }
            _modify { yield &writer.writer }
        }

        var mappedRecordsPreparer: (any MappedRecordsPreparer)? { writer.mappedRecordsPreparer }

        func willWrite(prepared: (any Sendable)?) { writer.willWrite(prepared: prepared) }

        func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool {
            if writer.writer.bytes.count >= RecordWriter.flushThreshold, result == .ok { result = writer.flush() }
            return result == .ok
        }

        func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer,
                      totalBytes: Int) -> Bool {
            rejected += 1
            return true
        }
    }

    /// `input` mapped by a record pipeline with `jobs` jobs (read `piece` bytes at a time) to Arrow in a file: the
    /// file's bytes, the records rejected, and how writing ended.
    static func runPipeline(_ input: [UInt8], mapper: Mapper, schema: ArrowSchema, format: ArrowIPCFormat, batchRows: Int,
                            jobs: Int, batchBytes: Int, piece: Int) -> (bytes: [UInt8], rejected: Int, result: WriteResult) {
        guard let path = try? TestScratch.file([], suffix: ".arrow") else { return ([], -1, .failed(0)) }
        defer { unlink(path) }
        let fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC)
        guard fd >= 0 else { return ([], -1, .failed(errno)) }
        var arrow = ArrowRecordWriter(schema: schema, format: format)
        arrow.batchRows = batchRows
        let out = ArrowFile(RecordWriter(file: FileOutput(fd: fd, name: path), arrow: arrow))
        var settings = RecordPipelineSettings(jobs: jobs)
        settings.batchBytes = batchBytes
        var pipeline = RecordPipeline(engine: StreamEngine(mapper: mapper), settings: settings, output: out,
                                      makeEngine: { StreamEngine(mapper: mapper) })
        var at = 0
        _ = pipeline.read("fuzz") { room in
            let n = min(room.count, input.count - at, piece)
            input[at..<(at + n)].withUnsafeBytes { room.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            at += n
            return n
        }
        pipeline.finish()
        if out.result == .ok { out.result = out.writer.finish() }
        close(fd)
        return ((try? TestScratch.read(path)) ?? [], out.rejected, out.result)
    }
}
