#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A JSON value with its numbers kept as their exact source text.
///
/// - Numbers are never converted on the way through: `12345678901234567890123`, `1E+2`, `-0` and 40-digit
///   decimals are written back byte for byte. Only a transform that needs a number's value parses it.
/// - Absent and null are distinct: a missing key is `nil` (`JSONValue?`), a JSON `null` is `.null`.
/// - Strings and keys compare by their UTF-8 bytes (not by Unicode canonical equivalence, as `String.==` does),
///   so both engines agree with a byte-matching parser.
/// - Objects keep their keys in input order. A duplicate key keeps the position of its first occurrence and
///   the value of its last ("last wins"), as JavaScript's `JSON.parse` and Python's `json` do.
///
/// Equality, writing and freeing never recurse on the value's depth, so deeply nested values are safe.
public enum JSONValue: Sendable {
    /// JSON `null` (a present value; an absent one is `nil` in a `JSONValue?`).
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept as its exact source text.
    case number(JSONNumber)
    /// A string, decoded (escapes resolved).
    case string(String)
    /// An array, in order.
    case array([JSONValue])
    /// An object, its keys in input order.
    case object(JSONObject)

    /// The JSON type of the value, for type checks and error messages.
    public var type: JSONType {
        switch self {
        case .null: return .null
        case .bool: return .boolean
        case .number(let n): return n.isInteger ? .integer : .number
        case .string: return .string
        case .array: return .array
        case .object: return .object
        }
    }

    /// The string when this is `.string`, else nil (a number is not converted).
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The object when this is `.object`, else nil.
    public var objectValue: JSONObject? { if case .object(let o) = self { return o } else { return nil } }
    /// The elements when this is `.array`, else nil.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }
    /// Whether this is JSON `null` (an absent value is `nil`, not `.null`).
    public var isNull: Bool { if case .null = self { return true } else { return false } }

    /// The value of `key` when this is an object, else nil.
    public subscript(key: String) -> JSONValue? { objectValue?[key] }
}

/// JSON's value types. `integer` is a number written with no fraction and no exponent, of any size.
public enum JSONType: String, Sendable, CaseIterable, CustomStringConvertible {
    /// One case per type; `integer` and `number` are disjoint (a value is one or the other).
    case null, boolean, integer, number, string, array, object
    public var description: String { rawValue }
}

/// A JSON number kept as its exact source text (a valid RFC 8259 number lexeme).
public struct JSONNumber: Sendable, Hashable, CustomStringConvertible {
    /// The number's exact lexeme, as written in the input (`1E+2`, `-0`, `0.10` stay as they are).
    public let text: String

    /// Wraps a lexeme that is already known to be valid (the parser's raw-number callback, or a conversion).
    public init(unchecked text: String) { self.text = text }

    /// Validates `text` against RFC 8259's number grammar.
    public init?(_ text: String) {
        guard NumberText.isValid(text) else { return nil }
        self.text = text
    }

    /// The decimal text of `value` (an integer lexeme).
    public init(_ value: Int) { self.text = String(value) }

    /// No fraction and no exponent.
    public var isInteger: Bool {
        text.utf8.allSatisfy { $0 != UInt8(ascii: ".") && $0 != UInt8(ascii: "e") && $0 != UInt8(ascii: "E") }
    }

    /// `isInteger` for a lexeme still in the parser's buffer.
    static func isIntegerLexeme(_ text: UnsafeRawBufferPointer) -> Bool {
        !text.contains { $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "e") || $0 == UInt8(ascii: "E") }
    }

    public var description: String { text }
}

/// An ordered JSON object. Keys compare by UTF-8 bytes; duplicates keep the first position and the last value.
public struct JSONObject: Sendable, Sequence {
    /// A member: its key and its value.
    public typealias Element = (key: String, value: JSONValue)
    /// The members in input order, each key once.
    public private(set) var entries: [Element] = []
    /// Built only for larger objects, so that a million-key object stays linear to build.
    private var index: [ByteKey: Int]?
    private static let indexThreshold = 16

    /// An empty object.
    public init() {}

    /// An object of `pairs` in order; a repeated key keeps its first position and its last value.
    public init(_ pairs: [(String, JSONValue)]) {
        for (k, v) in pairs { self[k] = v }
    }

    /// The number of members (distinct keys).
    public var count: Int { entries.count }
    /// Whether the object has no members.
    public var isEmpty: Bool { entries.isEmpty }
    /// The keys in order.
    public var keys: [String] { entries.map(\.key) }
    public func makeIterator() -> IndexingIterator<[Element]> { entries.makeIterator() }

