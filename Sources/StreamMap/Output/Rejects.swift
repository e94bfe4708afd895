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
        func key(_ text: StaticString) { text.withUTF8Buffer { w.writeRaw(UnsafeRawBufferPointer($0)) } }
        key(#"{"line":"#)
        w.writeNumber(JSONNumber(location.line))
        key(#","offset":"#)
        w.writeNumber(JSONNumber(location.byteOffset))
        key(#","errors":["#)
        var first = true
        failure.forEachError { e in
            key(first ? #"{"code":"# : #",{"code":"#)
            first = false
            w.writeString(e.code.rawValue)
            key(#","fatal":"#)
            w.writeBool(e.isFatal)
            key(#","source":"#)
            w.writePointer(e.sourcePath)
            key(#","destination":"#)
            w.writePointer(e.destinationPath)
            key(#","message":"#)
            w.writeString(e.message)
            w.writeRaw(UInt8(ascii: "}"))
        }
        w.writeRaw(UInt8(ascii: "]"))
        if redactRecord {
            key(#","recordBytes":"#)
            w.writeNumber(JSONNumber(totalBytes))
        } else {
            let cut = min(record.count, totalBytes, maximumRecordBytes)
            key(#","record":"#)
            let kept = UnsafeRawBufferPointer(rebasing: record[..<cut])
            if kept.isEmpty || cjsonscan_valid_utf8(kept.baseAddress!.assumingMemoryBound(to: UInt8.self), kept.count) != 0 {
                w.writeString(utf8: kept)  // (valid UTF-8: the text as it is, without a String made of it first)
            } else {
                w.writeString(String(decoding: kept, as: UTF8.self))  // (each bad sequence becomes U+FFFD)
            }
            if cut < totalBytes { key(#","truncated":true"#) }
        }
        w.writeRaw(UInt8(ascii: "}"))
    }
}

extension JSONWriter {
    /// `writeString(path.pointer)`, without making the pointer's string: a key that needs neither a pointer's
    /// escape (`~`, `/`) nor a JSON one is written as it is (a rejects line has two pointers per error).
    mutating func writePointer(_ path: JSONPath) {
        writeRaw(UInt8(ascii: "\""))
        path.components.withUnsafeBufferPointer { steps in
            for i in steps.indices {
                writeRaw(UInt8(ascii: "/"))
                switch steps[i] {
                case .index(let index):
                    writeNumber(JSONNumber(index))
                case .key(let key):
                    let plain: Bool? = key.utf8.withContiguousStorageIfAvailable { text in
                        let raw = UnsafeRawBufferPointer(text)
                        guard JSONEscaping.firstToEscape(raw, from: 0) == raw.count,
                              !text.contains(UInt8(ascii: "~")), !text.contains(UInt8(ascii: "/")) else { return false }
                        writeRaw(raw)
                        return true
                    }
                    if plain != true {
                        // (The step as the pointer writes it, JSON-escaped, without its slash and quotes.)
                        var step = JSONWriter()
                        step.writeString(String(JSONPath([.key(key)]).pointer.dropFirst()))
                        writeRaw(Array(step.bytes.dropFirst().dropLast()))
                    }
                }
            }
        }
        writeRaw(UInt8(ascii: "\""))
    }
}
