// RecordWriter.swift — mapped records out, in every format the command line writes: NDJSON, CSV/TSV rows and
// Arrow IPC batches, compressed or not, in large writes to a file descriptor. The record pipeline's engines write
// each mapped record into `RecordWriter.writer` (the `RecordPipelineOutput.mappedRecords` buffer); the writer
// turns what gathers there into the format on each flush.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The format mapped records are written in.
public enum RecordFormat: Sendable, Hashable {
    /// One compact JSON object per line (the engines' own output).
    case ndjson
    /// A header row, then one row per record (``TableWriter``): needs a mapping whose columns are known.
    case table(TableFormat)
    /// Arrow IPC, stream or file (``ArrowRecordWriter``): needs a mapping whose columns and types are known.
    case arrow(ArrowIPCFormat)
}

/// The result of writing to a file descriptor.
public enum WriteResult: Equatable, Sendable {
    /// Everything was written.
    case ok
    /// The reader of a pipe or socket went away (EPIPE; the command line ignores SIGPIPE to see it).
    case closed
    /// Any other error, with its errno (ENOSPC for /dev/full, EIO, …).
    case failed(Int32)
    /// A mapped record the output format cannot hold (``ArrowWriteError``: a mapping its schema does not describe).
    case unwritable(String)
}

/// Unbuffered writes to a file descriptor, looping on partial writes and EINTR (a signal arriving while the
/// reader is slow must not cut a line: the rest is written).
public struct FileOutput: Sendable {
    /// The descriptor written to; not closed by this type.
    public let fd: Int32
    /// Name in messages: the path, `<stdout>` or `<stderr>`.
    public let name: String

    /// Writes to `fd`, naming it `name` in messages.
    public init(fd: Int32, name: String) {
        self.fd = fd
        self.name = name
    }

    /// Writes all of `raw`.
    public func writeAll(_ raw: UnsafeRawBufferPointer) -> WriteResult {
        guard var p = raw.baseAddress else { return .ok }
        var left = raw.count
        while left > 0 {
            let n = write(fd, p, left)
            if n < 0 {
                if errno == EINTR { continue }
                return errno == EPIPE ? .closed : .failed(errno)
            }
            p += n
            left -= n
        }
        return .ok
    }

    /// Writes all of `bytes`.
    public func writeAll(_ bytes: [UInt8]) -> WriteResult { bytes.withUnsafeBytes { writeAll($0) } }

}

/// Mapped records, collected in one reused buffer and written in large writes (never a system call per record).
/// Only whole records ever reach the buffer, so whatever is written ends with a complete line or row. On the way
/// out they may become table rows (after a header row) or Arrow batches, and be compressed.
public struct RecordWriter {
    /// Where the bytes go.
    public let file: FileOutput
    /// The buffer the engines write mapped records into (``RecordPipelineOutput/mappedRecords``), one line each.
    public var writer = JSONWriter(reservingCapacity: 1 << 17)
    /// Past this many bytes in `writer`, a pipeline output calls `flush()` (64 KiB).
    public static let flushThreshold = 1 << 16
    private let table: TableWriter?
    private var arrow: ArrowRecordWriter?
    private let compressor: OutputCompressor?
    private var headerWritten = false
    private var rows: [UInt8] = []
    /// Arrow with `--jobs`: the columns workers made of the records in `writer` (and of batches still to come),
    /// oldest first, each with the next of its rows to take.
    private var prepared: [(rows: ArrowRows, next: Int)] = []

    /// Writes NDJSON, or table rows with `table`, or Arrow with `arrow` (give at most one of them), compressed
    /// with `compressor` when given (not with Arrow: its IPC is written as it is).
    public init(file: FileOutput, table: TableWriter? = nil, arrow: ArrowRecordWriter? = nil, compressor: OutputCompressor? = nil) {
        precondition(table == nil || arrow == nil, "one format: table rows or Arrow batches")
        self.file = file
        self.table = table
        self.arrow = arrow
        self.compressor = compressor
    }

