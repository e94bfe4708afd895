/// The functions an expression can call. Strings are sequences of Unicode scalars: lengths and offsets count
/// scalars, and searching compares scalars (so `"é"` written precomposed and decomposed are different strings,
/// as they are in JSON). `lower` and `upper` are Unicode's full case mappings, the same in every locale. Every
/// function takes time linear in its arguments and result.
enum ExpressionFunction: String, CaseIterable, Sendable {
    case coalesce, lower, upper, trim, trimStart, trimEnd, length, contains, startsWith, endsWith, replace,
         substring, split, join, string, number, matches, replaceMatches

    /// How many arguments the function takes.
    var arity: ClosedRange<Int> {
        switch self {
        case .coalesce: return 1...Int.max
        case .lower, .upper, .trim, .trimStart, .trimEnd, .length, .string, .number: return 1...1
        case .contains, .startsWith, .endsWith, .split, .join, .matches: return 2...2
        case .replace, .replaceMatches: return 3...3
        case .substring: return 2...3
        }
    }

    /// Results longer than this (in UTF-8 bytes) are an error: `replace` can otherwise make a result quadratic in
    /// the record.
    static let longestResult = 64 << 20

    struct ArgumentError: Error {
        var argument: Int
        var error: MapError
    }

    /// Applies the function to present, non-null arguments (`coalesce` never gets here: it is jumps).
    func apply(_ a: [JSONValue]) -> Result<JSONValue, ArgumentError> {
        func string(_ i: Int) -> Result<String, ArgumentError> {
            if case .string(let s) = a[i] { return .success(s) }
            return .failure(ArgumentError(argument: i, error: .typeMismatch(expected: "string", found: a[i])))
        }
        func count(_ i: Int, _ what: String) -> Result<Int, ArgumentError> {
            if case .number(let n) = a[i], n.isInteger, let v = Int(n.text), v >= 0 { return .success(v) }
            if case .number(let n) = a[i], n.isInteger, !n.text.hasPrefix("-") { return .success(Int.max) }
            return .failure(ArgumentError(argument: i, error: MapError(.value, "\(rawValue)(): expected \(what) (an integer, 0 or more), found \(MapError.describe(a[i]))")))
        }
        do {
            switch self {
            case .coalesce, .matches, .replaceMatches:
                return .success(a[0])  // (never called: coalesce is jumps, the patterns are compiled steps)
            case .lower:
                return .success(.string(try string(0).get().lowercased()))
            case .upper:
                return .success(.string(try string(0).get().uppercased()))
            case .trim, .trimStart, .trimEnd:
                let scalars = try string(0).get().unicodeScalars
                var start = scalars.startIndex, end = scalars.endIndex
                if self != .trimEnd { while start < end && scalars[start].properties.isWhitespace { start = scalars.index(after: start) } }
                if self != .trimStart {
                    while end > start && scalars[scalars.index(before: end)].properties.isWhitespace { end = scalars.index(before: end) }
                }
                return .success(.string(String(scalars[start..<end])))
            case .length:
                switch a[0] {
                case .string(let s): return .success(.number(JSONNumber(s.unicodeScalars.count)))
                case .array(let e): return .success(.number(JSONNumber(e.count)))
                case .object(let o): return .success(.number(JSONNumber(o.count)))
                default: return .failure(ArgumentError(argument: 0, error: .typeMismatch(expected: "string, array or object", found: a[0])))
                }
            case .contains, .startsWith, .endsWith:
                let s = Array(try string(0).get().utf8), t = Array(try string(1).get().utf8)
                switch self {
                case .contains: return .success(.bool(ByteSearch(t).first(in: s[...]) != nil))
                case .startsWith: return .success(.bool(s.starts(with: t)))
                default: return .success(.bool(s.count >= t.count && s[(s.count - t.count)...].elementsEqual(t)))
                }
            case .replace:
                let s = Array(try string(0).get().utf8), from = Array(try string(1).get().utf8), to = Array(try string(2).get().utf8)
                guard !from.isEmpty else { return .failure(ArgumentError(argument: 1, error: MapError(.value, "replace(): the text to replace is empty"))) }
                var out: [UInt8] = []
                out.reserveCapacity(s.count)
                var rest = s[...]
                let search = ByteSearch(from)
                while let at = search.first(in: rest) {
                    out += rest[..<at]
                    out += to
                    rest = rest[(at + from.count)...]
                    if out.count > Self.longestResult { return .failure(tooLong(0)) }
                }
                out += rest
                if out.count > Self.longestResult { return .failure(tooLong(0)) }
                return .success(.string(String(decoding: out, as: UTF8.self)))
            case .substring:
                let scalars = try string(0).get().unicodeScalars
                let start = try count(1, "the start").get()
                let length = a.count > 2 ? try count(2, "the length").get() : Int.max
                var from = scalars.startIndex
                var skipped = 0
                while skipped < start && from < scalars.endIndex {
                    from = scalars.index(after: from)
                    skipped += 1
                }
                var to = from
                var taken = 0
                while taken < length && to < scalars.endIndex {
                    to = scalars.index(after: to)
                    taken += 1
                }
                return .success(.string(String(scalars[from..<to])))
            case .split:
                let s = Array(try string(0).get().utf8), separator = Array(try string(1).get().utf8)
                guard !separator.isEmpty else { return .failure(ArgumentError(argument: 1, error: MapError(.value, "split(): the separator is empty"))) }
                var parts: [JSONValue] = []
                var rest = s[...]
                let search = ByteSearch(separator)
                while let at = search.first(in: rest) {
                    parts.append(.string(String(decoding: rest[..<at], as: UTF8.self)))
                    rest = rest[(at + separator.count)...]
                }
                parts.append(.string(String(decoding: rest, as: UTF8.self)))
                return .success(.array(parts))
            case .join:
                guard case .array(let elements) = a[0] else {
                    return .failure(ArgumentError(argument: 0, error: .typeMismatch(expected: "array", found: a[0])))
                }
                let separator = try string(1).get()
                var out = ""
                for (i, e) in elements.enumerated() {
                    if i > 0 { out += separator }
                    switch e {
                    case .string(let s): out += s
                    case .number(let n): out += n.text
                    case .bool(let b): out += b ? "true" : "false"
                    default:
                        return .failure(ArgumentError(argument: 0, error: MapError(.type, "join(): expected strings, numbers or booleans, found \(MapError.describe(e)) at index \(i)")))
                    }
                    if out.utf8.count > Self.longestResult { return .failure(tooLong(0)) }
                }
                return .success(.string(out))
            case .string:
                switch a[0] {
                case .string: return .success(a[0])
                case .number(let n): return .success(.string(n.text))
                case .bool(let b): return .success(.string(b ? "true" : "false"))
                default: return .success(.string(JSONWriter.string(a[0])))
                }
            case .number:
                switch a[0] {
                case .number: return .success(a[0])
                case .string(let s):
                    guard let n = JSONNumber(s) else { return .failure(ArgumentError(argument: 0, error: .invalid("a number", a[0]))) }
                    return .success(.number(n))
                default: return .failure(ArgumentError(argument: 0, error: .typeMismatch(expected: "number or string", found: a[0])))
                }
            }
        } catch {
            return .failure(error)
        }
    }

