// RecordFramer.swift — cuts a byte stream into records: NDJSON, one top-level JSON array, concatenated JSON
// values, RFC 7464 JSON text sequences, or a choice among them made from the start of the input.
//
// The framer only finds record boundaries. Whether a record is valid UTF-8 or valid JSON is the engine's business:
// a malformed record is delivered like any other so that the engine rejects it (and it is counted).

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#elseif canImport(ucrt)
import ucrt
#endif

/// How an input is cut into records.
public enum Framing: String, Sendable, CaseIterable {
    /// Decide from the start of the input (see `RecordFramer`).
    case auto
    /// One record per line (NDJSON / JSON Lines).
    case ndjson
    /// One top-level JSON array; each element is a record.
    case array
    /// Concatenated JSON values, with or without whitespace between them.
    case concat
    /// RFC 7464 JSON text sequence: each record starts with RS (0x1E).
    case seq
}

/// Where a record came from.
public struct RecordLocation: Sendable, Hashable, CustomStringConvertible {
    /// 1-based line number of the record's first byte (every line counts, blank ones included).
    public var line: Int
    /// Byte offset of the record's first byte in the whole input.
    public var byteOffset: Int

    /// A location: 1-based `line`, 0-based `byteOffset`.
    public init(line: Int, byteOffset: Int) {
        self.line = line
        self.byteOffset = byteOffset
    }

    public var description: String { "line \(line), byte \(byteOffset)" }
}

/// Splits a byte stream into records. Chunks may split the input anywhere: the records and their locations are the
/// same for every chunking. Each record is delivered whole, as one contiguous buffer (valid only during the call);
/// a record that spans chunks is buffered, but bytes are never rescanned, so time is linear in the input size
/// however the input is chunked. Memory is bounded by the largest record (for `array`, the largest element), except
/// that `auto` holds the input until it has decided (see below).
///
/// Framings:
/// - `ndjson`: a newline (LF) ends a record; spaces, tabs and CRs before its first byte are not part of it, nor is
///   a CR just before the newline (CRLF), so lines holding only those are skipped (but counted). Other whitespace
///   stays (`"{}  "` is a record with two trailing spaces). A final line without a newline is delivered by `finish`.
///   These are the rules of `NDJSONSegmenter`, which hands records on in pieces instead of whole (the same code,
///   `NDJSONLines`, finds the records for both).
/// - `array`: the input is one JSON array and its elements are the records, streamed one by one. An element ends at
///   a comma or the closing bracket outside any string, object or nested array of its own (a light scanner tracks
///   strings, escapes and bracket depth; it does not validate). Whitespace around an element is not part of it.
///   A malformed element is still delivered, up to its delimiter, so the engine rejects it and the elements after it
///   go on. An empty element (`[1,,2]`, or a trailing comma as in `[1,2,]`) is delivered as an empty record (invalid
///   JSON). An empty array delivers nothing. Bytes are never dropped: data after the closing bracket is delivered
///   as one record by `finish`, and so is the unfinished last element (possibly empty) when the input ends before
///   the closing bracket, or the whole input when it does not start with `[`. Those records are framing errors:
///   `finishReportingFramingErrors(_:)` says so (and `MappingFeed` rejects them), since a tail like the `3` of a
///   truncated `[1, 2, 3` would otherwise look like a valid record.
/// - `concat`: concatenated JSON values (`{"a":1}{"b":2} 3 "x"` then `[1]` on the next line): a record ends where its
///   value does — at the bracket or quote that closes it, or, for a number or literal, before the next whitespace
///   or structural character. Whitespace between values is skipped. A stray `}`, `]`, `,` or `:` between values is
///   delivered as a one-byte record (invalid JSON). The location is that of the value's first byte.
/// - `seq`: RFC 7464: each record starts with RS (0x1E) and ends at the next RS or at the end of the input;
///   whitespace around it (including the LF that ends it) is not part of it; empty records are skipped. Text before
///   the first RS is delivered as a record too (never dropped silently).
/// - `auto`: decided from the start of the input, at the latest at the end of the first value's line:
///   1. the first non-whitespace byte is RS → `seq`;
///   2. otherwise the first JSON value is scanned (not validated):
///      - it is an array that spans lines (pretty-printed) → `array`, decided at its first newline, so that a large
///        pretty-printed array streams element by element (anything after that array is then a framing error);
///      - it is another value that spans lines (a pretty-printed object) → `concat` (an NDJSON record never spans
///        lines); a string with a raw newline in it is malformed → `ndjson`;
///      - more non-whitespace follows it on the same line → `concat`;
///      - it is an array and only whitespace follows it up to the end of the input → `array`: **an input that is a
///        single JSON array is taken as an array of records** (use `ndjson` to map such a line as one record);
///        a first array that ends early (no closing bracket at the end of the input) → `array` as well;
///      - otherwise → `ndjson`.
///   Until it has decided, `auto` holds the bytes it has seen (the first line, or for a one-line array, the first
///   line and the whitespace after it), then frames them with the chosen framing. So that a huge first line is not
///   held whole, it decides after `decisionLimit` (1 MiB) bytes at the latest: an input whose first non-whitespace
///   byte is `[` is then an array (a minified array on one line), anything else NDJSON (one long record); `concat`
///   must be asked for when the first of concatenated values is longer than that.
public struct RecordFramer: Sendable {
    /// Receives a complete record's bytes (borrowed for the call only) and where it starts.
    public typealias Body = (UnsafeRawBufferPointer, RecordLocation) -> Void

