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
/// Only whole records ever reach the buffer, so whatever is written ends with a complete line.
struct RecordOutput {
    let file: FileOutput
    var writer = JSONWriter(reservingCapacity: 1 << 17)
    static let flushThreshold = 1 << 16

    init(file: FileOutput) { self.file = file }

    /// Writes the buffer out; keeps the buffer's memory unless one huge record grew it.
    mutating func flush() -> WriteResult {
        guard !writer.bytes.isEmpty else { return .ok }
        let result = writer.bytes.withUnsafeBytes { file.writeAll($0) }
        writer.removeAll(keepingCapacity: writer.bytes.capacity <= 1 << 22)
        if writer.bytes.capacity < 1 << 17 { writer.bytes.reserveCapacity(1 << 17) }
        return result
    }
}
