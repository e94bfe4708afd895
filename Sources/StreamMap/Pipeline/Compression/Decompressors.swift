import CZlib
import CZstd

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
