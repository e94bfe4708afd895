#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A regular file read by position (pread(2)) — any thread may read any part of it, the offset of its descriptor is
/// never moved. Offsets count from `base`, the file offset of the input's first byte.
struct PositionalFile: Sendable {
    let descriptor: Int32
    let base: Int

    /// Reads into `buffer` from `offset`: the count (0 at the end of the file), or nil with errno set. An
    /// interrupted read (EINTR) is retried unless `interrupted()` says to stop.
    func read(into buffer: UnsafeMutableRawBufferPointer, at offset: Int, interrupted: () -> Bool = { false }) -> Int? {
        while true {
            let n = pread(descriptor, buffer.baseAddress, buffer.count, off_t(base + offset))
            if n >= 0 { return n }
            if errno == EINTR && !interrupted() { continue }
            return nil
        }
    }
}

/// `[start, end)` of an NDJSON file, mapped as one batch by a worker that reads it itself (`--jobs` on a regular
/// file: a record is read and mapped on one core, and the reading thread only hands out ranges and writes).
///
/// A range holds the lines that *start* in it — Hadoop's rule for line splits, as `--byte-range` — so consecutive
/// ranges hold every line exactly once, whatever the cut points:
/// - its first line starts at 0 for the first range, else after the first LF at or after `start - 1` (a range with
///   no such LF before `end - 1` lies inside one line and holds none);
/// - its last line is the one that crosses `end`: read on to its LF. A line that goes on for more than
///   `longRecordBytes` past `end`, or reaches `size` without an LF, is not in the batch: it is the range's
///   `handoff`, which the reading thread maps itself, streaming, in constant memory (and past `size` if the file
///   grew).
///
/// What the worker reads is bounded by the range plus `longRecordBytes`, and each byte of the file is scanned by at
/// most two ranges (its own, and the one before it when that one's last line runs through it): linear, whatever
/// the lines.
struct FileRange: Sendable {
    let file: PositionalFile
    let start: Int
    let end: Int
    /// The input's size when the run began; no range reads past it.
    let size: Int

    /// What a worker found in its range, for the reading thread.
    struct End: Sendable {
        /// The LFs of the lines in the batch (line numbers in the batch count from 1 at its first line).
        var lines = 0
        /// Where the lines in the batch end (the byte after the last one's LF); nil: no line starts in the range.
        var position: Int?
        /// The line starting here, the last one the range holds, is not in the batch (see `FileRange`).
        var handoff: Int?
        /// A read failed with this errno: the batch holds nothing.
        var error: Int32?
    }
}

extension RecordBatch {
    /// Reads the batch's `range` (if it is a range of a file) and cuts its lines into records, exactly as
    /// `NDJSONSegmenter` cuts them from the input's first byte: the same records at the same byte offsets, and
    /// lines counted from 1 at the range's first line. Runs on the worker, before `map(with:)`.
    mutating func readRange(longRecordBytes: Int) {
        guard let range else { return }
        let from = range.start == 0 ? 0 : range.start - 1  // the byte before the range tells whether a line starts at it
        let length = range.end - from
        let capacity = length + longRecordBytes
        if rangeChunk.map({ $0.capacity < capacity }) ?? true { rangeChunk = InputChunk(capacity: capacity) }
        let chunk = rangeChunk!
        chunk.clear()
        // The range and a little more, in one read: the line that crosses `end` usually ends in it.
        guard read(range, from: from, into: chunk, upTo: min(capacity, length + Self.rangeSlack, range.size - from)) else { return }

        // The first line start in the range.
        var first = 0
        if range.start > 0 {
            let scanned = min(chunk.count, length - 1)
            guard let lf = Self.firstLF(chunk.bytes, in: 0..<scanned) else { return }  // inside one line: no line
            first = lf + 1
        }
        // The end of the line that crosses `end` (its LF is at or after `end - 1`), read on as far as needed.
        var scanFrom = length - 1
        var stop: Int?
        while stop == nil {
            if chunk.count > scanFrom, let lf = Self.firstLF(chunk.bytes, in: scanFrom..<chunk.count) {
                stop = lf + 1
                break
            }
            scanFrom = max(scanFrom, chunk.count)
            let limit = min(capacity, range.size - from)
            guard chunk.count < limit else { break }
            let before = chunk.count
            let step = max(1 << 16, chunk.count - length)  // 64 KiB, then doubling
            guard read(range, from: from, into: chunk, upTo: min(limit, chunk.count + step)) else { return }
            if chunk.count == before { break }  // the file is shorter than it was
        }
        if stop == nil {
            // That line is the handoff: the batch holds the lines before it.
            let upTo = min(chunk.count, length - 1)
            let start = upTo > first ? Self.lastLF(chunk.bytes, in: first..<upTo).map { $0 + 1 } ?? first : first
            rangeEnd.handoff = from + start
            stop = start
        }
        cut(UnsafeRawBufferPointer(rebasing: chunk.bytes[first..<stop!]), of: chunk, at: from, size: range.size,
            firstLine: range.start == 0)
        rangeEnd.position = from + stop!
    }

