#if canImport(Glibc)
import Glibc
#endif
import Foundation
import Testing
@testable import StreamMap
import StreamMapTestSupport

/// Frame boundaries read from headers alone: every whole frame found, with its length and a bound on its text;
/// nothing split that the format does not state.
@Suite("Frame boundaries")
struct FrameBoundaryTests {
    static func frames(_ bytes: [UInt8], _ compression: Compression) -> [FrameBoundary] {
        var out: [FrameBoundary] = []
        var at = 0
        bytes.withUnsafeBytes { b in
            while at < b.count {
                let next = FrameBoundary.next(compression, in: UnsafeRawBufferPointer(rebasing: b[at...]), maxText: 1 << 20)
                out.append(next)
                guard case .frame(let length, _, _) = next else { return }
                at += length
            }
        }
        return out
    }

    static func boundary(_ bytes: [UInt8], _ compression: Compression, maxText: Int = 1 << 20) -> FrameBoundary {
        bytes.withUnsafeBytes { FrameBoundary.next(compression, in: $0, maxText: maxText) }
    }

    static let text = Array((0..<3000).map { #"{"id":\#($0),"s":"\#(String(repeating: "ab", count: $0 % 17))"}"# + "\n" }.joined().utf8)

    @Test func bgzfMembersAreFoundWithTheirExactText() {
        let bytes = Compressing.bgzf(Self.text, blockBytes: 5000)
        let found = Self.frames(bytes, .gzip)
        let blocks = (Self.text.count + 4999) / 5000
        #expect(found.count == blocks + 1)  // and the empty end-of-file member
        var texts: [Int] = []
        for f in found {
            guard case .frame(_, let textBound, let exact) = f else { Issue.record("\(f)"); return }
            #expect(exact)
            texts.append(textBound)
        }
        #expect(texts.reduce(0, +) == Self.text.count && texts.last == 0 && texts.first == 5000)
        // Every proper prefix of a member needs more bytes.
        let one = Compressing.bgzfMember(Array(Self.text.prefix(3000)))
        for n in 0..<one.count { #expect(Self.boundary(Array(one.prefix(n)), .gzip) == .needMore, "\(n)") }
    }

    @Test(arguments: [(true, false), (false, false), (true, true), (false, true)])
    func zstdFramesAreFoundWithABoundOnTheirText(_ skippable: Bool, _ contentSize: Bool) {
        let bytes = Compressing.zstdFrames(Self.text, frameBytes: 7000, skippable: skippable, contentSize: contentSize)
        let found = Self.frames(bytes, .zstd)
        let frames = (Self.text.count + 6999) / 7000
        #expect(found.count == frames * (skippable ? 2 : 1))
        var total = 0
        for f in found {
            guard case .frame(_, let textBound, let exact) = f else { Issue.record("\(f)"); return }
            if contentSize || textBound == 0 { #expect(exact) }
            total += textBound
        }
        if contentSize { #expect(total == Self.text.count) } else { #expect(total >= Self.text.count) }
        let one = Compressing.zstdFrames(Array(Self.text.prefix(9000)), frameBytes: 9000, skippable: false, contentSize: contentSize)
        for n in 0..<one.count { #expect(Self.boundary(Array(one.prefix(n)), .zstd) == .needMore, "\(n)") }
    }

    @Test func whatTheHeadersDoNotStateIsNotSplit() {
        let frame = Compressing.zstdFrames(Self.text, frameBytes: Self.text.count, skippable: false)
        var dictionary = frame
        dictionary[4] |= 0x01  // a 1-byte dictionary id follows
        var reserved = frame
        reserved[4] |= 0x08
        var hugeWindow = frame
        hugeWindow[5] = 0xF8  // 2^41 bytes
        var reservedBlock = frame
        reservedBlock[6] |= 0x06  // the first block's type: 3
        let hugeSkippable: [UInt8] = [0x5F, 0x2A, 0x4D, 0x18, 0xFF, 0xFF, 0xFF, 0x7F]
        // A frame header stating 2^40 bytes of text (8-byte content size).
        let hugeContent: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0xC0, 0x58, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0]
        for (name, bytes) in [("dictionary", dictionary), ("reserved bit", reserved), ("window over 128 MiB", hugeWindow),
                              ("reserved block type", reservedBlock), ("skippable frame over the bound", hugeSkippable),
                              ("text over the bound", hugeContent), ("text", Array("{}\n{}\n".utf8))] {
            #expect(Self.boundary(bytes, .zstd) == .unsplittable, "\(name)")
        }
        let gzip = Compressing.compressed(Self.text, .gzip)  // gzip -1: no BC subfield
        #expect(Self.boundary(gzip, .gzip) == .unsplittable)
        #expect(Self.boundary(Compressing.bgzfMember(Array(Self.text.prefix(60_000))), .gzip, maxText: 50_000) == .unsplittable)
        #expect(Self.boundary(Compressing.bgzf([], endMarker: true), .xz) == .unsplittable)
        #expect(Self.frames(Compressing.bgzf(Array(Self.text.prefix(9000)), blockBytes: 4000) + gzip, .gzip).last == .unsplittable)
    }
}

/// One compressed file decompressed by several threads gives what one thread decompressing it in order gives —
/// text, records, faults, their offsets, `bytesIn` — for BGZF and zstd files of many frames, clean, cut short,
/// changed, followed by junk or by frames that cannot be split.
@Suite("Parallel decoding")
struct ParallelDecodingTests {
    /// Records with random text (so that they compress to many units), some of them invalid.
    static func text(seed: UInt64, lines: Int) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        let letters = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        var out: [UInt8] = []
        for i in 0..<lines {
            switch rng.next() % 23 {
            case 0: out += Array(#"{"id":"x","s":1}"#.utf8)
            case 1: out += Array(#"{"id":7,"#.utf8)
            default:
                out += Array(#"{"id":\#(i),"s":""#.utf8)
                out += (0..<(5 + Int(rng.next() % 90))).map { _ in letters[Int(rng.next() % UInt64(letters.count))] }
                out += Array(#""}"#.utf8)
            }
            out.append(0x0A)
        }
        return out
    }

    enum Fault: CaseIterable { case none, changed, cut, junkAfter, plainGzipAfter, bigFrameAfter }

    /// A generated input: BGZF or zstd frames of random sizes, with `fault`.
    static func input(seed: UInt64, fault: Fault) -> (name: String, bytes: [UInt8], compression: Compression) {
        var rng = SplitMix64(seed: seed)
        let text = Self.text(seed: seed, lines: 2000 + Int(rng.next() % 4000))
        let compression: Compression = rng.next() % 2 == 0 ? .gzip : .zstd
        var bytes: [UInt8]
        var name: String
        if compression == .gzip {
            let block = 300 + Int(rng.next() % 65_000)
            bytes = Compressing.bgzf(text, blockBytes: block, endMarker: rng.next() % 2 == 0)
            name = "BGZF, blocks of \(block)"
        } else {
            let frame = 500 + Int(rng.next() % 120_000)
            let skippable = rng.next() % 2 == 0, contentSize = rng.next() % 2 == 0
            bytes = Compressing.zstdFrames(text, frameBytes: frame, skippable: skippable, contentSize: contentSize)
            name = "zstd, frames of \(frame), skippable \(skippable), content size \(contentSize)"
        }
        let at = 8 + Int(rng.next() % UInt64(bytes.count - 8))
        switch fault {
        case .none: break
        case .changed: bytes[at] ^= UInt8(1 + rng.next() % 255)
        case .cut: bytes = Array(bytes.prefix(at))
        case .junkAfter: bytes += Array("{\"id\":1}\n".utf8)
        case .plainGzipAfter, .bigFrameAfter:
            // A frame that cannot be split off (a plain gzip member; a zstd frame with more text than a unit is
            // allowed), then frames that can.
            let more = Self.text(seed: seed + 1, lines: 300)
            bytes += compression == .gzip ? Compressing.compressed(more, .gzip) + Compressing.bgzf(more)
                : Compressing.zstdFrames(more, frameBytes: more.count, skippable: false) + Compressing.zstdFrames(more, frameBytes: 900)
        }
        return ("\(name), \(fault), at \(at)", bytes, compression)
    }

    @Test(arguments: 0..<6)
    func theSameAsDecompressingInOrder(_ round: Int) throws {
        for (i, fault) in Fault.allCases.enumerated() where fault != .bigFrameAfter {
            let (name, bytes, _) = Self.input(seed: UInt64(round * 10 + i), fault: fault)
            let reference = try DecodingAheadTests.run(bytes, jobs: 1, ahead: false, pipe: false)
            if fault == .none { #expect(reference.count > 100 && reference[reference.count - 2] == "\(InputEnd.ended)", "\(name)") }
            for jobs in [2, 3, 8] {
                let parallel = try DecodingAheadTests.run(bytes, jobs: jobs, ahead: true, pipe: false)
                #expect(parallel == reference, "\(name): --jobs \(jobs) (\(parallel.count) lines, \(reference.count))")
            }
        }
    }

    /// Reads a file through `ParallelDecoding` (nil: it declined the file); the text, how it ended, and whether it
    /// went back to decompressing in order.
    static func decodeApart(_ bytes: [UInt8], threads: Int, maxFrameText: Int = ParallelDecoding.maxFrameText) throws
        -> (text: [UInt8], end: DecodedRead, replayed: Bool)? {
        let fd = open(try TestScratch.file(bytes, suffix: ".bin"), O_RDONLY)
        defer { close(fd) }
        guard let decoding = ParallelDecoding.start(fd: fd, roomBytes: 1 << 16, threads: threads, inflater: .automatic, maxFrameText: maxFrameText) else { return nil }
        defer { decoding.stop() }
        var text: [UInt8] = []
        var room = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let result = room.withUnsafeMutableBytes { decoding.read(into: $0, stopRequested: { false }) }
            guard case .bytes(let n) = result else { return (text, result, decoding.replayed) }
            text += room[..<n]
        }
    }

    /// `bytes` decompressed by `InputDecoding` alone.
    static func decompressedInOrder(_ bytes: [UInt8]) -> [UInt8] {
        var decoding = InputDecoding()
        defer { decoding.release() }
        var text: [UInt8] = [], at = 0
        var room = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let result = room.withUnsafeMutableBytes { room in
                decoding.read(into: room) { raw in
                    let n = min(raw.count, bytes.count - at)
                    bytes[at..<at + n].withUnsafeBytes { raw.baseAddress!.copyMemory(from: $0.baseAddress!, byteCount: n) }
                    at += n
                    return n
                }
            }
            guard case .bytes(let n) = result else { return text }
            text += room[..<n]
        }
    }

    @Test func cleanFilesAreDecompressedApartAndFaultyOnesInOrder() throws {
        for seed in 0..<8 as Range<UInt64> {
            let (name, clean, _) = Self.input(seed: seed, fault: .none)
            let (text, end, replayed) = try #require(try Self.decodeApart(clean, threads: 4), "\(name)")
            #expect(!replayed && end == .end, "\(name)")
            #expect(text == Self.decompressedInOrder(clean), "\(name)")
            for fault in [Fault.changed, .cut, .junkAfter, .plainGzipAfter, .bigFrameAfter] {
                let (name, bytes, compression) = Self.input(seed: seed, fault: fault)
                guard let (_, end, replayed) = try Self.decodeApart(bytes, threads: 3) else { continue }  // cut in the first frame
                if case .bytes = end { Issue.record("\(name)") }
                // A change may hit bytes no check covers (a skippable frame's content); a zstd frame of more text
                // than the others still splits off (see the next test).
                if fault == .cut || fault == .junkAfter || (compression == .gzip && fault != .changed) { #expect(replayed, "\(name) \(end)") }
            }
        }
    }

    @Test func aFrameOfMoreTextThanTheBoundIsDecompressedInOrder() throws {
        let text = Self.text(seed: 5, lines: 600), big = Array(Self.text(seed: 6, lines: 600).prefix(9000))
        let bytes = Compressing.zstdFrames(text, frameBytes: 2000, contentSize: true)
            + Compressing.zstdFrames(big, frameBytes: big.count, contentSize: true)
            + Compressing.zstdFrames(text, frameBytes: 2000, contentSize: true)
        let within = try #require(try Self.decodeApart(bytes, threads: 2, maxFrameText: 9000))
        #expect(!within.replayed && within.text == text + big + text)
        let beyond = try #require(try Self.decodeApart(bytes, threads: 2, maxFrameText: 8999))
        #expect(beyond.replayed && beyond.end == .end && beyond.text == text + big + text)
    }

    @Test func otherFilesAreLeftToTheDecoderInOrder() throws {
        let text = Self.text(seed: 1, lines: 3000)
        for (name, bytes) in [("plain text", text), ("gzip -1", Compressing.compressed(text, .gzip)),
                              ("xz", Compressing.compressed(text, .xz)), ("empty", [])] {
            #expect(try Self.decodeApart(bytes, threads: 4) == nil, "\(name)")
        }
        #expect(try Self.decodeApart(Compressing.bgzf(text), threads: 1) == nil)  // one job: one decoder
        #expect(try Self.decodeApart(Compressing.bgzf(text), threads: 2) != nil)
    }

    @Test func aByteOrderMarkIsTheDecoderInOrdersToTell() throws {
        let text = [0xFF, 0xFE] + Self.text(seed: 3, lines: 2000)
        let short = [0xFF, 0xFE] + Self.text(seed: 3, lines: 20)
        for bytes in [Compressing.bgzf(text, blockBytes: 3000), Compressing.zstdFrames(short, frameBytes: 1, skippable: true),
                      Compressing.bgzf(short, blockBytes: 1)] {
            let reference = try DecodingAheadTests.run(bytes, jobs: 1, ahead: false, pipe: false)
            #expect(reference.contains { $0.contains("UTF-16LE") })
            #expect(try DecodingAheadTests.run(bytes, jobs: 2, ahead: true, pipe: false) == reference)
        }
    }
}
