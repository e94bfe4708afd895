/// A lookup table between JSON values (Hydrant's `HYDMapEnum`). Strings match by bytes, numbers by numeric value
/// (`1` matches `1.0` and `1e0`), booleans and null by themselves. A miss is a fatal `value` error.
public struct EnumTable: Sendable {
    /// The entries in the order given; when two share a source, the first one wins.
    public private(set) var pairs: [(from: JSONValue, to: JSONValue)]
    private var lookup: [MatchKey: Int] = [:]

    /// A table of `pairs`. Arrays and objects as sources never match.
    public init(_ pairs: [(from: JSONValue, to: JSONValue)]) {
        self.pairs = pairs
        for (i, p) in pairs.enumerated() {
            guard let key = Self.matchKey(p.from) else { continue }
            if lookup[key] == nil { lookup[key] = i }
        }
    }

    /// The value `from` maps to, or nil.
    public func map(_ from: JSONValue) -> JSONValue? {
        guard let key = Self.matchKey(from), let i = lookup[key] else { return nil }
        return pairs[i].to
    }

    /// The table the other way round, or nil when two entries share a target or a source (not one-to-one).
    public var inverted: EnumTable? {
        let inverse = EnumTable(pairs.map { ($0.to, $0.from) })
        guard inverse.lookup.count == pairs.count, lookup.count == pairs.count else { return nil }
        return inverse
    }

    enum MatchKey: Hashable {
        case null
        case bool(Bool)
        case number(String)
        case string(ByteKey)
    }

    /// The key a value matches on; containers never match.
    static func matchKey(_ v: JSONValue) -> MatchKey? {
        switch v {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let n): return .number(NumberText.canonicalKey(n.text))
        case .string(let s): return .string(ByteKey(s))
        case .array, .object: return nil
        }
    }
}