    /// The framing at work; nil while `auto` has not decided.
    private var splitter: Splitter?
    private var detector = AutoDetector()
    /// The input seen while `auto` has not decided.
    private var held: [UInt8] = []
    private var finished = false
    private var bom = LeadingBOM()
    /// Bytes of a leading BOM, counted in offsets but never framed.
    private var skipped = 0

    /// A framer at the start of an input, with `framing` (`auto`: decided from the input's start).
    public init(framing: Framing = .auto) {
        if framing != .auto { splitter = Splitter(kind: framing) }
    }

    /// The framing in use: the requested one, or what `auto` chose once it is known (nil before that, and for an
    /// input that is empty or only whitespace).
    public var detected: Framing? { splitter?.kind }

    /// Feeds a chunk; `body` receives each complete record's bytes (valid only during the call) and its location.
    /// A UTF-8 BOM at the very start of the input is skipped (offsets still count it).
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: Body) {
        precondition(!finished, "RecordFramer.feed called after finish")
        var filter = bom
        filter.filter(chunk, skipped: { n in
            skipped += n
            splitter?.offset += n
        }) { feedBytes($0, body) }
        bom = filter
    }

    private mutating func feedBytes(_ chunk: UnsafeRawBufferPointer, _ body: Body) {
        if splitter != nil {
            splitter!.feed(chunk, body)
            return
        }
        held.append(contentsOf: chunk)
        if let framing = detector.scan(chunk) {
            start(framing, body)
        } else if held.count > Self.decisionLimit {
            start(Self.undecided(held), body)
        }
    }

    /// How much of the input `auto` holds at most before it decides.
    public static let decisionLimit = 1 << 20

    /// `auto`'s choice when the first `decisionLimit` bytes did not decide (the BOM is already skipped).
    static func undecided(_ start: [UInt8]) -> Framing {
        var i = 0
        while i < start.count, [0x20, 0x09, 0x0A, 0x0D].contains(start[i]) { i += 1 }
        return i < start.count && start[i] == UInt8(ascii: "[") ? .array : .ndjson
    }

    /// Ends the input and delivers what is left (a final record without its terminator). Use
    /// `finishReportingFramingErrors(_:)` to learn whether that record is a framing error (array framing).
    public mutating func finish(_ body: Body) {
        finishReportingFramingErrors { record, location, _ in body(record, location) }
    }

    /// Like `finish(_:)`; the third argument is non-nil for a record that is not a record of the framing but the
    /// rest of a malformed input, which must be rejected whatever its bytes are: with `array` framing, data after
    /// the closing bracket, the unfinished last element of an array that is not closed, or a whole input that is
    /// not an array. (`MappingFeed` rejects such a record with that error, as a syntax failure.)
    public mutating func finishReportingFramingErrors(_ body: (UnsafeRawBufferPointer, RecordLocation, JSONSyntaxError?) -> Void) {
        precondition(!finished, "RecordFramer.finish called twice")
        var filter = bom
        filter.finish { feedBytes($0) { record, location in body(record, location, nil) } }
        bom = filter
        finished = true
        if splitter == nil {
            guard let framing = detector.finish() else { return }
            start(framing) { record, location in body(record, location, nil) }
        }
        splitter!.finish(body)
    }

    private mutating func start(_ framing: Framing, _ body: Body) {
        splitter = Splitter(kind: framing)
        splitter!.offset = skipped
        let bytes = held
        held = []
        bytes.withUnsafeBytes { splitter!.feed($0, body) }
    }
}

