/// One record cut out of an NDJSON stream, with where it came from.
public struct RecordLocation: Sendable, Equatable {
    /// 1-based line number (blank lines count).
    public var line: Int
    /// Byte offset of the record's first byte in the whole input.
    public var byteOffset: Int
}

/// Splits a byte stream into NDJSON records: a newline ends a record, a trailing CR is dropped, lines that are
/// empty or only spaces and tabs are skipped (but counted). A final record without a newline is delivered by
/// `finish`. Chunks may split records anywhere.
public struct NDJSONFramer: Sendable {
    private var pending: [UInt8] = []
    private var pendingStart = 0
    private var line = 1
    private var offset = 0

    public init() {}

    /// Feeds a chunk; `body` gets each complete record (bytes valid only during the call).
    public mutating func feed(_ chunk: UnsafeRawBufferPointer, _ body: (UnsafeRawBufferPointer, RecordLocation) -> Void) {
        var start = 0
        for i in 0..<chunk.count where chunk[i] == 0x0A {
            if pending.isEmpty {
                emit(UnsafeRawBufferPointer(rebasing: chunk[start..<i]), at: offset + start, body)
            } else {
                pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start..<i]))
                let bytes = pending
                bytes.withUnsafeBytes { emit($0, at: pendingStart, body) }
                pending.removeAll(keepingCapacity: true)
            }
            line += 1
            start = i + 1
        }
        if start < chunk.count {
            if pending.isEmpty { pendingStart = offset + start }
            pending.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunk[start...]))
        }
        offset += chunk.count
    }

    /// Delivers a final record that had no newline.
    public mutating func finish(_ body: (UnsafeRawBufferPointer, RecordLocation) -> Void) {
        guard !pending.isEmpty else { return }
        let bytes = pending
        pending.removeAll()
        bytes.withUnsafeBytes { emit($0, at: pendingStart, body) }
    }

    private func emit(_ raw: UnsafeRawBufferPointer, at start: Int, _ body: (UnsafeRawBufferPointer, RecordLocation) -> Void) {
        var end = raw.count
        if end > 0 && raw[end - 1] == 0x0D { end -= 1 }
        let record = UnsafeRawBufferPointer(rebasing: raw[..<end])
        guard record.contains(where: { $0 != 0x20 && $0 != 0x09 }) else { return }
        body(record, RecordLocation(line: line, byteOffset: start))
    }
}
