/// What happened to one record.
public enum RecordOutcome: Sendable, Equatable {
    /// Mapped; the output bytes were appended to the writer. Non-fatal errors (warnings) may be present. `records`:
    /// how many output records they are — one, or with an explode (`RecordExplosion`) any number, zero included,
    /// separated by newlines (none after the last).
    case mapped(warnings: [MapError], records: Int = 1)
    /// Not written. Either the record is not valid JSON, or mapping failed with a fatal error.
    case rejected(RecordFailure)
    /// Valid JSON that the engine's `RecordFilter` (the spec's `where`) drops: neither written nor rejected, and
    /// not mapped (so no errors).
    case filtered
}

/// Why a record was rejected.
public enum RecordFailure: Sendable, Equatable, CustomStringConvertible {
    /// The record is not valid JSON, nests deeper than the parser's limit, or is a framing error.
    case syntax(JSONSyntaxError)
    /// The mapper failed: every error it reported, at least one of them fatal.
    case mapping([MapError])
    /// The mapper produced no value at all (absent) for the record; the warnings say why.
    case noOutput(warnings: [MapError])

    /// Why the record was rejected: its fatal errors (a syntax error as one `syntax` error at the record's root;
    /// a mapper that produced nothing as one `required` error at the root).
    public var fatalErrors: [MapError] {
        var errors: [MapError] = []
        forEachError { if $0.isFatal { errors.append($0) } }
        return errors
    }

    /// The non-fatal errors found on the way, which alone would not have rejected the record.
    public var warnings: [MapError] {
        switch self {
        case .syntax: return []
        case .mapping(let errors): return errors.filter { !$0.isFatal }
        case .noOutput(let warnings): return warnings
        }
    }

    /// Every error, fatal and not, in the order the rejects file lists them.
    public var allErrors: [MapError] {
        var errors: [MapError] = []
        forEachError { errors.append($0) }
        return errors
    }

    /// Calls `body` with every error of `allErrors`, in the same order, without gathering them in an array: for a
    /// reporter that writes them as they come.
    public func forEachError(_ body: (MapError) throws -> Void) rethrows {
        if let lead = leadingError { try body(lead) }
        for e in listedErrors { try body(e) }
    }

    /// The error `allErrors` starts with when the failure is not a list of the mapper's: a syntax error as a `syntax`
    /// error at the root, a mapper that produced nothing as a `required` one; nil for `mapping`.
    package var leadingError: MapError? {
        switch self {
        case .syntax(let e): return MapError(.syntax, e.message)
        case .mapping: return nil
        case .noOutput: return MapError(.required, "the mapper produced no output for this record")
        }
    }

    /// The errors `allErrors` lists after `leadingError`: the mapper's errors, or the warnings of a mapper that
    /// produced nothing. A reporter that writes many reads them through `withUnsafeBufferPointer`, passing each
    /// error's place: an error passed by value (to a closure, or to a function that is not inlined, `borrowing` or
    /// not) is copied on its way, its paths and message retained and released.
    package var listedErrors: [MapError] {
        switch self {
        case .syntax: return []
        case .mapping(let errors): return errors
        case .noOutput(let warnings): return warnings
        }
    }

    /// `invalid JSON: lexical error: …` or the fatal errors, one `path: message` each, separated by `; `.
    public var description: String {
        if case .syntax(let e) = self { return "invalid JSON: \(e.message)" }
        return fatalErrors.map(\.description).joined(separator: "; ")
    }
}

/// Maps records and appends each one's compact output to a writer. The tree engine and the stream engine
/// implement the same contract with identical results.
///
/// A record comes either whole (`map(record:into:)`) or in pieces (`beginRecord`, `continueRecord` for each
/// piece, `endRecord`) so that a record larger than memory can stream through.
public protocol RecordEngine {
    /// Maps one whole record (exactly one JSON value, whitespace around it allowed) and appends its compact
    /// output to `writer`; a rejected record appends nothing.
    mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome
    /// Starts a record that will arrive in pieces.
    mutating func beginRecord()
    /// The next piece of the current record (any split, even inside a token).
    mutating func continueRecord(_ part: UnsafeRawBufferPointer)
    /// Ends the current record and maps it.
    mutating func endRecord(into writer: inout JSONWriter) -> RecordOutcome
}
