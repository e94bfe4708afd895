import CZlib
import CZstd

/// Compresses a stream of output bytes as gzip or zstd, in pieces of any size; what it writes, concatenated, is
/// one gzip member or one zstd frame (`finish` ends it). Memory is constant: each piece is compressed through a
/// fixed buffer handed to `write` as it fills.
public final class OutputCompressor {
    /// What it writes: one gzip member or one zstd frame.
    public let compression: Compression
    private let gzip: UnsafeMutablePointer<z_stream>?
    private let zstd: OpaquePointer?
    private let buffer: UnsafeMutableRawBufferPointer
    private var finished = false

    /// `level`: gzip 1–9 (default 6), zstd 1–19 (default 3).
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
            zstd = nil
        case .zstd:
            guard let context = ZSTD_createCCtx() else { preconditionFailure("libzstd: ZSTD_createCCtx failed") }
            ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, Int32(level ?? 3))
            gzip = nil
            zstd = context
        }
    }

    deinit {
        if let gzip {
            deflateEnd(gzip)
            gzip.deallocate()
        }
        if let zstd { ZSTD_freeCCtx(zstd) }
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
