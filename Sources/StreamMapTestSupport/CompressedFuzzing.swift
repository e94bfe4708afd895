#if canImport(Glibc)
import Glibc
#endif
import StreamMap

/// The fuzz target's compressed-input check (public API only): the fuzz case's records, joined as NDJSON, are
/// compressed in a format the seed picks (gzip, zstd, xz, bzip2; one stream or two), then maybe cut short or given a
/// changed byte, and read through a record pipeline that tells the format by its first bytes. Decompressed text
/// must map exactly as the text itself; a stream cut or changed must end the input as corrupt (or, for a change
/// the format cannot see, map some text), and the records it gave must be the text's first records. The raw fuzz
/// bytes are read as an input too: whatever magic number they start with, no crash and no hang. And as BGZF or zstd
/// of many frames (blocks and frames of a size the seed picks), whole, cut or changed, from a file: decompressed by
/// several threads (`--jobs 3`), the input must give exactly what one decompressing thread gives.
public enum CompressedFuzzing {
    /// A mapper-free identity pipeline's transcript: each record's line and outcome, and how the input ended.
    final class Transcript: RecordPipelineOutput {
        var mappedRecords = JSONWriter()
        var lines: [String] = []

        func mapped(input: String, location: RecordLocation, warnings: [MapError], records: Int) -> Bool {
            lines.append("\(location.line) \(String(decoding: mappedRecords.bytes, as: UTF8.self))")
            mappedRecords.removeAll()
            return true
        }

        func rejected(input: String, location: RecordLocation, failure: RecordFailure, record: UnsafeRawBufferPointer,
                      totalBytes: Int) -> Bool {
            lines.append("\(location.line) rejected \(totalBytes)")
            return true
        }
    }

