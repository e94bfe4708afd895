import CZlib
import CZstd
import CLzma
import CBzip2

/// One decompression step's outcome.
struct DecompressionStep {
    /// Compressed bytes taken from the input.
    var consumed = 0
    /// Decompressed bytes written into the room.
    var produced = 0
    /// The data is corrupt (the decompressor's message); `consumed` counts the bytes before the fault.
    var failure: String?
}

/// Streams one compression format: compressed bytes in, text out, in steps of any size.
protocol Decompressor: AnyObject {
    /// Decompresses what it can of `input` into `room`. Makes no progress (0 consumed, 0 produced) only when it
    /// needs more input; concatenated gzip members and zstd frames are decoded one after another.
    func step(_ input: UnsafeRawBufferPointer, into room: UnsafeMutableRawBufferPointer) -> DecompressionStep
    /// Whether the input read so far ends inside a member or frame (at the input's end: truncated).
    var isInsideStream: Bool { get }
}

/// gzip through zlib's `inflate` (window bits 15 + 16: gzip headers only). After a member's end the stream is
/// reset, so the next member (pigz, `cat a.gz b.gz`) goes on; bytes after a member that are not a gzip member are
/// corrupt data, not silently ignored.
final class GzipDecompressor: Decompressor {
    private let stream: UnsafeMutablePointer<z_stream>
    private var betweenMembers = true

    init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        let status = czlib_inflate_init(stream, 15 + 16)
        precondition(status == Z_OK, "zlib: inflateInit2 failed (\(status))")  // only out of memory
    }

    deinit {
        inflateEnd(stream)
        stream.deallocate()
    }

    var isInsideStream: Bool { !betweenMembers }

    func step(_ input: UnsafeRawBufferPointer, into room: UnsafeMutableRawBufferPointer) -> DecompressionStep {
        guard !room.isEmpty else { return DecompressionStep() }
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = room.baseAddress!.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(room.count)
        let status = inflate(stream, Z_NO_FLUSH)
        var result = DecompressionStep()
        result.consumed = input.count - Int(stream.pointee.avail_in)
        result.produced = room.count - Int(stream.pointee.avail_out)
        if result.consumed > 0 { betweenMembers = false }
        switch status {
        case Z_OK, Z_BUF_ERROR:  // progress, or none possible without more input or room
            break
        case Z_STREAM_END:
            betweenMembers = true
            inflateReset(stream)
        default:  // Z_DATA_ERROR, Z_NEED_DICT, Z_MEM_ERROR
            result.failure = stream.pointee.msg.map { String(cString: $0) } ?? (status == Z_NEED_DICT ? "needs a preset dictionary" : "zlib error \(status)")
        }
        return result
    }
}

/// zstd through libzstd's streaming decoder; consecutive frames (and skippable frames) are decoded in turn.
final class ZstdDecompressor: Decompressor {
    private let context: OpaquePointer
    private var frameEnded = true

    init() {
        guard let context = ZSTD_createDCtx() else { preconditionFailure("libzstd: ZSTD_createDCtx failed") }  // only out of memory
        self.context = context
    }

    deinit { ZSTD_freeDCtx(context) }

    var isInsideStream: Bool { !frameEnded }

    func step(_ input: UnsafeRawBufferPointer, into room: UnsafeMutableRawBufferPointer) -> DecompressionStep {
        guard !room.isEmpty else { return DecompressionStep() }
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var outBuffer = ZSTD_outBuffer(dst: room.baseAddress, size: room.count, pos: 0)
        let hint = ZSTD_decompressStream(context, &outBuffer, &inBuffer)
        var result = DecompressionStep(consumed: inBuffer.pos, produced: outBuffer.pos)
        if ZSTD_isError(hint) != 0 {
            result.failure = String(cString: ZSTD_getErrorName(hint))
            return result
        }
        if result.consumed > 0 || result.produced > 0 { frameEnded = hint == 0 }
        return result
    }
}

/// xz through liblzma's stream decoder; streams one after another (as `cat a.xz b.xz` writes) are decoded in turn.
final class XzDecompressor: Decompressor {
    /// At a fixed address for the decoder's lifetime (libraries keep pointers to their stream).
    private let stream = UnsafeMutablePointer<lzma_stream>.allocate(capacity: 1)
    private var betweenStreams = true

    init() {
        stream.initialize(to: lzma_stream())
        Self.start(stream)
    }

    deinit {
        lzma_end(stream)
        stream.deallocate()
    }

    private static func start(_ stream: UnsafeMutablePointer<lzma_stream>) {
        let status = lzma_stream_decoder(stream, UInt64.max, 0)
        precondition(status == LZMA_OK, "liblzma: lzma_stream_decoder failed (\(status.rawValue))")  // only out of memory
    }

