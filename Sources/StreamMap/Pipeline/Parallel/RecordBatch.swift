

/// A run of whole records from one input: cut by the reading thread, mapped on a worker thread, written by the
/// reading thread in sequence order (`--jobs`). One value travels the whole way, so its buffers are reused.
///
/// A record's bytes are not copied when they can be pointed at: a record that lies inside one chunk of the input
/// as read (`InputChunk`, nearly every record) is a range of that chunk, which the batch keeps alive. The rest —
/// records that go on across chunks, and pieces the framing hands on from buffers of its own — are copied into
/// `spill`.
struct RecordBatch: Sendable {
    /// One record of the batch.
    struct Record: Sendable {
        /// The index in `chunks` of the chunk holding the record's bytes; nil: they are in `spill`.
        var chunk: Int?
        /// Where the bytes are in that chunk, or in `spill`.
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

    /// Where the bytes of the record being cut are so far.
    private enum OpenRecord {
        /// `chunks[index][start..<end]`.
        case inChunk(index: Int, start: Int, end: Int)
        /// `spill[start...]` (nothing yet when `start == spill.count`).
        case spilled(start: Int)
    }

    /// Its place in the output order.
    var sequence = 0
    /// The input's name in messages.
    var input = ""
    /// The chunks the records point into.
    private(set) var chunks: [InputChunk] = []
    /// Bytes of records that are not in one chunk, back to back.
    private(set) var spill: [UInt8] = []
    private(set) var records: [Record] = []
    /// The records' bytes, all told.
    private(set) var byteCount = 0
    /// The record being cut, nil between records.
    private var open: OpenRecord?

    // Filled by `map(with:)`: one outcome per record, and the mapped records' bytes back to back (no newlines),
    // record `i` ending at `outputEnds[i]`.
    var outcomes: [RecordOutcome] = []
    var output: [UInt8] = []
    var outputEnds: [Int] = []
    /// What the output's `MappedRecordsPreparer` made of the mapped records (set by `prepare(with:)`; nil: it did
    /// not run).
    var prepared: Prepared?

    // A batch that is a range of a file (`FileRange`): the worker reads the range into `rangeChunk` and cuts its
    // lines into records (`readRange`) before mapping them; the reading thread takes what it found from `rangeEnd`.
    /// The range to read, nil for a batch cut by the reading thread.
    var range: FileRange?
    /// What reading the range found.
    var rangeEnd = FileRange.End()
    /// The buffer a range is read into, kept from range to range.
    var rangeChunk: InputChunk?

    var isEmpty: Bool { records.isEmpty }

    // MARK: Cutting (the reading thread)

    mutating func beginRecord() { open = .spilled(start: spill.count) }

    /// The next piece of the record being cut; `chunk` is the chunk being framed, if any (a piece inside it that
    /// follows the record's bytes so far is not copied).
    mutating func continueRecord(_ piece: UnsafeRawBufferPointer, in chunk: InputChunk?) {
        guard let open else { return }
        if let chunk, let offset = chunk.offset(of: piece) {
            switch open {
            case .spilled(let start) where start == spill.count:
                // The record's first piece.
                if chunks.last !== chunk { chunks.append(chunk) }
                self.open = .inChunk(index: chunks.count - 1, start: offset, end: offset + piece.count)
                return
            case .inChunk(let index, let start, let end) where chunks[index] === chunk && end == offset:
                self.open = .inChunk(index: index, start: start, end: end + piece.count)
                return
            default:
                break
            }
        }
        // Not where the record's bytes so far end: from here on the record is copied.
        if case .inChunk(let index, let start, let end) = open {
            self.open = .spilled(start: spill.count)
            spill.append(contentsOf: UnsafeRawBufferPointer(rebasing: chunks[index].bytes[start..<end]))
        }
        spill.append(contentsOf: piece)
    }

    mutating func endRecord(at location: RecordLocation, bytesIn: Int, framingError: JSONSyntaxError? = nil) {
        guard let open else { return }
        let record: Record
        switch open {
        case .inChunk(let index, let start, let end):
            record = Record(chunk: index, start: start, length: end - start, location: location, bytesIn: bytesIn,
                            framingError: framingError)
        case .spilled(let start):
            record = Record(chunk: nil, start: start, length: spill.count - start, location: location, bytesIn: bytesIn,
                            framingError: framingError)
        }
        records.append(record)
        byteCount += record.length
        self.open = nil
    }

