// WritingRecords.swift — the library's front door for whole files written out: an input mapped into any
// format the command line writes (NDJSON, CSV/TSV, Arrow), the rejects handed to the caller.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Writing the mapped records failed: the output's name and how.
public struct OutputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The output's name (as given to ``Mapper/writeRecords(inFile:to:format:options:rejected:)``).
    public var output: String
    /// What went wrong (never `.ok`).
    public var result: WriteResult

    public var description: String {
        switch result {
        case .ok: return "\(output): written"
        case .closed: return "\(output): the reader closed the pipe"
        case .failed(let code): return "\(output): write error: \(String(cString: strerror(code)))"
        case .unwritable(let message): return "\(output): cannot write a mapped record: \(message)"
        }
    }
}

extension Mapper {
    /// Maps the file at `path` (compressed or not, as ``mapRecords(inFile:options:_:)`` reads it) and writes the
    /// mapped records to `output` in `format`, in input order, in large writes; each rejected record goes to
    /// `rejected`. Returns the counts.
    ///
    /// ```swift
    /// let out = FileOutput(fd: fd, name: "events.arrow")   // fd: a file you opened for writing
    /// let counts = try mapper.writeRecords(inFile: "events.ndjson", to: out, format: .arrow(.file)) { r in
    ///     print(r)   // line 7, byte 912: rejected: /id: …
    /// }
    /// ```
    ///
    /// `format` needs what the command line's `--to` needs: a table, a mapping whose columns are known
    /// (``TableLayoutError`` otherwise); Arrow, also their types (``ArrowSchemaError``) — both thrown before
    /// anything is read. With Arrow, a value its column cannot hold (an integer beyond int64) rejects its record.
    /// Throws ``OutputError`` when the output cannot be written (after the records before it), and what
    /// `mapRecords(inFile:)` throws for the input; a `rejected` that throws stops the run and is rethrown. Whatever
    /// ends the run, the records written so far are flushed and the output ended (a table's header, Arrow's end or
    /// footer), unless writing itself failed; `output.fd` is not closed.
    @discardableResult
    public func writeRecords(
        inFile path: String, to output: FileOutput, format: RecordFormat = .ndjson, options: MappingOptions = .init(),
        rejected: (RejectedRecord) throws -> Void = { _ in }
    ) throws -> RecordCounts {
        let formatted = try FormattedMapping(self, format: format, explode: options.explode)
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw InputError(input: path, code: errno, bytesRead: 0) }
        defer { close(fd) }
        return try writeRecords(formatted, fromFileDescriptor: fd, name: path, to: output, options: options, rejected: rejected)
    }

    /// Maps what can be read from `fd` (a file, a pipe, a socket) to its end and writes the mapped records to
    /// `output` in `format`, as ``writeRecords(inFile:to:format:options:rejected:)`` does; `fd` is not closed.
    /// `name` names the input in errors.
    @discardableResult
    public func writeRecords(
        fromFileDescriptor fd: Int32, name: String = "", to output: FileOutput, format: RecordFormat = .ndjson,
        options: MappingOptions = .init(), rejected: (RejectedRecord) throws -> Void = { _ in }
    ) throws -> RecordCounts {
        try writeRecords(try FormattedMapping(self, format: format, explode: options.explode), fromFileDescriptor: fd, name: name, to: output,
                         options: options, rejected: rejected)
    }

    private func writeRecords(
        _ formatted: FormattedMapping, fromFileDescriptor fd: Int32, name path: String, to output: FileOutput,
        options: MappingOptions, rejected: (RejectedRecord) throws -> Void
    ) throws -> RecordCounts {
        try withoutActuallyEscaping(rejected) { rejected in
            let sink = WritingOutput(writer: formatted.writer(to: output))
            var thrown: (any Error)?
            sink.onRejected = { record in
                do {
                    try rejected(record)
                    return true
                } catch {
                    thrown = error
                    return false
                }
            }
            defer { sink.onRejected = nil }
            var pipeline = options.pipeline(mapping: formatted.mapper, into: sink)
            let end = pipeline.read(path, fileDescriptor: fd, stopRequested: { false }, afterRead: { _ in })
            pipeline.finish()
            // What was written is ended as a whole output whatever stopped the run (as the command line does): the
            // records before a fault or a stop are a valid file.
            if sink.failure == nil { sink.note(sink.writer.finish()) }
            if let failure = sink.failure { throw OutputError(output: output.name, result: failure) }
            if let thrown { throw thrown }
            try end.check(input: path, bytesIn: pipeline.bytesIn)
            return sink.counts
        }
    }
}

/// `writeRecords`' end of the pipeline: mapped records to the writer, rejected ones to the caller.
final class WritingOutput: RecordPipelineOutput {
    var writer: RecordWriter
    private(set) var counts = RecordCounts()
    private(set) var failure: WriteResult?
    var onRejected: ((RejectedRecord) -> Bool)?

    init(writer: RecordWriter) { self.writer = writer }

    var mappedRecords: JSONWriter {
        get { writer.writer }
        _modify { yield &writer.writer }
    }

    var mappedRecordsPreparer: (any MappedRecordsPreparer)? { writer.mappedRecordsPreparer }

    func willWrite(prepared: (any Sendable)?) { writer.willWrite(prepared: prepared) }

    func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool {
        counts.recordsIn += 1
        counts.recordsOut += records
        if writer.writer.bytes.count >= RecordWriter.flushThreshold { note(writer.flush()) }
        return failure == nil
    }

    func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer,
                  totalBytes: Int) -> Bool {
        counts.recordsIn += 1
        counts.recordsRejected += 1
        return onRejected?(RejectedRecord(location: location, failure: failure, raw: Array(record))) ?? true
    }

    func filtered(input: String, location: RecordLocation) -> Bool {
        counts.recordsIn += 1
        counts.recordsFiltered += 1
        return true
    }

    func note(_ result: WriteResult) {
        if result != .ok, failure == nil { failure = result }
    }
}
