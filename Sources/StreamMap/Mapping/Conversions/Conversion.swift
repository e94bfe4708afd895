/// How a date is written as text: one of the named formats or an LDML pattern with an explicit zone.
public enum DateSyntax: Sendable, Hashable, CustomStringConvertible {
    /// A named format (`iso8601`, `twitter`…), as a spec names it.
    case named(NamedDateFormat)
    /// An LDML pattern with its fixed time zone offset.
    case pattern(DateFormat)

    /// The instant `text` names, or nil when it is not in this format (the whole text must match).
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

    /// `t` written in this format, or nil when it cannot be (a year outside 0...9999; for a named format, also a
    /// fraction it has no digits for: named formats never truncate).
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

/// Date formats spelled as spec files spell them: `.stringToDate(.iso8601)`, `.stringToDate(.twitter, .rfc822)`,
/// `.stringToDate("yyyy-MM-dd HH:mm")` (a string is a format's spec name, else an LDML pattern in UTC).
extension DateSyntax: ExpressibleByStringLiteral {
    /// ISO 8601 / RFC 3339 date-times with any fraction and a required zone (see ``NamedDateFormat/iso8601``).
    public static let iso8601 = DateSyntax.named(.iso8601)
    /// Hydrant's RFC 3339, no fraction: `2014-01-14T22:35:23+0000`.
    public static let rfc3339 = DateSyntax.named(.rfc3339)
    /// RFC 3339 with exactly 3 fraction digits: `2014-01-14T22:35:23.120+0000`.
    public static let rfc3339Milliseconds = DateSyntax.named(.rfc3339Milliseconds)
    /// RFC 822 / 5322: `Sun, 31 Aug 2014 00:29:15 +0000`.
    public static let rfc822 = DateSyntax.named(.rfc822)
    /// Twitter's `created_at`: `Sun Aug 31 00:29:15 +0000 2014`.
    public static let twitter = DateSyntax.named(.twitter)
    /// .NET JSON dates: `/Date(1409444955123)/`.
    public static let dotnet = DateSyntax.named(.dotnet)

    /// An LDML pattern in a fixed zone (`timeZoneOffsetSeconds` east of UTC), as `{"pattern": …}` with
    /// `"timeZone"` in a spec. Throws what the spec compiler reports for a bad pattern.
    public static func pattern(_ pattern: String, timeZoneOffsetSeconds: Int = 0) throws(DateFormatError) -> DateSyntax {
        .pattern(try DateFormat(pattern: pattern, timeZoneOffsetSeconds: timeZoneOffsetSeconds))
    }

    /// A named format by its spec name (`"iso8601"`), else an LDML pattern in UTC. The literal is the program's
    /// own text, so a pattern that is not valid stops the program with the pattern's error (as an invalid regex
    /// literal would); build patterns from data with `pattern(_:timeZoneOffsetSeconds:)`, which throws.
    public init(stringLiteral text: String) {
        if let named = NamedDateFormat(rawValue: text) {
            self = .named(named)
            return
        }
        do {
            self = .pattern(try DateFormat(pattern: text))
        } catch {
            preconditionFailure("date pattern \(JSONWriter.string(.string(text))): \(error.message)")
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
    /// arrays). Values that are not objects or arrays pass through unchanged. Two keys of one object that the
    /// style gives the same name collide: an error naming both (`collisions: .fail`, the default), or a warning
    /// with the later key's value kept at the earlier key's place (`.warn`).
    case keys(KeyStyle, deep: Bool, collisions: KeyCollisions = .fail)

    /// The conversion's name as `explain` and errors show it (`stringToDate`, `url`, `toString`…).
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
        case .keys(let style, let deep, let collisions):
            guard let back = style.reversed else {
                throw NotReversibleError(mapper: "keys(\(style.rawValue))", reason: "the key style has no inverse")
            }
            return .keys(back, deep: deep, collisions: collisions)
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
            if formats.contains(.iso8601), Self.hasFractionFinerThanNanoseconds(s) {
                return .failure(MapError(.value, MapError.describe(value) + " has a fraction of a second finer than a nanosecond (digits other than 0 after the 9th), which a date cannot keep exactly"))
            }
            return .failure(.invalid(value) { w in
                w.writeUTF8(formats.count == 1 ? "a date in format " : "a date in any of the formats ")
                for (i, syntax) in formats.enumerated() {
                    if i > 0 { w.writeUTF8(", ") }
                    switch syntax {
                    case .named(let name): w.writeUTF8(name.rawValue)  // (its description, without a string made)
                    case .pattern: w.writeUTF8(syntax.description)
                    }
                }
            })
        case .dateToString(let format):
            return withCanonicalDate(value) { t in
                guard let text = format.format(t) else { return .failure(.invalid("a date \(format) can write", value)) }
                return .success(.string(text))
            }
        case .numberToDate(let unit):
            guard case .number(let n) = value else { return .failure(.typeMismatch(expected: "number", found: value)) }
            if TimestampSupport.epochNumberIsFinerThanNanoseconds(n.text, unit: unit) {
                return .failure(MapError(.value, MapError.describe(value) + " has a part finer than a nanosecond (in \(unit.rawValue) since 1970), which a date cannot keep exactly"))
            }
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
        case .keys(let style, let deep, let collisions):
            return KeyRenaming(style: style, deep: deep, collisions: collisions).rename(value)
        }
    }

