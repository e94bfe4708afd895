internal import CJSONScan

/// A rejected record as written to the rejects output (one NDJSON line):
/// `{"line":3,"offset":120,"errors":[{"code":"type","fatal":true,"source":"/age","destination":"/age","message":"…"}],"record":"…"}`.
/// `record` is the raw text (invalid UTF-8 shown as U+FFFD), cut after `maximumRecordBytes` with `"truncated":true`.
public struct RejectWriter: Sendable {
    /// How much of a rejected record a line keeps by default: 64 KiB.
    public static let defaultMaximumRecordBytes = 65_536
    /// Bytes of the raw record kept in `record`; a longer one is cut there and marked `"truncated":true`.
    public var maximumRecordBytes: Int
    /// Replace the raw record by its length (for data with credentials in it).
    public var redactRecord: Bool

    /// A writer that keeps the first `maximumRecordBytes` of each record, or only its length when `redactRecord`.
    public init(maximumRecordBytes: Int = RejectWriter.defaultMaximumRecordBytes, redactRecord: Bool = false) {
        self.maximumRecordBytes = maximumRecordBytes
        self.redactRecord = redactRecord
    }

    /// Appends the rejects line of a whole `record` (without its newline) to `w`.
    public func write(
        record: UnsafeRawBufferPointer, at location: RecordLocation, failure: RecordFailure, into w: inout JSONWriter
    ) {
        write(record: record, totalBytes: record.count, at: location, failure: failure, into: &w)
    }

    /// The line of a record of which only the start is at hand: `record` holds its first bytes (at least
    /// `maximumRecordBytes + 1` of them when it is that long; none are needed when redacted), `totalBytes` is its
    /// length — for `recordBytes` and `truncated`. Written member by member, in the order above.
    public func write(
        record: UnsafeRawBufferPointer, totalBytes: Int, at location: RecordLocation, failure: RecordFailure,
        into w: inout JSONWriter
    ) {
        w.writeRaw(UInt8(ascii: "{"))
        writeMembers(record: record, totalBytes: totalBytes, at: location, failure: failure, into: &w, kept: nil)
    }