// MARK: - Byte classes

private let lf: UInt8 = 0x0A
private let cr: UInt8 = 0x0D
private let rs: UInt8 = 0x1E
private let quote: UInt8 = 0x22
private let backslash: UInt8 = 0x5C

@inline(__always) private func isWhitespace(_ b: UInt8) -> Bool { b == 0x20 || b == 0x0A || b == 0x0D || b == 0x09 }

/// Ends a number or literal: whitespace or a structural character.
@inline(__always) private func endsScalar(_ b: UInt8) -> Bool {
    switch b {
    case 0x20, 0x0A, 0x0D, 0x09, 0x2C, 0x3A, 0x5B, 0x5D, 0x7B, 0x7D, 0x22: return true
    default: return false
    }
}

/// Index of the first `byte` in `p[from..<n]`, or `n`.
@inline(__always) private func find(_ byte: UInt8, _ p: UnsafePointer<UInt8>, _ from: Int, _ n: Int) -> Int {
    guard from < n, let hit = memchr(p + from, Int32(byte), n - from) else { return n }
    return UnsafeRawPointer(p).distance(to: UnsafeRawPointer(hit))
}

/// Number of LFs in `p[from..<to]`.
private func countNewlines(_ p: UnsafePointer<UInt8>, _ from: Int, _ to: Int) -> Int {
    var count = 0
    var i = find(lf, p, from, to)
    while i < to {
        count += 1
        i = find(lf, p, i + 1, to)
    }
    return count
}

/// Finds the bytes that matter inside a string (quote, backslash, LF) with `memchr`, remembering each one's next
/// position in the chunk so that no byte is searched twice for the same needle: linear per chunk.
private struct StringStops {
    let p: UnsafePointer<UInt8>
    let n: Int
    private var nextQuote = -1
    private var nextBackslash = -1
    private var nextNewline = -1

    init(_ p: UnsafePointer<UInt8>, _ n: Int) {
        self.p = p
        self.n = n
    }

    /// Index of the first quote, backslash or LF at or after `i` (or `n`).
    @inline(__always) mutating func next(from i: Int) -> Int {
        if nextQuote < i { nextQuote = find(quote, p, i, n) }
        if nextBackslash < i { nextBackslash = find(backslash, p, i, n) }
        if nextNewline < i { nextNewline = find(lf, p, i, n) }
        return min(nextQuote, nextBackslash, nextNewline)
    }
}

// MARK: - The value scanner

/// The light JSON scanner behind auto-detection and the `concat` and `array` framings: it follows strings (and their
/// escapes) and bracket depth to find where a value or an array element ends. It does not validate. It stops at each
/// LF it passes, so that the caller can count lines (or, detecting, decide).
private struct ValueScanner: Sendable {
    /// Where a scan stopped (the scan position is `i`).
    enum Stop {
        /// The value ends before `i` (for a number or literal, `i` is at the byte after it, not part of it); the
        /// array element ends at `i`, at its comma or `]`.
        case ended
        /// Just past a LF: in a string (raw or escaped: malformed JSON either way) or not.
        case newline(inString: Bool)
        case endOfChunk
    }

    private var depth = 0
    private var inString = false
    private var escaped = false
    private var inScalar = false

