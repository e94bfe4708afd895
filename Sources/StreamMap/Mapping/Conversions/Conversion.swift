/// How a date is written as text: one of the named formats or an LDML pattern with an explicit zone.
public enum DateSyntax: Sendable, Hashable, CustomStringConvertible {
    case named(NamedDateFormat)
    case pattern(DateFormat)

    public func parse(_ text: String) -> Timestamp? {
        switch self {
        case .named(let f): return f.parse(text)
        case .pattern(let f): return f.parse(text)
        }
    }

    /// Parses UTF-8 bytes, as `parse(_:)` parses their text.
    func parse(bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        switch self {
        case .named(let f): return f.parse(bytes: bytes)
        case .pattern(let f): return f.parse(bytes: bytes)
        }
    }

    public func format(_ t: Timestamp) -> String? {
        switch self {
        case .named(let f): return f.format(t)
        case .pattern(let f): return f.format(t)
        }
    }

    public var description: String {
        switch self {
        case .named(let f): return f.rawValue
        case .pattern(let f): return "pattern \(JSONWriter.string(.string(f.pattern)))"
        }
    }
}

/// Scalar conversions. All are locale-free; dates carry explicit time zones.
///
/// Dates in between conversions are *canonical date strings*: RFC 3339 in UTC with the fraction trimmed
/// (`2014-08-31T00:29:15Z`, `2014-08-31T00:29:15.25Z`). So `stringToDate` validates and normalises, `dateToString`
/// and `dateToNumber` format a canonical date, and `thread(stringToDate([.twitter]), dateToNumber(.milliseconds))`
/// turns Twitter's `created_at` into epoch milliseconds.
public enum Conversion: Sendable {
    /// A string in any of these formats (tried in order, silently) → canonical date string.
    case stringToDate([DateSyntax])
    /// A canonical date string (any ISO 8601 date-time) → text in this format.
    case dateToString(DateSyntax)
    /// A number of units since 1970-01-01T00:00:00Z → canonical date string (exact, no floating point).
    case numberToDate(EpochUnit)
    /// A canonical date string → the exact number of units since the epoch.
    case dateToNumber(EpochUnit)
    /// A decimal string (locale-free; `+`, surrounding spaces and 3-digit grouping commas allowed) → number.
    case stringToNumber
    /// A number → its exact text as a string.
    case numberToString
    /// Anything → a string: strings unchanged, numbers as their text, booleans as `true`/`false`, arrays and
    /// objects as compact JSON; null gives absent. Not reversible (Hydrant's `HYDMapToString`).
    case anyToString
    /// A string that is an absolute URL (its scheme in `schemes` when given) → the URL, percent-escaped.
    case stringToURL(schemes: [String]?)
    /// The reverse of `stringToURL`: checks the scheme again.
    case urlToString(schemes: [String]?)
    /// An 8-4-4-4-12 hex UUID in any case → lowercase canonical form.
    case stringToUUID
    /// A UUID → canonical text, uppercase when asked (Hydrant's `UUIDString` is uppercase).
    case uuidToString(uppercase: Bool)
    /// Base64 text in one alphabet → the same bytes in another (validates strictly).
    case base64(from: Base64Text.Alphabet, to: Base64Text.Alphabet)
    /// A number times a constant, exactly (any size and precision). Reversible when the constant's reciprocal is
    /// a terminating decimal (2 → 0.5, 1000 → 0.001; not 3).
    case multiply(JSONNumber)
    /// A number plus a constant, exactly. Reverse: minus the constant.
    case add(JSONNumber)
    /// Renames the keys of an object with a key style; `deep` also renames keys of nested objects (also inside
    /// arrays). Values that are not objects or arrays pass through unchanged.
    case keys(KeyStyle, deep: Bool)

    public var name: String {
        switch self {
        case .stringToDate: return "stringToDate"
        case .dateToString: return "dateToString"
        case .numberToDate: return "numberToDate"
        case .dateToNumber: return "dateToNumber"
        case .stringToNumber: return "stringToNumber"
        case .numberToString: return "numberToString"
        case .anyToString: return "toString"
        case .stringToURL: return "url"
        case .urlToString: return "urlToString"
        case .stringToUUID: return "uuid"
        case .uuidToString: return "uuidToString"
        case .base64: return "base64"
        case .multiply: return "multiply"
        case .add: return "add"
        case .keys: return "keys"
        }
    }

