
/// `--rejects FILE`: one NDJSON line per rejected record, in `RejectWriter`'s format with the input's name first:
/// `{"input":"events.ndjson","line":3,"offset":120,"errors":[{"code":…,"fatal":…,"source":…,"destination":…,
/// "message":…}],"record":"…"}` — `record` cut after `--rejects-record-bytes` bytes with `"truncated":true`, or
/// replaced by `"recordBytes":N` with `--redact`. Buffered like the output; written at the end and whenever the
/// buffer is large.
package struct RejectsFile {
    package let file: FileOutput
    package let format: RejectWriter
    private var buffer = JSONWriter(reservingCapacity: 1 << 16)
    private var line = JSONWriter(reservingCapacity: 1 << 12)

    package init(file: FileOutput, format: RejectWriter) {
        self.file = file
        self.format = format
    }

    /// How many bytes of a record must be kept for its line: one more than the limit, so that the writer sees
    /// that the record is longer and marks it truncated; none when the text is redacted.
    package var bytesToKeep: Int { format.redactRecord ? 0 : format.maximumRecordBytes + 1 }

    /// Adds a line. `record` is the record's start (at least `bytesToKeep` bytes of it when it is that long);
    /// `totalBytes` its full length.
    package mutating func add(input: String, location: RecordLocation, record: UnsafeRawBufferPointer, totalBytes: Int,
                      failure: RecordFailure) -> WriteResult {
        line.removeAll()
        format.write(record: record, totalBytes: totalBytes, at: location, failure: failure, into: &line)
        // `{"line":…` → `{"input":"NAME","line":…`: the writer's object always has members.
        buffer.writeRaw(UInt8(ascii: "{"))
        buffer.writeString("input")
        buffer.writeRaw(UInt8(ascii: ":"))
        buffer.writeString(input)
        buffer.writeRaw(UInt8(ascii: ","))
        line.bytes.withUnsafeBytes { buffer.writeRaw(UnsafeRawBufferPointer(rebasing: $0.dropFirst())) }
        buffer.writeRaw(0x0A)
        return buffer.bytes.count >= 1 << 16 ? flush() : .ok
    }

    package mutating func flush() -> WriteResult {
        guard !buffer.bytes.isEmpty else { return .ok }
        let result = buffer.bytes.withUnsafeBytes { file.writeAll($0) }
        buffer.removeAll(keepingCapacity: buffer.bytes.capacity <= 1 << 22)
        return result
    }
}
