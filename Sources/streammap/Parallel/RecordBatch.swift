import StreamMap

/// A run of whole records from one input: cut by the reading thread, mapped on a worker thread, written by the
/// reading thread in sequence order (`--jobs`). One value travels the whole way, so its buffers are reused.
struct RecordBatch: Sendable {
    /// One record of the batch.
    struct Record: Sendable {
        /// Where its bytes are in `bytes`.
        var start: Int
        var length: Int
        /// Its line and byte offset in its input, as the framer reported them.
        var location: RecordLocation
        /// The run's `bytesIn` when the framer ended the record: what the one-thread pipeline has read when it maps
        /// this record, and so the count `--stats` reports when the run stops at it.
        var bytesIn: Int
        /// Set for the rest of a malformed input (`array`, `concat`, `seq`): rejected whatever its bytes are.
        var framingError: JSONSyntaxError?
    }

    /// Its place in the output order.
    var sequence = 0
    /// The input's name in messages.
    var input = ""
    /// The records' bytes, back to back.
    var bytes: [UInt8] = []
    var records: [Record] = []
    /// Where the record being cut starts in `bytes` (NDJSON records arrive in pieces), nil between records.
    private(set) var openRecordStart: Int?

    // Filled by `map(with:)`: one outcome per record, and the mapped records' bytes back to back (no newlines),
    // record `i` ending at `outputEnds[i]`.
    var outcomes: [RecordOutcome] = []
    var output: [UInt8] = []
    var outputEnds: [Int] = []

    var isEmpty: Bool { records.isEmpty }

    // MARK: Cutting (the reading thread)

    mutating func beginRecord() { openRecordStart = bytes.count }

    mutating func continueRecord(_ piece: UnsafeRawBufferPointer) { bytes.append(contentsOf: piece) }

    /// Bytes of the record being cut so far.
    var openRecordLength: Int { openRecordStart.map { bytes.count - $0 } ?? 0 }

    mutating func endRecord(at location: RecordLocation, bytesIn: Int) {
        guard let start = openRecordStart else { return }
        records.append(Record(start: start, length: bytes.count - start, location: location, bytesIn: bytesIn))
        openRecordStart = nil
    }

    /// Takes the record being cut out of the batch (it is too long for one: it will stream on the reading thread).
    mutating func takeOpenRecord() -> [UInt8] {
        guard let start = openRecordStart else { return [] }
        let taken = Array(bytes[start...])
        dropOpenRecord()
        return taken
    }

    /// Forgets the record being cut (the input ended in the middle of it: a read error or a signal).
    mutating func dropOpenRecord() {
        guard let start = openRecordStart else { return }
        bytes.removeSubrange(start...)
        openRecordStart = nil
    }

    /// A whole record (the `array`, `concat` and `seq` framings).
    mutating func addRecord(_ record: UnsafeRawBufferPointer, at location: RecordLocation, bytesIn: Int, framingError: JSONSyntaxError?) {
        records.append(Record(start: bytes.count, length: record.count, location: location, bytesIn: bytesIn, framingError: framingError))
        bytes.append(contentsOf: record)
    }

    /// Empties the batch for reuse, keeping its buffers unless one huge batch grew them.
    mutating func reset() {
        let keep = 1 << 22
        bytes.removeAll(keepingCapacity: bytes.capacity <= keep)
        records.removeAll(keepingCapacity: true)
        outcomes.removeAll(keepingCapacity: true)
        output.removeAll(keepingCapacity: output.capacity <= keep)
        outputEnds.removeAll(keepingCapacity: true)
        openRecordStart = nil
        input = ""
    }

    // MARK: Mapping (a worker thread)

    /// Maps every record with `engine`, each whole, exactly as the one-thread pipeline maps a record: the engine's
    /// output of a mapped record, nothing for a rejected one.
    mutating func map<Engine: RecordEngine>(with engine: inout Engine) {
        var writer = JSONWriter()
        writer.bytes = output
        output = []
        writer.bytes.removeAll(keepingCapacity: true)
        // Room for the input's size, taken as the input buffer's capacity (which grows by doubling): reserving
        // just `bytes.count` would allocate afresh for every batch a little longer than any before it.
        if writer.bytes.capacity < bytes.count { writer.bytes.reserveCapacity(bytes.capacity) }
        outcomes.removeAll(keepingCapacity: true)
        outcomes.reserveCapacity(records.count)
        outputEnds.removeAll(keepingCapacity: true)
        outputEnds.reserveCapacity(records.count)
        bytes.withUnsafeBytes { all in
            for record in records {
                let outcome: RecordOutcome
                if let framingError = record.framingError {
                    outcome = .rejected(.syntax(framingError))
                } else {
                    let mark = writer.bytes.count
                    outcome = engine.map(record: UnsafeRawBufferPointer(rebasing: all[record.start..<record.start + record.length]),
                                         into: &writer)
                    if case .rejected = outcome, writer.bytes.count > mark { writer.bytes.removeSubrange(mark...) }
                }
                outcomes.append(outcome)
                outputEnds.append(writer.bytes.count)
            }
        }
        output = writer.bytes
    }
}