    /// Writes the buffer out (as rows or batches when so made); keeps the buffer's memory unless one huge record
    /// grew it. Arrow keeps rows until a batch is full.
    public mutating func flush() -> WriteResult {
        if arrow != nil { return flushArrow(finishing: false) }
        let result: WriteResult
        if let table {
            guard !writer.bytes.isEmpty || !headerWritten else { return .ok }
            rows.removeAll(keepingCapacity: rows.capacity <= 1 << 22)
            if !headerWritten {
                table.writeHeader(into: &rows)
                headerWritten = true
            }
            writer.bytes.withUnsafeBytes { records in
                var start = 0
                for end in records.indices where records[end] == 0x0A {
                    table.writeRow(UnsafeRawBufferPointer(rebasing: records[start..<end]), into: &rows)
                    start = end + 1
                }
            }
            result = rows.withUnsafeBytes { write($0) }
        } else {
            guard !writer.bytes.isEmpty else { return .ok }
            result = writer.bytes.withUnsafeBytes { write($0) }
        }
        writer.removeAll(keepingCapacity: writer.bytes.capacity <= 1 << 22)
        if writer.bytes.capacity < 1 << 17 { writer.bytes.reserveCapacity(1 << 17) }
        return result
    }

    /// Writes the rest and ends the output: a table's header even with no record, Arrow's last batch and end (or
    /// footer), a compressed stream's end.
    public mutating func finish() -> WriteResult {
        let result = arrow != nil ? flushArrow(finishing: true) : flush()
        guard result == .ok, let compressor else { return result }
        var finished = WriteResult.ok
        compressor.finish { piece in
            finished = file.writeAll(piece)
            return finished == .ok
        }
        return finished
    }

    /// Work the worker threads can do for this writer (``RecordPipelineOutput/mappedRecordsPreparer``): Arrow's
    /// columns. Nil for the other formats.
    public var mappedRecordsPreparer: (any MappedRecordsPreparer)? { arrow.map { ArrowRowsPreparer(schema: $0.schema) } }

    /// What the preparer made of the batch whose records come next (``RecordPipelineOutput/willWrite(prepared:)``).
    public mutating func willWrite(prepared made: (any Sendable)?) {
        guard let rows = made as? ArrowRows, rows.count > 0 else { return }
        prepared.append((rows, 0))
    }

    /// Arrow: the records in the buffer become rows (copied from the columns a worker made of them, where it did;
    /// else read from their text); each batch that fills is written.
    private mutating func flushArrow(finishing: Bool) -> WriteResult {
        rows.removeAll(keepingCapacity: rows.capacity <= 1 << 24)
        var failure: ArrowWriteError?
        // A batch's large buffers are written from its columns, after what `rows` holds before them: never copied.
        var written = WriteResult.ok
        let output = (file: file, compressor: compressor)
        func direct(_ before: inout [UInt8], _ buffer: UnsafeRawBufferPointer) {
            guard written == .ok else { return }
            written = before.withUnsafeBytes { Self.write($0, to: output.file, compressor: output.compressor) }
            before.removeAll(keepingCapacity: true)
            if written == .ok { written = Self.write(buffer, to: output.file, compressor: output.compressor) }
        }
        writer.bytes.withUnsafeBytes { records in
            var start = 0
            while start < records.count, let newline = memchr(records.baseAddress! + start, 0x0A, records.count - start) {
                var end = UnsafeRawPointer(newline) - records.baseAddress!
                do throws(ArrowWriteError) {
                    // The records of a prepared batch come in order, right after its `willWrite`: a run of them is
                    // copied at once, up to the row that fills the writer's batch (a batch with no columns — a
                    // record did not fit — is read from its text, one record at a time; a stop may leave rows
                    // never written).
                    if let (made, next) = prepared.first, made.lengths[next] == end - start, made.columns != nil {
                        end = try Self.appendRun(of: made, from: next, records: records, end: end,
                                                 arrow: &arrow!, prepared: &prepared)
                    } else if let (made, next) = prepared.first, made.lengths[next] == end - start {
                        if next + 1 == made.count { prepared.removeFirst() } else { prepared[0].next += 1 }
                        try arrow!.append(UnsafeRawBufferPointer(rebasing: records[start..<end]))
                    } else {
                        // (Never with the pipeline's order; if it were broken, the text is the truth.)
                        if !prepared.isEmpty { prepared.removeAll() }
                        try arrow!.append(UnsafeRawBufferPointer(rebasing: records[start..<end]))
                    }
                } catch {
                    failure = error
                    return
                }
                if arrow!.isBatchFull { arrow!.writeBatch(into: &rows, direct: direct) }
                start = end + 1
            }
        }
        writer.removeAll(keepingCapacity: writer.bytes.capacity <= 1 << 22)
        if let failure { return .unwritable(failure.message) }
        guard written == .ok else { return written }
        if finishing { arrow!.finish(into: &rows) }
        return rows.withUnsafeBytes { write($0) }
    }

