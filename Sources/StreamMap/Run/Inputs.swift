#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An input opened for reading: a file, or standard input for `-`.
package struct InputFile {
    package let fd: Int32
    /// Name in messages: the path as given, or `<stdin>`.
    package let name: String
    /// With `--byte-range`: the part of the file that is read (nil: all of it).
    package var window: ByteRangeWindow? = nil

    /// How many bytes one read asks for (256 KiB).
    package static let readBytes = 1 << 18

    /// Opens `path` (`-`: standard input). A directory is refused here (reading one fails later with EISDIR
    /// anyway, but only on some systems). The error is an errno.
    package static func open(_ path: String) -> Result<InputFile, Errno> {
        if path == "-" { return .success(InputFile(fd: 0, name: "<stdin>")) }
        let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return .failure(Errno(code: errno)) }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            _ = Glibc.close(fd)
            return .failure(Errno(code: EISDIR))
        }
        return .success(InputFile(fd: fd, name: path))
    }

    package func close() { if fd != 0 { _ = Glibc.close(fd) } }

    /// Reads into `buffer`; retries on EINTR unless `interrupted()` says to stop (then returns nil with errno
    /// EINTR). Returns the count (0 at the end) or nil on error (errno set).
    package func read(into buffer: UnsafeMutableRawBufferPointer, interrupted: () -> Bool) -> Int? {
        if let window { return window.read(fd, into: buffer, interrupted: interrupted) }
        while true {
            let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if n >= 0 { return n }
            if errno == EINTR {
                if interrupted() { return nil }
                continue
            }
            return nil
        }
    }

    /// The total size of the inputs when all of them are regular, uncompressed files (for the progress ETA: the
    /// progress counts decompressed bytes), else nil.
    package static func totalSize(_ paths: [String]) -> Int? {
        var total = 0
        for path in paths {
            var st = stat()
            let ok = path == "-" ? fstat(0, &st) == 0 : stat(path, &st) == 0
            guard ok, (st.st_mode & S_IFMT) == S_IFREG, compression(of: path) == nil else { return nil }
            total += Int(st.st_size)
        }
        return total
    }

    /// Whether `path` is a regular file that starts with a compression's magic bytes (read without moving an offset).
    package static func isCompressedFile(_ path: String) -> Bool {
        var st = stat()
        guard stat(path, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return false }
        return compression(of: path) != nil
    }

    /// Device and inode of a path (nil when it does not exist), to refuse writing over an input.
    package static func identity(_ path: String) -> (UInt64, UInt64)? {
        var st = stat()
        let ok = path == "-" ? fstat(0, &st) == 0 : stat(path, &st) == 0
        guard ok, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        return (UInt64(st.st_dev), UInt64(st.st_ino))
    }

    /// The compression a regular file starts with (its magic bytes, read without moving its offset), or nil.
    package static func compression(of path: String) -> Compression? {
        let fd = path == "-" ? 0 : Glibc.open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { if fd != 0 { _ = Glibc.close(fd) } }
        var prefix = [UInt8](repeating: 0, count: Compression.magicByteCount)
        let n = prefix.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        return n > 0 ? Compression.detect(Array(prefix[..<n])) : nil
    }
}