    /// Bytes read past a range's end with the range itself, for the end of its last line.
    static let rangeSlack = 1 << 14

    /// Reads `range`'s file from `from` into `chunk` until it holds `count` bytes or the file ends; false (and
    /// `rangeEnd.error` set) when a read fails.
    private mutating func read(_ range: FileRange, from: Int, into chunk: InputChunk, upTo count: Int) -> Bool {
        while chunk.count < count {
            let at = from + chunk.count, want = count - chunk.count
            let n = chunk.append { room in range.file.read(into: UnsafeMutableRawBufferPointer(rebasing: room[..<want]), at: at) }
            guard let n else {
                rangeEnd.error = errno
                return false
            }
            if n == 0 { break }
        }
        return true
    }

    /// Cuts `lines` (whole lines, each ended by its LF, inside `chunk`, whose first byte is at `offset` in the
    /// input) into records.
    private mutating func cut(_ lines: UnsafeRawBufferPointer, of chunk: InputChunk, at offset: Int, size: Int, firstLine: Bool) {
        let start = offset + chunk.offset(of: lines)!
        var segmenter = firstLine ? NDJSONSegmenter() : NDJSONSegmenter(continuingAt: RecordLocation(line: 1, byteOffset: start))
        var cutter = RangeCutter(chunk: chunk, offset: offset, size: size)
        swap(&cutter.batch, &self)
        segmenter.feed(lines, into: &cutter)
        swap(&cutter.batch, &self)
        rangeEnd.lines = segmenter.line - 1
    }

    fileprivate static func firstLF(_ bytes: UnsafeRawBufferPointer, in range: Range<Int>) -> Int? {
        guard !range.isEmpty, let found = memchr(bytes.baseAddress! + range.lowerBound, 0x0A, range.count) else { return nil }
        return bytes.baseAddress!.distance(to: UnsafeRawPointer(found))
    }

    private static func lastLF(_ bytes: UnsafeRawBufferPointer, in range: Range<Int>) -> Int? {
        var i = range.upperBound
        while i > range.lowerBound {
            i -= 1
            if bytes[i] == 0x0A { return i }
        }
        return nil
    }
}

/// Puts the records `NDJSONSegmenter` finds in a range's chunk into the batch, each with the `bytesIn` one job
/// reports when the run stops at it: its reads of `readBytes` from the input's start, through the one holding the
/// record's LF.
private struct RangeCutter: RecordSegmentSink {
    var batch = RecordBatch()
    let chunk: InputChunk
    /// Where the chunk's first byte is in the input.
    let offset: Int
    let size: Int
    var location = RecordLocation(line: 0, byteOffset: 0)
    /// Where the record's bytes so far end in the chunk (at the end of the record: its CR, or its LF).
    var end = 0

    init(chunk: InputChunk, offset: Int, size: Int) {
        self.chunk = chunk
        self.offset = offset
        self.size = size
    }

    mutating func recordBegins(at location: RecordLocation) {
        self.location = location
        end = location.byteOffset - offset
        batch.beginRecord()
    }

    mutating func recordContinues(_ bytes: UnsafeRawBufferPointer) {
        batch.continueRecord(bytes, in: chunk)
        // (The one piece not in the chunk: the start of a BOM that was not one, held by the segmenter's filter.)
        if let at = chunk.offset(of: bytes) { end = at + bytes.count }
    }

    mutating func recordEnds() {
        // The record's LF: right after its bytes, or after its CR (the lines handed over all end with an LF).
        let bytes = chunk.bytes
        let lf = offset + (RecordBatch.firstLF(bytes, in: end..<bytes.count) ?? bytes.count - 1)
        let reads = RecordPipelineSettings.readBytes
        batch.endRecord(at: location, bytesIn: min(size, (lf / reads + 1) * reads))
    }
}
