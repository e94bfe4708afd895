/// One mapping error, reported as data with where it happened on both sides.
///
/// Codes (Hydrant's numbers in brackets): `required` — absent or null where a value is required [3];
/// `type` — the input has the wrong JSON type [2]; `value` — the input has the right type but cannot be
/// converted (a bad date, an enum miss) [1]; `read` — a source path cannot be read [5]; `write` — the result
/// cannot be written to its destination [6]; `custom` — raised by a user's closure.
public struct MapError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The kind of error, as the rejects file names it (see the list above).
    public enum Code: String, Sendable, CaseIterable {
        /// The mapping codes, in the order of the list above; the raw value is the name (`"required"`).
        case required, type, value, read, write, custom
        /// The record is not valid JSON (or not a record of the framing): reported by the engines and the
        /// pipeline, never by a mapper.
        case syntax
        /// The matching `HYDErrorCode` (a syntax error is Hydrant's generic failure, 100: no mapper raised it).
        public var hydrantCode: Int {
            switch self {
            case .syntax: return 100
            case .value, .custom: return 1
            case .type: return 2
            case .required: return 3
            case .read: return 5
            case .write: return 6
            }
        }
    }

    /// The kind of error.
    public var code: Code
    /// Whether it rejects the record (`false`: a warning, the record is still mapped).
    public var isFatal: Bool
    /// Where in the input record, as a JSON Pointer.
    public var sourcePath: JSONPath
    /// Where in the output record it would have been written.
    public var destinationPath: JSONPath
    /// What went wrong, without the path: `expected integer, found string "x"` (values shortened to 64 characters).
    public var message: String
    /// A warning that only says an absent value was stood in for: an `optional` (`nonFatal`) mapper met a value the
    /// record does not have and gave its fallback, so nothing the record holds was dropped or replaced. False for
    /// every other error and warning — a fallback for a value that is there (null included, or an object whose
    /// required member is missing), a key collision, an array element left out — which the command line counts as
    /// dropped values.
    public var standsInForAbsent: Bool

    /// Byte-wise, like every string comparison in StreamMap.
    public static func == (a: MapError, b: MapError) -> Bool {
        a.code == b.code && a.isFatal == b.isFatal && a.standsInForAbsent == b.standsInForAbsent && a.sourcePath == b.sourcePath
            && a.destinationPath == b.destinationPath && bytesEqual(a.message, b.message)
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(code)
        hasher.combine(isFatal)
        hasher.combine(standsInForAbsent)
        hasher.combine(sourcePath)
        hasher.combine(destinationPath)
        hasher.combine(ByteKey(message))
    }

    /// An error of `code` with `message`, fatal unless told, at the root of both records unless paths are given
    /// (containers prefix their children's paths as errors come up).
    public init(
        _ code: Code, _ message: String, isFatal: Bool = true, standsInForAbsent: Bool = false,
        sourcePath: JSONPath = .root, destinationPath: JSONPath = .root
    ) {
        self.code = code
        self.message = message
        self.isFatal = isFatal
        self.standsInForAbsent = standsInForAbsent
        self.sourcePath = sourcePath
        self.destinationPath = destinationPath
    }

    /// `/user/age: expected integer, found string "x"`; non-fatal errors are marked `warning:`. An error at the
    /// record's root has no path in front (its JSON Pointer is the empty string; `/` would point at a key `""`).
    public var description: String {
        let label = isFatal ? "" : "warning: "
        return sourcePath.isRoot ? label + message : "\(sourcePath.pointer): \(label)\(message)"
    }

    /// Whether the errors at `a` and `b` are one error: the same code and flags, and their paths and message in the
    /// same storage (or, for a short message, the same inline bytes) — read where they are, without a copy (which
    /// retains three references). A run's repeated error (the same field absent, record after record) is a copy
    /// of one error, so this finds it; false says nothing, as equal errors can hold equal text in different storage.
    /// Both must be alive (then the same storage cannot have been freed and reused in between).
    static func sameError(_ a: UnsafePointer<MapError>, _ b: UnsafePointer<MapError>) -> Bool {
        guard a.pointee.code == b.pointee.code, a.pointee.isFatal == b.pointee.isFatal,
              a.pointee.standsInForAbsent == b.pointee.standsInForAbsent else { return false }
        let x = UnsafeRawPointer(a), y = UnsafeRawPointer(b)
        func word(_ offset: Int) -> Bool {
            x.load(fromByteOffset: offset, as: UInt64.self) == y.load(fromByteOffset: offset, as: UInt64.self)
        }
        let o = offsets
        return word(o.source) && word(o.destination) && word(o.message) && word(o.message + 8)
    }

    /// Where `sameError` compares bits: the places of the paths (one word each: their arrays) and of the message
    /// (two words) in a `MapError`.
    private static let offsets: (source: Int, destination: Int, message: Int) = {
        precondition(MemoryLayout<JSONPath>.size == 8 && MemoryLayout<String>.size == 16, "paths of one word, strings of two")
        return (MemoryLayout<MapError>.offset(of: \.sourcePath)!, MemoryLayout<MapError>.offset(of: \.destinationPath)!,
                MemoryLayout<MapError>.offset(of: \.message)!)
    }()

    func prefixed(source: JSONPath, destination: JSONPath) -> MapError {
        var e = self
        e.sourcePath = sourcePath.prepending(source)
        e.destinationPath = destinationPath.prepending(destination)
        return e
    }

    var nonFatal: MapError {
        var e = self
        e.isFatal = false
        return e
    }

    /// A fatal error turned into a warning by a fallback for an absent value (see `standsInForAbsent`); a warning
    /// stays as it is.
    var standingInForAbsent: MapError {
        guard isFatal else { return self }
        var e = self
        e.isFatal = false
        e.standsInForAbsent = true
        return e
    }

    // Message helpers, shared by every mapper so that wording is uniform. A rejected record can have one per
    // field, so the two common ones are written into one buffer, with no intermediate strings.
    static func typeMismatch(expected: String, found value: JSONValue?) -> MapError {
        var w = JSONWriter()
        w.bytes.reserveCapacity(48 + expected.utf8.count)
        w.writeUTF8("expected ")
        w.writeUTF8(expected)
        w.writeUTF8(", found ")
        describe(value, into: &w)
        return MapError(.type, String(decoding: w.bytes, as: UTF8.self))
    }

    static func invalid(_ what: String, _ value: JSONValue?) -> MapError {
        var w = JSONWriter()
        w.bytes.reserveCapacity(48 + what.utf8.count)
        describe(value, into: &w)
        w.writeUTF8(" is not ")
        w.writeUTF8(what)
        return MapError(.value, String(decoding: w.bytes, as: UTF8.self))
    }

    /// `invalid`, with what the value is not written by `what` (no string made for it).
    static func invalid(_ value: JSONValue?, what: (inout JSONWriter) -> Void) -> MapError {
        var w = JSONWriter()
        w.bytes.reserveCapacity(80)
        describe(value, into: &w)
        w.writeUTF8(" is not ")
        what(&w)
        return MapError(.value, String(decoding: w.bytes, as: UTF8.self))
    }

    /// `string "x"`, `integer 12`, `object`, `absent`: short and safe for a terminal (values are truncated).
    static func describe(_ value: JSONValue?) -> String {
        var w = JSONWriter()
        describe(value, into: &w)
        return String(decoding: w.bytes, as: UTF8.self)
    }

    /// `describe`, written at the end of `w`.
    static func describe(_ value: JSONValue?, into w: inout JSONWriter) {
        guard let value else { return w.writeUTF8("absent") }
        switch value {
        case .null: w.writeUTF8("null")
        case .bool(let b): w.writeUTF8(b ? "boolean true" : "boolean false")
        case .number(let n):
            w.writeUTF8(value.type.description)
            w.writeRaw(UInt8(ascii: " "))
            w.writeUTF8(truncate(n.text))
        case .string(let s):
            w.writeUTF8("string ")
            let start = w.bytes.count
            w.appendString(s)
            // At most 64 characters. (At most 64 bytes are at most 64 characters: counting characters, which walks
            // grapheme clusters, is left for longer texts.)
            if w.bytes.count - start > 64 {
                let quoted = String(decoding: w.bytes[start...], as: UTF8.self)
                let cut = truncate(quoted)
                w.bytes.removeSubrange(start...)
                w.writeUTF8(cut)
            }
        case .array: w.writeUTF8("array")
        case .object: w.writeUTF8("object")
        }
    }

    /// A key or string as JSON text, shortened like `describe`'s strings: `"my_url"`.
    static func quoted(_ s: String) -> String { String(describe(.string(s)).dropFirst("string ".count)) }

    /// At most 64 characters.
    private static func truncate(_ s: String) -> String {
        s.utf8.count <= 64 || s.count <= 64 ? s : String(s.prefix(61)) + "..."
    }
}