    /// An ISO 8601 date-time that only fails because its fraction has digits other than 0 after the 9th.
    private static func hasFractionFinerThanNanoseconds(_ text: String) -> Bool {
        TimestampSupport.withUTF8(text) { TimestampSupport.readISO($0, fraction: .any) == .finerThanNanoseconds }
    }

    private func withCanonicalDate(_ value: JSONValue, _ body: (Timestamp) -> MapResult) -> MapResult {
        guard case .string(let s) = value else { return .failure(.typeMismatch(expected: "date string", found: value)) }
        guard let t = NamedDateFormat.iso8601.parse(s) else { return .failure(.invalid("an ISO 8601 date", value)) }
        return body(t)
    }
}

/// What happens when a key style gives two keys of one object the same name (`{"my_url":1,"myURL":2}` in
/// `snake`): a value would be lost.
public enum KeyCollisions: String, Sendable, CaseIterable {
    /// A fatal error naming both keys (the default).
    case fail
    /// A warning naming both keys; the later key's value is kept at the earlier key's place.
    case warn
}

/// Renames object keys with a key style: one pass over the value, iterative (deep values cannot overflow the
/// stack), each container built once in place. Two keys of one object that get the same name are reported with
/// `collisionError`, in document order.
struct KeyRenaming {
    let style: KeyStyle
    let deep: Bool
    let collisions: KeyCollisions

    /// A container being rebuilt. The frame owns what it builds and is mutated in place on the stack
    /// (`stack[i].object[...] = …`): a container bound out of a frame that still held it would be copied on its
    /// first mutation, which made every append copy everything gathered so far (quadratic).
    private struct Frame {
        let source: JSONValue
        let count: Int
        var next = 0
        var array: [JSONValue] = []
        var object = JSONObject()
        /// Per entry of `object`, the input key that named it (for collision messages).
        var sourceKeys: [String] = []
        /// The member being mapped: its output and input keys, and whether the name is new in the object (nil in
        /// arrays, and for a member that collided under `fail`: it is not written).
        var pending: (name: String, key: String, isNew: Bool)?
        /// How the parent reached this container: its key (input and output) or index.
        let step: (source: PathComponent, destination: PathComponent)?

        init(_ source: JSONValue, step: (source: PathComponent, destination: PathComponent)?) {
            self.source = source
            self.step = step
            switch source {
            case .array(let a): count = a.count; array.reserveCapacity(a.count)
            case .object(let o): count = o.count; sourceKeys.reserveCapacity(o.count)
            default: count = 0
            }
        }

        var result: JSONValue { if case .array = source { return .array(array) } else { return .object(object) } }
    }

    func rename(_ value: JSONValue) -> MapResult {
        switch value {
        case .array where !deep: return .success(value)
        case .array, .object: break
        default: return .success(value)
        }
        var stack = [Frame(value, step: nil)]
        var errors: [MapError] = []
        var finished: JSONValue? = nil
        while !stack.isEmpty {
            let i = stack.count - 1
            if let child = finished {
                finished = nil
                place(child, in: &stack[i])
            }
            guard stack[i].next < stack[i].count else {
                finished = stack.removeLast().result
                continue
            }
            let n = stack[i].next
            stack[i].next += 1
            let child: JSONValue, step: (source: PathComponent, destination: PathComponent)
            switch stack[i].source {
            case .array(let a):
                child = a[n]
                step = (.index(n), .index(n))
            case .object(let o):
                let entry = o.entries[n]
                child = entry.value
                let name = style.apply(entry.key)
                step = (.key(entry.key), .key(name))
                if let p = stack[i].object.position(of: name) {
                    let error = Self.collisionError(stack[i].sourceKeys[p], entry.key, name: name, style: style)
                    errors.append(located(error, step: step, in: stack))
                    stack[i].pending = collisions == .warn ? (name, entry.key, false) : nil
                } else {
                    stack[i].pending = (name, entry.key, true)
                }
            default:
                preconditionFailure("frames hold containers only")
            }
            switch child {
            case .array, .object:
                if deep { stack.append(Frame(child, step: step)) } else { finished = child }
            default: finished = child
            }
        }
        guard let result = finished else { return .success(value) }
        switch collisions {
        case .fail where !errors.isEmpty: return .failure(errors)
        default: return .success(result, warnings: errors)
        }
    }

    /// Adds a finished member or element to its container.
    private func place(_ child: JSONValue, in frame: inout Frame) {
        if case .array = frame.source {
            frame.array.append(child)
        } else if let (name, key, isNew) = frame.pending {
            frame.pending = nil
            if isNew { frame.sourceKeys.append(key) }
            frame.object[name] = child
        }
    }

    /// The error with the paths of the member it is about: the containers' steps from the root, then `step`.
    private func located(_ error: MapError, step: (source: PathComponent, destination: PathComponent), in stack: [Frame]) -> MapError {
        var e = error
        var source: [PathComponent] = [], destination: [PathComponent] = []
        for frame in stack {
            guard let s = frame.step else { continue }
            source.append(s.source)
            destination.append(s.destination)
        }
        e.sourcePath = JSONPath(source + [step.source])
        e.destinationPath = JSONPath(destination + [step.destination])
        return e
    }

    /// `keys "my_url" and "myURL" both become "my_url" (key style foundation.snake)`.
    static func collisionError(_ first: String, _ second: String, name: String, style: KeyStyle) -> MapError {
        MapError(.write, "keys \(MapError.quoted(first)) and \(MapError.quoted(second)) both become \(MapError.quoted(name)) (key style \(style.rawValue))")
    }
}