    var isInsideStream: Bool { !betweenStreams }

    func step(_ input: UnsafeRawBufferPointer, into room: UnsafeMutableRawBufferPointer) -> DecompressionStep {
        guard !room.isEmpty else { return DecompressionStep() }
        if betweenStreams, let fault = streamStartFault(input, magic: [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], "file format not recognized") {
            return fault
        }
        stream.pointee.next_in = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_in = input.count
        stream.pointee.next_out = room.baseAddress!.assumingMemoryBound(to: UInt8.self)
        stream.pointee.avail_out = room.count
        let status = lzma_code(stream, LZMA_RUN)
        var result = DecompressionStep(consumed: input.count - stream.pointee.avail_in, produced: room.count - stream.pointee.avail_out)
        if result.consumed > 0 { betweenStreams = false }
        switch status {
        case LZMA_OK, LZMA_BUF_ERROR:
            break
        case LZMA_STREAM_END:
            betweenStreams = true
            lzma_end(stream)
            stream.pointee = lzma_stream()
            Self.start(stream)
        case LZMA_DATA_ERROR: result.failure = "compressed data is corrupt"
        case LZMA_FORMAT_ERROR: result.failure = "file format not recognized"
        case LZMA_OPTIONS_ERROR: result.failure = "unsupported options"
        case LZMA_MEM_ERROR, LZMA_MEMLIMIT_ERROR: result.failure = "out of memory"
        default: result.failure = "liblzma error \(status.rawValue)"
        }
        return result
    }
}

/// bzip2 through libbz2; streams one after another (as `pbzip2` and `cat a.bz2 b.bz2` write) are decoded in turn.
final class Bzip2Decompressor: Decompressor {
    /// At a fixed address for the decoder's lifetime (libbz2 checks that the stream it is given is the one it began).
    private let stream = UnsafeMutablePointer<bz_stream>.allocate(capacity: 1)
    private var betweenStreams = true

    init() {
        stream.initialize(to: bz_stream())
        Self.start(stream)
    }

    deinit {
        BZ2_bzDecompressEnd(stream)
        stream.deallocate()
    }

    private static func start(_ stream: UnsafeMutablePointer<bz_stream>) {
        let status = BZ2_bzDecompressInit(stream, 0, 0)
        precondition(status == BZ_OK, "libbz2: BZ2_bzDecompressInit failed (\(status))")  // only out of memory
    }

    var isInsideStream: Bool { !betweenStreams }

    func step(_ input: UnsafeRawBufferPointer, into room: UnsafeMutableRawBufferPointer) -> DecompressionStep {
        guard !room.isEmpty else { return DecompressionStep() }
        if betweenStreams, let fault = streamStartFault(input, magic: Array("BZh".utf8), "not bzip2 data") { return fault }
        let inCount = UInt32(min(input.count, Int(UInt32.max))), outCount = UInt32(min(room.count, Int(UInt32.max)))
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: CChar.self))
        stream.pointee.avail_in = inCount
        stream.pointee.next_out = room.baseAddress!.assumingMemoryBound(to: CChar.self)
        stream.pointee.avail_out = outCount
        let status = BZ2_bzDecompress(stream)
        var result = DecompressionStep(consumed: Int(inCount - stream.pointee.avail_in), produced: Int(outCount - stream.pointee.avail_out))
        if result.consumed > 0 { betweenStreams = false }
        switch status {
        case BZ_OK:
            break
        case BZ_STREAM_END:
            betweenStreams = true
            BZ2_bzDecompressEnd(stream)
            stream.pointee = bz_stream()
            Self.start(stream)
        case BZ_DATA_ERROR_MAGIC: result.failure = "not bzip2 data"
        case BZ_DATA_ERROR: result.failure = "compressed data is corrupt"
        case BZ_MEM_ERROR: result.failure = "out of memory"
        default: result.failure = "libbz2 error \(status)"
        }
        return result
    }
}

/// Where a stream must start (the input's start, or right after a stream's end): no step until the magic number's
/// bytes are there (or as many as the input holds, which may be a cut stream), and bytes that are not the magic
/// number are corrupt at once — so a few bytes of text after the last stream are "not this format", as zlib says of
/// gzip, not a stream cut short.
private func streamStartFault(_ input: UnsafeRawBufferPointer, magic: [UInt8], _ message: String) -> DecompressionStep? {
    let n = min(input.count, magic.count)
    if !input.prefix(n).elementsEqual(magic.prefix(n)) { return DecompressionStep(consumed: 0, produced: 0, failure: message) }
    return n < magic.count ? DecompressionStep() : nil
}