    /// The index in ``entries`` of `key` (matched by UTF-8 bytes), or nil when the object has no such key.
    public func position(of key: String) -> Int? {
        if let index { return index[ByteKey(key)] }
        for i in entries.indices where bytesEqual(entries[i].key, key) { return i }
        return nil
    }

    /// The value of `key`, or nil when absent (a member whose value is `null` gives `.null`).
    ///
    /// Setting a value replaces an existing member in place or appends a new one; setting nil removes the member.
    public subscript(key: String) -> JSONValue? {
        get { position(of: key).map { entries[$0].value } }
        set {
            if let i = position(of: key) {
                if let newValue { entries[i].value = newValue } else { remove(at: i) }
            } else if let newValue {
                entries.append((key, newValue))
                if index != nil {
                    index![ByteKey(key)] = entries.count - 1
                } else if entries.count > Self.indexThreshold {
                    buildIndex()
                }
            }
        }
    }

    private mutating func remove(at i: Int) {
        entries.remove(at: i)
        if index != nil { buildIndex() }
    }

    private mutating func buildIndex() {
        var built = [ByteKey: Int](minimumCapacity: entries.count * 2)
        for (i, e) in entries.enumerated() { built[ByteKey(e.key)] = i }
        index = built
    }
}

/// A string that hashes and compares by its UTF-8 bytes (keys, enum strings, error text).
struct ByteKey: Hashable, Sendable {
    let string: String
    init(_ string: String) { self.string = string }
    static func == (a: ByteKey, b: ByteKey) -> Bool { bytesEqual(a.string, b.string) }
    func hash(into hasher: inout Hasher) {
        var s = string
        s.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}

/// Byte-wise string equality (Swift's `==` on `String` uses canonical equivalence, which JSON does not).
@inline(__always)
func bytesEqual(_ a: String, _ b: String) -> Bool {
    let count = a.utf8.count
    guard count == b.utf8.count else { return false }
    // Native strings hold their UTF-8 contiguously: one memcmp, not a walk of two views.
    if let equal = a.utf8.withContiguousStorageIfAvailable({ x in
        b.utf8.withContiguousStorageIfAvailable { y in count == 0 || memcmp(x.baseAddress!, y.baseAddress!, count) == 0 }
    }), let equal {
        return equal
    }
    return a.utf8.elementsEqual(b.utf8)
}

extension JSONValue {
    /// Frees a value without recursion. Swift frees nested enums recursively, about 150 bytes of stack per level,
    /// so a value nested 10 000 deep needs ~2 MB of stack to be dropped normally. Pass deep values here (with
    /// `consume`) to free them in constant stack space: children are moved to an explicit stack before their
    /// parent goes. The engines do this for every deep record.
    public static func release(_ value: consuming JSONValue) {
        var pending: [JSONValue] = [value]
        while let v = pending.popLast() {
            switch v {
            case .array(let a): pending.append(contentsOf: a)
            case .object(let o): for e in o.entries { pending.append(e.value) }
            default: break
            }
        }
    }

    /// Records nested deeper than this are freed with `release(_:)`.
    static let iterativeReleaseDepth = 256
}

extension JSONValue: Equatable {
    /// Structural equality: strings and keys by UTF-8 bytes, numbers by their exact text (so `1` ≠ `1.0`; use
    /// `NumberText.numericallyEqual` for numeric comparison), objects by their entries in order. Iterative.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        var pending: [(JSONValue, JSONValue)] = [(lhs, rhs)]
        while let (a, b) = pending.popLast() {
            switch (a, b) {
            case (.null, .null): continue
            case (.bool(let x), .bool(let y)): if x != y { return false }
            case (.number(let x), .number(let y)): if x.text != y.text { return false }
            case (.string(let x), .string(let y)): if !bytesEqual(x, y) { return false }
            case (.array(let x), .array(let y)):
                guard x.count == y.count else { return false }
                for i in x.indices { pending.append((x[i], y[i])) }
            case (.object(let x), .object(let y)):
                guard x.count == y.count else { return false }
                for (ex, ey) in zip(x.entries, y.entries) {
                    guard bytesEqual(ex.key, ey.key) else { return false }
                    pending.append((ex.value, ey.value))
                }
            default: return false
            }
        }
        return true
    }
}

extension JSONObject: Equatable {
    public static func == (a: JSONObject, b: JSONObject) -> Bool { JSONValue.object(a) == JSONValue.object(b) }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByBooleanLiteral,
    ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .number(JSONNumber(value)) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, JSONValue)...) { self = .object(JSONObject(elements)) }
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: CustomStringConvertible {
    /// The canonical compact JSON text (see `JSONWriter`).
    public var description: String { JSONWriter.string(self) }
}