/// The outcome of mapping one value: a value (nil = absent, the field is left out), with any non-fatal errors;
/// or a fatal failure (no value). Containers gather all their children's errors.
public struct MapResult: Sendable, Equatable {
    /// The mapped value; nil when absent (the field is left out) and always nil when fatal.
    public private(set) var value: JSONValue?
    /// Every error, fatal or not, in the order they were found.
    public private(set) var errors: [MapError]

    /// Fatal when any error is fatal; a fatal result never carries a value (Hydrant's rule).
    public var isFatal: Bool { errors.contains { $0.isFatal } }

    /// A value (nil: absent) with `warnings`, which are made non-fatal.
    public static func success(_ value: JSONValue?, warnings: [MapError] = []) -> MapResult {
        MapResult(value: value, errors: warnings.map(\.nonFatal))
    }

    /// A fatal failure: no value. `errors` must hold at least one fatal error (a precondition).
    public static func failure(_ errors: [MapError]) -> MapResult {
        precondition(!errors.isEmpty && errors.contains { $0.isFatal }, "a failure needs a fatal error")
        return MapResult(value: nil, errors: errors)
    }

    /// A fatal failure with one error, which must be fatal.
    public static func failure(_ error: MapError) -> MapResult { failure([error]) }

    /// The same outcome with every error's paths prefixed.
    func prefixed(source: JSONPath, destination: JSONPath) -> MapResult {
        guard !errors.isEmpty else { return self }
        var r = self
        r.errors = errors.map { $0.prefixed(source: source, destination: destination) }
        return r
    }

    /// Moves the value out (so that a deep value can be released without recursion).
    mutating func takeValue() -> JSONValue? {
        defer { value = nil }
        return value
    }

    /// Keeps the value, downgrading every error to non-fatal (used by `first` for alternatives that failed).
    var downgraded: [MapError] { errors.map(\.nonFatal) }
}

extension JSONWriter {
    /// A message's text, as it is (no JSON escaping): one copy of the string's bytes, read in place.
    mutating func writeUTF8(_ s: String) {
        var s = s
        s.withUTF8 { bytes.append(contentsOf: UnsafeRawBufferPointer($0)) }
    }
}
