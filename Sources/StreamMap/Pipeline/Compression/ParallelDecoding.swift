#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CZstd

/// One compressed file decompressed by several threads at once, where its format states where its frames end
/// (`FrameBoundary`: zstd files of many frames, as `pzstd` writes, and BGZF gzip): one thread reads the file and
/// cuts it into units of whole frames, `threads` threads decompress the units, and the pipeline takes their text in
/// order — as `DecodingAhead` hands it over, a room at a time.
///
/// **Exactly what decompressing in order gives.** A unit's text is a function of its bytes alone (gzip members and
/// zstd frames do not refer to each other), so while every unit decompresses cleanly — whole frames, no fault, the
/// text as long as its headers say — the text is that of the reading thread's decoder. Where anything else
/// happens (a corrupt or cut frame, bytes that are no frame, a frame too large to split, a read that fails, text
/// that starts with a UTF-16/32 byte-order mark), the threads stop and the input is decompressed again from its
/// start, in order, with the reads the pipeline itself would have made (`InputDecoding`, rooms of the same size):
/// its text up to what was handed on already is dropped and the rest — text, fault, offset — is handed on. So
/// output, messages and offsets are the same byte for byte as with one decompressing thread; a faulty file costs
/// one more decompression up to its fault.
///
/// Only for a regular file (the replay reads it again from its start); memory: at most `aheadBytes` of compressed
/// and decompressed units waiting, `spareBytes` of text buffers kept for reuse, the units the batches in flight
/// still read, and one frame's compressed bytes on the reading thread.
final class ParallelDecoding: @unchecked Sendable {
    // @unchecked: `entries`, `toDecode`, `unitsAhead`, `bytesAhead`, `stopped` and a unit's `state` are read and
    // written only inside `monitor`; a unit's buffers are written by the one thread that decodes it (while its
    // state is `.decoding`) and read by the pipeline's thread after it is `.clean`; the rest is the pipeline
    // thread's alone.

    /// Buffers for units' text, kept once their text is mapped for the next units (fresh ones would be
    /// page-faulted in again), up to `byteLimit` bytes in all. Shared with the text blocks, which may outlive the
    /// decoding (batches still mapping).
    final class SpareBuffers: @unchecked Sendable {
        // @unchecked: `buffers` only inside `monitor`.
        private let monitor = Monitor()
        private var buffers: [UnsafeMutableRawBufferPointer] = []
        private var bytes = 0
        private let byteLimit: Int

        init(byteLimit: Int) { self.byteLimit = byteLimit }

        deinit { for b in buffers { b.deallocate() } }

        /// A buffer of at least `count` bytes: a spare one, or a new one.
        func take(_ count: Int) -> UnsafeMutableRawBufferPointer {
            let spare: UnsafeMutableRawBufferPointer? = monitor.withLock {
                guard let i = buffers.firstIndex(where: { $0.count >= count }) else { return nil }
                bytes -= buffers[i].count
                return buffers.remove(at: i)
            }
            return spare ?? .allocate(byteCount: max(1, count), alignment: 64)
        }

        func give(_ buffer: UnsafeMutableRawBufferPointer) {
            let kept: Bool = monitor.withLock {
                guard bytes + buffer.count <= byteLimit else { return false }
                bytes += buffer.count
                buffers.append(buffer)
                return true
            }
            if !kept { buffer.deallocate() }
        }
    }

    /// A unit's text, held as long as the unit or a chunk lent from it (`InputChunk(lending:of:)`) needs it.
    final class TextBlock: @unchecked Sendable {
        // @unchecked: written by the one thread that decodes into it, before any other thread reads it.
        let buffer: UnsafeMutableRawBufferPointer
        private let spares: SpareBuffers

        init(_ count: Int, from spares: SpareBuffers) {
            buffer = spares.take(count)
            self.spares = spares
        }

        deinit { spares.give(buffer) }
    }

    /// A run of whole frames, decompressed by one thread.
    private final class Unit {
        enum State { case waiting, decoding, clean, faulty }
        let compressed: UnsafeMutableRawBufferPointer
        let textBound: Int
        let textIsExact: Bool
        var block: TextBlock?
        var textCount = 0
        var text: UnsafeMutableRawBufferPointer { block?.buffer ?? UnsafeMutableRawBufferPointer(start: nil, count: 0) }
        var state = State.waiting

