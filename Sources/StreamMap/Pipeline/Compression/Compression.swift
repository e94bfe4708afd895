/// A compression format StreamMap reads (told by an input's first bytes, never by its name) and writes.
public enum Compression: String, Sendable, CaseIterable, Equatable {
    /// gzip (RFC 1952), one member or several one after another (as `pigz` and `cat a.gz b.gz` write).
    case gzip
    /// Zstandard (RFC 8878), one frame or several (skippable frames are skipped).
    case zstd
    /// xz (the .xz container of LZMA2), one stream or several.
    case xz
    /// bzip2, one stream or several (as `pbzip2` writes).
    case bzip2

    /// How many first bytes `detect` needs to tell every format (fewer: only at the end of a short input).
    public static let magicByteCount = 6

    /// The magic numbers (a skippable zstd frame's first byte is 50–5F: see `couldBeMagic`).
    private static let magics: [[UInt8]] = [[0x1F, 0x8B], [0x28, 0xB5, 0x2F, 0xFD], [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00],
                                            [0x42, 0x5A, 0x68]]

    /// The compression whose magic bytes `prefix` starts with, or nil (plain text, or too short to tell).
    /// gzip: 1F 8B; zstd: 28 B5 2F FD, or a skippable frame's 5? 2A 4D 18 (`pzstd` starts its files with one);
    /// xz: FD 37 7A 58 5A 00; bzip2: `BZh` and the block size digit 1–9.
    public static func detect(_ prefix: UnsafeRawBufferPointer) -> Compression? {
        if prefix.count >= 2 && prefix[0] == 0x1F && prefix[1] == 0x8B { return .gzip }
        if prefix.count >= 4 && prefix[0] == 0x28 && prefix[1] == 0xB5 && prefix[2] == 0x2F && prefix[3] == 0xFD { return .zstd }
        if prefix.count >= 4 && prefix[0] & 0xF0 == 0x50 && prefix[1] == 0x2A && prefix[2] == 0x4D && prefix[3] == 0x18 { return .zstd }
        if prefix.count >= 6 && prefix.starts(with: magics[2]) { return .xz }
        if prefix.count >= 4 && prefix.starts(with: magics[3]) && (0x31...0x39).contains(prefix[3]) { return .bzip2 }
        return nil
    }

    /// `detect(_:)` on an array's bytes.
    public static func detect(_ prefix: [UInt8]) -> Compression? { prefix.withUnsafeBytes { detect($0) } }

    /// Whether `bytes` could still grow into a magic number (they are the start of one, or empty): only then is
    /// more input needed to tell. So one line typed at a terminal (`1` and a newline) is mapped at once.
    static func couldBeMagic(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let skippable: [UInt8] = [bytes.first.map { $0 & 0xF0 == 0x50 ? $0 : 0x50 } ?? 0x50, 0x2A, 0x4D, 0x18]
        return (magics + [skippable, magics[3] + [0x31]]).contains { (magic: [UInt8]) in
            bytes.count < magic.count && bytes.elementsEqual(magic.prefix(bytes.count))
        }
    }

    /// The compression an output file's name asks for: `.gz` gzip, `.zst` zstd, `.xz` xz, `.bz2` bzip2, anything
    /// else nil.
    public static func forFileName(_ name: String) -> Compression? {
        if name.hasSuffix(".gz") { return .gzip }
        if name.hasSuffix(".zst") { return .zstd }
        if name.hasSuffix(".xz") { return .xz }
        if name.hasSuffix(".bz2") { return .bzip2 }
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

    /// What a stream is made of, in messages: a gzip member, a zstd frame, an xz or bzip2 stream.
    var unit: String {
        switch compression {
        case .gzip: return "member"
        case .zstd: return "frame"
        case .xz, .bzip2: return "stream"
        }
    }

    /// `corrupt gzip data at compressed byte 120: invalid block type`,
    /// `truncated gzip data: the input ends at compressed byte 96, inside a member`.
    public var description: String {
        if isTruncated {
            return "truncated \(compression.rawValue) data: the input ends at compressed byte \(compressedOffset), inside a \(unit)"
        }
        return "corrupt \(compression.rawValue) data at compressed byte \(compressedOffset): \(reason)"
    }
}

/// An input in a Unicode encoding StreamMap does not read — UTF-16 or UTF-32, told by its byte-order mark — rather
/// than mapped into a flood of "invalid JSON" lines: one error that names the encoding, and nothing of the input is
/// read. (JSON exchanged between systems is UTF-8: RFC 8259, section 8.1.)
public struct UnsupportedEncodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `UTF-16LE`, `UTF-16BE`, `UTF-32LE` or `UTF-32BE`, as `iconv` names them.
    public var encoding: String
    /// The byte-order mark the input starts with.
    public var byteOrderMark: [UInt8]

    /// The encoding whose byte-order mark `prefix` starts with, or nil. `prefix` must hold 4 bytes to tell UTF-16LE
    /// from UTF-32LE (FF FE, FF FE 00 00) unless the input is shorter.
    public static func detect(_ prefix: UnsafeRawBufferPointer) -> UnsupportedEncodingError? {
        for (name, bom) in marks where prefix.starts(with: bom) {
            return UnsupportedEncodingError(encoding: name, byteOrderMark: bom)
        }
        return nil
    }

    /// Whether `bytes` are the start of a byte-order mark `detect` needs more bytes to tell.
    static func couldBeMark(_ bytes: UnsafeRawBufferPointer) -> Bool {
        marks.contains { bytes.count < $0.1.count && bytes.elementsEqual($0.1.prefix(bytes.count)) }
    }

    /// Longest first.
    private static let marks: [(String, [UInt8])] = [("UTF-32BE", [0x00, 0x00, 0xFE, 0xFF]), ("UTF-32LE", [0xFF, 0xFE, 0x00, 0x00]),
                                                     ("UTF-16BE", [0xFE, 0xFF]), ("UTF-16LE", [0xFF, 0xFE])]

    /// `the input is UTF-16LE text (it starts with the byte-order mark FF FE); StreamMap reads UTF-8: convert it first
    /// with iconv -f UTF-16LE -t UTF-8`.
    public var description: String {
        let mark = byteOrderMark.map { String($0, radix: 16, uppercase: true).count == 1 ? "0" + String($0, radix: 16, uppercase: true) : String($0, radix: 16, uppercase: true) }
        return "the input is \(encoding) text (it starts with the byte-order mark \(mark.joined(separator: " "))); StreamMap reads UTF-8: "
            + "convert it first with iconv -f \(encoding) -t UTF-8"
    }
}
