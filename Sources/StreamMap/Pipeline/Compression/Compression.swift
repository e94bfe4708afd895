/// A compression format StreamMap reads (told by an input's first bytes, never by its name) and writes.
public enum Compression: String, Sendable, CaseIterable, Equatable {
    /// gzip (RFC 1952), one member or several one after another (as `pigz` and `cat a.gz b.gz` write).
    case gzip
    /// Zstandard (RFC 8878), one frame or several (skippable frames are skipped).
    case zstd

    /// How many first bytes `detect` needs to tell every format (fewer: only at the end of a short input).
    public static let magicByteCount = 4

    /// The compression whose magic bytes `prefix` starts with, or nil (plain text, or too short to tell).
    /// gzip: 1F 8B; zstd: 28 B5 2F FD, or a skippable frame's 5? 2A 4D 18 (`pzstd` starts its files with one).
    public static func detect(_ prefix: UnsafeRawBufferPointer) -> Compression? {
        if prefix.count >= 2 && prefix[0] == 0x1F && prefix[1] == 0x8B { return .gzip }
        if prefix.count >= 4 && prefix[0] == 0x28 && prefix[1] == 0xB5 && prefix[2] == 0x2F && prefix[3] == 0xFD { return .zstd }
        if prefix.count >= 4 && prefix[0] & 0xF0 == 0x50 && prefix[1] == 0x2A && prefix[2] == 0x4D && prefix[3] == 0x18 { return .zstd }
        return nil
    }

    /// `detect(_:)` on an array's bytes.
    public static func detect(_ prefix: [UInt8]) -> Compression? { prefix.withUnsafeBytes { detect($0) } }

    /// Whether `bytes` could still grow into a magic number (they are the start of one, or empty): only then is
    /// more input needed to tell. So one line typed at a terminal (`1` and a newline) is mapped at once.
    static func couldBeMagic(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let skippable: [UInt8] = [bytes.first.map { $0 & 0xF0 == 0x50 ? $0 : 0x50 } ?? 0x50, 0x2A, 0x4D, 0x18]
        return [[0x1F, 0x8B], [0x28, 0xB5, 0x2F, 0xFD], skippable].contains { (magic: [UInt8]) in
            bytes.count < magic.count && bytes.elementsEqual(magic.prefix(bytes.count))
        }
    }

    /// The compression an output file's name asks for: `.gz` gzip, `.zst` zstd, anything else nil.
    public static func forFileName(_ name: String) -> Compression? {
        if name.hasSuffix(".gz") { return .gzip }
        if name.hasSuffix(".zst") { return .zstd }
        return nil
    }
}

/// A compressed input that cannot be decompressed: corrupt, or cut short. The records decompressed before it were
/// read as usual; nothing after it is.
public struct CompressedInputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input's compression (told by its magic bytes).
    public var compression: Compression
    /// Where in the compressed bytes (counted from the input's first byte) decompression stopped.
    public var compressedOffset: Int
    /// The decompressor's reason (zlib's or libzstd's message), or `truncated`.
    public var reason: String
    /// The input ended inside a gzip member or a zstd frame.
    public var isTruncated: Bool

    /// An error of a `compression` input at `compressedOffset`, for `reason`; `isTruncated` when the input ended
    /// inside a member or frame.
    public init(compression: Compression, compressedOffset: Int, reason: String, isTruncated: Bool = false) {
        self.compression = compression
        self.compressedOffset = compressedOffset
        self.reason = reason
        self.isTruncated = isTruncated
    }

    /// `corrupt gzip data at compressed byte 120: invalid block type`,
    /// `truncated gzip data: the input ends at compressed byte 96, inside a member`.
    public var description: String {
        if isTruncated {
            let unit = compression == .gzip ? "member" : "frame"
            return "truncated \(compression.rawValue) data: the input ends at compressed byte \(compressedOffset), inside a \(unit)"
        }
        return "corrupt \(compression.rawValue) data at compressed byte \(compressedOffset): \(reason)"
    }
}