        init(_ bytes: UnsafeRawBufferPointer, textBound: Int, textIsExact: Bool) {
            compressed = .allocate(byteCount: max(1, bytes.count), alignment: 16)
            compressed.copyMemory(from: bytes)
            self.textBound = textBound
            self.textIsExact = textIsExact
        }

        /// What it holds, for the bound on units ahead.
        var bytes: Int { compressed.count + textBound }

        /// Frees its compressed bytes, and lets go of its text (which chunks lent from it may still hold).
        func release() {
            compressed.deallocate()
            block = nil
        }
    }

    private enum Entry {
        case unit(Unit)
        /// The input ended after the units before.
        case end
        /// Something other than whole frames: decompress in order from the start.
        case irregular
    }

    private let monitor = Monitor()
    private var entries: [Entry] = []
    private var toDecode: [Unit] = []
    private var unitsAhead = 0, bytesAhead = 0
    private let spares: SpareBuffers
    private var stopped = false
    private var threads = WorkerThreads()

    /// The file, from the input's first byte (the descriptor's offset when it started); never moved.
    private let file: PositionalFile
    private let compression: Compression
    private let inflater: Inflater
    private let roomBytes: Int
    private let unitBytes: Int
    private let maxUnitsAhead: Int
    private let maxFrameText: Int

    // The pipeline thread's: the unit being handed on, and the replay once there is one.
    private var current: Unit?
    private var currentAt = 0
    private var handedOn = 0
    private var atEnd = false
    private var replay: Replay?

    /// Whether it went back to decompressing in order from the start (something other than whole frames).
    var replayed: Bool { replay != nil }

    /// Decompressed and compressed bytes of the units waiting, at most (besides one unit, whatever its size).
    static let aheadBytes = 256 << 20
    /// The text of one frame, at most (a larger frame is decompressed in order).
    static let maxFrameText = 64 << 20
    /// Text buffers kept for reuse, at most (beside the units ahead).
    static let spareBytes = 64 << 20
    /// A unit is cut once it holds this much text (or `unitBytes` compressed bytes).
    static let unitText = 8 << 20
    /// What the first look at the file reads.
    static let probeBytes = 4 << 20

    /// Starts decompressing the regular file open at `fd` (from its current offset) with `threads` threads, where
    /// it is a zstd file whose first frame can be split off, or BGZF; nil for anything else (or when no thread
    /// starts), with nothing read from `fd`. `roomBytes`: the size of the rooms `read(into:)` will be given; a
    /// frame of more than `maxFrameText` bytes of text is decompressed in order.
    static func start(fd: Int32, roomBytes: Int, threads: Int, inflater: Inflater, maxFrameText: Int = maxFrameText) -> ParallelDecoding? {
        guard threads > 1 else { return nil }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
        let start = Int(lseek(fd, 0, SEEK_CUR))
        let size = Int(status.st_size) - start
        guard start >= 0, size > 0 else { return nil }
        let probe = UnsafeMutableRawBufferPointer.allocate(byteCount: min(size, probeBytes), alignment: 16)
        defer { probe.deallocate() }
        let file = PositionalFile(descriptor: fd, base: start)
        let got = fullRead(file, into: probe)
        guard got > 0 else { return nil }
        let bytes = UnsafeRawBufferPointer(rebasing: probe[..<got])
        guard let compression = Compression.detect(bytes), compression == .zstd || compression == .gzip,
              startsWithAFrame(compression, bytes, maxFrameText: maxFrameText) else { return nil }
        let decoding = ParallelDecoding(file: file, compression: compression, inflater: inflater,
                                        roomBytes: roomBytes, unitBytes: min(max(size / (threads * 4), 64 << 10), 1 << 20),
                                        threads: threads, maxFrameText: maxFrameText)
        guard decoding.threads.start(1, { decoding.split() }) == nil,
              decoding.threads.start(threads, { decoding.decode() }) == nil else {
            decoding.stop()
            return nil
        }
        return decoding
    }

