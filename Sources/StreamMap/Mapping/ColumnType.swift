/// The column type a field asks for in typed outputs (Arrow), where the JSON value alone cannot say it: an instant
/// (a date string) as a timestamp, a number as an exact decimal. Text outputs (NDJSON, CSV) write the value as the
/// mapping makes it and ignore the column type.
///
/// Spelled in specs (a field's `"column"`) and on the command line (`--column SRC=TYPE`) as `timestamp` (µs),
/// `timestamp(s)`, `timestamp(ms)`, `timestamp(us)`, `timestamp(ns)`, or `decimal(P,S)` with precision `P` in
/// 1…38 and scale `S` in 0…P.
public enum ColumnType: Sendable, Hashable, CustomStringConvertible {
    /// An instant since 1970-01-01T00:00:00Z in `unit`s, UTC: the field's values are date strings
    /// (`stringToDate`, `numberToDate`, or ISO 8601 text with a zone).
    case timestamp(TimeUnit)
    /// A decimal of at most `precision` digits, `scale` of them after the point: the field's values are numbers.
    case decimal(precision: Int, scale: Int)

    /// The unit of a timestamp.
    public enum TimeUnit: String, Sendable, CaseIterable {
        /// The spellings' units: `s`, `ms`, `us` (the default), `ns`.
        case seconds = "s", milliseconds = "ms", microseconds = "us", nanoseconds = "ns"

        /// Units in one second.
        public var perSecond: Int64 {
            switch self {
            case .seconds: return 1
            case .milliseconds: return 1_000
            case .microseconds: return 1_000_000
            case .nanoseconds: return 1_000_000_000
            }
        }
    }

    /// The spelling `init(spelling:)` reads: `timestamp(us)`, `decimal(18,2)`.
    public var description: String {
        switch self {
        case .timestamp(let unit): return "timestamp(\(unit.rawValue))"
        case .decimal(let p, let s): return "decimal(\(p),\(s))"
        }
    }

    /// The spellings, for help texts and did-you-mean hints.
    public static let spellings = ["timestamp", "timestamp(s)", "timestamp(ms)", "timestamp(us)", "timestamp(ns)", "decimal(P,S)"]

    /// Reads a spelling; a message saying what is wrong otherwise.
    public static func parse(_ text: String) -> Result<ColumnType, ColumnTypeError> {
        func trimmed(_ x: Substring) -> Substring {
            x.drop { $0 == " " }.reversed().drop { $0 == " " }.reversed().reduce(into: "") { $0.append($1) }[...]
        }
        let t = trimmed(text[...])
        if t == "timestamp" { return .success(.timestamp(.microseconds)) }
        if t.hasPrefix("timestamp(") && t.hasSuffix(")") {
            let unit = String(trimmed(t.dropFirst("timestamp(".count).dropLast()))
            guard let u = TimeUnit(rawValue: unit) else {
                return .failure(ColumnTypeError(message: "unknown timestamp unit \"\(unit)\" (one of s, ms, us, ns)"))
            }
            return .success(.timestamp(u))
        }
        if t.hasPrefix("decimal(") && t.hasSuffix(")") {
            let parts = t.dropFirst("decimal(".count).dropLast().split(separator: ",", omittingEmptySubsequences: false).map(trimmed)
            guard parts.count == 2, let p = Int(parts[0]), let s = Int(parts[1]) else {
                return .failure(ColumnTypeError(message: "expected decimal(PRECISION,SCALE), e.g. decimal(18,2)"))
            }
            guard (1...38).contains(p) else {
                return .failure(ColumnTypeError(message: "a decimal's precision is 1 to 38 digits (decimal128), not \(p)"))
            }
            guard (0...p).contains(s) else {
                return .failure(ColumnTypeError(message: "a decimal's scale is 0 to its precision (\(p)), not \(s)"))
            }
            return .success(.decimal(precision: p, scale: s))
        }
        return .failure(ColumnTypeError(message: "unknown column type \"\(text)\" (one of \(spellings.joined(separator: ", ")))"))
    }
}

/// Why a column type's spelling is not one.
public struct ColumnTypeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is wrong: `a decimal's precision is 1 to 38 digits (decimal128), not 40`.
    public var message: String
    public var description: String { message }
}
