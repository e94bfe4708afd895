// RecordExplosion.swift — one record to many: the spec's `explode` and `--explode PATH` (Miller's
// `nest --explode --across-records`, jq's `.items[] as $i | .items = $i`).

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One mapped record to many: the record is written once per element of the array at `path` in its **output**,
/// each copy with that element in the array's place and every other member as mapped.
///
/// - An array of n elements gives n records, in order.
/// - An empty array, null, or no member at `path` gives no record (`Empty.drop`, the default: the command line
///   counts such records and says so), or the record once with null in the array's place (`Empty.null`; an absent
///   member stays absent).
/// - Anything else (a string, a number, an object…) is a `type` error that rejects the record.
/// - A record whose exploded records would take more than `outputLimit` bytes together (1 GiB: each copy repeats
///   the other fields, so 10⁶ elements beside a 10 MB field would be 10 TB) is rejected with a `value` error instead
///   of being held in memory.
///
/// The unit of the record contract stays the input record: every output record carries its line and byte offset,
/// and a record with an error in any element is rejected whole (its mapping failed before it was exploded). The
/// path names output keys (destinations, split on the spec's delimiter), so the elements are already mapped.
///
/// Two implementations with one meaning: `explode(_:)` on a mapped value (the tree engine), and
/// `explodeWritten(…)` on the compact JSON the stream engine wrote; the differential tests compare them.
public struct RecordExplosion: Sendable, Equatable, CustomStringConvertible {
    /// What a record whose array is empty, null or absent gives.
    public enum Empty: String, Sendable, CaseIterable {
        /// No record (counted).
        case drop
        /// The record once, with null in the array's place (Spark's `explode_outer`).
        case null
    }

    /// The output keys from the record's root to the array, outermost first (at least one).
    public let path: [String]
    /// What a record without elements gives.
    public let empty: Empty
    /// Each key of `path` as the canonical writer writes it, quotes included (compared as bytes in written output).
    private let keyTokens: [[UInt8]]
    /// The most bytes the records of one exploded record may take together (newlines included).
    let outputLimit: Int

    /// 1 GiB: what the records one input record explodes into may take together.
    public static let defaultOutputLimit = 1 << 30

    /// Explodes the array at the output key path `path` (keys outermost first; at least one).
    public init(path: [String], empty: Empty = .drop) {
        self.init(path: path, empty: empty, outputLimit: Self.defaultOutputLimit)
    }

    /// With another output limit (the tests').
    init(path: [String], empty: Empty = .drop, outputLimit: Int) {
        precondition(!path.isEmpty, "an explode path names at least one key")
        self.path = path
        self.empty = empty
        self.outputLimit = outputLimit
        keyTokens = path.map { Array(JSONWriter.string(.string($0)).utf8) }
    }

    /// Explodes the array at `path`, a destination key path split on `delimiter` (`"order.items"`).
    public init(_ path: String, delimiter: String = ".", empty: Empty = .drop) {
        self.init(path: KeyPath(path, delimiter: delimiter).steps, empty: empty)
    }

    /// The same path (keys compared by their UTF-8 bytes, as everywhere in StreamMap) and the same policy.
    public static func == (a: RecordExplosion, b: RecordExplosion) -> Bool {
        a.empty == b.empty && a.outputLimit == b.outputLimit && a.path.count == b.path.count && zip(a.path, b.path).allSatisfy { bytesEqual($0, $1) }
    }

    /// The path as a JSON Pointer into the output record (`/order/items`).
    public var pointer: String { JSONPath(path.map { .key($0) }).pointer }

    /// `/order/items`, and `(empty: null)` when so.
    public var description: String { pointer + (empty == .null ? " (empty: null)" : "") }

    /// The error for a value at `path` that is not an array (nor null): a `type` error at the destination.
    func notAnArray(_ value: JSONValue) -> MapError {
        MapError(.type, "explode \(pointer): expected an array, found \(MapError.describe(value))",
                 destinationPath: JSONPath(path.map { .key($0) }))
    }

    /// The error for a record whose `count` exploded records, each repeating `rest` bytes, would take more than
    /// `outputLimit` bytes.
    func tooLarge(_ count: Int, rest: Int) -> MapError {
        MapError(.value, "explode \(pointer): \(count) records, each with the record's \(rest) other bytes, would take more than the \(outputLimit) bytes one record may give",
                 destinationPath: JSONPath(path.map { .key($0) }))
    }

    /// The size of `count` exploded records: each the record without its array (`rest` bytes) plus an element
    /// (`elements` bytes in all), with newlines between them — or nil past `outputLimit` (overflow included).
    func exploded(count: Int, rest: Int, elements: Int) -> Int? {
        let (copies, o1) = count.multipliedReportingOverflow(by: rest)
        let (total, o2) = copies.addingReportingOverflow(elements + count - 1)
        return o1 || o2 || total > outputLimit ? nil : total
    }

    // MARK: On a value (the tree engine)

    /// The records `record` (a mapped record) explodes into, in order — none, one or many — or the error that
    /// rejects it.
    public func explode(_ record: JSONValue) -> Result<[JSONValue], MapError> {
        var value = record
        for key in path {
            guard case .object(let o) = value, let member = o[key] else { return .success(empty == .drop ? [] : [record]) }
            value = member
        }
        switch value {
        case .array(let elements) where !elements.isEmpty:
            let rest = JSONWriter.bytes(record).count - JSONWriter.bytes(value).count
            let sizes = elements.reduce(0) { $0 + JSONWriter.bytes($1).count }
            guard exploded(count: elements.count, rest: rest, elements: sizes) != nil else {
                return .failure(tooLarge(elements.count, rest: rest))
            }
            return .success(elements.map { replacing(in: record, depth: 0, with: $0) })
        case .array, .null:
            return .success(empty == .drop ? [] : [replacing(in: record, depth: 0, with: .null)])
        default:
            return .failure(notAnArray(value))
        }
    }