    /// Whether `bytes` (the file's first) begin with a frame that has text and can be split off (skippable frames
    /// before it are passed).
    private static func startsWithAFrame(_ compression: Compression, _ bytes: UnsafeRawBufferPointer, maxFrameText: Int) -> Bool {
        var at = 0
        while case .frame(let length, let textBound, _) = FrameBoundary.next(compression, in: UnsafeRawBufferPointer(rebasing: bytes[at...]),
                                                                             maxText: maxFrameText) {
            if textBound > 0 { return true }
            at += length
        }
        return false
    }

    private init(file: PositionalFile, compression: Compression, inflater: Inflater, roomBytes: Int, unitBytes: Int, threads: Int,
                 maxFrameText: Int) {
        self.maxFrameText = maxFrameText
        self.file = file
        self.compression = compression
        self.inflater = inflater
        self.roomBytes = roomBytes
        self.unitBytes = unitBytes
        maxUnitsAhead = 2 * threads + 2
        spares = SpareBuffers(byteLimit: Self.spareBytes)
    }

    deinit {
        current?.release()
        for case .unit(let unit) in entries { unit.release() }
        replay?.release()
    }

    /// The next text, at most a room of `roomBytes` of it, in `room`; `.end` at the input's end; a fault as
    /// decompressing in order meets it. While waiting, asks `stopRequested` every 50 ms: true gives
    /// `failed(EINTR)`, as an interrupted read would.
    func read(into room: UnsafeMutableRawBufferPointer, stopRequested: () -> Bool) -> DecodedRead {
        let room = UnsafeMutableRawBufferPointer(rebasing: room[..<min(room.count, roomBytes)])
        switch advance(stopRequested: stopRequested) {
        case .text(let unit, let n):
            room.baseAddress!.copyMemory(from: unit.text.baseAddress! + currentAt, byteCount: n)
            currentAt += n
            handedOn += n
            return .bytes(n)
        case .result(let result):
            return result
        case .replay:
            return replayRead(into: room, stopRequested: stopRequested)
        }
    }

    /// `read(into:)` without the copy: the next text (at most a room of it) as a chunk lent from the unit that
    /// holds it, or how the input ended; nil once the input is decompressed again in order (then `read(into:)`
    /// fills rooms).
    func lend(stopRequested: () -> Bool) -> (DecodedRead, InputChunk?)? {
        switch advance(stopRequested: stopRequested) {
        case .text(let unit, let n):
            let chunk = InputChunk(lending: UnsafeMutableRawBufferPointer(rebasing: unit.text[currentAt..<currentAt + n]), of: unit.block!)
            currentAt += n
            handedOn += n
            return (.bytes(n), chunk)
        case .result(let result):
            return (result, nil)
        case .replay:
            return nil
        }
    }

    private enum Step {
        /// `current` has `count` bytes of text to hand on (a room's at most) from `currentAt`.
        case text(Unit, count: Int)
        /// The input ended, or a wait was stopped.
        case result(DecodedRead)
        /// The input is decompressed again in order (`replayRead`).
        case replay
    }

    private func advance(stopRequested: () -> Bool) -> Step {
        if replay != nil { return .replay }
        if atEnd { return .result(.end) }
        while true {
            if let unit = current {
                if currentAt < unit.textCount { return .text(unit, count: min(roomBytes, unit.textCount - currentAt)) }
                current = nil
                finished(unit)
            }
            guard let entry = next(stopRequested: stopRequested) else { return .result(.failed(errno: EINTR)) }
            switch entry {
            case .unit(let unit):
                if unit.state == .clean && !(handedOn == 0 && unit.textCount > 0 && Self.mightBeAMark(unit)) {
                    current = unit
                    currentAt = 0
                    continue
                }
                finished(unit)
                startReplay()
                return .replay
            case .end:
                atEnd = true
                return .result(.end)
            case .irregular:
                startReplay()
                return .replay
            }
        }
    }

    /// Whether the input's first text (`unit`'s, none before it) is, or may be, a UTF-16/32 byte-order mark: then
    /// decompressing in order tells what to do with it.
    private static func mightBeAMark(_ unit: Unit) -> Bool {
        let first = UnsafeRawBufferPointer(rebasing: unit.text[..<min(unit.textCount, 4)])
        return UnsupportedEncodingError.detect(first) != nil || (first.count < 4 && UnsupportedEncodingError.couldBeMark(first))
    }

