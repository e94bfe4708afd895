

/// Receives records from `InputFraming`: NDJSON records in pieces (`RecordSegmentSink`), records of the other
/// framings whole.
protocol RecordHandler: RecordSegmentSink {
    /// A whole record; `framingError` is set for a record that is the rest of a malformed input (see
    /// `RecordFramer.finishReportingFramingErrors`), which must be rejected whatever its bytes are.
    mutating func wholeRecord(_ bytes: UnsafeRawBufferPointer, at location: RecordLocation, framingError: JSONSyntaxError?)
    /// `chunk` is about to be framed: pieces that lie in it stay valid until `chunkEnds`. (Other pieces — the start
    /// of a BOM that was not one, a CR held over from the chunk before — are valid for their call only.)
    mutating func chunkBegins(_ chunk: UnsafeRawBufferPointer)
    /// The bytes of the chunk fed last are about to be read over or released: pieces of an unfinished record
    /// that the handler only pointed at must be copied now.
    mutating func chunkEnds()
}

/// Cuts one input into records with the chosen framing.
///
/// - `ndjson` goes through `NDJSONSegmenter`, which hands each record on in pieces: a 200 MB line streams through
///   the engine in constant memory.
/// - `array`, `concat`, `seq` go through `RecordFramer`, whole records (memory: the largest record).
/// - `auto`: a `RecordFramer` detects the framing from the start of the input by its rules (deciding after
///   `RecordFramer.decisionLimit` bytes at the latest), then the input is framed from its first byte with the
///   framing found — NDJSON in pieces as above. What detection has seen is held meanwhile.
struct InputFraming {
    private var segmenter: NDJSONSegmenter?
    private var framer: RecordFramer?
    /// While `auto` decides: a detector fed with the input (its records are ignored) and a copy of the input.
    private var probe: RecordFramer?
    private var held: [UInt8] = []
    /// The framing in use, once known.
    private(set) var chosen: Framing?

    init(_ framing: Framing) {
        switch framing {
        case .auto: probe = RecordFramer(framing: .auto)
        case .ndjson: segmenter = NDJSONSegmenter()
        default: framer = RecordFramer(framing: framing)
        }
        if framing != .auto { chosen = framing }
    }

    /// NDJSON framing with `segmenter` (one that continues an input from a line start).
    init(continuing segmenter: NDJSONSegmenter) {
        self.segmenter = segmenter
        chosen = .ndjson
    }

    mutating func feed<Handler: RecordHandler>(_ chunk: UnsafeRawBufferPointer, into handler: inout Handler) {
        if probe != nil {
            held.append(contentsOf: chunk)
            probe!.feed(chunk) { _, _ in }
            if let decision = probe!.detected { start(decision, into: &handler) }
            return
        }
        if segmenter != nil {
            handler.chunkBegins(chunk)
            segmenter!.feed(chunk, into: &handler)
            handler.chunkEnds()
        } else {
            framer!.feed(chunk) { record, location in handler.wholeRecord(record, at: location, framingError: nil) }
        }
    }

    /// Ends the input: delivers the last record (one without its terminator).
    mutating func finish<Handler: RecordHandler>(into handler: inout Handler) {
        if probe != nil {
            probe!.finish { _, _ in }
            guard let decision = probe!.detected else {
                probe = nil  // empty, or only whitespace
                return
            }
            start(decision, into: &handler)
        }
        if segmenter != nil {
            segmenter!.finish(into: &handler)
        } else if framer != nil {
            framer!.finishReportingFramingErrors { record, location, error in
                handler.wholeRecord(record, at: location, framingError: error)
            }
        }
    }

    /// Switches from detection to `framing` and frames what detection held.
    private mutating func start<Handler: RecordHandler>(_ framing: Framing, into handler: inout Handler) {
        probe = nil
        chosen = framing
        if framing == .ndjson { segmenter = NDJSONSegmenter() } else { framer = RecordFramer(framing: framing) }
        let bytes = held
        held = []
        bytes.withUnsafeBytes { feed($0, into: &handler) }
    }
}
