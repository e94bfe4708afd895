#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `--byte-range START:END FILE`: maps only the NDJSON lines of one split of FILE, by Hadoop's rule for line
/// splits, so that the splits `0:a`, `a:b`, …, `y:SIZE` of a file together map each of its records exactly once,
/// whatever the cut points (a line longer than a split included). It is what a task of the Spark stage
/// (Integrations/spark) runs.
///
/// - The range read starts at byte 0 when START is 0, else at the first LF at or after START (the end of the line
///   that crosses START, which the split before reads); it runs through the first LF at or after END (the line
///   that crosses END is read whole), or to the end of the file. A split inside one long line reads that LF alone:
///   no record.
/// - Lines and byte offsets in messages and rejects count from the range's first byte — that LF is the range's line
///   1, so a record on its line L is on the file's line N + L, where N is the number of LFs before the range, and
///   at the file's offset START' + O. Starting at the LF keeps a byte order mark at the start of a line in the
///   middle of the file from being taken for the input's (a serial run rejects it).
/// - With `--stats`, a line `{"byteRange":{"start":START',"end":END',"newlines":K}}` comes just before the summary:
///   the range read and the LFs in it, from which a caller sums up N for the next ranges.
///
/// END must not be past the end of the file (a file shorter than its caller planned is an error, not a short read).
package struct ByteRange: Equatable {
    package let start: Int
    package let end: Int

    package init(start: Int, end: Int) {
        self.start = start
        self.end = end
    }

    package init?(argument: String) {
        let parts = argument.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 2, let start = Int(parts[0]), let end = Int(parts[1]), start >= 0, end >= start else {
            return nil
        }
        self.init(start: start, end: end)
    }

}

/// The range of one file that `--byte-range` reads, found when the run starts; counts the LFs it hands out.
/// The run's `InputFile` for that path reads through it (`MapRun.window`).
package final class ByteRangeWindow {
    package let path: String
    /// The range read: `[start, end)`.
    package let start: Int
    package let end: Int
    private(set) var position: Int
    /// LF bytes in what was read so far.
    private(set) var newlines = 0

    private init(path: String, start: Int, end: Int) {
        self.path = path
        self.start = start
        self.end = end
        self.position = start
    }

    /// Finds the range of `path` for `range`. The error is a message for standard error.
    package static func open(_ path: String, _ range: ByteRange) -> Result<ByteRangeWindow, ByteRangeError> {
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(ByteRangeError(message: "\(path): \(Console.describe(errno: errno))")) }
        defer { _ = Glibc.close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else {
            return .failure(ByteRangeError(message: "\(path): --byte-range needs a regular file"))
        }
        let size = Int(st.st_size)
        guard range.end <= size else {
            return .failure(ByteRangeError(message: "\(path): --byte-range \(range.start):\(range.end) ends past the end of the file (\(size) byte\(size == 1 ? "" : "s"))"))
        }
        let from: Int, to: Int
        do {
            from = range.start == 0 ? 0 : try firstNewline(fd, at: range.start, size: size) ?? size
            to = range.end == size ? size : try firstNewline(fd, at: range.end, size: size).map { $0 + 1 } ?? size
        } catch {
            return .failure(ByteRangeError(message: "\(path): \(Console.describe(errno: error.code))"))
        }
        return .success(ByteRangeWindow(path: path, start: from, end: max(from, to)))
    }

    /// The offset of the first LF at or after `offset`, or nil when there is none before `size`.
    private static func firstNewline(_ fd: Int32, at offset: Int, size: Int) throws(Errno) -> Int? {
        let file = PositionalFile(descriptor: fd, base: 0)
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var position = offset
        while position < size {
            let want = min(buffer.count, size - position)
            guard let n = buffer.withUnsafeMutableBytes({ file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want]), at: position) }) else {
                throw Errno(code: errno)
            }
            if n == 0 { return nil }  // shorter than it was: the read of the range reports it
            let at: Int? = buffer.withUnsafeBytes { raw in
                guard let base = raw.baseAddress, let found = memchr(base, 0x0A, n) else { return nil }
                return UnsafeRawPointer(found) - base
            }
            if let at { return position + at }
            position += n
        }
        return nil
    }

    package func read(_ fd: Int32, into buffer: UnsafeMutableRawBufferPointer, interrupted: () -> Bool) -> Int? {
        let want = min(buffer.count, end - position)
        guard want > 0 else { return 0 }
        // The pipeline's positional reader (the one the --jobs ranges read with).
        guard let n = PositionalFile(descriptor: fd, base: 0).read(into: UnsafeMutableRawBufferPointer(rebasing: buffer[..<want]),
                                                                  at: position, interrupted: interrupted) else { return nil }
        if n == 0 {
            errno = EIO  // the file is shorter than when the window was found
            return nil
        }
        newlines += Self.countNewlines(UnsafeRawBufferPointer(rebasing: buffer[..<n]))
        position += n
        return n
    }

    package static func countNewlines(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard var p = bytes.baseAddress else { return 0 }
        let end = p + bytes.count
        var count = 0
        while p < end, let found = memchr(p, 0x0A, end - p) {
            count += 1
            p = UnsafeRawPointer(found) + 1
        }
        return count
    }

    /// The `--stats` line that tells the caller what was read.
    package var statsLine: String { #"{"byteRange":{"start":\#(start),"end":\#(end),"newlines":\#(newlines)}}"# }
}

package struct ByteRangeError: Error {
    package let message: String
}