    /// The first entry once it is ready (a unit decompressed, or an end); nil when stopped while waiting.
    private func next(stopRequested: () -> Bool) -> Entry? {
        while true {
            let entry: Entry? = monitor.withLock {
                if let first = entries.first {
                    if case .unit(let unit) = first, unit.state == .waiting || unit.state == .decoding {
                        // not yet
                    } else {
                        entries.removeFirst()
                        return first
                    }
                }
                monitor.wait(milliseconds: 50)
                return nil
            }
            if let entry { return entry }
            if stopRequested() { return nil }
        }
    }

    private func finished(_ unit: Unit) {
        monitor.withLock {
            unitsAhead -= 1
            bytesAhead -= unit.bytes
            monitor.broadcast()
        }
        unit.release()
    }

    /// Stops the threads (after the unit each is on) and waits for them.
    func stop() {
        monitor.withLock {
            stopped = true
            monitor.broadcast()
        }
        threads.join()
    }

    // MARK: Decompressing in order, from the start

    private struct Replay {
        var decoding: InputDecoding
        var offset: Int
        /// Text handed on already, still to be dropped.
        var drop: Int
        let scratch: UnsafeMutableRawBufferPointer

        mutating func release() {
            decoding.release()
            scratch.deallocate()
        }
    }

    private func startReplay() {
        stop()
        for case .unit(let unit) in entries { unit.release() }
        entries = []
        toDecode = []
        replay = Replay(decoding: InputDecoding(detect: true, inflater: inflater), offset: 0, drop: handedOn,
                        scratch: .allocate(byteCount: roomBytes, alignment: 16))
    }

    private func replayRead(into room: UnsafeMutableRawBufferPointer, stopRequested: () -> Bool) -> DecodedRead {
        let file = self.file
        while replay!.drop > 0 {
            if stopRequested() { return .failed(errno: EINTR) }
            var offset = replay!.offset
            let result = replay!.decoding.read(into: replay!.scratch) { Self.rawRead(file, into: $0, at: &offset) }
            replay!.offset = offset
            guard case .bytes(let n) = result else { return result }
            if n <= replay!.drop {
                replay!.drop -= n
                continue
            }
            let kept = n - replay!.drop
            room.baseAddress!.copyMemory(from: replay!.scratch.baseAddress! + replay!.drop, byteCount: kept)
            replay!.drop = 0
            return .bytes(kept)
        }
        var offset = replay!.offset
        let result = replay!.decoding.read(into: room) { Self.rawRead(file, into: $0, at: &offset) }
        replay!.offset = offset
        return result
    }

    /// One read(2)'s worth at `offset` (as many bytes as a regular file gives: all, or what is left), which it
    /// moves on; nil with errno set.
    private static func rawRead(_ file: PositionalFile, into room: UnsafeMutableRawBufferPointer, at offset: inout Int) -> Int? {
        guard let n = file.read(into: room, at: offset) else { return nil }
        offset += n
        return n
    }

    /// Reads the file's first bytes until `room` is full or the file ends; the count read, or -1.
    private static func fullRead(_ file: PositionalFile, into room: UnsafeMutableRawBufferPointer) -> Int {
        var got = 0
        while got < room.count {
            guard let n = file.read(into: UnsafeMutableRawBufferPointer(rebasing: room[got...]), at: got) else { return -1 }
            if n == 0 { break }
            got += n
        }
        return got
    }

    // MARK: The reading thread

    private func split() {
        var carry = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 << 20, alignment: 16)
        defer { carry.deallocate() }
        var carryOffset = 0  // the input offset of carry[0]
        var count = 0, at = 0, unitStart = 0
        var unitText = 0, unitExact = true
        var ended = false

        func cut() -> Bool {  // the unit so far, handed to the decoders; false once stopped
            guard at > unitStart else { return true }
            let unit = Unit(UnsafeRawBufferPointer(rebasing: carry[unitStart..<at]), textBound: unitText, textIsExact: unitExact)
            let taken: Bool = monitor.withLock {
                while !stopped && unitsAhead > 0 && (unitsAhead >= maxUnitsAhead || bytesAhead + unit.bytes > Self.aheadBytes) {
                    monitor.wait()
                }
                guard !stopped else { return false }
                entries.append(.unit(unit))
                toDecode.append(unit)
                unitsAhead += 1
                bytesAhead += unit.bytes
                monitor.broadcast()
                return true
            }
            if !taken { unit.release() }
            unitStart = at
            unitText = 0
            unitExact = true
            return taken
        }
        func last(_ entry: Entry) {
            monitor.withLock {
                entries.append(entry)
                monitor.broadcast()
            }
        }

