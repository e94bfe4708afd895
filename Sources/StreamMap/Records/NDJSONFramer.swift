/// Splits a byte stream into NDJSON records, each delivered whole: `RecordFramer(framing: .ndjson)` under its
/// original name (a newline ends a record; spaces, tabs and CRs before a record and a CR before its newline are not
/// part of it, so blank lines are skipped but counted; a final record without a newline is delivered by `finish`).
/// Chunks may split records anywhere.
public struct NDJSONFramer: Sendable {
    private var framer = RecordFramer(framing: .ndjson)

    public init() {}

    /// Feeds a chunk; `body` gets each complete record (bytes valid only during the call).
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, RecordLocation) -> Void) {
        framer.feed(chunk, body)
    }

    /// Delivers a final record that had no newline.
    public mutating func finish(_ body: (UnsafeRawBufferPointer, RecordLocation) -> Void) {
        framer.finish(body)
    }
}