    /// Appends the run of `made`'s rows from `next` (the first of which is the record ending at `end` in
    /// `records`): as many as follow in order, up to the row that fills the writer's batch; returns where the last
    /// record ends.
    private static func appendRun(of made: ArrowRows, from next: Int, records: UnsafeRawBufferPointer, end first: Int,
                                  arrow: inout ArrowRecordWriter, prepared: inout [(rows: ArrowRows, next: Int)]) throws(ArrowWriteError) -> Int {
        var end = first
        var count = 1
        var rowCount = arrow.pendingRows + 1
        var byteCount = arrow.pendingRecordBytes + made.lengths[next]
        while next + count < made.count, rowCount < arrow.batchRows, byteCount < arrow.batchBytes, end + 1 < records.count {
            guard let newline = memchr(records.baseAddress! + end + 1, 0x0A, records.count - end - 1) else { break }
            let lineEnd = UnsafeRawPointer(newline) - records.baseAddress!
            guard lineEnd - end - 1 == made.lengths[next + count] else { break }
            end = lineEnd
            rowCount += 1
            byteCount += made.lengths[next + count]
            count += 1
        }
        if next + count == made.count { prepared.removeFirst() } else { prepared[0].next += count }
        try arrow.append(made, next..<(next + count))
        return end
    }

    private func write(_ bytes: UnsafeRawBufferPointer) -> WriteResult {
        Self.write(bytes, to: file, compressor: compressor)
    }

    private static func write(_ bytes: UnsafeRawBufferPointer, to file: FileOutput, compressor: OutputCompressor?) -> WriteResult {
        guard let compressor else { return file.writeAll(bytes) }
        var result = WriteResult.ok
        compressor.compress(bytes) { piece in
            result = file.writeAll(piece)
            return result == .ok
        }
        return result
    }
}

/// A mapper ready to write `format`: the writer for its columns, and the mapper to map with (for Arrow, with the
/// checks that reject what a column cannot hold: ``ArrowSchema/checking(_:)``).
public struct FormattedMapping: Sendable {
    /// The mapper to map with.
    public let mapper: Mapper
    /// The table's columns, for `.table`.
    public let table: TableWriter?
    /// The Arrow writer, for `.arrow`.
    public let arrow: ArrowRecordWriter?
    /// The schema of the mapper's output, whose columns the mapper checks (`arrow`'s own, unless an explode makes
    /// the written records of another).
    private let mapped: ArrowSchema?

    /// Lays out `mapper`'s output for `format` — exploded by `explode`, when given: the exploded array's column holds
    /// its elements. Throws ``TableLayoutError`` or ``ArrowSchemaError`` when the mapping's columns (or their types)
    /// are not known from it; `delimiter` joins a table header's paths.
    public init(_ mapper: Mapper, format: RecordFormat, delimiter: String = ".", explode: RecordExplosion? = nil) throws {
        switch format {
        case .ndjson:
            (self.mapper, table, arrow, mapped) = (mapper, nil, nil, nil)
        case .table(let t):
            (self.mapper, table, arrow, mapped) = (mapper, TableWriter(layout: try TableLayout(mapper: mapper), format: t, delimiter: delimiter), nil, nil)
        case .arrow(let f):
            let schema = try ArrowSchema(mapper: mapper)
            let written = try explode.map { e throws(ArrowSchemaError) in try schema.exploding(e) } ?? schema
            (self.mapper, table, arrow, mapped) = (schema.checking(mapper), nil, ArrowRecordWriter(schema: written, format: f), schema)
        }
    }

    /// `other` (a mapper equal to the one given, made for another thread) prepared the same way.
    public func mapper(for other: Mapper) -> Mapper { mapped.map { $0.checking(other) } ?? other }

    /// A writer of this format to `file`.
    public func writer(to file: FileOutput, compressor: OutputCompressor? = nil) -> RecordWriter {
        RecordWriter(file: file, table: table, arrow: arrow, compressor: compressor)
    }
}
