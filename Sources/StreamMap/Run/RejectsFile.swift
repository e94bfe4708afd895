
/// `--rejects FILE`: one NDJSON line per rejected record, in `RejectWriter`'s format with the input's name first:
/// `{"input":"events.ndjson","line":3,"offset":120,"errors":[{"code":…,"fatal":…,"source":…,"destination":…,
/// "message":…}],"record":"…"}` — `record` cut after `--rejects-record-bytes` bytes with `"truncated":true`, or
/// replaced by `"recordBytes":N` with `--redact`. Buffered like the output; written at the end and whenever the
/// buffer is large. Each line is written straight into the buffer.
package final class RejectsFile {
    package let file: FileOutput
    package let format: RejectWriter
    private var buffer = ByteBuffer(capacity: 1 << 17)
    /// `{"input":"NAME",` for the input of the last line.
    private var head: (input: String, bytes: [UInt8]) = ("", [])
    /// The errors' objects as last written (a run repeats its errors).
    private let kept = WrittenErrors()

    package init(file: FileOutput, format: RejectWriter) {
        self.file = file
        self.format = format
    }

    deinit { buffer.deallocate() }

    /// How many bytes of a record must be kept for its line: one more than the limit, so that the writer sees
    /// that the record is longer and marks it truncated; none when the text is redacted.
    package var bytesToKeep: Int { format.redactRecord ? 0 : format.maximumRecordBytes + 1 }

    /// Adds a line. `record` is the record's start (at least `bytesToKeep` bytes of it when it is that long);
    /// `totalBytes` its full length.
    package func add(input: String, location: RecordLocation, record: UnsafeRawBufferPointer, totalBytes: Int,
                     failure: RecordFailure) -> WriteResult {
        if head.bytes.isEmpty || !bytesEqual(head.input, input) {
            var w = JSONWriter()
            w.writeRaw(UInt8(ascii: "{"))
            w.writeString("input")
            w.writeRaw(UInt8(ascii: ":"))
            w.writeString(input)
            w.writeRaw(UInt8(ascii: ","))
            head = (input, w.bytes)
        }
        head.bytes.withUnsafeBytes { buffer.append($0) }
        format.writeMembers(record: record, totalBytes: totalBytes, at: location, failure: failure, into: &buffer, kept: kept)
        buffer.append(0x0A)
        return buffer.count >= 1 << 16 ? flush() : .ok
    }

    package func flush() -> WriteResult {
        guard buffer.count > 0 else { return .ok }
        let result = file.writeAll(buffer.bytes)
        buffer.reset(keeping: 1 << 22)
        return result
    }
}