        while true {
            frames: while true {
                switch FrameBoundary.next(compression, in: UnsafeRawBufferPointer(rebasing: carry[at..<count]), maxText: maxFrameText) {
                case .frame(let length, let textBound, let exact):
                    if at > unitStart && unitText + textBound > Self.unitText { guard cut() else { return } }
                    at += length
                    unitText += textBound
                    unitExact = unitExact && exact
                    if at - unitStart >= unitBytes || unitText >= Self.unitText { guard cut() else { return } }
                case .needMore:
                    guard ended else { break frames }
                    guard cut() else { return }
                    last(at == count ? .end : .irregular)  // bytes after the last whole frame: cut short
                    return
                case .unsplittable:
                    guard cut() else { return }
                    last(.irregular)
                    return
                }
            }
            if unitStart > 0 {  // keep the unit in progress, drop what is cut
                carry.baseAddress!.copyMemory(from: carry.baseAddress! + unitStart, byteCount: count - unitStart)
                carryOffset += unitStart
                count -= unitStart
                at -= unitStart
                unitStart = 0
            }
            if count == carry.count {
                let larger = UnsafeMutableRawBufferPointer.allocate(byteCount: 2 * carry.count, alignment: 16)
                larger.copyMemory(from: UnsafeRawBufferPointer(rebasing: carry[..<count]))
                carry.deallocate()
                carry = larger
            }
            var offset = carryOffset + count
            guard let n = Self.rawRead(file, into: UnsafeMutableRawBufferPointer(rebasing: carry[count...]), at: &offset) else {
                last(.irregular)  // decompressing in order meets the failed read itself
                return
            }
            if n == 0 { ended = true } else { count += n }
            if monitor.withLock({ stopped }) { return }
        }
    }

    // MARK: The decompressing threads

    private func decode() {
        let zstd = compression == .zstd ? ZSTD_createDCtx() : nil
        defer { if let zstd { ZSTD_freeDCtx(zstd) } }
        while true {
            let unit: Unit? = monitor.withLock {
                while toDecode.isEmpty && !stopped { monitor.wait() }
                guard !stopped else { return nil }
                let unit = toDecode.removeFirst()
                unit.state = .decoding
                return unit
            }
            guard let unit else { return }
            let clean = decompress(unit, zstd: zstd)
            monitor.withLock {
                unit.state = clean ? .clean : .faulty
                monitor.broadcast()
            }
        }
    }

    /// Decompresses `unit` whole; whether it gave exactly its frames' text, without a fault.
    private func decompress(_ unit: Unit, zstd: OpaquePointer?) -> Bool {
        let block = TextBlock(unit.textBound + 1, from: spares)
        // One byte more than the bound: text beyond it shows.
        let room = UnsafeMutableRawBufferPointer(rebasing: block.buffer[..<(unit.textBound + 1)])
        unit.block = block
        let input = UnsafeRawBufferPointer(unit.compressed)
        if let zstd {
            let n = ZSTD_decompressDCtx(zstd, room.baseAddress, room.count, input.baseAddress, input.count)
            guard ZSTD_isError(n) == 0, unit.textIsExact ? n == unit.textBound : n <= unit.textBound else { return false }
            unit.textCount = n
            return true
        }
        let decompressor: any Decompressor
        if inflater == .automatic, let isal = IsalLibrary.shared {
            decompressor = IsalGzipDecompressor(isal)
        } else {
            decompressor = GzipDecompressor()
        }
        var consumed = 0, produced = 0
        while consumed < input.count {
            let step = decompressor.step(UnsafeRawBufferPointer(rebasing: input[consumed...]),
                                         into: UnsafeMutableRawBufferPointer(rebasing: room[produced...]))
            consumed += step.consumed
            produced += step.produced
            if step.failure != nil || (step.consumed == 0 && step.produced == 0) { return false }
        }
        unit.textCount = produced
        return !decompressor.isInsideStream && produced == unit.textBound
    }
}