    /// Starts a value at its first byte `b`, already passed; true when `b` is the whole of it (a stray `]`, `}`,
    /// `,` or `:`).
    mutating func begin(with b: UInt8) -> Bool {
        self = ValueScanner()
        switch b {
        case UInt8(ascii: "["), UInt8(ascii: "{"): depth = 1
        case quote: inString = true
        case UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ","), UInt8(ascii: ":"): return true
        default: inScalar = true
        }
        return false
    }

    /// Scans the value begun with `begin(with:)` from `i`.
    mutating func scanValue(_ p: UnsafePointer<UInt8>, _ i: inout Int, _ n: Int, _ stops: inout StringStops) -> Stop {
        while i < n {
            if inString {
                if let stop = scanString(p, &i, n, &stops) { return stop }
                if depth == 0 { return .ended }
                continue
            }
            if inScalar {
                while i < n && !endsScalar(p[i]) { i += 1 }
                if i == n { break }
                inScalar = false
                return .ended
            }
            let b = p[i]
            i += 1
            switch b {
            case quote: inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth -= 1
                if depth == 0 { return .ended }
            case lf: return .newline(inString: false)
            default: break
            }
        }
        return .endOfChunk
    }

    /// Scans an array element from `i`, its first byte included (start with a fresh scanner). The element ends at a
    /// comma or `]` outside any string, object or array of its own. Unlike a value, it runs on after a complete
    /// value (`1 2` is one element), and a `}` without its `{` is passed over.
    mutating func scanElement(_ p: UnsafePointer<UInt8>, _ i: inout Int, _ n: Int, _ stops: inout StringStops) -> Stop {
        while i < n {
            if inString {
                if let stop = scanString(p, &i, n, &stops) { return stop }
                continue
            }
            switch p[i] {
            case quote: inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"): depth += 1
            case UInt8(ascii: "}"): if depth > 0 { depth -= 1 }
            case UInt8(ascii: "]"):
                if depth == 0 { return .ended }
                depth -= 1
            case UInt8(ascii: ","): if depth == 0 { return .ended }
            case lf:
                i += 1
                return .newline(inString: false)
            default: break
            }
            i += 1
        }
        return .endOfChunk
    }

    /// Scans a string's bytes from `i`: nil once past its closing quote, or where it stopped before that.
    @inline(__always) private mutating func scanString(_ p: UnsafePointer<UInt8>, _ i: inout Int, _ n: Int, _ stops: inout StringStops) -> Stop? {
        while i < n {
            if escaped {
                escaped = false
                i += 1
                if p[i - 1] == lf { return .newline(inString: true) }
                continue
            }
            let stop = stops.next(from: i)
            if stop == n {
                i = n
                break
            }
            i = stop + 1
            switch p[stop] {
            case quote:
                inString = false
                return nil
            case backslash: escaped = true
            default: return .newline(inString: true)
            }
        }
        return .endOfChunk
    }
}

// MARK: - Auto detection

/// Scans the start of the input to choose a framing (the rules are in `RecordFramer`'s documentation).
private struct AutoDetector: Sendable {
    private enum Phase: Sendable {
        /// Whitespace before the first value.
        case leading
        /// Inside the first value.
        case value
        /// After the first value, on its line.
        case restOfLine
        /// After a one-line array and its line: waiting for more non-whitespace (→ ndjson) or the end (→ array).
        case waiting
    }

    private var phase = Phase.leading
    private var isArray = false
    private var value = ValueScanner()