    /// `toString` (null → absent) and `keys` (null passes) take null; every other conversion requires a value.
    var acceptsNull: Bool {
        switch self {
        case .anyToString, .keys: return true
        default: return false
        }
    }

    /// The conversion that undoes this one.
    public func reversed() throws(NotReversibleError) -> Conversion {
        switch self {
        case .stringToDate(let formats):
            guard let first = formats.first else { throw NotReversibleError(mapper: name, reason: "no date format") }
            return .dateToString(first)
        case .dateToString(let f): return .stringToDate([f])
        case .numberToDate(let u): return .dateToNumber(u)
        case .dateToNumber(let u): return .numberToDate(u)
        case .stringToNumber: return .numberToString
        case .numberToString: return .stringToNumber
        case .anyToString:
            throw NotReversibleError(mapper: name, reason: "the original type is lost; use split(toString, ...)")
        case .stringToURL(let s): return .urlToString(schemes: s)
        case .urlToString(let s): return .stringToURL(schemes: s)
        case .stringToUUID: return .uuidToString(uppercase: false)
        case .uuidToString: return .stringToUUID
        case .base64(let from, let to): return .base64(from: to, to: from)
        case .multiply(let k):
            guard let inverse = DecimalArithmetic.reciprocal(k.text) else {
                throw NotReversibleError(mapper: "multiply(\(k.text))", reason: "1/\(k.text) is not a terminating decimal")
            }
            return .multiply(JSONNumber(unchecked: inverse))
        case .add(let k):
            return .add(JSONNumber(unchecked: DecimalArithmetic.negate(k.text) ?? k.text))
        case .keys(let style, let deep):
            guard let back = style.reversed else {
                throw NotReversibleError(mapper: "keys(\(style.rawValue))", reason: "the key style has no inverse")
            }
            return .keys(back, deep: deep)
        }
    }

