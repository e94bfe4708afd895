/// Receives yajl's parse events. Byte buffers are borrowed from the parser: copy what you keep.
/// Throwing from a callback stops the parse; the parser rethrows the error from `feed`/`finish`.
public protocol JSONEventHandler {
    /// A `null`.
    mutating func null() throws
    /// `true` or `false`.
    mutating func bool(_ value: Bool) throws
    /// The exact number lexeme (yajl's raw-number callback; never converted).
    mutating func number(_ text: UnsafeRawBufferPointer) throws
    /// The decoded string content as UTF-8 (escapes already resolved by yajl).
    mutating func string(_ utf8: UnsafeRawBufferPointer) throws
    /// `{`: an object begins; its members follow as a ``key(_:)`` then the value's events, each.
    mutating func startObject() throws
    /// An object member's key, decoded, as UTF-8 (escapes resolved by yajl).
    mutating func key(_ utf8: UnsafeRawBufferPointer) throws
    /// `}`: the innermost open object ends.
    mutating func endObject() throws
    /// `[`: an array begins; its elements' events follow in order.
    mutating func startArray() throws
    /// `]`: the innermost open array ends.
    mutating func endArray() throws

    /// A string whose bytes appear in the input exactly as given: it had no escapes, so it holds no `"`, `\\` or
    /// control character and can be written back between quotes without escaping. The parser calls this instead
    /// of `string(_:)`; by default it forwards there.
    mutating func string(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) throws
    /// A key, with `verbatim` as for `string(_:verbatim:)`. By default it forwards to `key(_:)`.
    mutating func key(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) throws
}

extension JSONEventHandler {
    public mutating func string(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) throws { try string(utf8) }
    public mutating func key(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) throws { try key(utf8) }
}

/// A JSON syntax error with the absolute byte offset at which yajl stopped.
public struct JSONSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// How many bytes of the input (counted from the first byte fed) came before the point where parsing stopped.
    public var byteOffset: Int
    /// What was wrong, on one line (yajl's reason, or `nesting deeper than 10000 levels`, `duplicate key "a"`…).
    public var message: String
    /// An error at `byteOffset` with `message`.
    public init(byteOffset: Int, message: String) {
        self.byteOffset = byteOffset
        self.message = message
    }
    public var description: String { "invalid JSON at byte \(byteOffset): \(message)" }
}

/// Limits applied while parsing hostile input.
public struct JSONParserOptions: Sendable {
    /// Deepest nesting of arrays and objects accepted (the record itself is depth 1). Documented in README.md.
    public var maximumDepth: Int
    /// Accept several top-level values in one stream (concatenated or newline-separated).
    public var allowMultipleValues: Bool
    /// The default ``maximumDepth``: 10 000 levels.
    public static let defaultMaximumDepth = 10_000

    /// Options with the given depth limit, accepting a single top-level value unless `allowMultipleValues`.
    public init(maximumDepth: Int = JSONParserOptions.defaultMaximumDepth, allowMultipleValues: Bool = false) {
        self.maximumDepth = maximumDepth
        self.allowMultipleValues = allowMultipleValues
    }
}