    /// Scans the next chunk; returns the framing once it is decided.
    mutating func scan(_ chunk: UnsafeRawBufferPointer) -> Framing? {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return nil }
        let p = base.assumingMemoryBound(to: UInt8.self)
        let n = chunk.count
        var stops = StringStops(p, n)
        var i = 0
        while i < n {
            switch phase {
            case .leading:
                let b = p[i]
                i += 1
                if isWhitespace(b) { continue }
                if b == rs { return .seq }
                isArray = b == UInt8(ascii: "[")
                phase = value.begin(with: b) ? .restOfLine : .value
            case .value:
                switch value.scanValue(p, &i, n, &stops) {
                case .ended: phase = .restOfLine  // a number or literal's delimiter is looked at again there
                case .newline(inString: true): return .ndjson  // a raw newline in a string: the line is malformed
                case .newline(inString: false): return isArray ? .array : .concat
                case .endOfChunk: break
                }
            case .restOfLine:
                let b = p[i]
                i += 1
                if b == 0x20 || b == 0x09 || b == cr { continue }
                if b == lf {
                    if isArray { phase = .waiting; continue }
                    return .ndjson
                }
                return .concat
            case .waiting:
                let b = p[i]
                i += 1
                if isWhitespace(b) { continue }
                return .ndjson
            }
        }
        return nil
    }

    /// At the end of the input: the framing, or nil when the input was empty or only whitespace.
    func finish() -> Framing? {
        switch phase {
        case .leading: return nil
        case .value, .restOfLine: return isArray ? .array : .ndjson
        case .waiting: return .array
        }
    }
}

// MARK: - The framings

/// One concrete framing (never `auto`). Scanner state survives chunk boundaries; a record that spans chunks is
/// carried in `pending`.
private struct Splitter: Sendable {
    typealias Body = RecordFramer.Body

    private enum ArrayPhase: Sendable {
        case start, expectFirst, expectNext, element, after, garbage
    }

    let kind: Framing
    /// Absolute offset of the current chunk's first byte.
    var offset = 0
    /// Line of the next byte to scan.
    private var line = 1
    /// A record is open: it starts at `start` and runs to the scan position.
    private var inRecord = false
    private var start = RecordLocation(line: 1, byteOffset: 0)
    /// The open record's bytes from earlier chunks.
    private var pending: [UInt8] = []

    // Array and concat framings.
    private var value = ValueScanner()

    // Array framing.
    private var arrayPhase = ArrayPhase.start
    private var garbageError: JSONSyntaxError?

    // NDJSON framing (which does without `inRecord`, `start` and `pending`).
    private var ndjson = NDJSONRecords()

    init(kind: Framing) {
        precondition(kind != .auto)
        self.kind = kind
    }

    mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: Body) {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        let p = base.assumingMemoryBound(to: UInt8.self)
        switch kind {
        case .ndjson: ndjson.feed(chunk, at: offset, body)
        case .seq: scanSequence(p, chunk, body)
        case .concat: scanValues(p, chunk, body)
        case .array: scanArray(p, chunk, body)
        case .auto: preconditionFailure()
        }
        if inRecord {
            let from = max(start.byteOffset - offset, 0)
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[from...]))
        }
        offset += chunk.count
    }

    mutating func finish(_ body: (UnsafeRawBufferPointer, RecordLocation, JSONSyntaxError?) -> Void) {
        if kind == .ndjson {
            ndjson.finish { body($0, $1, nil) }
            return
        }
        var unterminated = false
        var error: JSONSyntaxError?
        if kind == .array {
            switch arrayPhase {
            case .start, .after: break
            case .expectFirst, .expectNext:
                // The input ended where an element or the closing bracket was due: an empty, unfinished element.
                deliverEmpty(at: RecordLocation(line: line, byteOffset: offset)) { record, location in
                    body(record, location, Self.unterminatedArray(at: 0))
                }
                return
            case .element: unterminated = true
            case .garbage: error = garbageError
            }
        }
        guard inRecord else { return }
        inRecord = false
        let kind = kind, location = start
        pending.withUnsafeBytes { raw in
            Self.trimmed(raw, kind) { record in
                body(record, location, unterminated ? Self.unterminatedArray(at: record.count) : error)
            }
        }
        pending = []
    }

    private static func unterminatedArray(at byteOffset: Int) -> JSONSyntaxError {
        JSONSyntaxError(byteOffset: byteOffset, message: "the input ends inside the top-level array (no closing ']')")
    }

    // MARK: Delivery

    /// Delivers the open record, which ends before `end` in the current chunk.
    private mutating func deliver(_ chunk: UnsafeRawBufferPointer, upTo end: Int, _ body: Body) {
        inRecord = false
        let kind = kind, location = start
        if start.byteOffset >= offset {
            let raw = UnsafeRawBufferPointer(rebasing: chunk[(start.byteOffset - offset)..<end])
            Self.trimmed(raw, kind) { body($0, location) }
        } else {
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[..<end]))
            pending.withUnsafeBytes { raw in Self.trimmed(raw, kind) { body($0, location) } }
            if pending.capacity > 1 << 20 { pending = [] } else { pending.removeAll(keepingCapacity: true) }
        }
    }

    private func deliverEmpty(at location: RecordLocation, _ body: Body) {
        var zero: UInt8 = 0
        withUnsafeBytes(of: &zero) { body(UnsafeRawBufferPointer(rebasing: $0[0..<0]), location) }
    }

    /// The record as delivered: trailing whitespace dropped, and an empty `seq` record skipped. (Leading whitespace
    /// is never part of a record: a record opens at its first non-whitespace byte.)
    private static func trimmed(_ raw: UnsafeRawBufferPointer, _ kind: Framing, _ body: (UnsafeRawBufferPointer) -> Void) {
        var end = raw.count
        while end > 0 && isWhitespace(raw[end - 1]) { end -= 1 }
        if kind == .seq && end == 0 { return }
        body(UnsafeRawBufferPointer(rebasing: raw[..<end]))
    }

    @inline(__always) private mutating func open(at i: Int) {
        inRecord = true
        start = RecordLocation(line: line, byteOffset: offset + i)
    }

    // MARK: Scanners

    private mutating func scanSequence(_ p: UnsafePointer<UInt8>, _ chunk: UnsafeRawBufferPointer, _ body: Body) {
        let n = chunk.count
        var i = 0
        while i < n {
            if !inRecord {
                let b = p[i]
                if b == rs || isWhitespace(b) {
                    if b == lf { line += 1 }
                    i += 1
                    continue
                }
                open(at: i)
            }
            let end = find(rs, p, i, n)
            line += countNewlines(p, i, end)
            if end == n { break }
            deliver(chunk, upTo: end, body)
            i = end + 1
        }
    }

    private mutating func scanValues(_ p: UnsafePointer<UInt8>, _ chunk: UnsafeRawBufferPointer, _ body: Body) {
        let n = chunk.count
        var stops = StringStops(p, n)
        var i = 0
        while i < n {
            if !inRecord {
                let b = p[i]
                if isWhitespace(b) {
                    if b == lf { line += 1 }
                    i += 1
                    continue
                }
                open(at: i)
                i += 1
                if value.begin(with: b) { deliver(chunk, upTo: i, body) }
                continue
            }
            switch value.scanValue(p, &i, n, &stops) {
            case .ended: deliver(chunk, upTo: i, body)  // a number or literal's delimiter is scanned again
            case .newline: line += 1
            case .endOfChunk: break
            }
        }
    }

    private mutating func scanArray(_ p: UnsafePointer<UInt8>, _ chunk: UnsafeRawBufferPointer, _ body: Body) {
        let n = chunk.count
        var stops = StringStops(p, n)
        var i = 0
        while i < n {
            switch arrayPhase {
            case .start, .after:
                let b = p[i]
                if isWhitespace(b) {
                    if b == lf { line += 1 }
                    i += 1
                    continue
                }
                if arrayPhase == .start && b == UInt8(ascii: "[") {
                    arrayPhase = .expectFirst
                    i += 1
                    continue
                }
                open(at: i)
                garbageError = arrayPhase == .start
                    ? JSONSyntaxError(byteOffset: 0, message: "the input is not a JSON array (array framing)")
                    : JSONSyntaxError(byteOffset: 0, message: "data after the top-level array")
                arrayPhase = .garbage
            case .expectFirst, .expectNext:
                let b = p[i]
                if isWhitespace(b) {
                    if b == lf { line += 1 }
                    i += 1
                    continue
                }
                if b == UInt8(ascii: "]") {
                    // `[]` is empty; `[1,]` has an empty last element.
                    if arrayPhase == .expectNext { deliverEmpty(at: RecordLocation(line: line, byteOffset: offset + i), body) }
                    arrayPhase = .after
                    i += 1
                    continue
                }
                if b == UInt8(ascii: ",") {
                    deliverEmpty(at: RecordLocation(line: line, byteOffset: offset + i), body)
                    arrayPhase = .expectNext
                    i += 1
                    continue
                }
                open(at: i)
                value = ValueScanner()
                arrayPhase = .element
            case .element:
                switch value.scanElement(p, &i, n, &stops) {
                case .ended:
                    deliver(chunk, upTo: i, body)
                    arrayPhase = p[i] == UInt8(ascii: ",") ? .expectNext : .after
                    i += 1
                case .newline: line += 1
                case .endOfChunk: break
                }
            case .garbage:
                line += countNewlines(p, i, n)
                i = n
            }
        }
    }
}

