#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StreamMap

/// The result of writing to a file descriptor.
enum WriteResult: Equatable {
    case ok
    /// The reader of a pipe or socket went away (EPIPE; SIGPIPE is ignored, see `Signals`).
    case closed
    /// Any other error, with its errno (ENOSPC for /dev/full, EIO, …).
    case failed(Int32)
}

/// Unbuffered writes to a file descriptor, looping on partial writes and EINTR (a signal arriving while the
/// reader is slow must not cut a line: the rest is written).
struct FileOutput {
    let fd: Int32
    /// Name in messages: the path, `<stdout>` or `<stderr>`.
    let name: String

    func writeAll(_ raw: UnsafeRawBufferPointer) -> WriteResult {
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

    func writeAll(_ bytes: [UInt8]) -> WriteResult { bytes.withUnsafeBytes { writeAll($0) } }

    /// Opens (creates or truncates) a file for writing.
    static func create(_ path: String) -> Result<FileOutput, Errno> {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        return fd < 0 ? .failure(Errno(code: errno)) : .success(FileOutput(fd: fd, name: path))
    }
}

/// Mapped records, collected in one reused buffer and written in large writes (never a system call per record).
/// Only whole records ever reach the buffer, so whatever is written ends with a complete line. On the way out
/// they may become table rows (`--to csv|tsv`, after a header row) and be compressed (`--compress`, `-o x.gz`).
struct RecordOutput {
    let file: FileOutput
    var writer = JSONWriter(reservingCapacity: 1 << 17)
    static let flushThreshold = 1 << 16
    /// With `--to csv|tsv`: writes each record as a row.
    var table: TableWriter?
    /// With `--compress` or `-o` ending in .gz or .zst.
    var compressor: OutputCompressor?
    private var headerWritten = false
    private var rows: [UInt8] = []

    init(file: FileOutput, table: TableWriter? = nil, compressor: OutputCompressor? = nil) {
        self.file = file
        self.table = table
        self.compressor = compressor
    }

    /// Writes the buffer out; keeps the buffer's memory unless one huge record grew it.
    mutating func flush() -> WriteResult {
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

    /// Writes the rest and ends the output (a table's header even with no record; a compressed stream's end).
    mutating func finish() -> WriteResult {
        let result = flush()
        guard result == .ok, let compressor else { return result }
        var finished = WriteResult.ok
        compressor.finish { piece in
            finished = file.writeAll(piece)
            return finished == .ok
        }
        return finished
    }

    private func write(_ bytes: UnsafeRawBufferPointer) -> WriteResult {
        guard let compressor else { return file.writeAll(bytes) }
        var result = WriteResult.ok
        compressor.compress(bytes) { piece in
            result = file.writeAll(piece)
            return result == .ok
        }
        return result
    }
}