    /// The line after its `{`: its members and the closing `}` (the rejects file writes its `"input"` member first),
    /// each piece straight into `out`. Each error is read where it is, not copied, and its object copied from `kept`
    /// when it was the last one written at its place in a record's list.
    func writeMembers<Out: ByteAppending>(
        record: UnsafeRawBufferPointer, totalBytes: Int, at location: RecordLocation, failure: RecordFailure,
        into out: inout Out, kept: WrittenErrors?
    ) {
        func key(_ text: StaticString) { text.withUTF8Buffer { out.append(UnsafeRawBufferPointer($0)) } }
        key(#""line":"#)
        out.appendDecimal(Int64(location.line))
        key(#","offset":"#)
        out.appendDecimal(Int64(location.byteOffset))
        key(#","errors":["#)
        var place = 0
        if let lead = failure.leadingError {
            withUnsafePointer(to: lead) { Self.write($0, place: 0, into: &out, kept: nil) }
            place = 1
        }
        failure.listedErrors.withUnsafeBufferPointer { errors in
            for i in errors.indices { Self.write(errors.baseAddress! + i, place: place + i, into: &out, kept: kept) }
        }
        out.append(UInt8(ascii: "]"))
        if redactRecord {
            key(#","recordBytes":"#)
            out.appendDecimal(Int64(totalBytes))
        } else {
            let cut = min(record.count, totalBytes, maximumRecordBytes)
            key(#","record":"#)
            let kept = UnsafeRawBufferPointer(rebasing: record[..<cut])
            if kept.isEmpty || cjsonscan_valid_utf8(kept.baseAddress!.assumingMemoryBound(to: UInt8.self), kept.count) != 0 {
                JSONEscaping.writeString(kept, to: &out)  // (valid UTF-8: the text as it is, without a String made of it first)
            } else {
                out.appendString(String(decoding: kept, as: UTF8.self))  // (each bad sequence becomes U+FFFD)
            }
            if cut < totalBytes { key(#","truncated":true"#) }
        }
        out.append(UInt8(ascii: "}"))
    }
}

extension RejectWriter {
    /// The error at `place` of a line's list, after a comma unless first: copied from `kept` if it holds that place's
    /// object for the same error, else written (and kept).
    private static func write<Out: ByteAppending>(_ e: UnsafePointer<MapError>, place: Int, into out: inout Out,
                                                  kept: WrittenErrors?) {
        if place > 0 { out.append(UInt8(ascii: ",")) }
        guard let kept, place < WrittenErrors.places else { return writeObject(e, into: &out) }
        out.append(kept.object(at: place, for: e))
    }

    /// `{"code":…,"fatal":…,"source":…,"destination":…,"message":…}`.
    static func writeObject<Out: ByteAppending>(_ e: UnsafePointer<MapError>, into out: inout Out) {
        func key(_ text: StaticString) { text.withUTF8Buffer { out.append(UnsafeRawBufferPointer($0)) } }
        key(#"{"code":"#)
        out.appendQuotedName(e.pointee.code.rawValue)
        key(e.pointee.isFatal ? #","fatal":true,"source":"# : #","fatal":false,"source":"#)
        out.appendPointer(e.pointee.sourcePath)
        key(#","destination":"#)
        out.appendPointer(e.pointee.destinationPath)
        key(#","message":"#)
        out.appendStringInPlace(e.pointee.message)
        out.append(UInt8(ascii: "}"))
    }
}

/// The rejects lines' error objects as last written at each place of a record's list, with the error each was
/// written from. A run that rejects many records mostly repeats their errors — the same field absent, record after
/// record — so most objects are copied, not written again. An error is found by itself when it is a copy of the one
/// kept (`MapError.sameError`: nothing reference counted), else by comparing the two.
package final class WrittenErrors {
    /// Places of a record's list whose objects are kept (the others are written each time).
    static let places = 32
    private struct Written {
        var error: MapError
        var bytes: ByteBuffer
    }
    private let written = UnsafeMutablePointer<Written>.allocate(capacity: WrittenErrors.places)
    /// How many places have an object kept (places come in order from 0).
    private var count = 0
    /// Where a `Written` holds its error.
    private static let errorOffset = MemoryLayout<Written>.offset(of: \.error)!

    package init() {}

    deinit {
        for i in 0..<count { written[i].bytes.deallocate() }
        written.deinitialize(count: count)
        written.deallocate()
    }

    /// The object of error `e` at `place` (< `places`): the kept one if written from the same error, else `e`'s
    /// written and kept. Valid until the next call.
    func object(at place: Int, for e: UnsafePointer<MapError>) -> UnsafeRawBufferPointer {
        let kept = written + place
        if place < count {
            let keptError = UnsafeRawPointer(kept).advanced(by: Self.errorOffset).assumingMemoryBound(to: MapError.self)
            if MapError.sameError(keptError, e) || Self.equal(keptError.pointee, e.pointee) { return kept.pointee.bytes.bytes }
            kept.pointee.error = e.pointee
            kept.pointee.bytes.reset(keeping: 1024)  // (what a long message made it hold goes with the next one)
        } else {
            precondition(place == count, "places are kept in order")
            kept.initialize(to: Written(error: e.pointee, bytes: ByteBuffer(capacity: 256)))
            count += 1
        }
        RejectWriter.writeObject(e, into: &kept.pointee.bytes)
        return kept.pointee.bytes.bytes
    }

    /// `a == b`, apart (the copies it makes stay in here).
    @inline(never)
    private static func equal(_ a: MapError, _ b: MapError) -> Bool { a == b }
}

extension ByteAppending {
    /// A path as a JSON string of its pointer, without making the pointer's string: a key that needs neither a
    /// pointer's escape (`~`, `/`) nor a JSON one is written as it is (a rejects line has two pointers per error).
    mutating func appendPointer(_ path: JSONPath) {
        append(UInt8(ascii: "\""))
        path.components.withUnsafeBufferPointer { steps in
            for i in steps.indices {
                append(UInt8(ascii: "/"))
                switch steps[i] {
                case .index(let index):
                    appendDecimal(Int64(index))
                case .key(let key):
                    let plain: Bool? = key.utf8.withContiguousStorageIfAvailable { text in
                        let raw = UnsafeRawBufferPointer(text)
                        guard JSONEscaping.firstToEscape(raw, from: 0) == raw.count,
                              !text.contains(UInt8(ascii: "~")), !text.contains(UInt8(ascii: "/")) else { return false }
                        append(raw)
                        return true
                    }
                    if plain != true {
                        // (The step as the pointer writes it, JSON-escaped, without its slash and quotes.)
                        var step = JSONWriter()
                        step.writeString(String(JSONPath([.key(key)]).pointer.dropFirst()))
                        step.bytes.withUnsafeBytes { append(UnsafeRawBufferPointer(rebasing: $0.dropFirst().dropLast())) }
                    }
                }
            }
        }
        append(UInt8(ascii: "\""))
    }

    /// `appendString`, reading a native string's bytes where they are (no copy of the string to make them so).
    mutating func appendStringInPlace(_ text: String) {
        let done: Void? = text.utf8.withContiguousStorageIfAvailable { JSONEscaping.writeString(UnsafeRawBufferPointer($0), to: &self) }
        if done == nil { appendString(text) }
    }

    /// A name that needs no escape (an error code), quoted.
    mutating func appendQuotedName(_ name: String) {
        let done: Void? = name.utf8.withContiguousStorageIfAvailable { appendQuoted(UnsafeRawBufferPointer($0)) }
        if done == nil { appendString(name) }
    }
}
