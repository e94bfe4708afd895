#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Moving a large text from one buffer to another without holding it twice.
///
/// A record must be written whole or not at all, so a huge record's output is held until it ends — and on its way
/// to the output it passes from buffer to buffer (a member's value into its object's, the engine's into the
/// writer's). A plain copy holds both at once: a 200 MB record took 400–600 MB. Here the source is copied in
/// pieces, and after each piece the source's whole pages that are done are handed back to the system
/// (`madvise(MADV_DONTNEED)`: they read as zeros if touched again), so the two buffers together hold little more
/// than one text. Only for sources whose bytes are not read again (their buffers are emptied or overwritten
/// next); below `threshold` bytes it is one plain copy. Elsewhere than Linux, plain copies.
enum ReleasingCopy {
    /// Sources shorter than this are copied whole (releasing pages costs a system call per piece).
    static let threshold = 8 << 20
    /// Bytes copied between releases.
    static let piece = 4 << 20

    private static let pageSize: Int = {
        #if os(Linux)
        return max(Int(sysconf(Int32(_SC_PAGESIZE))), 4096)
        #else
        return 4096
        #endif
    }()

    /// Hands `source` to `body` in pieces, in order, and after each piece releases the source's whole pages that
    /// piece finished. `source` must be memory this process allocated and will not read again.
    static func forEachPiece(of source: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer) -> Void) {
        guard let start = source.baseAddress, source.count >= threshold else { return body(source) }
        let page = pageSize
        var released = (Int(bitPattern: start) + page - 1) & ~(page - 1)  // the first whole page of the source
        var done = 0
        while done < source.count {
            let n = min(piece, source.count - done)
            body(UnsafeRawBufferPointer(rebasing: source[done..<(done + n)]))
            done += n
            #if os(Linux)
            let end = (Int(bitPattern: start) + done) & ~(page - 1)  // the end of the last whole page copied
            if end > released {
                _ = madvise(UnsafeMutableRawPointer(bitPattern: released), end - released, MADV_DONTNEED)
                released = end
            }
            #endif
        }
    }
}

extension ByteBuffer {
    /// Appends a text that will not be read again where it is (see `ReleasingCopy`): the source's pages are handed
    /// back as they are copied. A short text is one plain append.
    @inline(__always)
    mutating func appendReleasing(_ source: UnsafeRawBufferPointer) {
        if _fastPath(source.count < ReleasingCopy.threshold) { return append(source) }
        appendInPieces(source)
    }

    @inline(never)
    private mutating func appendInPieces(_ source: UnsafeRawBufferPointer) {
        reserve(source.count)
        ReleasingCopy.forEachPiece(of: source) { piece in
            ByteBuffer.copy(piece, to: UnsafeMutableRawPointer(end))
            end += piece.count
        }
    }
}

extension JSONWriter {
    /// Appends a text that will not be read again where it is (see `ReleasingCopy`), with room for `extra` bytes
    /// after it (a record's newline), so that a huge record is not copied again to add one byte. A short text is
    /// one plain append.
    @inline(__always)
    mutating func writeReleasing(_ source: UnsafeRawBufferPointer, reservingExtra extra: Int = 1) {
        if _fastPath(source.count < ReleasingCopy.threshold) { return writeRaw(source) }
        writeInPieces(source, reservingExtra: extra)
    }

    @inline(never)
    private mutating func writeInPieces(_ source: UnsafeRawBufferPointer, reservingExtra extra: Int) {
        if bytes.capacity < bytes.count + source.count + extra {
            bytes.reserveCapacity(bytes.count + source.count + extra)
        }
        ReleasingCopy.forEachPiece(of: source) { bytes.append(contentsOf: $0) }
    }
}
