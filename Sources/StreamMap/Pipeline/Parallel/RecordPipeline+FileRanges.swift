#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension RecordPipeline {
    /// Reads the input open at `fd`, from its current offset to its end, and maps it: as
    /// ``read(_:stopRequested:afterRead:from:)`` with read(2) (EINTR is retried unless `stopRequested()`), with one
    /// difference in how, never in what.
    ///
    /// With `jobs` > 1 and a regular file of NDJSON (`ndjson` framing, or `auto` deciding so from its first 256 KiB;
    /// not compressed), the workers read the file themselves, each the byte ranges it maps (pread(2), `FileRange`):
    /// a record is read and mapped on one core, and this thread only hands out ranges and writes the mapped ones
    /// in order. The records, their lines and offsets, the reports, the stops and `bytesIn` are exactly those of the
    /// sequential read; a line longer than a batch may hold is mapped here, streaming, in constant memory.
    ///
    /// `fd` is used only during the call, and not closed; its offset is left at the end of what was read.
    public mutating func read(
        _ name: String, fileDescriptor fd: Int32, stopRequested: () -> Bool = { false },
        afterRead: (_ bytesIn: Int) -> Void = { _ in }
    ) -> InputEnd {
        if let ranged = core.rangedFile(fd) {
            let (end, position) = core.readRanges(name, file: ranged.0, size: ranged.size, stopRequested: stopRequested,
                                                  afterRead: afterRead)
            lseek(fd, off_t(ranged.0.base + position), SEEK_SET)
            return end
        }
        return core.read(name, stopRequested: stopRequested, afterRead: afterRead, decodingAheadFrom: fd) { buffer in
            while true {
                let n = Glibc.read(fd, buffer.baseAddress, buffer.count)
                if n >= 0 { return n }
                if errno != EINTR || stopRequested() { return nil }
            }
        }
    }
}

/// The reading thread's side of a file read in ranges (`RecordPipeline.read(_:fileDescriptor:)`).
extension PipelineCore {
    /// The file at `fd` and its size from its current offset, when it is read in ranges: with workers, a regular
    /// file that is not empty, framed as NDJSON and not compressed (told from its first bytes, as `read` tells).
    func rangedFile(_ fd: Int32) -> (PositionalFile, size: Int)? {
        guard parallel != nil, settings.framing == .ndjson || settings.framing == .auto else { return nil }
        var st = stat()
        guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { return nil }
        let base = Int(lseek(fd, 0, SEEK_CUR))
        guard base >= 0, Int(st.st_size) > base else { return nil }
        let file = PositionalFile(descriptor: fd, base: base)
        let size = Int(st.st_size) - base
        // The start, in small reads: `auto` decides on the first line or two, and the workers wait for it.
        var head = [UInt8](repeating: 0, count: min(size, 1 << 14))
        var probe = settings.framing == .auto ? RecordFramer(framing: .auto) : nil
        var offset = 0
        while offset < size {
            guard let n = head.withUnsafeMutableBytes({ file.read(into: $0, at: offset) }), n > 0 else { return nil }
            let bytes = head[..<n]
            if offset == 0 && settings.decompresses {
                let compressed = bytes.withUnsafeBytes { InputDecoding.isNotPlainText($0) }
                guard !compressed else { return nil }
            }
            offset += n
            guard probe != nil else { break }
            bytes.withUnsafeBytes { probe!.feed($0) { _, _ in } }
            if probe!.detected != nil { break }
        }
        if probe != nil {
            if probe!.detected == nil && offset >= size { probe!.finish { _, _ in } }
            guard probe!.detected == .ndjson else { return nil }
        }
        return (file, size)
    }

