/// A rejected record as written to the rejects output (one NDJSON line):
/// `{"line":3,"offset":120,"errors":[{"code":"type","fatal":true,"source":"/age","destination":"/age","message":"…"}],"record":"…"}`.
/// `record` is the raw text (invalid UTF-8 shown as U+FFFD), cut after `maximumRecordBytes` with `"truncated":true`.
public struct RejectWriter: Sendable {
    public static let defaultMaximumRecordBytes = 65_536
    public var maximumRecordBytes: Int
    /// Replace the raw record by its length (for data with credentials in it).
    public var redactRecord: Bool

    public init(maximumRecordBytes: Int = RejectWriter.defaultMaximumRecordBytes, redactRecord: Bool = false) {
        self.maximumRecordBytes = maximumRecordBytes
        self.redactRecord = redactRecord
    }

    public func write(
        record: UnsafeRawBufferPointer, at location: RecordLocation, errors: [RecordErrorReport], into w: inout JSONWriter
    ) {
        var o = JSONObject()
        o["line"] = .number(JSONNumber(location.line))
        o["offset"] = .number(JSONNumber(location.byteOffset))
        o["errors"] = .array(errors.map { e in
            .object(JSONObject([
                ("code", .string(e.code)), ("fatal", .bool(e.isFatal)), ("source", .string(e.source)),
                ("destination", .string(e.destination)), ("message", .string(e.message)),
            ]))
        })
        if redactRecord {
            o["recordBytes"] = .number(JSONNumber(record.count))
        } else {
            let cut = min(record.count, maximumRecordBytes)
            o["record"] = .string(String(decoding: UnsafeRawBufferPointer(rebasing: record[..<cut]), as: UTF8.self))
            if cut < record.count { o["truncated"] = .bool(true) }
        }
        w.write(.object(o))
    }
}
