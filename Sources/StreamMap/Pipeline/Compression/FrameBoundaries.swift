/// Where a compressed input's frames end, read from their headers without decompressing anything — what lets one
/// file be decompressed by several threads at once (`ParallelDecoding`). Only boundaries the format states are
/// used, never a guess:
///
/// - **zstd** (RFC 8878): a frame's header and its blocks' 3-byte headers give its length; a skippable frame states
///   its own. `pzstd` writes files of many frames (each behind a skippable frame), as does `cat a.zst b.zst`.
/// - **BGZF** gzip (`bgzip`, SAM/BAM tools): each member's extra field carries a `BC` subfield with the member's
///   length, and its trailer the length of its text. A gzip member without it can be ended only by inflating it.
enum FrameBoundary: Equatable {
    /// A whole frame or member of `length` compressed bytes, whose text is at most `textBound` bytes (exactly that
    /// many when `textIsExact`; a skippable frame has none).
    case frame(length: Int, textBound: Int, textIsExact: Bool)
    /// The bytes end before the frame's length can be told or before its last byte.
    case needMore
    /// Not a frame whose end its headers state, or not one to decompress apart: a gzip member that is not BGZF, a
    /// zstd frame that needs a dictionary or a window larger than the streaming decoder accepts, a reserved block
    /// type, text of more than `maxText` bytes, bytes of no format. The input is decompressed in order from there.
    case unsplittable

    /// The boundary of the frame or member that starts at `bytes`' first byte.
    static func next(_ compression: Compression, in bytes: UnsafeRawBufferPointer, maxText: Int) -> FrameBoundary {
        switch compression {
        case .zstd: return zstdFrame(bytes, maxText: maxText)
        case .gzip: return bgzfMember(bytes, maxText: maxText)
        case .xz, .bzip2: return .unsplittable
        }
    }

    /// The largest block a zstd frame holds, decompressed (RFC 8878, 3.1.1.2.4: Block_Maximum_Size).
    static let zstdBlockMaximum = 128 << 10
    /// The largest window libzstd's streaming decoder accepts by default (ZSTD_WINDOWLOG_LIMIT_DEFAULT): a frame
    /// that needs more is refused by the decoder that reads in order, so it is not decompressed apart either.
    static let zstdWindowLimit = 1 << 27

    private static func zstdFrame(_ b: UnsafeRawBufferPointer, maxText: Int) -> FrameBoundary {
        guard b.count >= 4 else { return .needMore }
        let magic = le32(b, 0)
        if magic & 0xFFFF_FFF0 == 0x184D_2A50 {  // skippable: magic, a 4-byte size, that many bytes
            guard b.count >= 8 else { return .needMore }
            let length = 8 + Int(le32(b, 4))
            guard length <= maxText else { return .unsplittable }
            return b.count >= length ? .frame(length: length, textBound: 0, textIsExact: true) : .needMore
        }
        guard magic == 0xFD2F_B528, b.count >= 5 else { return magic == 0xFD2F_B528 ? .needMore : .unsplittable }
        let descriptor = b[4]
        let singleSegment = descriptor & 0x20 != 0, hasChecksum = descriptor & 0x04 != 0
        // A reserved bit set, or a dictionary: left to the decoder in order (which says what is wrong).
        guard descriptor & 0x08 == 0, descriptor & 0x03 == 0 else { return .unsplittable }
        let contentSizeBytes = [singleSegment ? 1 : 0, 2, 4, 8][Int(descriptor >> 6)]
        var at = 5
        if !singleSegment {
            guard b.count > at else { return .needMore }
            let exponent = Int(b[at] >> 3), mantissa = Int(b[at] & 7)
            let base = 1 << (10 + exponent)
            guard base + base / 8 * mantissa <= zstdWindowLimit else { return .unsplittable }
            at += 1
        }
        guard b.count >= at + contentSizeBytes else { return .needMore }
        var contentSize: Int?
        switch contentSizeBytes {
        case 1: contentSize = Int(b[at])
        case 2: contentSize = Int(b[at]) | Int(b[at + 1]) << 8 + 256
        case 4: contentSize = Int(le32(b, at))
        case 8:
            let high = le32(b, at + 4)
            guard high < 0x8000_0000 else { return .unsplittable }
            contentSize = Int(le32(b, at)) | Int(high) << 32
        default: contentSize = nil
        }
        if let contentSize {
            guard contentSize <= maxText else { return .unsplittable }
            if singleSegment && contentSize > zstdWindowLimit { return .unsplittable }
        }
        at += contentSizeBytes
        var bound = 0
        while true {
            guard b.count >= at + 3 else { return .needMore }
            let header = Int(b[at]) | Int(b[at + 1]) << 8 | Int(b[at + 2]) << 16
            let isLast = header & 1 != 0, size = header >> 3
            at += 3
            switch (header >> 1) & 3 {
            case 0:  // raw: `size` bytes of text
                guard size <= zstdBlockMaximum else { return .unsplittable }
                at += size
                bound += size
            case 1:  // RLE: one byte, repeated `size` times
                guard size <= zstdBlockMaximum else { return .unsplittable }
                at += 1
                bound += size
            case 2:  // compressed: `size` bytes, at most a block of text
                guard size < zstdBlockMaximum else { return .unsplittable }
                at += size
                bound += zstdBlockMaximum
            default:  // reserved
                return .unsplittable
            }
            if let contentSize {
                // Blocks far longer than their stated text: corrupt, or hostile (the splitting thread holds a frame
                // whole); the decoder in order tells.
                if at > 2 * contentSize + 4096 { return .unsplittable }
            } else if bound > maxText {
                return .unsplittable
            }
            if isLast { break }
        }
        if hasChecksum { at += 4 }
        guard b.count >= at else { return .needMore }
        if let contentSize { return .frame(length: at, textBound: contentSize, textIsExact: true) }
        return .frame(length: at, textBound: bound, textIsExact: false)
    }

    private static func bgzfMember(_ b: UnsafeRawBufferPointer, maxText: Int) -> FrameBoundary {
        guard b.count >= 12 else { return .needMore }
        // The magic, deflate, FEXTRA set and no reserved flag bit.
        guard b[0] == 0x1F, b[1] == 0x8B, b[2] == 8, b[3] & 0x04 != 0, b[3] & 0xE0 == 0 else { return .unsplittable }
        let extraEnd = 12 + Int(le16(b, 10))
        guard b.count >= extraEnd else { return .needMore }
        var at = 12, memberSize: Int?
        while at + 4 <= extraEnd {
            let length = Int(le16(b, at + 2))
            if b[at] == 66 && b[at + 1] == 67 && length == 2 && at + 6 <= extraEnd { memberSize = Int(le16(b, at + 4)) + 1 }
            at += 4 + length
        }
        guard let memberSize, memberSize >= extraEnd + 8 else { return .unsplittable }
        guard b.count >= memberSize else { return .needMore }
        let textSize = Int(le32(b, memberSize - 4))
        guard textSize <= maxText else { return .unsplittable }
        return .frame(length: memberSize, textBound: textSize, textIsExact: true)
    }

    private static func le16(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt16 {
        UInt16(b[at]) | UInt16(b[at + 1]) << 8
    }

    private static func le32(_ b: UnsafeRawBufferPointer, _ at: Int) -> UInt32 {
        UInt32(b[at]) | UInt32(b[at + 1]) << 8 | UInt32(b[at + 2]) << 16 | UInt32(b[at + 3]) << 24
    }
}