    /// `value` with its member at `path[depth...]` (which exists) replaced by `element`.
    private func replacing(in value: JSONValue, depth: Int, with element: JSONValue) -> JSONValue {
        guard depth < path.count, case .object(var o) = value, let member = o[path[depth]] else { return element }
        o[path[depth]] = replacing(in: member, depth: depth + 1, with: element)
        return .object(o)
    }

    // MARK: On written output (the stream engine)

    /// Explodes the record that `writer` holds from `mark` on (compact canonical JSON, as the engines write it):
    /// the record is replaced by its exploded records, separated by newlines (none after the last). Returns how
    /// many there are, or the error that rejects the record (the writer then holds nothing from `mark` on).
    /// `scratch` is working memory kept between calls.
    public func explodeWritten(in writer: inout JSONWriter, from mark: Int, scratch: inout [UInt8]) -> Result<Int, MapError> {
        scratch.removeAll(keepingCapacity: scratch.capacity <= 1 << 22)
        scratch.append(contentsOf: writer.bytes[mark...])
        writer.bytes.removeSubrange(mark...)
        return scratch.withUnsafeBytes { record -> Result<Int, MapError> in
            guard let (start, end) = locate(in: record) else {
                if empty == .drop { return .success(0) }
                writer.writeRaw(record)
                return .success(1)
            }
            let before = UnsafeRawBufferPointer(rebasing: record[..<start])
            let after = UnsafeRawBufferPointer(rebasing: record[end...])
            switch record[start] {
            case UInt8(ascii: "["):
                // First the elements' bounds and sizes (nothing is written for a record over the limit).
                var count = 0, sizes = 0, at = start + 1
                while record[at] != UInt8(ascii: "]") {
                    let elementEnd = WrittenJSON.valueEnd(record, from: at)
                    count += 1
                    sizes += elementEnd - at
                    at = record[elementEnd] == UInt8(ascii: ",") ? elementEnd + 1 : elementEnd
                }
                if count > 0, exploded(count: count, rest: before.count + after.count, elements: sizes) == nil {
                    return .failure(tooLarge(count, rest: before.count + after.count))
                }
                var i = start + 1
                count = 0
                while record[i] != UInt8(ascii: "]") {
                    let elementEnd = WrittenJSON.valueEnd(record, from: i)
                    if count > 0 { writer.writeRaw(0x0A) }
                    writer.writeRaw(before)
                    writer.writeRaw(UnsafeRawBufferPointer(rebasing: record[i..<elementEnd]))
                    writer.writeRaw(after)
                    count += 1
                    i = record[elementEnd] == UInt8(ascii: ",") ? elementEnd + 1 : elementEnd
                }
                if count > 0 || empty == .drop { return .success(count) }
            case UInt8(ascii: "n"):
                if empty == .drop { return .success(0) }
            default:
                let value = (try? JSONParser.parse(Array(record[start..<end]))) ?? .null
                return .failure(notAnArray(value))
            }
            writer.writeRaw(before)
            writer.writeRaw(Array("null".utf8))
            writer.writeRaw(after)
            return .success(1)
        }
    }

    /// Where the value at `path` lies in `record` (written JSON), or nil when it has no such member.
    private func locate(in record: UnsafeRawBufferPointer) -> (Int, Int)? {
        var i = 0
        for depth in path.indices {
            guard i < record.count, record[i] == UInt8(ascii: "{") else { return nil }
            i += 1
            while true {
                guard record[i] == UInt8(ascii: "\"") else { return nil }  // `}`: no such member
                let keyEnd = WrittenJSON.stringEnd(record, from: i)
                let matches = keyTokens[depth].withUnsafeBytes { token in
                    token.count == keyEnd - i && memcmp(token.baseAddress!, record.baseAddress! + i, token.count) == 0
                }
                i = keyEnd + 1  // past the colon
                if matches {
                    if depth == path.count - 1 { return (i, WrittenJSON.valueEnd(record, from: i)) }
                    break
                }
                i = WrittenJSON.valueEnd(record, from: i)
                guard record[i] == UInt8(ascii: ",") else { return nil }
                i += 1
            }
        }
        return nil
    }
}

/// Steps through JSON that StreamMap wrote itself (compact, valid, canonical): trusted, so only the boundaries
/// of values are found, nothing is checked.
enum WrittenJSON {
    /// Where the string starting at `i` (its opening quote) ends: past its closing quote.
    static func stringEnd(_ b: UnsafeRawBufferPointer, from i: Int) -> Int {
        var j = i + 1
        while true {
            switch b[j] {
            case UInt8(ascii: "\""): return j + 1
            case UInt8(ascii: "\\"): j += 2
            default: j += 1
            }
        }
    }

    /// Where the value starting at `i` ends.
    static func valueEnd(_ b: UnsafeRawBufferPointer, from i: Int) -> Int {
        switch b[i] {
        case UInt8(ascii: "\""):
            return stringEnd(b, from: i)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0
            var j = i
            while true {
                switch b[j] {
                case UInt8(ascii: "\""):
                    j = stringEnd(b, from: j)
                    continue
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return j + 1 }
                default: break
                }
                j += 1
            }
        default:
            var j = i
            while j < b.count {
                switch b[j] {
                case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"): return j
                default: j += 1
                }
            }
            return j
        }
    }
}
