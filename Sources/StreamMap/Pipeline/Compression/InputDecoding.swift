#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one read of a (possibly compressed) input gave.
enum DecodedRead: Equatable {
    /// This many bytes of text were written into the room.
    case bytes(Int)
    /// The input ended (after its last member or frame).
    case end
    /// Reading the raw input failed with this error number.
    case failed(errno: Int32)
    /// The compressed data is corrupt or cut short.
    case corrupt(CompressedInputError)
    /// The input is UTF-16 or UTF-32 (nothing of it is handed on).
    case unsupportedEncoding(UnsupportedEncodingError)
}

/// Reads an input as text whatever it is stored as: tells gzip and zstd from plain text by the first bytes and
/// decompresses them, in the room the caller gives (so memory stays constant however much a stream expands).
///
/// Plain text goes straight into the caller's room (no copy). Compressed bytes are read into a buffer of their own
/// and decompressed into the room. A fault (a corrupt stream, a failed read) is reported after the text before it
/// has been handed on: the read that meets it returns that text, the next one the fault.
struct InputDecoding {
    private enum State {
        case sniffing
        case plain
        case compressed(Compression, any Decompressor)
        /// The text is in an encoding StreamMap does not read: every read says so.
        case refused(UnsupportedEncodingError)
    }

    private var state: State
    private var compressed: UnsafeMutableRawBufferPointer?
    private var start = 0, end = 0
    private var rawEnded = false
    /// Compressed bytes taken by the decompressor so far (the offset in messages).
    private(set) var compressedOffset = 0
    private var pending: DecodedRead?

    /// Compressed bytes one raw read asks for.
    static let compressedReadBytes = 1 << 17

    /// Which inflate decompresses gzip.
    private let inflater: Inflater

    /// `detect`: false reads every input as plain text (as `--byte-range` must); `inflater` decompresses gzip.
    init(detect: Bool = true, inflater: Inflater = .automatic) {
        state = detect ? .sniffing : .plain
        self.inflater = inflater
    }

    /// Which compression was found (nil: plain, or not known yet).
    var compression: Compression? {
        if case .compressed(let c, _) = state { return c }
        return nil
    }

    /// Fills (part of) `room` with text; `read` is the raw input (the count read, 0 at its end, nil with errno set).
    mutating func read(into room: UnsafeMutableRawBufferPointer, from read: (UnsafeMutableRawBufferPointer) -> Int?) -> DecodedRead {
        if let p = pending {
            pending = nil
            return p
        }
        switch state {
        case .plain:
            guard let n = read(room) else { return .failed(errno: errno) }
            return n == 0 ? .end : .bytes(n)
        case .sniffing:
            return sniff(into: room, from: read)
        case .compressed(let compression, let decompressor):
            return decompress(compression, decompressor, into: room, from: read)
        case .refused(let error):
            return .unsupportedEncoding(error)
        }
    }

