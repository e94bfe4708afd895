import StreamMap

/// Compressed test inputs, made with the library's own compressor.
public enum Compressing {
    /// `text` as `compression` at level 1, in `pieces` members, frames or streams of about equal size, one after
    /// another (at least one, also for empty text).
    public static func compressed(_ text: [UInt8], _ compression: Compression, pieces: Int = 1) -> [UInt8] {
        var out: [UInt8] = []
        let step = max(1, text.count / max(1, pieces))
        var start = 0
        repeat {
            let end = pieces <= 1 ? text.count : min(text.count, start + step)
            let c = OutputCompressor(compression, level: 1)
            _ = text[start..<end].withUnsafeBytes { c.compress($0) { out.append(contentsOf: $0); return true } }
            c.finish { out.append(contentsOf: $0); return true }
            start = end
        } while start < text.count
        return out
    }
}

extension Compressing {
    /// `text` as BGZF, as `bgzip` writes it: gzip members of at most `blockBytes` of text (bgzip: 65 280), each
    /// stating its compressed length in a `BC` subfield of its extra field, then bgzip's empty end-of-file member
    /// (when `endMarker`).
    public static func bgzf(_ text: [UInt8], blockBytes: Int = 65_280, endMarker: Bool = true) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        repeat {
            let end = min(text.count, start + max(1, blockBytes))
            out += bgzfMember(Array(text[start..<end]))
            start = end
        } while start < text.count
        if endMarker { out += bgzfMember([]) }
        return out
    }

    /// One BGZF member holding `text` (at most 64 KiB of compressed bytes).
    public static func bgzfMember(_ text: [UInt8]) -> [UInt8] {
        let member = compressed(text, .gzip)  // a 10-byte header without flags, deflate, CRC-32 and length
        let size = member.count + 8 - 1
        precondition(size < 1 << 16, "a BGZF member holds at most 64 KiB")
        var header = Array(member[..<10])
        header[3] = 0x04  // FEXTRA
        let extra: [UInt8] = [6, 0, 66, 67, 2, 0, UInt8(size & 0xFF), UInt8(size >> 8)]
        return header + extra + member[10...]
    }

    /// `text` as zstd frames of `frameBytes` of text each, as `pzstd` writes them: each frame behind a skippable
    /// frame that holds its length (when `skippable`); `contentSize` writes each frame's text length in its header
    /// (as `zstd FILE` does; a frame compressed from a stream has none).
    public static func zstdFrames(_ text: [UInt8], frameBytes: Int, skippable: Bool = true, contentSize: Bool = false) -> [UInt8] {
        var out: [UInt8] = []
        var start = 0
        repeat {
            let end = min(text.count, start + max(1, frameBytes))
            var frame = compressed(Array(text[start..<end]), .zstd)
            if contentSize { frame = withContentSize(frame, end - start) }
            if skippable { out += [0x50, 0x2A, 0x4D, 0x18, 4, 0, 0, 0] + le32(frame.count) }
            out += frame
            start = end
        } while start < text.count
        return out
    }

    /// A zstd frame from `compressed` (a header of magic, descriptor and window byte only) with a 4-byte content
    /// size of `count` added to its header.
    static func withContentSize(_ frame: [UInt8], _ count: Int) -> [UInt8] {
        precondition(frame[4] & 0xE3 == 0, "a frame header without a content size, single segment or dictionary")
        var header = Array(frame[..<6])
        header[4] |= 0x80  // Frame_Content_Size_flag 2: four bytes
        return header + le32(count) + frame[6...]
    }

    static func le32(_ n: Int) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: n >> (8 * $0)) } }
}
