/// What happened to one record.
public enum RecordOutcome: Sendable, Equatable {
    /// Mapped; the output bytes were appended to the writer. Non-fatal errors (warnings) may be present.
    case mapped(warnings: [MapError])
    /// Not written. Either the record is not valid JSON, or mapping failed with a fatal error.
    case rejected(RecordFailure)
}

/// Why a record was rejected.
public enum RecordFailure: Sendable, Equatable {
    case syntax(JSONSyntaxError)
    case mapping([MapError])
    /// The mapper produced no value at all (absent) for the record; the warnings say why.
    case noOutput(warnings: [MapError])

    /// Every error, for reports (a syntax error is reported as a `syntax` code at the record's root).
    public var errors: [RecordErrorReport] {
        var reports: [RecordErrorReport] = []
        forEachError { reports.append(RecordErrorReport($0)) }
        return reports
    }

    /// Calls `body` with every error of `errors`, in the same order, before its paths are rendered as JSON
    /// Pointers: for a reporter that writes them itself and would only throw the reports away.
    public func forEachError(_ body: (RecordError) throws -> Void) rethrows {
        switch self {
        case .syntax(let e):
            try body(RecordError(code: "syntax", isFatal: true, source: .root, destination: .root, message: e.message))
        case .mapping(let errors):
            for e in errors { try body(RecordError(e)) }
        case .noOutput(let warnings):
            try body(RecordError(code: "required", isFatal: true, source: .root, destination: .root,
                                 message: "the mapper produced no output for this record"))
            for w in warnings { try body(RecordError(w)) }
        }
    }
}

/// One error of a rejected record as `RecordFailure.forEachError` hands it on: a `RecordErrorReport` whose paths
/// are still paths.
public struct RecordError: Sendable {
    /// A `MapError.Code`'s name, or `syntax` for a record that is not valid JSON.
    public var code: String
    public var isFatal: Bool
    public var source: JSONPath
    public var destination: JSONPath
    public var message: String

    public init(code: String, isFatal: Bool, source: JSONPath, destination: JSONPath, message: String) {
        self.code = code
        self.isFatal = isFatal
        self.source = source
        self.destination = destination
        self.message = message
    }

    public init(_ e: MapError) {
        self.init(code: e.code.rawValue, isFatal: e.isFatal, source: e.sourcePath, destination: e.destinationPath,
                  message: e.message)
    }
}

/// A flat, printable error: code, fatality, both paths as JSON Pointers, message.
public struct RecordErrorReport: Sendable, Equatable {
    public var code: String
    public var isFatal: Bool
    public var source: String
    public var destination: String
    public var message: String

    public init(code: String, isFatal: Bool, source: String, destination: String, message: String) {
        self.code = code
        self.isFatal = isFatal
        self.source = source
        self.destination = destination
        self.message = message
    }

    public static func == (a: RecordErrorReport, b: RecordErrorReport) -> Bool {
        a.code == b.code && a.isFatal == b.isFatal && bytesEqual(a.source, b.source)
            && bytesEqual(a.destination, b.destination) && bytesEqual(a.message, b.message)
    }

    public init(_ e: MapError) { self.init(RecordError(e)) }

    /// The error with its paths rendered as JSON Pointers.
    public init(_ e: RecordError) {
        self.init(code: e.code, isFatal: e.isFatal, source: e.source.pointer, destination: e.destination.pointer,
                  message: e.message)
    }
}

/// Maps records and appends each one's compact output to a writer. The tree engine and the stream engine
/// implement the same contract with identical results.
///
/// A record comes either whole (`map(record:into:)`) or in pieces (`beginRecord`, `continueRecord` for each
/// piece, `endRecord`) so that a record larger than memory can stream through.
public protocol RecordEngine {
    mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome
    /// Starts a record that will arrive in pieces.
    mutating func beginRecord()
    /// The next piece of the current record (any split, even inside a token).
    mutating func continueRecord(_ part: UnsafeRawBufferPointer)
    /// Ends the current record and maps it.
    mutating func endRecord(into writer: inout JSONWriter) -> RecordOutcome
}
