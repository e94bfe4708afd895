import CZlib
import CZstd
import CLzma
import CBzip2

/// Compresses a stream of output bytes as gzip, zstd, xz or bzip2, in pieces of any size; what it writes,
/// concatenated, is one gzip member, zstd frame, xz or bzip2 stream (`finish` ends it). Memory is constant: each piece is compressed through a
/// fixed buffer handed to `write` as it fills.
public final class OutputCompressor {
    /// What it writes: one gzip member, zstd frame, xz or bzip2 stream.
    public let compression: Compression
    private let gzip: UnsafeMutablePointer<z_stream>?
    private let zstd: OpaquePointer?
    private let xz: UnsafeMutablePointer<lzma_stream>?
    private let bzip2: UnsafeMutablePointer<bz_stream>?
    private let buffer: UnsafeMutableRawBufferPointer
    private var finished = false

    /// `level`: gzip 1–9 (default 6), zstd 1–19 (default 3), xz 0–9 (default 6), bzip2 1–9 (default 9).
    public init(_ compression: Compression, level: Int? = nil) {
        self.compression = compression
        buffer = .allocate(byteCount: 1 << 17, alignment: 16)
        switch compression {
        case .gzip:
            let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
            stream.initialize(to: z_stream())
            let status = czlib_deflate_init(stream, Int32(level ?? 6), 15 + 16)
            precondition(status == Z_OK, "zlib: deflateInit2 failed (\(status))")  // only out of memory or a bad level
            gzip = stream
            (zstd, xz, bzip2) = (nil, nil, nil)
        case .zstd:
            guard let context = ZSTD_createCCtx() else { preconditionFailure("libzstd: ZSTD_createCCtx failed") }
            ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, Int32(level ?? 3))
            zstd = context
            (gzip, xz, bzip2) = (nil, nil, nil)
        case .xz:
            let stream = UnsafeMutablePointer<lzma_stream>.allocate(capacity: 1)
            stream.initialize(to: lzma_stream())
            let status = lzma_easy_encoder(stream, UInt32(min(max(level ?? 6, 0), 9)), LZMA_CHECK_CRC64)
            precondition(status == LZMA_OK, "liblzma: lzma_easy_encoder failed (\(status.rawValue))")  // only out of memory
            xz = stream
            (gzip, zstd, bzip2) = (nil, nil, nil)
        case .bzip2:
            let stream = UnsafeMutablePointer<bz_stream>.allocate(capacity: 1)
            stream.initialize(to: bz_stream())
            let status = BZ2_bzCompressInit(stream, Int32(min(max(level ?? 9, 1), 9)), 0, 0)
            precondition(status == BZ_OK, "libbz2: BZ2_bzCompressInit failed (\(status))")  // only out of memory
            bzip2 = stream
            (gzip, zstd, xz) = (nil, nil, nil)
        }
    }

    deinit {
        if let gzip {
            deflateEnd(gzip)
            gzip.deallocate()
        }
        if let zstd { ZSTD_freeCCtx(zstd) }
        if let xz {
            lzma_end(xz)
            xz.deallocate()
        }
        if let bzip2 {
            BZ2_bzCompressEnd(bzip2)
            bzip2.deallocate()
        }
        buffer.deallocate()
    }

    /// Compresses `bytes`, handing compressed pieces to `write` (which returns false to stop: then so does this).
    @discardableResult
    public func compress(_ bytes: UnsafeRawBufferPointer, write: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        run(bytes, finishing: false, write: write)
    }

    /// Ends the stream (the gzip trailer, the end of the zstd frame) and hands the rest to `write`. Once only.
    @discardableResult
    public func finish(write: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard !finished else { return true }
        finished = true
        return run(UnsafeRawBufferPointer(start: nil, count: 0), finishing: true, write: write)
    }

    private func run(_ bytes: UnsafeRawBufferPointer, finishing: Bool, write: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        if let gzip {
            gzip.pointee.next_in = UnsafeMutablePointer(mutating: bytes.baseAddress?.assumingMemoryBound(to: Bytef.self))
            gzip.pointee.avail_in = uInt(bytes.count)
            while true {
                gzip.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: Bytef.self)
                gzip.pointee.avail_out = uInt(buffer.count)
                let status = deflate(gzip, finishing ? Z_FINISH : Z_NO_FLUSH)
                let n = buffer.count - Int(gzip.pointee.avail_out)
                if n > 0 && !write(UnsafeRawBufferPointer(rebasing: buffer[..<n])) { return false }
                if finishing ? status == Z_STREAM_END : gzip.pointee.avail_in == 0 && gzip.pointee.avail_out > 0 { return true }
                precondition(status == Z_OK || status == Z_BUF_ERROR, "zlib: deflate failed (\(status))")
            }
        }
        // Asked to run without input, liblzma and libbz2 report that no progress was made (an error): nothing to do.
        if bytes.isEmpty && !finishing && (xz != nil || bzip2 != nil) { return true }
        if let xz {
            xz.pointee.next_in = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self)
            xz.pointee.avail_in = bytes.count
            while true {
                xz.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: UInt8.self)
                xz.pointee.avail_out = buffer.count
                let status = lzma_code(xz, finishing ? LZMA_FINISH : LZMA_RUN)
                precondition(status == LZMA_OK || status == LZMA_STREAM_END, "liblzma: lzma_code failed (\(status.rawValue))")
                let n = buffer.count - xz.pointee.avail_out
                if n > 0 && !write(UnsafeRawBufferPointer(rebasing: buffer[..<n])) { return false }
                if finishing ? status == LZMA_STREAM_END : xz.pointee.avail_in == 0 && xz.pointee.avail_out > 0 { return true }
            }
        }
        if let bzip2 {
            var rest = bytes
            while true {
                // avail_in is 32 bits: long pieces go in parts.
                let part = UnsafeRawBufferPointer(rebasing: rest.prefix(1 << 30))
                bzip2.pointee.next_in = UnsafeMutablePointer(mutating: part.baseAddress?.assumingMemoryBound(to: CChar.self))
                bzip2.pointee.avail_in = UInt32(part.count)
                bzip2.pointee.next_out = buffer.baseAddress!.assumingMemoryBound(to: CChar.self)
                bzip2.pointee.avail_out = UInt32(buffer.count)
                let status = BZ2_bzCompress(bzip2, finishing ? BZ_FINISH : BZ_RUN)
                precondition(status >= 0, "libbz2: BZ2_bzCompress failed (\(status))")
                rest = UnsafeRawBufferPointer(rebasing: rest[(part.count - Int(bzip2.pointee.avail_in))...])
                let n = buffer.count - Int(bzip2.pointee.avail_out)
                if n > 0 && !write(UnsafeRawBufferPointer(rebasing: buffer[..<n])) { return false }
                if finishing ? status == BZ_STREAM_END : rest.isEmpty && bzip2.pointee.avail_out > 0 { return true }
            }
        }
        var input = ZSTD_inBuffer(src: bytes.baseAddress, size: bytes.count, pos: 0)
        while true {
            var output = ZSTD_outBuffer(dst: buffer.baseAddress, size: buffer.count, pos: 0)
            let left = ZSTD_compressStream2(zstd, &output, &input, finishing ? ZSTD_e_end : ZSTD_e_continue)
            precondition(ZSTD_isError(left) == 0, "libzstd: \(String(cString: ZSTD_getErrorName(left)))")
            if output.pos > 0 && !write(UnsafeRawBufferPointer(rebasing: buffer[..<output.pos])) { return false }
            if finishing ? left == 0 : input.pos == input.size { return true }
        }
    }
}
