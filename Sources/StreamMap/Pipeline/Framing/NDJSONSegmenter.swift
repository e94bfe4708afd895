#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Receives records in pieces, as a framer finds them.
public protocol RecordSegmentSink {
    /// A record starts at `location` (its first byte, leading whitespace skipped).
    mutating func recordBegins(at location: RecordLocation)
    /// The next bytes of the current record, never empty; borrowed for the call only.
    mutating func recordContinues(_ bytes: UnsafeRawBufferPointer)
    /// The current record is complete (its newline, or the end of the input, was reached).
    mutating func recordEnds()
}

/// Cuts NDJSON into records *without buffering them*: each record's bytes are handed on as they arrive, so a
/// single 200 MB line streams through in constant memory. A newline ends a record; spaces, tabs and CRs before
/// a record's first byte are skipped (so blank and whitespace-only lines are skipped, but counted); a CR just
/// before the newline (CRLF) is dropped. A final record without a newline ends at `finish`.
public struct NDJSONSegmenter: Sendable {
    private var lines = NDJSONLines()
    /// Absolute offset of the next byte.
    private var offset = 0
    private var bom = LeadingBOM()

    /// A segmenter at the start of an input (line 1, byte 0).
    public init() {}

    /// A segmenter for the rest of an input from the start of a line: `location` is that line's number and first
    /// byte. A BOM there is data (only one at the input's first byte is skipped), so offset 0 is the input's start.
    init(continuingAt location: RecordLocation) {
        lines = NDJSONLines(line: location.line)
        offset = location.byteOffset
        bom = LeadingBOM(atInputStart: location.byteOffset == 0)
    }

    /// The line the next byte is on.
    var line: Int { lines.line }

    /// Feeds a chunk. A UTF-8 BOM at the very start of the input is skipped (offsets still count it).
    public mutating func feed<Sink: RecordSegmentSink>(_ chunk: UnsafeRawBufferPointer, into sink: inout Sink) {
        var filter = bom
        filter.filter(chunk, skipped: { offset += $0 }) { bytes in
            lines.feed(bytes, at: offset, into: &sink)
            offset += bytes.count
        }
        bom = filter
    }

    /// Ends the input: a last record without a newline ends here.
    public mutating func finish<Sink: RecordSegmentSink>(into sink: inout Sink) {
        var filter = bom
        filter.finish { lines.feed($0, at: offset, into: &sink) }
        bom = filter
        lines.finish(into: &sink)
    }
}

/// The NDJSON rules, in one place: `NDJSONSegmenter` hands the pieces on, `RecordFramer` (`ndjson` framing) puts
/// them back together into whole records. Byte order marks are the callers' business (each strips a leading one
/// before the bytes get here, and says where the bytes are in the input).
struct NDJSONLines: Sendable {
    /// The line the next byte is on.
    private(set) var line: Int
    private var inRecord = false
    private var heldCR = false

    /// Lines from the start of line `line`.
    init(line: Int = 1) { self.line = line }

    /// Scans `chunk`, whose first byte is at `offset` in the input. Pieces handed to `sink` are never empty; they
    /// are slices of `chunk`, except the CR of a record that a chunk ended with (not a CRLF after all), handed on
    /// alone from a buffer of its own.
    mutating func feed<Sink: RecordSegmentSink>(_ chunk: UnsafeRawBufferPointer, at offset: Int, into sink: inout Sink) {
        var i = 0
        let n = chunk.count
        while i < n {
            if !inRecord {
                // Skip whitespace before a record; a newline here ends a blank line.
                while i < n {
                    let b = chunk[i]
                    if b == 0x0A {
                        line += 1
                    } else if b != 0x20 && b != 0x09 && b != 0x0D {
                        break
                    }
                    i += 1
                }
                guard i < n else { break }
                inRecord = true
                sink.recordBegins(at: RecordLocation(line: line, byteOffset: offset + i))
            }
            // Inside a record: hand on everything up to the newline.
            if heldCR {
                heldCR = false
                if chunk[i] != 0x0A { withCR { sink.recordContinues($0) } }
            }
            var j = n
            if let found = memchr(chunk.baseAddress! + i, 0x0A, n - i) {
                j = chunk.baseAddress!.distance(to: UnsafeRawPointer(found))
            }
            var end = j
            if end > i && chunk[end - 1] == 0x0D {
                end -= 1
                if j == n { heldCR = true }  // maybe the CR of a CRLF split across chunks
            }
            if end > i { sink.recordContinues(UnsafeRawBufferPointer(rebasing: chunk[i..<end])) }
            if j < n {
                sink.recordEnds()
                inRecord = false
                line += 1
                i = j + 1
            } else {
                i = n
            }
        }
    }

    /// At the end of the input: ends the last record, if it had no newline.
    mutating func finish<Sink: RecordSegmentSink>(into sink: inout Sink) {
        heldCR = false  // a trailing CR at the end of input is dropped, as before a newline
        if inRecord {
            sink.recordEnds()
            inRecord = false
        }
    }

    private func withCR(_ body: (UnsafeRawBufferPointer) -> Void) {
        withUnsafeBytes(of: UInt8(0x0D)) { body($0) }
    }
}