// MARK: - NDJSON

/// The `ndjson` framing: `NDJSONLines`, the code behind `NDJSONSegmenter`, finds the records and hands them on in
/// pieces; they are put back together here. A record within one chunk is delivered from the chunk itself; one that
/// spans chunks is gathered in `pending`.
private struct NDJSONRecords: Sendable {
    private var lines = NDJSONLines()
    private var location = RecordLocation(line: 1, byteOffset: 0)
    /// The open record's bytes that are not in the current chunk (from earlier chunks).
    private var pending: [UInt8] = []

    /// Frames `chunk`, whose first byte is at `offset` in the input.
    mutating func feed(_ chunk: UnsafeRawBufferPointer, at offset: Int, _ body: RecordFramer.Body) {
        collecting(chunk, body) { lines, records in lines.feed(chunk, at: offset, into: &records) }
    }

    mutating func finish(_ body: RecordFramer.Body) {
        collecting(UnsafeRawBufferPointer(start: nil, count: 0), body) { lines, records in lines.finish(into: &records) }
    }

    private mutating func collecting(
        _ chunk: UnsafeRawBufferPointer, _ body: RecordFramer.Body, _ scan: (inout NDJSONLines, inout WholeRecords) -> Void
    ) {
        withoutActuallyEscaping(body) { body in
            var records = WholeRecords(chunk: chunk, body: body, location: location, pending: pending)
            pending = []  // not shared, so that appending does not copy
            scan(&lines, &records)
            records.keepOpenRecord()
            location = records.location
            pending = records.pending
        }
    }

    /// Receives one chunk's pieces.
    private struct WholeRecords: RecordSegmentSink {
        let chunk: UnsafeRawBufferPointer
        let body: RecordFramer.Body
        var location: RecordLocation
        var pending: [UInt8]
        /// The open record's bytes so far when they are all in `chunk`, one after another (`pending` is then empty;
        /// pieces are never empty, so an empty range means none).
        var inChunk = 0..<0

        mutating func recordBegins(at location: RecordLocation) {
            self.location = location
        }

        mutating func recordContinues(_ bytes: UnsafeRawBufferPointer) {
            if let range = rangeInChunk(bytes), pending.isEmpty {
                if inChunk.isEmpty {
                    inChunk = range
                    return
                }
                if inChunk.upperBound == range.lowerBound {
                    inChunk = inChunk.lowerBound..<range.upperBound
                    return
                }
            }
            keepOpenRecord()
            pending.append(contentsOf: bytes)
        }

        mutating func recordEnds() {
            if !inChunk.isEmpty {
                body(UnsafeRawBufferPointer(rebasing: chunk[inChunk]), location)
                inChunk = 0..<0
            } else {
                pending.withUnsafeBytes { body($0, location) }
                if pending.capacity > 1 << 20 { pending = [] } else { pending.removeAll(keepingCapacity: true) }
            }
        }

        /// Copies the open record's bytes in `chunk` to `pending`, before the chunk goes away.
        mutating func keepOpenRecord() {
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[inChunk]))
            inChunk = 0..<0
        }

        /// Where `bytes` are in `chunk`, if they are there.
        private func rangeInChunk(_ bytes: UnsafeRawBufferPointer) -> Range<Int>? {
            guard let base = chunk.baseAddress, let start = bytes.baseAddress,
                  start >= base, start + bytes.count <= base + chunk.count else { return nil }
            let from = base.distance(to: start)
            return from..<from + bytes.count
        }
    }
}