    /// Applies the conversion to a present value (absent is handled by the caller).
    func apply(_ value: JSONValue) -> MapResult {
        switch self {
        case .stringToDate(let formats):
            guard case .string(let s) = value else { return .failure(.typeMismatch(expected: "string", found: value)) }
            for f in formats {
                if let t = f.parse(s), let canonical = t.rfc3339 { return .success(.string(canonical)) }
            }
            let names = formats.map(\.description).joined(separator: ", ")
            return .failure(.invalid("a date in \(formats.count == 1 ? "format" : "any of the formats") \(names)", value))
        case .dateToString(let format):
            return withCanonicalDate(value) { t in
                guard let text = format.format(t) else { return .failure(.invalid("a date \(format) can write", value)) }
                return .success(.string(text))
            }
        case .numberToDate(let unit):
            guard case .number(let n) = value else { return .failure(.typeMismatch(expected: "number", found: value)) }
            guard let t = Timestamp(epochNumber: n.text, unit: unit), let canonical = t.rfc3339 else {
                return .failure(.invalid("a time in \(unit.rawValue) since 1970 within years 0-9999", value))
            }
            return .success(.string(canonical))
        case .dateToNumber(let unit):
            return withCanonicalDate(value) { t in
                // Never rounds: a date that is no whole decimal number of the unit (1 s = 0.01666… min) fails.
                guard let text = t.exactEpochNumber(unit: unit) else {
                    return .failure(.invalid("an exact decimal number of \(unit.rawValue) since 1970", value))
                }
                return .success(.number(JSONNumber(unchecked: text)))
            }
        case .stringToNumber:
            guard case .string(let s) = value else { return .failure(.typeMismatch(expected: "string", found: value)) }
            guard let text = NumberText.parseLenient(s) else { return .failure(.invalid("a decimal number", value)) }
            return .success(.number(JSONNumber(unchecked: text)))
        case .numberToString:
            guard case .number(let n) = value else { return .failure(.typeMismatch(expected: "number", found: value)) }
            return .success(.string(n.text))
        case .anyToString:
            switch value {
            case .null: return .success(nil)
            case .string: return .success(value)
            case .number(let n): return .success(.string(n.text))
            case .bool(let b): return .success(.string(b ? "true" : "false"))
            case .array, .object: return .success(.string(JSONWriter.string(value)))
            }
        case .stringToURL(let schemes), .urlToString(let schemes):
            guard case .string(let s) = value else { return .failure(.typeMismatch(expected: "string", found: value)) }
            guard let (url, scheme) = URLText.parseAbsolute(s) else { return .failure(.invalid("an absolute URL", value)) }
            if let schemes, !schemes.contains(where: { $0.lowercased() == scheme }) {
                return .failure(.invalid("a URL with scheme \(schemes.joined(separator: " or "))", value))
            }
            return .success(.string(url))
        case .stringToUUID, .uuidToString:
            guard case .string(let s) = value else { return .failure(.typeMismatch(expected: "string", found: value)) }
            guard let canonical = UUIDText.canonical(s) else { return .failure(.invalid("a UUID", value)) }
            if case .uuidToString(uppercase: true) = self { return .success(.string(canonical.uppercased())) }
            return .success(.string(canonical))
        case .base64(let from, let to):
            guard case .string(let s) = value else { return .failure(.typeMismatch(expected: "string", found: value)) }
            guard let bytes = Base64Text.decode(s, alphabet: from) else {
                return .failure(.invalid("\(from.rawValue) base64", value))
            }
            return .success(.string(Base64Text.encode(bytes, alphabet: to)))
        case .multiply(let k), .add(let k):
            guard case .number(let n) = value else { return .failure(.typeMismatch(expected: "number", found: value)) }
            let result: String?
            if case .multiply = self { result = DecimalArithmetic.multiply(n.text, k.text) } else { result = DecimalArithmetic.add(n.text, k.text) }
            guard let result else { return .failure(.invalid("a number within exact arithmetic's range", value)) }
            return .success(.number(JSONNumber(unchecked: result)))
        case .keys(let style, let deep):
            return .success(KeyRenaming.rename(value, style: style, deep: deep))
        }
    }

    private func withCanonicalDate(_ value: JSONValue, _ body: (Timestamp) -> MapResult) -> MapResult {
        guard case .string(let s) = value else { return .failure(.typeMismatch(expected: "date string", found: value)) }
        guard let t = NamedDateFormat.iso8601.parse(s) else { return .failure(.invalid("an ISO 8601 date", value)) }
        return body(t)
    }
}

/// Renames object keys with a key style, iteratively (deep values cannot overflow the stack).
enum KeyRenaming {
    static func rename(_ value: JSONValue, style: KeyStyle, deep: Bool) -> JSONValue {
        guard deep else {
            guard case .object(let o) = value else { return value }
            var out = JSONObject()
            for (k, v) in o { out[style.apply(k)] = v }
            return .object(out)
        }
        // Post-order rebuild with an explicit stack.
        enum Frame {
            case array([JSONValue], done: [JSONValue])
            case object(JSONObject, next: Int, done: JSONObject)
        }
        var stack: [Frame] = []
        var result: JSONValue? = nil
        var pending: JSONValue? = value
        while true {
            if let v = pending {
                pending = nil
                switch v {
                case .array(let a): stack.append(.array(a, done: []))
                case .object(let o): stack.append(.object(o, next: 0, done: JSONObject()))
                default: result = v
                }
            }
            guard let top = stack.popLast() else { return result ?? value }
            switch top {
            case .array(let a, var done):
                if let r = result { done.append(r); result = nil }
                if done.count == a.count { result = .array(done) } else {
                    pending = a[done.count]
                    stack.append(.array(a, done: done))
                }
            case .object(let o, let next, var done):
                var next = next
                if let r = result { done[style.apply(o.entries[next - 1].key)] = r; result = nil }
                if next == o.count { result = .object(done) } else {
                    pending = o.entries[next].value
                    next += 1
                    stack.append(.object(o, next: next, done: done))
                }
            }
        }
    }
}