    /// Takes the record being cut out of the batch (it is too long for one: it will stream on the reading thread).
    mutating func takeOpenRecord() -> [UInt8] {
        let taken: [UInt8]
        switch open {
        case .inChunk(let index, let start, let end)?: taken = Array(chunks[index].bytes[start..<end])
        case .spilled(let start)?: taken = Array(spill[start...])
        case nil: taken = []
        }
        dropOpenRecord()
        return taken
    }

    /// Forgets the record being cut (the input ended in the middle of it: a read error or a signal).
    mutating func dropOpenRecord() {
        if case .spilled(let start)? = open { spill.removeSubrange(start...) }
        open = nil
    }

    /// A whole record (the `array`, `concat` and `seq` framings).
    mutating func addRecord(_ record: UnsafeRawBufferPointer, in chunk: InputChunk?, at location: RecordLocation, bytesIn: Int,
                            framingError: JSONSyntaxError?) {
        beginRecord()
        continueRecord(record, in: chunk)
        endRecord(at: location, bytesIn: bytesIn, framingError: framingError)
    }

    /// Empties the batch for reuse: lets go of its chunks, keeps its buffers unless one huge batch grew them.
    mutating func reset() {
        let keep = 1 << 22
        chunks.removeAll(keepingCapacity: true)
        spill.removeAll(keepingCapacity: spill.capacity <= keep)
        records.removeAll(keepingCapacity: true)
        byteCount = 0
        outcomes.removeAll(keepingCapacity: true)
        output.removeAll(keepingCapacity: output.capacity <= keep)
        outputEnds.removeAll(keepingCapacity: true)
        prepared = nil
        open = nil
        input = ""
        range = nil
        rangeEnd = FileRange.End()
    }

    /// The bytes of `record`, given `spill`'s bytes.
    static func bytes(of record: Record, chunks: [InputChunk], spill: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        let range = record.start..<record.start + record.length
        guard let chunk = record.chunk else { return UnsafeRawBufferPointer(rebasing: spill[range]) }
        return UnsafeRawBufferPointer(rebasing: chunks[chunk].bytes[range])
    }

    // MARK: Mapping (a worker thread)

    /// The output's work on the mapped records, after `map(with:)`.
    mutating func prepare(with preparer: any MappedRecordsPreparer) {
        prepared = Prepared(value: output.withUnsafeBytes { preparer.prepare($0, ends: outputEnds) })
    }

    /// A preparer's result, boxed: the batch stays a plain value of buffers (an existential field made each hand-off
    /// of the batch copy its buffers: BatchReuseTests).
    final class Prepared: Sendable {
        let value: (any Sendable)?
        init(value: (any Sendable)?) { self.value = value }
    }

    /// Maps every record with `engine`, each whole, exactly as the one-thread pipeline maps a record: the engine's
    /// output of a mapped record, nothing for a rejected one.
    mutating func map<Engine: RecordEngine>(with engine: inout Engine) {
        var writer = JSONWriter()
        writer.bytes = output
        output = []
        // The buffer grows by doubling as the records are written, and keeps its size from batch to batch (sizing
        // it to each batch's input would allocate afresh for every batch a little longer than any before it).
        writer.bytes.removeAll(keepingCapacity: true)
        outcomes.removeAll(keepingCapacity: true)
        outcomes.reserveCapacity(records.count)
        outputEnds.removeAll(keepingCapacity: true)
        outputEnds.reserveCapacity(records.count)
        spill.withUnsafeBytes { spill in
            for record in records {
                let outcome: RecordOutcome
                if let framingError = record.framingError {
                    outcome = .rejected(.syntax(framingError))
                } else {
                    let mark = writer.bytes.count
                    outcome = engine.map(record: Self.bytes(of: record, chunks: chunks, spill: spill), into: &writer)
                    if case .rejected = outcome, writer.bytes.count > mark { writer.bytes.removeSubrange(mark...) }
                }
                outcomes.append(outcome)
                outputEnds.append(writer.bytes.count)
            }
        }
        output = writer.bytes
    }
}