    /// Maps `file`'s `size` bytes in ranges of `batchBytes` on the workers, writing them in order, each range's lines
    /// numbered on from the lines before it; then whatever the file holds past `size`. Returns how the input ended
    /// and where reading it stopped.
    mutating func readRanges(_ name: String, file: PositionalFile, size: Int, stopRequested: () -> Bool,
                             afterRead: (_ bytesIn: Int) -> Void) -> (InputEnd, position: Int) {
        let parallel = parallel!
        beginInput(name)
        rangedInputs += 1
        let base = bytesIn
        var next = 0  // the next range starts here
        var line = 1  // the line the next line start is on
        var position = 0  // the lines handed on so far end here
        var end: InputEnd?
        var interrupted = false
        let rangeBytes = max(parallel.batchBytes, settings.smallestRangeBytes, 1)
        while end == nil {
            if !interrupted && stopRequested() { interrupted = true }  // the ranges in flight are still written
            while !interrupted && next < size && parallel.inFlight < parallel.window {
                // Quarter ranges towards the end, so that the workers finish close together.
                let step = size - next > 2 * parallel.window * rangeBytes ? rangeBytes : max(1, rangeBytes / 4)
                let rangeEnd = size - next > step ? next + step : size
                parallel.submitRange(FileRange(file: file, start: next, end: rangeEnd, size: size), input: name)
                rangesRead += 1
                next = rangeEnd
            }
            guard let batch = parallel.nextMapped(wait: true) else { break }
            guard batch.range != nil else {
                writeBatch(batch)  // the last batches of the input before, cut by this thread
                if isStopped { end = .stopped }
                continue
            }
            let found = batch.rangeEnd
            if let code = found.error {
                parallel.recycle(batch)
                end = .failed(errno: code)
                break
            }
            writeBatch(batch, lineOffset: line - 1, bytesInOffset: base)
            if isStopped {
                end = .stopped
                break
            }
            if let at = found.position {
                line += found.lines
                position = at
            }
            if let start = found.handoff {
                guard !interrupted else {
                    end = .interrupted
                    break
                }
                let streamed = streamLines(file, from: start, line: line, base: base, toLineEnd: true, stopRequested: stopRequested)
                position = streamed.position
                line = streamed.line
                if streamed.end != .ended { end = streamed.end }
            }
            if end == nil {
                bytesIn = base + position
                afterRead(bytesIn)
            }
        }
        if end == nil {
            if interrupted {
                end = .interrupted
            } else {
                // What the file holds past the ranges: a last line without an LF, or what was added since they were cut.
                let streamed = streamLines(file, from: position, line: line, base: base, toLineEnd: false, stopRequested: stopRequested)
                position = streamed.position
                end = streamed.end
                if end == .ended { bytesIn = base + position }
            }
        }
        // The ranges still in flight are not written; none is read after this returns (the descriptor may be closed).
        while let batch = parallel.nextMapped(wait: true) { parallel.recycle(batch) }
        // Stopped at a record: as far as one job had read then (nothing of this input, if it was one before).
        return (end!, end == .stopped ? max(0, bytesIn - base) : position)
    }

    /// Maps, on this thread, `file`'s lines from `start` (a line start, on line `line`): to the end of that line
    /// (`toLineEnd`), or of the file. Reads end where one job's reads end (at multiples of `readBytes`), so
    /// `bytesIn` at a stop is what one job reports. Returns where it stopped, the line there, and `ended` unless the
    /// run stopped, was interrupted or a read failed.
    private mutating func streamLines(_ file: PositionalFile, from start: Int, line: Int, base: Int, toLineEnd: Bool,
                                      stopRequested: () -> Bool) -> (position: Int, line: Int, end: InputEnd) {
        let readBytes = RecordPipelineSettings.readBytes
        framing = InputFraming(continuing: NDJSONSegmenter(continuingAt: RecordLocation(line: line, byteOffset: start)))
        mapsHere = true
        defer { mapsHere = false }
        if readBuffer.isEmpty { readBuffer = [UInt8](repeating: 0, count: readBytes) }
        var buffer = readBuffer
        readBuffer = []
        defer { readBuffer = buffer }
        var position = start
        while true {
            if stopRequested() { return (position, line, .interrupted) }
            let want = readBytes - position % readBytes
            let n = buffer.withUnsafeMutableBytes {
                file.read(into: UnsafeMutableRawBufferPointer(rebasing: $0[..<want]), at: position, interrupted: stopRequested)
            }
            guard let n else { return (position, line, errno == EINTR ? .interrupted : .failed(errno: errno)) }
            if n == 0 {
                var f = framing.take()!
                f.finish(into: &self)
                framing = f
                return (position, line, isStopped ? .stopped : .ended)
            }
            bytesIn = base + position + n
            let lineEnd: Int? = !toLineEnd ? nil : buffer.withUnsafeBytes { raw in
                memchr(raw.baseAddress!, 0x0A, n).map { raw.baseAddress!.distance(to: UnsafeRawPointer($0)) }
            }
            let count = lineEnd.map { $0 + 1 } ?? n
            buffer.withUnsafeBytes { frame(UnsafeRawBufferPointer(rebasing: $0[..<count])) }
            position += count
            if isStopped { return (position, line, .stopped) }
            if lineEnd != nil { return (position, line + 1, .ended) }
        }
    }
}