    private func tooLong(_ argument: Int) -> ArgumentError {
        ArgumentError(argument: argument, error: MapError(.value, "\(rawValue)(): the result would be longer than \(Self.longestResult >> 20) MiB"))
    }
}

/// Finds a byte string in others in linear time (Knuth–Morris–Pratt), whatever the two hold.
struct ByteSearch {
    let needle: [UInt8]
    private let fallback: [Int]

    init(_ needle: [UInt8]) {
        self.needle = needle
        var fallback = [Int](repeating: 0, count: needle.count)
        var k = 0
        for i in needle.indices.dropFirst() {
            while k > 0 && needle[i] != needle[k] { k = fallback[k - 1] }
            if needle[i] == needle[k] { k += 1 }
            fallback[i] = k
        }
        self.fallback = fallback
    }

    /// The index (in `haystack`'s indices) where the first occurrence starts, or nil.
    func first(in haystack: ArraySlice<UInt8>) -> Int? {
        guard !needle.isEmpty else { return haystack.startIndex }
        var matched = 0
        for i in haystack.indices {
            let byte = haystack[i]
            while matched > 0 && byte != needle[matched] { matched = fallback[matched - 1] }
            if byte == needle[matched] { matched += 1 }
            if matched == needle.count { return i + 1 - needle.count }
        }
        return nil
    }
}