    /// The first read: enough bytes to tell the format (reads may come in smaller pieces from a pipe; it stops as
    /// soon as the bytes cannot be a magic number).
    private mutating func sniff(into room: UnsafeMutableRawBufferPointer, from read: (UnsafeMutableRawBufferPointer) -> Int?) -> DecodedRead {
        var n = 0
        var ended = false
        while Self.couldStartAFormat(UnsafeRawBufferPointer(rebasing: room[..<n])) {
            guard let got = read(UnsafeMutableRawBufferPointer(rebasing: room[n...])) else {
                if n == 0 { return .failed(errno: errno) }
                pending = .failed(errno: errno)
                break
            }
            if got == 0 {
                ended = true
                break
            }
            n += got
        }
        if let error = UnsupportedEncodingError.detect(UnsafeRawBufferPointer(rebasing: room[..<n])) {
            state = .refused(error)
            pending = nil
            return .unsupportedEncoding(error)
        }
        guard let compression = Compression.detect(UnsafeRawBufferPointer(rebasing: room[..<n])) else {
            state = .plain
            return n == 0 ? .end : .bytes(n)
        }
        // Compressed: what was read is the start of the compressed bytes.
        let buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(Self.compressedReadBytes, n), alignment: 16)
        buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: room[..<n]))
        compressed = buffer
        start = 0
        end = n
        rawEnded = ended
        let decompressor: any Decompressor
        switch compression {
        case .gzip:
            if inflater == .automatic, let isal = IsalLibrary.shared {
                decompressor = IsalGzipDecompressor(isal)
            } else {
                decompressor = GzipDecompressor()
            }
        case .zstd:
            decompressor = ZstdDecompressor()
        case .xz:
            decompressor = XzDecompressor()
        case .bzip2:
            decompressor = Bzip2Decompressor()
        }
        state = .compressed(compression, decompressor)
        if let p = pending {  // the raw read failed right after the magic bytes: nothing to decode before it
            pending = nil
            return p
        }
        return firstText(compression, decompressor, into: room, from: read)
    }

    /// The first text of a compressed input, checked as plain text's first bytes are: text in UTF-16 or UTF-32 is
    /// refused whether or not it came compressed. Decompresses until the text's start can be told.
    private mutating func firstText(_ compression: Compression, _ decompressor: any Decompressor,
                                    into room: UnsafeMutableRawBufferPointer,
                                    from read: (UnsafeMutableRawBufferPointer) -> Int?) -> DecodedRead {
        var produced = 0
        while produced < room.count && UnsupportedEncodingError.couldBeMark(UnsafeRawBufferPointer(rebasing: room[..<produced])) {
            let got = decompress(compression, decompressor, into: UnsafeMutableRawBufferPointer(rebasing: room[produced...]), from: read)
            guard case .bytes(let n) = got else {
                if produced == 0 { return got }  // the end, or a fault, before any text
                pending = got
                break
            }
            produced += n
            if pending != nil { break }  // a fault after this text: it is handed on at the next read
        }
        if let error = UnsupportedEncodingError.detect(UnsafeRawBufferPointer(rebasing: room[..<produced])) {
            pending = nil
            state = .refused(error)
            return .unsupportedEncoding(error)
        }
        return .bytes(produced)
    }

    private mutating func decompress(_ compression: Compression, _ decompressor: any Decompressor,
                                     into room: UnsafeMutableRawBufferPointer,
                                     from read: (UnsafeMutableRawBufferPointer) -> Int?) -> DecodedRead {
        let buffer = compressed!
        var produced = 0
        while produced < room.count {
            let step = decompressor.step(UnsafeRawBufferPointer(rebasing: buffer[start..<end]),
                                         into: UnsafeMutableRawBufferPointer(rebasing: room[produced...]))
            start += step.consumed
            compressedOffset += step.consumed
            produced += step.produced
            if let failure = step.failure {
                return handOver(produced, then: .corrupt(CompressedInputError(compression: compression, compressedOffset: compressedOffset, reason: failure)))
            }
            if step.consumed > 0 || step.produced > 0 { continue }
            // No progress: the decompressor needs more input.
            if start < end && !rawEnded {
                // Keep the unconsumed tail (a header cut by the read) and read after it.
                let tail = end - start
                buffer.baseAddress!.copyMemory(from: buffer.baseAddress! + start, byteCount: tail)
                start = 0
                end = tail
            } else if start == end {
                start = 0
                end = 0
            }
            if rawEnded {
                guard decompressor.isInsideStream || start < end else { return produced > 0 ? .bytes(produced) : .end }
                return handOver(produced, then: .corrupt(CompressedInputError(
                    compression: compression, compressedOffset: compressedOffset + (end - start), reason: "truncated", isTruncated: true)))
            }
            if produced > 0 { return .bytes(produced) }  // hand the text on before waiting for more input
            guard let n = read(UnsafeMutableRawBufferPointer(rebasing: buffer[end...])) else { return .failed(errno: errno) }
            if n == 0 { rawEnded = true } else { end += n }
        }
        return .bytes(produced)
    }

    /// Whether `bytes` could still grow into a compression's magic number or a UTF-16/32 byte-order mark: only then
    /// is more input needed to tell what the input is.
    static func couldStartAFormat(_ bytes: UnsafeRawBufferPointer) -> Bool {
        Compression.couldBeMagic(bytes) || UnsupportedEncodingError.couldBeMark(bytes)
    }

    /// Whether an input starting with `prefix` must be read through `read` (decompressed, or refused) rather than
    /// as plain text: it is compressed, in another encoding, or too short to tell.
    static func isNotPlainText(_ prefix: UnsafeRawBufferPointer) -> Bool {
        couldStartAFormat(prefix) || Compression.detect(prefix) != nil || UnsupportedEncodingError.detect(prefix) != nil
    }

    /// Returns the text produced before a fault now, and the fault at the next read.
    private mutating func handOver(_ produced: Int, then fault: DecodedRead) -> DecodedRead {
        guard produced > 0 else { return fault }
        pending = fault
        return .bytes(produced)
    }

    /// Frees the compressed-bytes buffer.
    mutating func release() {
        compressed?.deallocate()
        compressed = nil
    }
}