    static func run(_ bytes: [UInt8], pieces: Int) -> ([String], InputEnd) {
        let out = Transcript()
        var pipeline = RecordPipeline(engine: StreamEngine(mapper: .identity), output: out)
        var at = 0
        let end = pipeline.read("fuzz") { room in
            let n = min(room.count, bytes.count - at, max(1, pieces))
            bytes[at..<(at + n)].withUnsafeBytes { room.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: $0.count) }
            at += n
            return n
        }
        pipeline.finish()
        return (out.lines, end)
    }

    /// `bytes` read from a file with `jobs` jobs: the transcript and how the input ended.
    static func runFile(_ bytes: [UInt8], jobs: Int) -> [String] {
        guard let path = try? TestScratch.file(bytes, suffix: ".fuzz") else { return ["no scratch file"] }
        let fd = open(path, O_RDONLY)
        defer {
            close(fd)
            unlink(path)
        }
        let out = Transcript()
        var pipeline = RecordPipeline(engine: StreamEngine(mapper: .identity), settings: RecordPipelineSettings(jobs: jobs),
                                      output: out, makeEngine: { StreamEngine(mapper: .identity) })
        let end = pipeline.read("fuzz", fileDescriptor: fd)
        pipeline.finish()
        return out.lines + ["\(end)", "bytesIn \(pipeline.bytesIn)"]
    }

    /// `text` as BGZF or zstd of many frames, maybe cut or changed: three decompressing threads give what one gives.
    /// At most about 8 192 blocks or frames: each is made by a compressor of its own, whose memory AddressSanitizer
    /// fills (51 KB of text in blocks of one byte took 6.8 s of the fuzz target's 10 s limit); 8 192 blocks of text
    /// still make more than one 256 KiB read of compressed input, so reads still cut blocks' headers.
    static func checkSplit(_ text: [UInt8], seed: UInt64) -> String? {
        let gzip = seed & 0x40 != 0
        let size = max(1 + Int(seed >> 12) % 3000, (text.count + 8191) / 8192)
        var packed = gzip ? Compressing.bgzf(text, blockBytes: size, endMarker: seed & 0x80 != 0)
            : Compressing.zstdFrames(text, frameBytes: size, skippable: seed & 0x80 != 0, contentSize: seed & 0x100 != 0)
        let at = Int(seed >> 24) % packed.count
        switch (seed >> 9) & 3 {
        case 0: packed = Array(packed[..<at])
        case 1: packed[at] ^= UInt8(1 + (seed >> 44) % 255)
        default: break
        }
        let one = runFile(packed, jobs: 1), many = runFile(packed, jobs: 3)
        guard one != many else { return nil }
        let part = (0..<min(one.count, many.count)).first { one[$0] != many[$0] } ?? min(one.count, many.count)
        return "\(gzip ? "BGZF" : "zstd frames") of \(size), \((seed >> 9) & 3) at \(at): --jobs 3 parts from one job at line \(part) "
            + "(\(one.count > part ? one[part] : "-") against \(many.count > part ? many[part] : "-"))\n" + EngineFuzzing.printable(text)
    }

    /// Nil when everything holds, else a report.
    public static func check(_ data: UnsafeRawBufferPointer) -> String? {
        let raw = Array(data)
        _ = run(raw, pieces: 1 << 16)  // any bytes, any magic number: it must end
        let c = EngineFuzzing.decode(data)
        guard c.mode & 0x80 != 0, !c.records.isEmpty else { return nil }
        var text: [UInt8] = []
        for r in c.records where !r.contains(0x0A) { text += r + [0x0A] }
        let formats: [Compression] = [.gzip, .zstd, .xz, .bzip2]
        let format = formats[Int(c.seed % 4)]
        var packed: [UInt8] = []
        let split = text.isEmpty ? 0 : Int(c.seed >> 8) % (text.count + 1)
        for part in (c.seed & 0x10 != 0 ? [text[..<split], text[split...]] : [text[...]]) {
            let z = OutputCompressor(format, level: 1)
            _ = part.withUnsafeBytes { z.compress($0) { packed += $0; return true } }
            z.finish { packed += $0; return true }
        }
        if let report = checkSplit(text, seed: c.seed &* 0x9E37_79B9_7F4A_7C15) { return report }
        let pieces = 1 + Int(c.pieceByte) * 97
        let (plain, plainEnd) = run(text, pieces: 1 << 18)
        let (whole, end) = run(packed, pieces: pieces)
        guard whole == plain, end == plainEnd else {
            return "compressed \(format): \(end) against \(plainEnd), \(whole.count) records against \(plain.count)\n" + EngineFuzzing.printable(text)
        }
        guard plainEnd == .ended else { return nil }  // text in UTF-16 or UTF-32: refused, compressed or not
        // Cut short (at 6 bytes or more: every magic number is whole), or a byte changed (zstd frames carry no
        // checksum here, so a change may go unseen and map other text).
        let truncated = c.seed & 0x20 != 0
        let at = Int(c.seed >> 20) % packed.count
        var damaged = packed
        if truncated { damaged = Array(packed[..<max(at, 6)]) } else if at >= 6 { damaged[at] ^= UInt8(1 + (c.seed >> 40) % 255) }
        let (some, damagedEnd) = run(damaged, pieces: pieces)
        switch damagedEnd {
        case .corrupt, .ended:
            // A cut gives the text's first records: whole ones before a fault; at a stream's end, the last line
            // may be cut (and so a record of its own).
            let kept = damagedEnd == .ended ? some.dropLast() : some[...]
            if truncated && !(kept.count <= plain.count && Array(plain.prefix(kept.count)) == Array(kept)) {
                return "\(format) cut at \(damaged.count): the records before the cut are not the text's first\n" + EngineFuzzing.printable(text)
            }
        case .unsupportedEncoding where !truncated:
            break  // a changed byte the format cannot see made the text start with a UTF-16 byte-order mark
        default:
            return "damaged \(format) at \(at): ended \(damagedEnd)\n" + EngineFuzzing.printable(text)
        }
        return nil
    }
}
