// Generators shared by the differential tests (Tests/StreamMapTests/Differential/) and the fuzz target (Fuzz/):
// random mappers, built directly as `Mapper` values or written as spec-file JSON, each paired with the `Shape` of
// the records it expects; and random records (raw bytes) that fit the shape, then mutated — wrong types, missing
// and null fields, extra and duplicate keys, exotic numbers and strings, escapes, deep nesting, malformed text.
//
// Everything is driven by one deterministic PRNG (SplitMix64), so a case is replayed from its seed alone.
// This target uses StreamMap's public API only (no `@testable`), so it also builds in release and for the fuzzer.

import StreamMap

// MARK: - Deterministic randomness

/// SplitMix64 (Steele, Lea, Flood 2014): tiny, fast, and good enough to drive generators. No system randomness.
public struct SplitMix64: RandomNumberGenerator {
    private(set) var state: UInt64
    public init(seed: UInt64) { state = seed }

    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }

    /// A well-mixed seed for case `index` of a run started from `seed`.
    public static func derive(_ seed: UInt64, _ index: UInt64) -> UInt64 {
        var g = SplitMix64(seed: seed ^ (index &* 0xD1B5_4A32_D192_ED03))
        _ = g.next()
        return g.next()
    }
}

/// Random choices on top of SplitMix64. All helpers use only integer arithmetic, so a seed replays exactly.
public struct Rand {
    private var rng: SplitMix64
    public init(seed: UInt64) { rng = SplitMix64(seed: seed) }

    public mutating func next() -> UInt64 { rng.next() }
    public mutating func below(_ n: Int) -> Int {
        precondition(n > 0)
        return Int(rng.next() % UInt64(n))
    }
    public mutating func int(_ r: ClosedRange<Int>) -> Int { r.lowerBound + below(r.upperBound - r.lowerBound + 1) }
    public mutating func percent(_ p: Int) -> Bool { below(100) < p }
    public mutating func bool() -> Bool { rng.next() & 1 == 1 }
    public mutating func pick<T>(_ a: [T]) -> T { a[below(a.count)] }
    public mutating func weighted<T>(_ options: [(Int, T)]) -> T {
        let total = options.reduce(0) { $0 + $1.0 }
        var x = below(total)
        for (w, v) in options {
            if x < w { return v }
            x -= w
        }
        return options[options.count - 1].1
    }
    public mutating func shuffled<T>(_ a: [T]) -> [T] {
        var a = a
        if a.count > 1 {
            for i in stride(from: a.count - 1, to: 0, by: -1) { a.swapAt(i, below(i + 1)) }
        }
        return a
    }
    /// A fresh generator for an independent sub-stream (so adding a choice in one place does not shift others).
    public mutating func fork() -> Rand { Rand(seed: rng.next()) }
}

// MARK: - Helpers (StreamMap's rules, rebuilt on its public API)

/// Byte-wise string equality (Swift's `==` on `String` uses canonical equivalence, which JSON does not).
func bytesEqual(_ a: String, _ b: String) -> Bool {
    a.utf8.count == b.utf8.count && a.utf8.elementsEqual(b.utf8)
}

/// A key path step as an array index: a canonical unsigned decimal ("0", "12"; not "01", "-1", "+1"), as in
/// `KeyPath`.
func arrayIndex(_ step: String) -> Int? {
    let u = step.utf8
    guard let first = u.first, first >= 0x30, first <= 0x39, u.count <= 18 else { return nil }
    if first == 0x30 && u.count > 1 { return nil }
    guard u.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
    return Int(step)
}

/// The key an enum table matches a value on (`EnumTable`'s rule): strings by bytes, numbers by value, booleans
/// and null by themselves; containers never match.
enum EnumMatchKey: Hashable {
    case null
    case bool(Bool)
    case number(String)
    case string([UInt8])

    init?(_ v: JSONValue) {
        switch v {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let n): self = .number(NumberText.canonicalKey(n.text))
        case .string(let s): self = .string(Array(s.utf8))
        case .array, .object: return nil
        }
    }
}

// MARK: - Shapes: what a mapper expects

/// The records a mapper is meant for. Generators pair every mapper with its shape; the input generator samples
/// values that fit it, then mutates them.
public indirect enum Shape {
    /// Any JSON value.
    case any
    /// Any JSON value but null.
    case nonNull
    case null, bool, integer, number
    case string(StringKind)
    case oneOf([Shape])
    /// One of these values (enum tables); numbers may be written in any equal spelling (`1`, `1.0`, `10e-1`).
    case enumKeys([JSONValue])
    /// A number of time units since 1970.
    case epoch
    case array(Shape)
    /// An array of exactly these elements (many-to-one and one-to-many fields).
    case tuple([Shape])
    /// An object with values at these key paths (steps as in `KeyPath.steps`); `open`: extra keys are welcome.
    case object([ShapeEntry], open: Bool)

    public static func types(_ t: JSONTypeSet) -> Shape {
        var members: [Shape] = []
        if t.contains(JSONTypeSet.null) { members.append(.null) }
        if t.contains(JSONTypeSet.boolean) { members.append(.bool) }
        if t.contains(JSONTypeSet.number) { members.append(.number) } else if t.contains(JSONTypeSet.integer) { members.append(.integer) }
        if t.contains(JSONTypeSet.string) { members.append(.string(.text)) }
        if t.contains(JSONTypeSet.array) { members.append(.array(.any)) }
        if t.contains(JSONTypeSet.object) { members.append(.object([], open: true)) }
        return members.count == 1 ? members[0] : .oneOf(members)
    }
}

public struct ShapeEntry {
    public var steps: [String]
    public var shape: Shape
    public init(steps: [String], shape: Shape) {
        self.steps = steps
        self.shape = shape
    }
}

public enum StringKind {
    case text
    /// Keys in some case style, for key-style renaming.
    case keyLike
    /// A date in one of these syntaxes.
    case date([DateSyntax])
    /// A canonical or ISO 8601 date (the input of `dateToString` and `dateToNumber`).
    case isoDate
    case url
    case uuid
    case base64(Base64Text.Alphabet)
    /// Text for `stringToNumber`.
    case decimal
}

// MARK: - Catalogues shared by both mapper generators

public enum Catalog {
    /// Keys that fields read: plain, snake and camel, non-ASCII (precomposed and decomposed `é`), with characters
    /// that need escaping, digits (also array indexes), empty.
    public static let sourceKeys = [
        "id", "name", "first_name", "lastName", "age", "a", "b", "c", "data", "value", "x", "tags", "é", "e\u{301}",
        "with space", "quo\"te", "back\\slash", "tab\tkey", "0", "1", "URLString", "emoji😀", "", "κλειδί",
        "line\nbreak", "slash/key", "tilde~key", "created_at",
    ]
    /// Keys that hold nested objects, so that several fields share a subtree.
    public static let nestKeys = ["user", "data", "items", "profile", "meta"]
    /// Literal keys containing a delimiter.
    public static let dottedKeys = ["a.b", "user.name", "v1.2", "->arrow", "x/y", "::"]
    public static let destinationKeys = [
        "id", "name", "firstName", "lastName", "age", "out", "x", "y", "z", "é", "e\u{301}", "k\"q", "_1", "0",
        "a.b", "ünï", "sp ace",
    ]
    public static let destinationNests = ["nested", "meta", "out2"]
    /// Keys that pass-through and key styles get to work on (snake, camel, acronyms, digits, collisions).
    public static let extraKeys = [
        "extra_key", "another_one", "URLValue", "myURLProperty", "field_1", "_private", "__dunder__", "x_y_z",
        "Ünïcödé_kéy", "a_b", "aB", "snake_case_key", "camelCaseKey", "HTTPStatus", "x", "ALLCAPS", "é",
        // Keys that some key style gives the same name as a key above (collisions).
        "my_url_property", "firstName", "allcaps", "url_value", "A_B",
    ]
    public static let delimiters = [".", "->", "/", "::", "|"]

    public static let patterns: [String] = [
        "dd/MM/yyyy HH:mm", "yyyy-MM-dd", "EEE, d MMM yyyy HH:mm:ss Z", "yyyyMMdd'T'HHmmss.SSS",
        "h:mm a, MMMM d, yyyy", "yy-M-d H:m:s", "yyyy-MM-dd'T'HH:mm:ssXXX",
    ]
    public static let zones = [0, 3600, -18000, 19800, -34200]

    public static func zoneText(_ seconds: Int) -> String {
        let sign = seconds < 0 ? "-" : "+"
        let m = abs(seconds) / 60
        let h = m / 60, mm = m % 60
        return sign + (h < 10 ? "0" : "") + String(h) + ":" + (mm < 10 ? "0" : "") + String(mm)
    }

    public static func pattern(_ p: String, zone: Int) -> DateSyntax {
        .pattern(try! DateFormat(pattern: p, timeZoneOffsetSeconds: zone))
    }

    /// Enum table sources: strings (also equal-looking ones), numbers (`1` and `1.0` are the same key), booleans,
    /// null.
    public static let enumSources: [JSONValue] = [
        "a", "b", "A", "é", "e\u{301}", "", "push", "PushEvent", .number(JSONNumber(unchecked: "1")),
        .number(JSONNumber(unchecked: "2.5")), .number(JSONNumber(unchecked: "0")), .number(JSONNumber(unchecked: "100")),
        .number(JSONNumber(unchecked: "-3")), true, false, .null,
    ]
}

/// Deterministic closures for `block` and `postProcessed` mappers.
public enum Closures {
    /// Strings → uppercase; numbers fail (`custom`); anything else unchanged.
    public static let upper = Block(name: "upper") { v in
        switch v {
        case .string(let s)?: return .success(.string(s.uppercased()))
        case .number?: return .failure(MapError(.custom, "numbers are not allowed here"))
        default: return .success(v)
        }
    }
    /// Containers → their element count; absent stays absent; anything else unchanged with a warning.
    public static let count = Block(name: "count") { v in
        switch v {
        case .object(let o)?: return .success(.number(JSONNumber(o.count)))
        case .array(let a)?: return .success(.number(JSONNumber(a.count)))
        case nil: return .success(nil)
        default: return .success(v, warnings: [MapError(.custom, "not a container, kept as is")])
        }
    }
    /// x → [x]; absent stays absent.
    public static let wrap = Block(name: "wrap") { v in v.map { .success(.array([$0])) } ?? .success(nil) }
    public static let blocks = [upper, count, wrap]

    /// A fatal result becomes "recovered" with the errors as warnings.
    public static let recover = PostProcessor(name: "recover") { _, r in
        r.isFatal ? .success(.string("recovered"), warnings: r.errors) : r
    }
    /// An object result gets `_source`: the JSON type of the input.
    public static let tag = PostProcessor(name: "tag") { source, r in
        guard !r.isFatal, case .object(var o)? = r.value else { return r }
        o["_source"] = .string(source.map { $0.type.rawValue } ?? "absent")
        return .success(.object(o), warnings: r.errors)
    }
    /// A null result fails.
    public static let nullFails = PostProcessor(name: "nullFails") { _, r in
        if !r.isFatal, case .null? = r.value { return .failure(r.errors + [MapError(.custom, "the result is null")]) }
        return r
    }
    public static let postProcessors = [recover, tag, nullFails]

    public static let factory: @Sendable () -> JSONValue = { .string("made by factory") }
}

// MARK: - Text values: JSON trees that keep what a parser would lose

/// A JSON value as it will be written: duplicate keys survive, numbers are their exact text, and `raw` holds text
/// written verbatim (escape sequences a Swift string cannot hold, such as lone surrogates).
public indirect enum TV {
    case null
    case bool(Bool)
    case number(String)
    case string(String)
    case raw(String)
    case array([TV])
    case object([(key: String, value: TV)])

    public init(_ v: JSONValue) {
        switch v {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let n): self = .number(n.text)
        case .string(let s): self = .string(s)
        case .array(let a): self = .array(a.map(TV.init))
        case .object(let o): self = .object(o.entries.map { (key: $0.key, value: TV($0.value)) })
        }
    }

    public var isObject: Bool { if case .object = self { return true } else { return false } }
    public var isArray: Bool { if case .array = self { return true } else { return false } }

    /// Nodes in preorder.
    public var count: Int {
        switch self {
        case .array(let a): return 1 + a.reduce(0) { $0 + $1.count }
        case .object(let o): return 1 + o.reduce(0) { $0 + $1.value.count }
        default: return 1
        }
    }

    /// Preorder indexes of the nodes that satisfy `predicate`.
    public func indexes(where predicate: (TV) -> Bool) -> [Int] {
        var out: [Int] = []
        var i = 0
        func walk(_ t: TV) {
            if predicate(t) { out.append(i) }
            i += 1
            switch t {
            case .array(let a): a.forEach(walk)
            case .object(let o): o.forEach { walk($0.value) }
            default: break
            }
        }
        walk(self)
        return out
    }

    public func node(at index: Int) -> TV {
        var i = 0
        func find(_ t: TV) -> TV? {
            if i == index { return t }
            i += 1
            switch t {
            case .array(let a): for e in a { if let f = find(e) { return f } }
            case .object(let o): for e in o { if let f = find(e.value) { return f } }
            default: break
            }
            return nil
        }
        return find(self)!
    }

    public func replacing(at index: Int, with new: TV) -> TV {
        var i = 0
        func go(_ t: TV) -> TV {
            if i == index {
                i += t.count
                return new
            }
            i += 1
            switch t {
            case .array(let a): return .array(a.map(go))
            case .object(let o): return .object(o.map { (key: $0.key, value: go($0.value)) })
            default: return t
            }
        }
        return go(self)
    }
}

// MARK: - Records

/// Makes records (raw bytes) for a shape: values that fit, then mutations, exotic content and malformed text.
public struct InputGen {
    public var r: Rand
    public init(_ r: Rand) { self.r = r }

    /// `count` records: about a quarter fit exactly, most fit with 1–3 mutations, a few are random JSON or
    /// malformed.
    public mutating func records(for shape: Shape, count: Int) -> [[UInt8]] {
        (0..<count).map { _ in record(for: shape) }
    }

    public mutating func record(for shape: Shape) -> [UInt8] {
        let kind = r.weighted([(24, 0), (46, 1), (10, 2), (7, 3), (13, 4)])
        switch kind {
        case 0: return render(sample(shape))
        case 1:
            var t = sample(shape)
            for _ in 0..<r.int(1...3) { t = mutate(t) }
            return render(t)
        case 2:
            var t = sample(shape)
            for _ in 0..<r.int(1...4) { t = exotic(t) }
            return render(t)
        case 3: return render(anyValue(depth: 0))
        default: return malform(render(sample(shape)))
        }
    }

    /// Records derived from known values (e.g. the outputs of a forward mapping, fed to its reverse).
    public mutating func records(from values: [JSONValue]) -> [[UInt8]] {
        values.map { v in
            var t = TV(v)
            if r.percent(50) { for _ in 0..<r.int(1...2) { t = mutate(t) } }
            return render(t)
        }
    }

    // MARK: Values that fit

    public mutating func sample(_ shape: Shape, depth: Int = 0) -> TV {
        switch shape {
        case .any: return anyValue(depth: depth)
        case .nonNull:
            let v = anyValue(depth: depth)
            if case .null = v { return .string("not null") }
            return v
        case .null: return .null
        case .bool: return .bool(r.bool())
        case .integer: return .number(integerText())
        case .number: return .number(r.percent(40) ? integerText() : decimalText())
        case .string(let kind): return .string(string(kind))
        case .oneOf(let members): return sample(r.pick(members), depth: depth)
        case .enumKeys(let keys):
            let k = r.pick(keys)
            if case .number(let n) = k { return .number(r.pick(equalSpellings(n.text))) }
            return TV(k)
        case .epoch:
            return .number(r.pick([
                "0", "1409444955123", "-5000", "1409444955", "1409444955.5", "1.409444955123e12", "86400", "60",
                "253402300799", "99999999999999999999999", "-62135596800", "0.001", "1e3", "24",
            ]))
        case .array(let element):
            let n = r.weighted([(2, 0), (5, 1), (5, 2), (3, 3), (1, 6)])
            return .array((0..<n).map { _ in sample(element, depth: depth + 1) })
        case .tuple(let elements):
            return .array(elements.map { sample($0, depth: depth + 1) })
        case .object(let entries, let open):
            var node = TV.object([])
            for e in r.shuffled(entries) where !e.steps.isEmpty {
                _ = insert(sample(e.shape, depth: depth + 1), at: e.steps[...], into: &node)
            }
            if case .object(var members) = node {
                if open && r.percent(60) {
                    for _ in 0..<r.int(1...3) {
                        members.insert((key: r.pick(Catalog.extraKeys), value: anyValue(depth: depth + 1)),
                                       at: r.int(0...members.count))
                    }
                }
                if r.percent(25) { members = r.shuffled(members) }
                node = .object(members)
            }
            return node
        }
    }

    /// Puts `value` at `steps` inside `node`, creating objects (or arrays, for index steps) on the way. The first
    /// value written at a path stays; a path that runs into a scalar is skipped.
    public mutating func insert(_ value: TV, at steps: ArraySlice<String>, into node: inout TV) -> Bool {
        guard let head = steps.first else { return false }
        let rest = steps.dropFirst()
        switch node {
        case .object(var members):
            if let i = members.lastIndex(where: { bytesEqual($0.key, head) }) {
                guard !rest.isEmpty else { return false }
                var child = members[i].value
                let ok = insert(value, at: rest, into: &child)
                members[i].value = child
                node = .object(members)
                return ok
            }
            if rest.isEmpty {
                members.append((key: head, value: value))
                node = .object(members)
                return true
            }
            var child = newContainer(for: rest.first!)
            let ok = insert(value, at: rest, into: &child)
            members.append((key: head, value: child))
            node = .object(members)
            return ok
        case .array(var elements):
            guard let i = arrayIndex(head), i < 8 else { return false }
            while elements.count <= i { elements.append(scalar()) }
            if rest.isEmpty {
                elements[i] = value
            } else {
                var child = elements[i]
                if !child.isObject && !child.isArray { child = newContainer(for: rest.first!) }
                _ = insert(value, at: rest, into: &child)
                elements[i] = child
            }
            node = .array(elements)
            return true
        default:
            return false
        }
    }

    private mutating func newContainer(for step: String) -> TV {
        arrayIndex(step) != nil && r.percent(70) ? .array([]) : .object([])
    }

    public mutating func anyValue(depth: Int) -> TV {
        let container = depth < 3 ? 30 : 0
        switch r.weighted([(50, 0), (container, 1), (container, 2)]) {
        case 0: return scalar()
        case 1: return .array((0..<r.int(0...3)).map { _ in anyValue(depth: depth + 1) })
        default:
            return .object((0..<r.int(0...3)).map { _ in
                (key: r.pick(r.bool() ? Catalog.extraKeys : Catalog.sourceKeys), value: anyValue(depth: depth + 1))
            })
        }
    }

    public mutating func scalar() -> TV {
        switch r.below(6) {
        case 0: return .null
        case 1: return .bool(r.bool())
        case 2: return .number(integerText())
        case 3: return .number(decimalText())
        default: return .string(string(r.pick([.text, .text, .keyLike, .isoDate, .url, .decimal])))
        }
    }

    public mutating func integerText() -> String {
        r.pick(["0", "1", "2", "-1", "42", "100", "-3", "24", "1409444955", "9007199254740993", "123456789012345678901234567890"])
    }

    public mutating func decimalText() -> String {
        r.pick(["1.5", "-0.25", "2.50", "1E+2", "1e2", "3.14159", "-0.0", "1.0", "6.02e23", "1e-7", "2.5"])
    }

    /// Numbers equal to `text` in other spellings (enum tables match numbers by value).
    public func equalSpellings(_ text: String) -> [String] {
        var out = [text]
        if NumberText.isInteger(text) {
            out += [text + ".0", text + "e0", text + "E+0", text + ".000"]
            if text == "1" { out += ["10e-1", "0.1e1"] }
            if text == "0" { out += ["-0", "0e5", "-0.0"] }
        } else if text == "2.5" {
            out += ["2.50", "25e-1", "0.25E1"]
        }
        return out
    }

    public mutating func string(_ kind: StringKind) -> String {
        switch kind {
        case .text:
            return r.pick([
                "hello", "John", "Doe", "", "café", "cafe\u{301}", "😀", "a \"quoted\" word", "back\\slash", "line\nbreak",
                "tab\t", "ünïcödé", "x", "PushEvent", "push", "A", "a", "é", "e\u{301}", "null", "true", "42",
            ])
        case .keyLike:
            return r.pick(Catalog.extraKeys)
        case .date(let syntaxes):
            let syntax = r.pick(syntaxes)
            let t = timestamp()
            return syntax.format(t) ?? syntax.format(Timestamp(seconds: t.seconds)) ?? "2014-08-31T00:29:15Z"
        case .isoDate:
            let t = timestamp()
            switch r.below(4) {
            case 0: return Catalog.pattern("yyyy-MM-dd'T'HH:mm:ssXXX", zone: r.pick(Catalog.zones)).format(Timestamp(seconds: t.seconds)) ?? "2014-08-31T00:29:15Z"
            case 1: return r.pick(["2014-08-31T00:29:15.123456789Z", "2014-08-31 00:29:15+0200", "1970-01-01T00:00:00Z", "2014-08-31t00:29:15z", "2014-08-31T00:29:15.5+01"])
            default: return t.rfc3339 ?? "2014-08-31T00:29:15Z"
            }
        case .url:
            return r.pick([
                "http://example.com", "https://example.com/a/b?c=d#e", "HTTPS://Example.COM/ä ö", "ftp://files.example.org/x y",
                "mailto:someone@example.com", "urn:isbn:0451450523", "//no-scheme.example", "relative/path",
                "http://[::1]:8080/", "https://user:pw@host/%20?q=a b", "javascript:alert(1)", "http://exa mple.com",
                "https://例え.jp/パス", "http://example.com/%zz",
            ])
        case .uuid:
            let hex = Array("0123456789abcdefABCDEF")
            var s = ""
            for i in 0..<32 {
                if [8, 12, 16, 20].contains(i) { s.append("-") }
                s.append(r.pick(hex))
            }
            switch r.below(8) {
            case 0: return "{" + s + "}"
            case 1: return s.replacing("-", with: "")
            case 2: return String(s.dropLast())
            default: return s
            }
        case .base64(let alphabet):
            let bytes = (0..<r.int(0...10)).map { _ in UInt8(truncatingIfNeeded: r.next()) }
            var s = Base64Text.encode(bytes, alphabet: alphabet)
            if alphabet == .url && r.percent(40) { while s.hasSuffix("=") { s.removeLast() } }
            if r.percent(8) { s += "!" }
            return s
        case .decimal:
            return r.pick([
                "1,234.5", "  42 ", "+7", "-0.50", "12345678901234567890.123", "1e3", "1,23", "abc", "", "0x1F", ".5",
                "1,234,567", "-1,000.000", "0", "3.", "٣", "1 000",
            ])
        }
    }

    public mutating func timestamp() -> Timestamp {
        let seconds = Int64(r.int(0...3_000_000_000)) - (r.percent(10) ? 2_000_000_000 : 0)
        let nanos: Int32 = r.weighted([(6, 0), (2, 123_000_000), (1, 500_000_000), (1, 5)])
        return Timestamp(seconds: seconds, nanoseconds: nanos)
    }

    // MARK: Mutations

    /// One structural change somewhere in the value.
    public mutating func mutate(_ t: TV) -> TV {
        let objects = t.indexes(where: \.isObject)
        let anyIndex = r.below(t.count)
        switch r.below(12) {
        case 0:  // type swap
            let old = t.node(at: anyIndex)
            var new = anyValue(depth: 2)
            if case .object = old, case .object = new { new = .number("7") }
            return t.replacing(at: anyIndex, with: new)
        case 1:  // null
            return t.replacing(at: anyIndex, with: .null)
        case 2, 3:  // drop a member (a missing field)
            guard let i = objects.isEmpty ? nil : r.pick(objects), case .object(var m) = t.node(at: i), !m.isEmpty else {
                return t.replacing(at: anyIndex, with: .null)
            }
            m.remove(at: r.below(m.count))
            return t.replacing(at: i, with: .object(m))
        case 4:  // extra keys, also deep ones
            guard let i = objects.isEmpty ? nil : r.pick(objects), case .object(var m) = t.node(at: i) else {
                return .array([t])
            }
            for _ in 0..<r.int(1...3) {
                let value = r.percent(30) ? deep(anyValue(depth: 1), levels: r.int(2...12)) : anyValue(depth: 1)
                m.insert((key: r.pick(r.bool() ? Catalog.extraKeys : Catalog.sourceKeys), value: value), at: r.int(0...m.count))
            }
            return t.replacing(at: i, with: .object(m))
        case 5, 6:  // duplicate key: last wins, at the first key's position
            guard let i = objects.isEmpty ? nil : r.pick(objects), case .object(var m) = t.node(at: i), !m.isEmpty else {
                return t
            }
            let j = r.below(m.count)
            let other: TV = r.bool() ? anyValue(depth: 2) : mutate(m[j].value)
            if r.bool() {
                m.insert((key: m[j].key, value: other), at: r.int((j + 1)...m.count))
            } else {
                m.insert((key: m[j].key, value: other), at: r.int(0...j))
            }
            return t.replacing(at: i, with: .object(m))
        case 7:  // deep nesting
            return t.replacing(at: anyIndex, with: deep(t.node(at: anyIndex), levels: r.weighted([(5, r.int(2...20)), (1, r.int(100...300))])))
        case 8:  // wrap in an array
            return t.replacing(at: anyIndex, with: .array([t.node(at: anyIndex)]))
        case 9:  // shuffle members
            guard let i = objects.isEmpty ? nil : r.pick(objects), case .object(let m) = t.node(at: i) else { return t }
            return t.replacing(at: i, with: .object(r.shuffled(m)))
        case 10:  // empty container
            return t.replacing(at: anyIndex, with: r.bool() ? .array([]) : .object([]))
        case 11 where r.percent(50):  // a wide object (many keys) or a long string
            guard let i = objects.isEmpty ? nil : r.pick(objects), case .object(var m) = t.node(at: i), r.percent(70) else {
                let unit = r.pick(["x", "é", "😀", "\\", "\"", "\n", "ab"])
                return t.replacing(at: r.pick(t.indexes { !$0.isObject && !$0.isArray } + [0]), with: .string(String(repeating: unit, count: r.int(1000...40000))))
            }
            for k in 0..<r.int(16...48) { m.insert((key: "w\(k)_" + r.pick(Catalog.extraKeys), value: scalar()), at: r.int(0...m.count)) }
            return t.replacing(at: i, with: .object(m))
        default:
            return exotic(t)
        }
    }

    public mutating func deep(_ inner: TV, levels: Int) -> TV {
        var v = inner
        let objects = r.bool()
        for i in 0..<levels { v = objects || i % 3 == 1 ? .object([(key: "a", value: v)]) : .array([v]) }
        return v
    }

    /// Replaces a scalar with an exotic number or string.
    public mutating func exotic(_ t: TV) -> TV {
        let scalars = t.indexes { !$0.isObject && !$0.isArray }
        let i = scalars.isEmpty ? r.below(t.count) : r.pick(scalars)
        let new: TV
        switch r.below(3) {
        case 0:
            new = .number(r.pick([
                "123456789012345678901234567890", "-123456789012345678901234567890", "1E+2", "1e2", "-0", "-0.0",
                "1e-400", "1e400", "0.1e1", "-1.5E-3", "9007199254740993", "100000000000000000000000000000.000", "0",
                "1.0", "2.50", "1409444955123", "0e0", "12345678901234567890123456789012345678901234567890.5",
            ]))
        case 1:
            new = .string(r.pick([
                "", "café", "cafe\u{301}", "😀", "quote\"inside", "back\\slash", "line\nbreak", "tab\there", "\u{0}nul",
                "\u{1f}", "\u{7f}del", "\u{2028}\u{2029}", "/slashes/", "2014-08-31T00:29:15Z", "1,234.5", "first_name",
                String(repeating: "x", count: 59) + "e\u{301}\u{301}" + String(repeating: "y", count: 20),
                String(repeating: "é", count: 70), String(repeating: "👍🏽", count: 40), "\"", "\\",
            ]))
        default:
            new = .raw(r.pick([
                #""\ud83d\ude00""#, #""\uD83D\uDE00""#, #""\u00e9""#, #""\u00E9""#, #""\ud83d""#, #""\ude00""#,
                #""\u0000""#, #""\/""#, #""a\u0301""#, #""\ud83dx""#, #""\ud83d\u0041""#, #""\b\f\n\r\t""#,
                #""\u001f\u007f""#, #""caf\u00e9""#, #""\u2028""#,
            ]))
        }
        return t.replacing(at: i, with: new)
    }

    // MARK: Text

    /// Writes a value with per-record choices of escaping (`\u00e9`, surrogate pairs, `\/`) and whitespace.
    public mutating func render(_ t: TV) -> [UInt8] {
        var w = Writer(escapeRate: r.weighted([(5, 0), (3, 15), (1, 60)]), whitespace: r.weighted([(6, 0), (3, 1), (1, 2)]), r: r.fork())
        w.write(t)
        return w.out
    }

    public struct Writer {
        var escapeRate: Int
        var whitespace: Int
        var r: Rand
        var out: [UInt8] = []

        mutating func space() {
            guard whitespace > 0, r.percent(40) else { return }
            out += Array((whitespace == 1 ? r.pick([" ", "  "]) : r.pick([" ", "\t", "\n", "\r\n", " \n "])).utf8)
        }

        mutating func write(_ t: TV) {
            space()
            switch t {
            case .null: out += Array("null".utf8)
            case .bool(let b): out += Array((b ? "true" : "false").utf8)
            case .number(let n): out += Array(n.utf8)
            case .string(let s): string(s)
            case .raw(let s): out += Array(s.utf8)
            case .array(let a):
                out.append(UInt8(ascii: "["))
                for (i, e) in a.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    write(e)
                }
                space()
                out.append(UInt8(ascii: "]"))
            case .object(let o):
                out.append(UInt8(ascii: "{"))
                for (i, e) in o.enumerated() {
                    if i > 0 { out.append(UInt8(ascii: ",")) }
                    space()
                    string(e.key)
                    space()
                    out.append(UInt8(ascii: ":"))
                    write(e.value)
                }
                space()
                out.append(UInt8(ascii: "}"))
            }
            space()
        }

        mutating func hex4(_ v: UInt32) {
            let digits = Array((r.percent(70) ? "0123456789abcdef" : "0123456789ABCDEF").utf8)
            out += [UInt8(ascii: "\\"), UInt8(ascii: "u")]
            for shift in [12, 8, 4, 0] { out.append(digits[Int((v >> UInt32(shift)) & 0xF)]) }
        }

        mutating func string(_ s: String) {
            out.append(UInt8(ascii: "\""))
            for scalar in s.unicodeScalars {
                let v = scalar.value
                switch v {
                case 0x22: out += [UInt8(ascii: "\\"), UInt8(ascii: "\"")]
                case 0x5C: out += [UInt8(ascii: "\\"), UInt8(ascii: "\\")]
                case 0x08 where r.bool(): out += Array("\\b".utf8)
                case 0x0C where r.bool(): out += Array("\\f".utf8)
                case 0x0A where r.bool(): out += Array("\\n".utf8)
                case 0x0D where r.bool(): out += Array("\\r".utf8)
                case 0x09 where r.bool(): out += Array("\\t".utf8)
                case 0..<0x20: hex4(v)
                case 0x2F where escapeRate > 0 && r.percent(50): out += Array("\\/".utf8)
                default:
                    if escapeRate > 0 && r.percent(escapeRate) {
                        if v > 0xFFFF {
                            let u = v - 0x10000
                            hex4(0xD800 + (u >> 10))
                            hex4(0xDC00 + (u & 0x3FF))
                        } else {
                            hex4(v)
                        }
                    } else {
                        out += Array(String(scalar).utf8)
                    }
                }
            }
            out.append(UInt8(ascii: "\""))
        }
    }

    /// Breaks valid text: truncation, trailing garbage, bad literals and escapes, raw control characters and
    /// invalid UTF-8 inside strings, structural typos.
    public mutating func malform(_ bytes: [UInt8]) -> [UInt8] {
        let quotes = bytes.indices.filter { bytes[$0] == UInt8(ascii: "\"") }
        switch r.below(7) {
        case 0:
            return Array(bytes.prefix(bytes.isEmpty ? 0 : r.below(bytes.count)))
        case 1:
            return bytes + Array(r.pick(["x", "}", "]", ",", " 1", "{}", " null", "\u{0}", " ", "\"", "//c", "\u{FEFF}"]).utf8)
        case 2:
            return Array(r.pick([
                "tru", "nul", "True", "NaN", "-Infinity", "01", "1.", ".5", "-", "+1", "0x10", "[1,]", #"{"a":1,}"#,
                #"{"a" 1}"#, "{a:1}", "['a']", "[1 2]", #"{"a":}"#, "/* c */ {}", #""abc"#, "", "   ", #""\x""#,
                #""\u12""#, #""\u12G4""#, #"{"a":1}}"#, "[[[[", "1 2", "{\"a\":1}\n{\"b\":2}", "\u{FEFF}{}", "[1,,2]",
                #"{"a":1 "b":2}"#, "-01", "1e", "1e+", "[-]", "\"\u{1}\"",
            ]).utf8)
        case 3 where !quotes.isEmpty:  // raw control character inside a string
            var b = bytes
            let controls: [UInt8] = [0x00, 0x01, 0x0A, 0x09, 0x1F, 0x0D]
            b.insert(r.pick(controls), at: r.pick(quotes) + 1)
            return b
        case 4 where !quotes.isEmpty:  // invalid UTF-8 inside a string
            var b = bytes
            let bad: [[UInt8]] = [[0xFF], [0xC3], [0xC0, 0xAF], [0xED, 0xA0, 0x80], [0xF5, 0x80, 0x80, 0x80], [0x80], [0xE2, 0x82]]
            b.insert(contentsOf: r.pick(bad), at: r.pick(quotes) + 1)
            return b
        case 5 where !bytes.isEmpty:  // a random byte replaced
            var b = bytes
            b[r.below(b.count)] = r.pick(Array("{}[]:,\"\\x0-e ".utf8))
            return b
        default:  // a structural byte dropped
            let structural = bytes.indices.filter { "{}[]:,".utf8.contains(bytes[$0]) }
            guard !structural.isEmpty else { return bytes + [UInt8(ascii: "}")] }
            var b = bytes
            b.remove(at: r.pick(structural))
            return b
        }
    }
}

// MARK: - Mappers as values

/// Random `Mapper` values built with the Swift API and raw `Mapper.Kind`s, each with the shape of its input.
public struct MapperGen {
    public var r: Rand
    public init(_ r: Rand) { self.r = r }

    public enum K { case identity, notNull, nonFatal, policy, check, object, arrayOf, first, thread, split, forward, backward, enumTable, convert, block, post }

    /// A mapper for a whole record: usually an object mapping.
    public mutating func record() -> (Mapper, Shape) {
        guard r.percent(72) else { return mapper(depth: r.int(1...3)) }
        return r.percent(12) ? renamedKeepMapper() : objectMapper(depth: r.int(1...3))
    }

    /// `unmapped: keep` with plain renames of top-level keys — what the stream engine copies verbatim and
    /// rearranges (`RenamedCopy`): one-step sources and destinations; identity, `required`, or identity under
    /// random `missing`/`null` policies. Destinations come from a pool that shares names with the records' extra
    /// keys (a kept key with a destination's name is dropped with a warning), and records are open.
    public mutating func renamedKeepMapper() -> (Mapper, Shape) {
        var fields: [ObjectMapping.Field] = []
        var entries: [ShapeEntry] = []
        var sources: [String] = [], destinations: [String] = []
        for _ in 0..<r.int(1...4) {
            let source = r.pick(Catalog.sourceKeys)
            let destination = r.percent(20) ? r.pick(Catalog.extraKeys) : r.pick(Catalog.destinationKeys)
            guard !sources.contains(source), !destinations.contains(destination) else { continue }
            sources.append(source)
            destinations.append(destination)
            func action(_ r: inout Rand) -> FieldPolicy.Action {
                r.pick([.omit, .keepNull, .passToMapper, .fail, .useDefault(r.pick([0, "d", .null]))])
            }
            let (mapper, shape): (Mapper, Shape) = switch r.below(3) {
            case 0: (.identity, .any)
            case 1: (.required, .nonNull)
            default: (.policy(.identity, missing: action(&r), null: action(&r)), .any)
            }
            entries.append(ShapeEntry(steps: [source], shape: shape))
            fields.append(Field(sources: [.literal(source)], destinations: [.literal(destination)], mapper: mapper))
        }
        return (.object(ObjectMapping(fields: fields, unmapped: .keep)), .object(entries, open: true))
    }

    public mutating func mapper(depth: Int) -> (Mapper, Shape) {
        let inner = depth > 0 ? 1 : 0
        let k: K = r.weighted([
            (4, .identity), (5 * inner, .notNull), (10 * inner, .nonFatal), (8 * inner, .policy), (8, .check),
            (14 * inner, .object), (7 * inner, .arrayOf), (5 * inner, .first), (7 * inner, .thread), (3 * inner, .split),
            (5 * inner, .forward), (4 * inner, .backward), (5, .enumTable), (14, .convert), (3, .block), (3 * inner, .post),
        ])
        switch k {
        case .identity:
            return (.identity, .any)
        case .notNull:
            if r.percent(30) { return (.required, .nonNull) }
            let (m, s) = mapper(depth: depth - 1)
            return (r.bool() ? Mapper.notNull(m) : Mapper(.notNull(m)), s)
        case .nonFatal:
            let (m, s) = mapper(depth: depth - 1)
            let d: JSONValue? = r.percent(50) ? jsonValue(depth: 1) : nil
            switch r.below(6) {
            case 0: return (.optionally(m), s)
            case 1: return (.optionally(m, default: d, reverseDefault: r.bool() ? Optional(jsonValue(depth: 0)) : nil), s)
            case 2: return (.optionally(m, defaultFactory: Closures.factory), s)
            case 3: return (.nonFatally(m, default: d), s)
            case 4: return (Mapper(.nonFatal(m, fallback: .factory(Closures.factory), reverseFallback: nil)), s)
            default: return (Mapper(.nonFatal(m, fallback: d.map(Fallback.value), reverseFallback: nil)), s)
            }
        case .policy:
            let (m, s) = mapper(depth: depth - 1)
            return (.policy(m, missing: action(), null: action(), invalid: action()), s)
        case .check:
            let t = typeSet()
            return (.check(t), .types(t))
        case .object:
            return objectMapper(depth: depth - 1)
        case .arrayOf:
            let (m, s) = mapper(depth: depth - 1)
            return (.arrayOf(m), .array(s))
        case .first:
            let alternatives = (0..<r.int(1...3)).map { _ in mapper(depth: depth - 1) }
            return (Mapper(.first(alternatives.map(\.0))), .oneOf(alternatives.map(\.1)))
        case .thread:
            return thread(depth: depth)
        case .split:
            let (f, s) = mapper(depth: depth - 1)
            let (b, _) = mapper(depth: depth - 1)
            return (.split(f, reverse: b), s)
        case .forward:
            let steps = sourceSteps()
            let (m, s) = mapper(depth: depth - 1)
            return (Mapper(.forward(keyPath(steps), m)), .object([ShapeEntry(steps: steps, shape: s)], open: r.bool()))
        case .backward:
            let steps = destinationSteps()
            let (m, s) = mapper(depth: depth - 1)
            return (Mapper(.backward(keyPath(steps), m)), s)
        case .enumTable:
            return enumTable()
        case .convert:
            return conversion()
        case .block:
            let b = r.pick(Closures.blocks)
            return (r.bool() ? Mapper(.block(b)) : Mapper.block(b.name, b.forward), .any)
        case .post:
            let (m, s) = mapper(depth: depth - 1)
            let p = r.pick(Closures.postProcessors)
            return (r.bool() ? Mapper(.postProcess(m, p)) : m.postProcessed(p.name, p.forward), s)
        }
    }

    public mutating func action() -> FieldPolicy.Action {
        switch r.below(5) {
        case 0: return .fail
        case 1: return .omit
        case 2: return .useDefault(jsonValue(depth: 1))
        case 3: return .keepNull
        default: return .passToMapper
        }
    }

    public mutating func typeSet() -> JSONTypeSet {
        let singles: [JSONTypeSet] = [.string, .integer, .number, .boolean, JSONTypeSet.null, .object, .array]
        let unions: [JSONTypeSet] = [
            [.string, JSONTypeSet.null], [.integer, .string], [.number, JSONTypeSet.null], [.integer, .boolean], [.array, .object],
            [.integer, JSONTypeSet.null],
        ]
        if r.percent(70) { return r.pick(singles) }
        if r.percent(60) { return r.pick(unions) }
        var t: JSONTypeSet = []
        for _ in 0..<r.int(2...3) { t.formUnion(r.pick(singles)) }
        return t
    }

    public mutating func thread(depth: Int) -> (Mapper, Shape) {
        let dates = dateSyntaxes()
        switch r.below(9) {
        case 0: return (.thread(.stringToDate(dates), .dateToNumber(r.pick(EpochUnit.allCases))), .string(.date(dates)))
        case 1: return (.thread(.numberToDate(r.pick(EpochUnit.allCases)), .dateToString(r.pick(dates))), .epoch)
        case 2: return (.thread(.stringToDate(dates), .dateToString(dateSyntax(zone: r.pick(Catalog.zones)))), .string(.date(dates)))
        case 3: return (.thread(.stringToNumber, .numberToString), .string(.decimal))
        case 4: return (.thread(.string, .uuid, Mapper(.convert(.uuidToString(uppercase: r.bool())))), .string(.uuid))
        case 5: return (.thread(.toString, .stringToNumber), .number)
        case 6:
            let (a, b) = r.bool() ? (Base64Text.Alphabet.standard, Base64Text.Alphabet.url) : (.url, .standard)
            return (.thread(.base64(from: a, to: b), .base64(from: b, to: a)), .string(.base64(a)))
        default:
            // A first stage, then stages that accept most values.
            let (m, s) = mapper(depth: depth - 1)
            var stages = [m]
            for _ in 0..<r.int(1...2) {
                stages.append(r.pick([
                    .identity, .toString, .optionally(.string), .nonFatally(.number, default: 0), .keys(.uppercase),
                    Mapper(.block(Closures.count)), .optionally(.stringToNumber), Mapper(.block(Closures.wrap)),
                ]))
            }
            return (Mapper(.thread(stages)), s)
        }
    }

    public mutating func dateSyntax(zone: Int) -> DateSyntax {
        r.percent(55) ? .named(r.pick(NamedDateFormat.allCases)) : Catalog.pattern(r.pick(Catalog.patterns), zone: zone)
    }

    public mutating func dateSyntaxes() -> [DateSyntax] {
        let zone = r.pick(Catalog.zones)
        return (0..<r.weighted([(5, 1), (3, 2), (1, 3)])).map { _ in dateSyntax(zone: zone) }
    }

    public mutating func conversion() -> (Mapper, Shape) {
        switch r.below(17) {
        case 0, 1:
            let d = dateSyntaxes()
            return (.stringToDate(d), .string(.date(d)))
        case 2: return (.dateToString(dateSyntax(zone: r.pick(Catalog.zones))), .string(.isoDate))
        case 3: return (.numberToDate(r.pick(EpochUnit.allCases)), .epoch)
        case 4: return (.dateToNumber(r.pick(EpochUnit.allCases)), .string(.isoDate))
        case 5: return (.stringToNumber, .string(.decimal))
        case 6: return (.numberToString, .number)
        case 7: return (.toString, .any)
        case 8: return (.url(schemes: r.pick([nil, ["https"], ["http", "https"], ["HTTPS"], ["mailto", "urn"]])), .string(.url))
        case 9: return (Mapper(.convert(.urlToString(schemes: r.pick([nil, ["https"], ["ftp"]])))), .string(.url))
        case 10: return (.uuid, .string(.uuid))
        case 11: return (Mapper(.convert(.uuidToString(uppercase: r.bool()))), .string(.uuid))
        case 12:
            let from = r.pick(Base64Text.Alphabet.allCases)
            return (.base64(from: from, to: r.pick(Base64Text.Alphabet.allCases)), .string(.base64(from)))
        default:
            let deep = r.bool()
            let inner: Shape = deep ? .oneOf([.object([], open: true), .array(.object([], open: true))]) : .object([], open: true)
            return (.keys(r.pick(KeyStyle.allCases), deep: deep, collisions: r.pick(KeyCollisions.allCases)), r.percent(80) ? inner : .any)
        }
    }

    public mutating func enumTable() -> (Mapper, Shape) {
        var pairs: [(JSONValue, JSONValue)] = []
        var seen: [EnumMatchKey] = []
        for _ in 0..<r.int(1...4) {
            let from = r.pick(Catalog.enumSources)
            let key = EnumMatchKey(from)!
            if seen.contains(key) && r.percent(80) { continue }  // a few duplicates: the first entry wins
            seen.append(key)
            pairs.append((from, jsonValue(depth: 0)))
        }
        return (.enumTable(pairs), .enumKeys(pairs.map(\.0)))
    }

    /// A small random JSON value (defaults, enum targets).
    public mutating func jsonValue(depth: Int) -> JSONValue {
        switch r.below(depth > 0 ? 8 : 6) {
        case 0: return .null
        case 1: return .bool(r.bool())
        case 2: return .number(JSONNumber(unchecked: r.pick(["0", "1", "-2", "1.5", "1E+2", "123456789012345678901234567890"])))
        case 3, 4, 5: return .string(r.pick(["dflt", "", "é", "e\u{301}", "x\"y", "other", "😀", "2014-08-31T00:29:15Z"]))
        case 6: return .array([jsonValue(depth: depth - 1)])
        default: return .object(JSONObject([(r.pick(Catalog.destinationKeys), jsonValue(depth: depth - 1))]))
        }
    }

    // MARK: Paths

    public mutating func sourceSteps(existing: [[String]] = []) -> [String] {
        let choice = r.weighted([(35, 0), (20, 1), (10, 2), (existing.isEmpty ? 0 : 15, 3), (existing.isEmpty ? 0 : 10, 4), (10, 5)])
        switch choice {
        case 0: return [r.pick(Catalog.sourceKeys)]
        case 1: return [r.pick(Catalog.nestKeys)] + (0..<r.int(1...2)).map { _ in r.pick(Catalog.sourceKeys) }
        case 2: return [r.pick(["items", "tags", "data"]), r.pick(["0", "1", "2", "01"])] + (r.bool() ? [r.pick(["id", "name"])] : [])
        case 3: return r.pick(existing)
        case 4: return [r.pick(existing)[0], r.pick(Catalog.sourceKeys)]
        default: return [r.pick(Catalog.dottedKeys)]
        }
    }

    public mutating func destinationSteps() -> [String] {
        r.percent(70) ? [r.pick(Catalog.destinationKeys)] : [r.pick(Catalog.destinationNests), r.pick(Catalog.destinationKeys)]
    }

    /// A fresh destination that does not overlap `taken` (checked with Swift's `==`, which is stricter here).
    public mutating func freshDestination(_ taken: [[String]]) -> [String] {
        for _ in 0..<12 {
            let d = destinationSteps()
            if !taken.contains(where: { overlaps($0, d) }) { return d }
        }
        return ["f\(taken.count)_\(r.below(1000))"]
    }

    public func overlaps(_ a: [String], _ b: [String]) -> Bool { a.starts(with: b) || b.starts(with: a) }

    /// The same steps through one of the ways to build a key path: split on a delimiter, literal, or raw steps.
    public mutating func keyPath(_ steps: [String]) -> KeyPath {
        if steps.count == 1 && r.percent(30) { return .literal(steps[0]) }
        let d = r.pick(Catalog.delimiters)
        let joined = steps.joined(separator: d)
        let split = KeyPath(joined, delimiter: d)
        if r.percent(75), split.steps.count == steps.count, zip(split.steps, steps).allSatisfy({ bytesEqual($0, $1) }) { return split }
        return KeyPath(steps: steps)
    }

    // MARK: Objects

    public enum FieldForm { case single, plain, manyToOne, oneToMany, manyToMany, computed }

    /// A computed field's expression over `paths` (each written in backquotes; their steps hold no delimiter and
    /// no backquote): arithmetic, strings, comparisons, `if`, `coalesce`, the string functions.
    public mutating func computedExpression(_ paths: [String]) -> String {
        let p = { (gen: inout MapperGen) in gen.r.pick(paths) }
        switch r.below(10) {
        case 0: return "\(p(&self)) + \(p(&self))"
        case 1: return "\(p(&self)) * 2 - 0.5"
        case 2: return "\(p(&self)) / 4"
        case 3: return "coalesce(\(p(&self)), \(p(&self)), \"none\")"
        case 4: return "if \(p(&self)) == null then \"null\" else string(\(p(&self)))"
        case 5: return "lower(string(\(p(&self)))) + \"|\" + upper(\(p(&self)))"
        case 6: return "length(\(p(&self))) > 2 && !contains(string(\(p(&self))), \"a\")"
        case 7: return "split(trim(\(p(&self))), \",\")"
        case 8: return "\(p(&self))"
        default: return "substring(replace(\(p(&self)), \"a\", \"bb\"), 1, 3)"
        }
    }

    public mutating func objectMapper(depth: Int) -> (Mapper, Shape) {
        let (mapping, entries, open) = objectMapping(depth: depth)
        return (r.percent(80) ? .object(mapping) : Mapper(.object(mapping)), .object(entries, open: open))
    }

    public mutating func objectMapping(depth: Int) -> (ObjectMapping, [ShapeEntry], Bool) {
        // Mostly a few fields; sometimes many (key matching may change strategy past a handful of keys).
        let n = r.weighted([(1, 0), (4, 1), (6, 2), (6, 3), (4, 4), (2, 6), (2, r.int(9...16))])
        var fields: [ObjectMapping.Field] = []
        var entries: [ShapeEntry] = []
        var sources: [[String]] = []
        var destinations: [[String]] = []
        func destination(_ gen: inout MapperGen) -> [String] {
            if !destinations.isEmpty && gen.r.percent(3) { return gen.r.pick(destinations) }  // overlapping: a write error
            let d = gen.freshDestination(destinations)
            destinations.append(d)
            return d
        }
        for _ in 0..<n {
            let form: FieldForm = r.weighted([(25, .plain), (50, .single), (10, .manyToOne), (8, .oneToMany), (6, .manyToMany), (8, .computed)])
            let inner = max(depth - 1, 0)
            switch form {
            case .plain, .single:
                let src = sourceSteps(existing: sources)
                sources.append(src)
                let dst = destination(&self)
                if form == .plain {
                    entries.append(ShapeEntry(steps: src, shape: .nonNull))
                    if src.count == 1, dst.count == 1, !src[0].contains("."), !dst[0].contains("."), r.bool() {
                        fields.append(Field(src[0], to: dst[0]))
                    } else {
                        fields.append(Field(sources: [keyPath(src)], destinations: [keyPath(dst)], mapper: .required))
                    }
                } else {
                    let (m, s) = mapper(depth: inner)
                    entries.append(ShapeEntry(steps: src, shape: s))
                    fields.append(Field(sources: [keyPath(src)], destinations: [keyPath(dst)], mapper: m))
                }
            case .manyToOne, .manyToMany:
                let k = r.int(2...3)
                let srcs = (0..<k).map { _ in sourceSteps(existing: sources) }
                sources += srcs
                let dsts = form == .manyToOne ? [destination(&self)] : (0..<k).map { _ in destination(&self) }
                let pair: (Mapper, Shape)
                switch r.below(form == .manyToOne ? 5 : 2) {
                case 0: pair = (.identity, .any)
                case 1:
                    let (e, es) = mapper(depth: max(inner - 1, 0))
                    pair = (.arrayOf(e), es)
                case 2: pair = (.toString, .any)
                case 3: pair = (Mapper(.block(Closures.count)), .any)
                default: pair = (.optionally(.arrayOf(.integer)), .integer)
                }
                let (m, s) = pair
                for src in srcs { entries.append(ShapeEntry(steps: src, shape: s)) }
                fields.append(Field(sources: srcs.map { keyPath($0) }, destinations: dsts.map { keyPath($0) }, mapper: m))
            case .computed:
                let srcs = (0..<r.int(1...2)).map { _ in sourceSteps(existing: sources) }
                    .filter { $0.allSatisfy { !$0.contains(".") && !$0.contains("`") } }
                guard !srcs.isEmpty else { continue }
                sources += srcs
                let text = computedExpression(srcs.map { "`" + $0.joined(separator: ".") + "`" })
                guard let expression = try? ValueExpression(text) else { continue }
                for src in srcs { entries.append(ShapeEntry(steps: src, shape: .any)) }
                let then: Mapper = r.pick([.required, .optionally(), .identity, .string, .nonFatally(.integer, default: 0)])
                fields.append(Field(sources: [.root], destinations: [keyPath(destination(&self))],
                                    mapper: .compute(expression, invalid: action(), then: then)))
            case .oneToMany:
                let k = r.int(2...3)
                let src = sourceSteps(existing: sources)
                sources.append(src)
                let dsts = (0..<k).map { _ in destination(&self) }
                let pair: (Mapper, Shape)
                if r.bool() {
                    pair = (.identity, .tuple(Array(repeating: .any, count: k)))
                } else {
                    let (e, es) = mapper(depth: max(inner - 1, 0))
                    pair = (.arrayOf(e), .tuple(Array(repeating: es, count: r.percent(85) ? k : k + 1)))
                }
                let (m, s) = pair
                entries.append(ShapeEntry(steps: src, shape: s))
                fields.append(Field(sources: [keyPath(src)], destinations: dsts.map { keyPath($0) }, mapper: m))
            }
        }
        var unmapped = ObjectMapping.Unmapped.drop
        if r.percent(45) {
            let style: KeyStyle? = r.percent(40) ? nil : r.pick(KeyStyle.allCases)
            var values: Mapper? = nil
            if r.bool() {
                values = r.pick([
                    .toString, .numberToString, .optionally(.string), Mapper(.block(Closures.upper)),
                    .nonFatally(.number, default: 0), .keys(r.pick(KeyStyle.allCases), deep: true, collisions: r.pick(KeyCollisions.allCases)),
                    .required, .integer,
                ])
            }
            unmapped = r.percent(20) && style == nil && values == nil
                ? .keep : .keep(keyStyle: style, values: values, collisions: r.pick(KeyCollisions.allCases))
        }
        let open: Bool
        if case .keep = unmapped { open = r.percent(85) } else { open = r.percent(40) }
        return (ObjectMapping(fields: fields, unmapped: unmapped), entries, open)
    }
}

// MARK: - Mappers as spec files

/// Random spec documents (JSON text for `Spec(json:)`), each with the shape of its records.
private func obj(_ pairs: [(String, JSONValue)]) -> JSONValue { .object(JSONObject(pairs)) }
private func str(_ s: String) -> JSONValue { .string(s) }

public struct SpecGen {
    public var r: Rand
    public init(_ r: Rand) { self.r = r }

    public struct Scope {
        var delimiter = "."
        var types: [String: Shape] = [:]
    }

    public struct Expr {
        var json: JSONValue
        var shape: Shape
        /// The JSON type name of the output, when known (to declare a matching `type`).
        var out: String?
    }


    public mutating func document() -> (text: String, shape: Shape) {
        var members: [(String, JSONValue)] = []
        if r.percent(40) { members.append(("streammap", 1)) }
        if r.percent(15) { members.append(("description", "generated")) }
        let shape: Shape
        if r.percent(75) {
            let (o, s) = objectSpec(depth: r.int(1...3), scope: Scope())
            members += o
            shape = s
        } else {
            let e = mapperExpr(depth: r.int(1...3), scope: Scope())
            members.append(("mapper", e.json))
            shape = e.shape
        }
        return (JSONWriter.string(obj(r.shuffled(members))), shape)
    }

    // MARK: Objects

    public mutating func objectSpec(depth: Int, scope outer: Scope) -> ([(String, JSONValue)], Shape) {
        var scope = outer
        var members: [(String, JSONValue)] = []
        if r.percent(15) {
            let d = r.pick(["->", "/", "::", "|", "."])
            members.append(("delimiter", str(d)))
            scope.delimiter = d
        }
        if r.percent(20) {
            var table: [(String, JSONValue)] = []
            for name in r.shuffled(["date", "money", "tag", "ident"]).prefix(r.int(1...2)) {
                let e: Expr
                switch name {
                case "date": e = dateExpr()
                case "money": e = Expr(json: "stringToNumber", shape: .string(.decimal), out: "number")
                case "tag": e = Expr(json: obj([("keys", str(r.pick(KeyStyle.specNames)))]), shape: .object([], open: true), out: "object")
                default: e = Expr(json: "uuid", shape: .string(.uuid), out: "string")
                }
                table.append((name, e.json))
                scope.types[name] = e.shape
            }
            members.append(("types", obj(table)))
        }
        let arrayForm = r.percent(30)
        var fieldsObject: [(String, JSONValue)] = []
        var fieldsArray: [JSONValue] = []
        var entries: [ShapeEntry] = []
        var usedKeys: [String] = []
        var destinations: [[String]] = []
        var paths = MapperGen(r.fork())
        for _ in 0..<r.weighted([(1, 0), (4, 1), (6, 2), (6, 3), (4, 4), (2, 6), (1, r.int(9...14))]) {
            guard let f = field(depth: depth - 1, scope: scope, arrayForm: arrayForm, paths: &paths, usedKeys: &usedKeys,
                                destinations: &destinations) else { continue }
            entries += f.entries
            if arrayForm { fieldsArray.append(f.value) } else { fieldsObject.append((f.key, f.value)) }
        }
        if arrayForm { members.append(("fields", .array(fieldsArray))) } else if !fieldsObject.isEmpty || r.bool() {
            members.append(("fields", obj(fieldsObject)))
        }
        if r.percent(15) {
            if r.bool() || destinations.isEmpty {
                members.append(("nullToEmpty", .bool(r.percent(80))))
            } else {
                let except = destinations.prefix(r.int(1...destinations.count)).map { str($0.joined(separator: scope.delimiter)) }
                members.append(("nullToEmpty", obj([("except", .array(except))])))
            }
        }
        var open = r.percent(40)
        switch r.below(6) {
        case 0: members.append(("unmapped", "drop"))
        case 1:
            members.append(("unmapped", "keep"))
            open = true
        case 2:
            var u: [(String, JSONValue)] = []
            if r.percent(70) { u.append(("keys", str(r.pick(KeyStyle.specNames)))) }
            if r.percent(60) { u.append(("values", leafExpr(scope: scope).json)) }
            members.append(("unmapped", obj(u)))
            open = true
        default: break
        }
        return (r.shuffled(members), .object(entries, open: open))
    }

    public struct SpecField {
        var key: String
        var value: JSONValue
        var entries: [ShapeEntry]
    }

    /// A source path written for `scope`: steps that do not contain the delimiter (unless literal).
    public mutating func sourceText(_ paths: inout MapperGen, scope: Scope, literal: Bool, existing: [[String]]) -> (String, [String]) {
        if literal {
            let key = r.percent(50) ? r.pick(Catalog.dottedKeys) : r.pick(Catalog.sourceKeys)
            return (key, [key])
        }
        for _ in 0..<20 {
            let steps = paths.sourceSteps(existing: existing)
            let text = steps.joined(separator: scope.delimiter)
            let split = KeyPath(text, delimiter: scope.delimiter).steps
            if split.count == steps.count && zip(split, steps).allSatisfy({ bytesEqual($0, $1) }) { return (text, steps) }
        }
        return ("k\(r.below(100))", KeyPath("k", delimiter: ".").steps)
    }

    public mutating func destinationText(_ paths: inout MapperGen, scope: Scope, literal: Bool, destinations: inout [[String]]) -> String {
        for _ in 0..<20 {
            let steps = literal ? [r.pick(Catalog.destinationKeys + Catalog.dottedKeys)] : paths.destinationSteps()
            let text = steps.joined(separator: scope.delimiter)
            let parsed = literal ? [text] : KeyPath(text, delimiter: scope.delimiter).steps
            guard parsed.count == steps.count, zip(parsed, steps).allSatisfy({ bytesEqual($0, $1) }),
                  !destinations.contains(where: { paths.overlaps($0, parsed) }) else { continue }
            destinations.append(parsed)
            return text
        }
        let text = "dst\(destinations.count)"
        destinations.append([text])
        return text
    }

    public mutating func field(
        depth: Int, scope: Scope, arrayForm: Bool, paths: inout MapperGen, usedKeys: inout [String], destinations: inout [[String]]
    ) -> SpecField? {
        let existing = usedKeys.map { KeyPath($0, delimiter: scope.delimiter).steps }
        let literal = r.percent(10)
        let form = arrayForm ? 2 : r.weighted([(20, 0), (20, 1), (60, 2)])
        if form < 2 {
            // "src": "dst" and "src": [MAPPER, "dst"]: the key is the source (unique in an object).
            var (src, steps) = sourceText(&paths, scope: scope, literal: false, existing: existing)
            if usedKeys.contains(where: { bytesEqual($0, src) }) { (src, steps) = ("u\(usedKeys.count)", ["u\(usedKeys.count)"]) }
            usedKeys.append(src)
            let dst = destinationText(&paths, scope: scope, literal: false, destinations: &destinations)
            if form == 0 { return SpecField(key: src, value: str(dst), entries: [ShapeEntry(steps: steps, shape: .nonNull)]) }
            let e = mapperExpr(depth: depth, scope: scope)
            return SpecField(key: src, value: .array([e.json, str(dst)]), entries: [ShapeEntry(steps: steps, shape: e.shape)])
        }
        // A field object.
        var members: [(String, JSONValue)] = []
        if literal { members.append(("literal", true)) }
        let sourceCount = r.weighted([(85, 1), (10, 2), (5, 3)])
        let destinationCount = sourceCount > 1 ? (r.bool() ? sourceCount : 1) : r.weighted([(90, 1), (7, 2), (3, 3)])
        var key: String
        var sourceSteps: [[String]] = []
        var sourceTexts: [String] = []
        for _ in 0..<sourceCount {
            let (t, s) = sourceText(&paths, scope: scope, literal: literal, existing: existing)
            sourceTexts.append(t)
            sourceSteps.append(s)
        }
        if arrayForm || sourceCount > 1 || usedKeys.contains(where: { bytesEqual($0, sourceTexts[0]) }) {
            members.append(("from", sourceCount > 1 || r.bool() ? .array(sourceTexts.map(str)) : str(sourceTexts[0])))
            key = "label\(usedKeys.count)"
        } else {
            key = sourceTexts[0]
        }
        if !arrayForm && usedKeys.contains(where: { bytesEqual($0, key) }) { key = "label\(usedKeys.count)_\(r.below(1000))" }
        usedKeys.append(key)
        // Destinations ("to" omitted: the source paths, when they are free).
        let destinationTexts: [String]
        if destinationCount == sourceCount && !literal && r.percent(10)
            && !sourceSteps.contains(where: { s in destinations.contains(where: { paths.overlaps($0, s) }) })
            && Set(sourceTexts).count == sourceTexts.count && !sourceSteps.contains(where: { a in sourceSteps.contains { b in a != b && paths.overlaps(a, b) } }) {
            destinations += sourceSteps
            destinationTexts = []
        } else {
            destinationTexts = (0..<destinationCount).map { _ in destinationText(&paths, scope: scope, literal: literal, destinations: &destinations) }
            members.append(("to", destinationTexts.count > 1 || r.percent(10) ? .array(destinationTexts.map(str)) : str(destinationTexts[0])))
        }
        // The value mapper and the shape of each source.
        var shape: Shape = .any
        var out: String? = nil
        let many = sourceCount > 1 || destinationCount > 1
        if many {
            let e: Expr
            switch r.below(3) {
            case 0: e = Expr(json: "identity", shape: .any, out: "array")
            case 1:
                let inner = leafExpr(scope: scope)
                e = Expr(json: obj([("arrayOf", inner.json)]), shape: inner.shape, out: "array")
            default: e = Expr(json: "toString", shape: .any, out: "string")
            }
            if r.percent(85) || sourceCount > 1 { members.append(("via", e.json)) }
            shape = sourceCount > 1 ? e.shape : .tuple(Array(repeating: e.shape, count: r.percent(85) ? destinationCount : destinationCount + 1))
            out = e.out
        } else if r.percent(70) {
            let e = mapperExpr(depth: depth, scope: scope)
            members.append(("via", e.json))
            shape = e.shape
            out = e.out
        }
        // A declared type: a JSON type (ideally the one the mapper produces) or a custom type.
        if r.percent(30) {
            let customs = scope.types.keys.sorted()
            if !customs.isEmpty && r.percent(40) {
                let t = r.pick(customs)
                members.append(("type", str(t)))
                if members.first(where: { $0.0 == "via" }) == nil { shape = scope.types[t]! }
            } else {
                let t = out != nil && r.percent(75) ? out! : r.pick(JSONType.allCases.map(\.rawValue))
                members.append(("type", str(t)))
                if members.first(where: { $0.0 == "via" }) == nil, !many, let jt = JSONType(rawValue: t) { shape = .types(JSONTypeSet(jt)) }
            }
        }
        // Presence: nothing, optional (with defaults), per-case policies, required true/false, default.
        switch r.weighted([(40, 0), (20, 1), (20, 2), (10, 3), (10, 4)]) {
        case 1:
            members.append(("optional", true))
            if r.bool() { members.append(("default", value())) }
            if r.percent(30) { members.append(("reverseDefault", value())) }
            if r.percent(10) { members.append(("required", false)) }
        case 2:
            for k in ["missing", "null", "invalid"] where r.percent(60) { members.append((k, policyAction())) }
            if r.percent(20) { members.append(("default", value())) }
            if r.percent(15) { members.append(("required", .bool(r.bool()))) }
        case 3: members.append(("required", .bool(r.bool())))
        case 4: members.append(("default", value()))
        default: break
        }
        if r.percent(5) { members.append(("description", "a field")) }
        return SpecField(key: key, value: obj(r.shuffled(members)), entries: sourceSteps.map { ShapeEntry(steps: $0, shape: shape) })
    }

    public mutating func policyAction() -> JSONValue {
        switch r.below(4) {
        case 0: return "fail"
        case 1: return "omit"
        case 2: return "null"
        default: return obj([("default", value())])
        }
    }

    // MARK: Mapper expressions

    public mutating func mapperExpr(depth: Int, scope: Scope) -> Expr {
        guard depth > 0 else { return leafExpr(scope: scope) }
        switch r.weighted([(20, 0), (6, 1), (10, 2), (5, 3), (6, 4), (12, 5), (8, 6), (5, 7), (8, 8), (3, 9), (5, 10), (4, 11)]) {
        case 0: return leafExpr(scope: scope)
        case 1:
            let e = mapperExpr(depth: depth - 1, scope: scope)
            return Expr(json: obj([("required", e.json)]), shape: e.shape, out: e.out)
        case 2:
            let name = r.bool() ? "optional" : "nonFatal"
            let e = r.percent(15) ? Expr(json: true, shape: .any, out: nil) : mapperExpr(depth: depth - 1, scope: scope)
            var m: [(String, JSONValue)] = [(name, e.json)]
            if r.bool() { m.append(("default", value())) }
            if r.percent(20) { m.append(("reverseDefault", value())) }
            return Expr(json: obj(r.shuffled(m)), shape: e.shape, out: nil)
        case 3:
            let e = mapperExpr(depth: depth - 1, scope: scope)
            var m: [(String, JSONValue)] = [("policy", e.json)]
            for k in ["missing", "null", "invalid"] where r.percent(60) { m.append((k, policyAction())) }
            return Expr(json: obj(r.shuffled(m)), shape: e.shape, out: nil)
        case 4:
            let names = JSONType.allCases.map(\.rawValue)
            if r.percent(60) {
                let t = r.pick(names)
                return Expr(json: obj([("type", str(t))]), shape: .types(JSONTypeSet(JSONType(rawValue: t)!)), out: t)
            }
            let ts = Array(r.shuffled(names).prefix(r.int(1...3)))
            var set: JSONTypeSet = []
            for t in ts { set.formUnion(JSONTypeSet(JSONType(rawValue: t)!)) }
            return Expr(json: obj([("type", .array(ts.map(str)))]), shape: .types(set), out: nil)
        case 5:
            let (o, s) = objectSpec(depth: depth - 1, scope: scope)
            return Expr(json: obj([("object", obj(o))]), shape: s, out: "object")
        case 6:
            let e = mapperExpr(depth: depth - 1, scope: scope)
            return Expr(json: obj([("arrayOf", e.json)]), shape: .array(e.shape), out: "array")
        case 7:
            let es = (0..<r.int(1...3)).map { _ in mapperExpr(depth: depth - 1, scope: scope) }
            return Expr(json: obj([("first", .array(es.map(\.json)))]), shape: .oneOf(es.map(\.shape)), out: nil)
        case 8:
            return threadExpr(depth: depth, scope: scope)
        case 9:
            let f = mapperExpr(depth: depth - 1, scope: scope)
            let b = mapperExpr(depth: depth - 1, scope: scope)
            return Expr(json: obj(r.shuffled([("split", f.json), ("reverse", b.json)])), shape: f.shape, out: f.out)
        case 10:
            var paths = MapperGen(r.fork())
            let (text, steps) = sourceText(&paths, scope: scope, literal: false, existing: [])
            let e = mapperExpr(depth: depth - 1, scope: scope)
            var m: [(String, JSONValue)] = [("forward", str(text))]
            if r.percent(85) { m.append(("via", e.json)) }
            let inner = m.count == 2 ? e.shape : Shape.any
            return Expr(json: obj(r.shuffled(m)), shape: .object([ShapeEntry(steps: steps, shape: inner)], open: r.bool()), out: nil)
        default:
            var paths = MapperGen(r.fork())
            var none: [[String]] = []
            let text = destinationText(&paths, scope: scope, literal: false, destinations: &none)
            let e = mapperExpr(depth: depth - 1, scope: scope)
            var m: [(String, JSONValue)] = [("backward", str(text))]
            if r.percent(85) { m.append(("via", e.json)) }
            return Expr(json: obj(r.shuffled(m)), shape: m.count == 2 ? e.shape : .any, out: "object")
        }
    }

    public mutating func threadExpr(depth: Int, scope: Scope) -> Expr {
        let stages: [JSONValue]
        let shape: Shape
        switch r.below(5) {
        case 0:
            let d = dateExpr()
            stages = [d.json, obj([("dateToNumber", str(r.pick(EpochUnit.allCases).rawValue))])]
            shape = d.shape
        case 1:
            stages = [obj([("numberToDate", str(r.pick(EpochUnit.allCases).rawValue))]), obj([("dateToString", str(r.pick(NamedDateFormat.allNames)))])]
            shape = .epoch
        case 2:
            stages = ["stringToNumber", "numberToString"]
            shape = .string(.decimal)
        case 3:
            stages = ["uuid", obj([("uuidToString", true), ("uppercase", .bool(r.bool()))])]
            shape = .string(.uuid)
        default:
            let first = mapperExpr(depth: depth - 1, scope: scope)
            stages = [first.json] + (0..<r.int(0...2)).map { _ in leafExpr(scope: scope).json }
            shape = first.shape
        }
        return Expr(json: r.bool() ? .array(stages) : obj([("thread", .array(stages))]), shape: shape, out: nil)
    }

    public mutating func dateExpr() -> Expr {
        let zone = r.pick(Catalog.zones)
        var syntaxes: [DateSyntax] = []
        var formats: [JSONValue] = []
        for _ in 0..<r.weighted([(5, 1), (3, 2), (1, 3)]) {
            if r.percent(55) {
                let f = r.pick(NamedDateFormat.allCases)
                syntaxes.append(.named(f))
                formats.append(str(f.rawValue))
            } else {
                let p = r.pick(Catalog.patterns)
                syntaxes.append(Catalog.pattern(p, zone: zone))
                formats.append(obj([("pattern", str(p))]))
            }
        }
        var m: [(String, JSONValue)] = [("stringToDate", formats.count == 1 && r.bool() ? formats[0] : .array(formats))]
        if zone != 0 || r.percent(20) { m.append(("timeZone", str(zone == 0 && r.bool() ? "Z" : Catalog.zoneText(zone)))) }
        return Expr(json: obj(r.shuffled(m)), shape: .string(.date(syntaxes)), out: "string")
    }

    /// A function of computed fields as a mapper (`"lower"`, `{"replace": ["a", "-"]}`, `{"substring": [1, 2]}`…).
    mutating func stringFunctionExpr() -> Expr {
        let text = str(r.pick(["a", "-", " ", "é", "ab"]))
        switch r.below(12) {
        case 0...4: return Expr(json: str(r.pick(["lower", "upper", "trim", "trimStart", "trimEnd"])), shape: .string(.text), out: "string")
        case 5: return Expr(json: "length", shape: r.bool() ? .string(.text) : .array(.any), out: "integer")
        case 6: return Expr(json: obj([("replace", .array([text, str(r.pick(["", "_", "xy"]))]))]), shape: .string(.text), out: "string")
        case 7: return Expr(json: obj([("replaceMatches", .array([str(r.pick(["[a-z]+", "\\s*", "^.", "(ab|a)*"])), str("-")]))]), shape: .string(.text), out: "string")
        case 8:
            let start = JSONValue.number(JSONNumber(r.int(0...3)))
            return Expr(json: obj([("substring", r.bool() ? start : .array([start, .number(JSONNumber(r.int(0...4)))]))]), shape: .string(.text), out: "string")
        case 9: return Expr(json: obj([(r.pick(["contains", "startsWith", "endsWith"]), text)]), shape: .string(.text), out: "boolean")
        case 10: return Expr(json: obj([("matches", str(r.pick(["^[a-z]", "\\d", "é|b", "^$"])))]), shape: .string(.text), out: "boolean")
        default: return Expr(json: obj([("join", text)]), shape: .array(.string(.text)), out: "string")
        }
    }

    public mutating func leafExpr(scope: Scope) -> Expr {
        if r.percent(8) { return stringFunctionExpr() }
        switch r.below(24) {
        case 0: return Expr(json: "identity", shape: .any, out: nil)
        case 1: return Expr(json: "required", shape: .nonNull, out: nil)
        case 2: return Expr(json: "optional", shape: .any, out: nil)
        case 3, 4:
            let t = r.pick(JSONType.allCases)
            return Expr(json: str(t.rawValue), shape: .types(JSONTypeSet(t)), out: t.rawValue)
        case 5: return Expr(json: r.bool() ? "url" : obj([("url", .array(["https", "HTTP"].prefix(r.int(1...2)).map(str)))]), shape: .string(.url), out: "string")
        case 6: return Expr(json: obj([("url", true), ("schemes", .array([str(r.pick(["https", "mailto", "ftp"]))]))]), shape: .string(.url), out: "string")
        case 7: return Expr(json: "urlToString", shape: .string(.url), out: "string")
        case 8: return Expr(json: "uuid", shape: .string(.uuid), out: "string")
        case 9: return Expr(json: r.bool() ? "uuidToString" : obj([("uuidToString", true), ("uppercase", true)]), shape: .string(.uuid), out: "string")
        case 10: return Expr(json: "toString", shape: .any, out: "string")
        case 11: return Expr(json: "stringToNumber", shape: .string(.decimal), out: "number")
        case 12: return Expr(json: "numberToString", shape: .number, out: "string")
        case 13, 14: return dateExpr()
        case 15: return Expr(json: obj([("dateToString", r.percent(70) ? str(r.pick(NamedDateFormat.allNames)) : obj([("pattern", str(r.pick(Catalog.patterns)))]))]), shape: .string(.isoDate), out: "string")
        case 16: return Expr(json: obj([("numberToDate", str(r.pick(EpochUnit.allCases).rawValue))]), shape: .epoch, out: "string")
        case 17: return Expr(json: obj([("dateToNumber", str(r.pick(EpochUnit.allCases).rawValue))]), shape: .string(.isoDate), out: "number")
        case 18:
            let from = r.pick(Base64Text.Alphabet.allCases)
            var m: [(String, JSONValue)] = [("base64", true)]
            if from != .standard || r.bool() { m.append(("from", str(from.rawValue))) }
            if r.bool() { m.append(("to", str(r.pick(Base64Text.Alphabet.allCases).rawValue))) }
            return Expr(json: obj(m), shape: .string(.base64(from)), out: "string")
        case 19:
            var m: [(String, JSONValue)] = [("keys", str(r.pick(KeyStyle.specNames)))]
            if r.bool() { m.append(("deep", .bool(r.bool()))) }
            return Expr(json: obj(m), shape: .object([], open: true), out: "object")
        case 20, 21:
            return enumExpr()
        default:
            let names = scope.types.keys.sorted()
            if !names.isEmpty {
                // A custom type is only a field-level declaration; use a JSON type check here.
                return Expr(json: obj([("type", .array([str("string"), str("null")]))]), shape: .oneOf([.string(.text), .null]), out: nil)
            }
            return Expr(json: "number", shape: .number, out: "number")
        }
    }

    public mutating func enumExpr() -> Expr {
        var gen = MapperGen(r.fork())
        var pairs: [(JSONValue, JSONValue)] = []
        var seen: [EnumMatchKey] = []
        for _ in 0..<r.int(1...4) {
            let from = r.pick(Catalog.enumSources)
            let key = EnumMatchKey(from)!
            guard !seen.contains(key) else { continue }
            seen.append(key)
            pairs.append((from, gen.jsonValue(depth: 0)))
        }
        let stringsOnly = pairs.allSatisfy { $0.0.stringValue != nil }
        let json: JSONValue = stringsOnly && r.bool()
            ? obj(pairs.map { ($0.0.stringValue!, $0.1) })
            : .array(pairs.map { .array([$0.0, $0.1]) })
        return Expr(json: obj([("enum", json)]), shape: .enumKeys(pairs.map(\.0)), out: nil)
    }
}

extension SpecGen {
    /// A small JSON value (defaults) from an independent stream.
    public mutating func value() -> JSONValue {
        var g = MapperGen(r.fork())
        return g.jsonValue(depth: 1)
    }
}

// MARK: - Describing and rewriting mappers

/// A compact, readable description of a mapper for failure reports, e.g.
/// `{first_name→firstName: required, ["a.b"]→x: optional(is(integer), default: 0); keep(foundation.camel)}`.
public func describe(_ m: Mapper) -> String {
    switch m.kind {
    case .identity: return "identity"
    case .notNull(let inner):
        if case .identity = inner.kind { return "required" }
        return "notNull(\(describe(inner)))"
    case .nonFatal(let inner, let fallback, let reverse):
        var s = "nonFatal(\(describe(inner))"
        if let fallback { s += ", default: \(describe(fallback))" }
        if let reverse { s += ", reverseDefault: \(describe(reverse))" }
        return s + ")"
    case .policy(let inner, let p):
        return "policy(\(describe(inner)), missing: \(describe(p.missing)), null: \(describe(p.null)), invalid: \(describe(p.invalid)))"
    case .check(let t): return "is(\(t))"
    case .object(let o):
        var parts = o.fields.map { f in
            "\(f.sources.map(describe).joined(separator: "+"))→\(f.destinations.map(describe).joined(separator: "+")): \(describe(f.mapper))"
        }
        if case .keep(let style, let values, let collisions) = o.unmapped {
            let warn: String? = collisions == .warn ? "collisions: warn" : nil
            parts.append("keep(" + [style?.rawValue, values.map(describe), warn].compactMap { $0 }.joined(separator: ", ") + ")")
        }
        return "{" + parts.joined(separator: ", ") + "}"
    case .arrayOf(let item): return "[\(describe(item))]"
    case .first(let alternatives): return "first(" + alternatives.map(describe).joined(separator: " | ") + ")"
    case .thread(let stages): return "thread(" + stages.map(describe).joined(separator: " ▸ ") + ")"
    case .split(let f, let r): return "split(\(describe(f)), reverse: \(describe(r)))"
    case .forward(let path, let inner): return "forward(\(describe(path)), \(describe(inner)))"
    case .backward(let path, let inner): return "backward(\(describe(path)), \(describe(inner)))"
    case .enumTable(let t):
        return "enum{" + t.pairs.map { "\(JSONWriter.string($0.from))→\(JSONWriter.string($0.to))" }.joined(separator: ", ") + "}"
    case .convert(let c):
        switch c {
        case .stringToDate(let formats): return "stringToDate(" + formats.map(describe).joined(separator: ", ") + ")"
        case .dateToString(let f): return "dateToString(\(describe(f)))"
        case .numberToDate(let u): return "numberToDate(\(u.rawValue))"
        case .dateToNumber(let u): return "dateToNumber(\(u.rawValue))"
        case .stringToURL(let s): return "url" + (s.map { "(\($0.joined(separator: ",")))" } ?? "")
        case .urlToString(let s): return "urlToString" + (s.map { "(\($0.joined(separator: ",")))" } ?? "")
        case .uuidToString(let upper): return upper ? "uuidToString(uppercase)" : "uuidToString"
        case .base64(let from, let to): return "base64(\(from.rawValue)→\(to.rawValue))"
        case .keys(let style, let deep, let collisions):
            return "keys(\(style.rawValue)\(deep ? ", deep" : "")\(collisions == .warn ? ", collisions: warn" : ""))"
        default: return c.name
        }
    case .block(let b): return "block(\(b.name))"
    case .postProcess(let inner, let p): return "\(p.name)(\(describe(inner)))"
    case .compute(let e, let invalid, let then): return "expr(\(e.text.debugDescription), invalid: \(invalid), \(describe(then)))"
    }
}

public func describe(_ path: KeyPath) -> String {
    let simple = path.steps.allSatisfy { s in
        !s.isEmpty && s.unicodeScalars.allSatisfy { ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_") && $0.isASCII }
    }
    if simple { return path.steps.joined(separator: ".") }
    return "[" + path.steps.map { JSONWriter.string(.string($0)) }.joined(separator: ",") + "]"
}

public func describe(_ f: Fallback) -> String {
    switch f {
    case .value(let v): return JSONWriter.string(v)
    case .factory: return "factory"
    }
}

public func describe(_ a: FieldPolicy.Action) -> String {
    switch a {
    case .fail: return "fail"
    case .omit: return "omit"
    case .useDefault(let v): return "default \(JSONWriter.string(v))"
    case .keepNull: return "null"
    case .passToMapper: return "pass"
    }
}

public func describe(_ d: DateSyntax) -> String {
    switch d {
    case .named(let f): return f.rawValue
    case .pattern(let f): return "'\(f.pattern)'@\(Catalog.zoneText(f.timeZoneOffsetSeconds))"
    }
}

/// Rebuilds a mapper bottom-up, applying `f` to every node after its children (also field mappers and the
/// pass-through value mapper).
public func transform(_ m: Mapper, _ f: (Mapper) -> Mapper) -> Mapper {
    func t(_ x: Mapper) -> Mapper { transform(x, f) }
    let rebuilt: Mapper
    switch m.kind {
    case .identity, .check, .enumTable, .convert, .block: rebuilt = m
    case .notNull(let inner): rebuilt = Mapper(.notNull(t(inner)))
    case .nonFatal(let inner, let fb, let rfb): rebuilt = Mapper(.nonFatal(t(inner), fallback: fb, reverseFallback: rfb))
    case .policy(let inner, let p): rebuilt = Mapper(.policy(t(inner), p))
    case .object(let o):
        var o2 = o
        o2.fields = o.fields.map { Field(sources: $0.sources, destinations: $0.destinations, mapper: t($0.mapper)) }
        if case .keep(let style, let values, let collisions) = o.unmapped {
            o2.unmapped = .keep(keyStyle: style, values: values.map(t), collisions: collisions)
        }
        rebuilt = Mapper(.object(o2))
    case .arrayOf(let item): rebuilt = Mapper(.arrayOf(t(item)))
    case .first(let alternatives): rebuilt = Mapper(.first(alternatives.map(t)))
    case .thread(let stages): rebuilt = Mapper(.thread(stages.map(t)))
    case .split(let fw, let rv): rebuilt = Mapper(.split(forward: t(fw), reverse: t(rv)))
    case .forward(let p, let inner): rebuilt = Mapper(.forward(p, t(inner)))
    case .backward(let p, let inner): rebuilt = Mapper(.backward(p, t(inner)))
    case .postProcess(let inner, let p): rebuilt = Mapper(.postProcess(t(inner), p))
    case .compute(let e, let invalid, let then): rebuilt = Mapper(.compute(e, invalid: invalid, then: t(then)))
    }
    return f(rebuilt)
}

/// The kinds a mapper uses (coverage accounting), e.g. `["object", "nonFatal", "convert.stringToDate"]`.
public func kinds(_ m: Mapper) -> Set<String> {
    var out: Set<String> = []
    _ = transform(m) { node in
        switch node.kind {
        case .identity: out.insert("identity")
        case .notNull: out.insert("notNull")
        case .nonFatal(_, let fb, _):
            out.insert("nonFatal")
            if case .factory? = fb { out.insert("nonFatal.factory") } else if fb != nil { out.insert("nonFatal.default") }
        case .policy(_, let p):
            out.insert("policy")
            if [p.missing, p.null, p.invalid].contains(.passToMapper) { out.insert("policy.passToMapper") }
        case .check(let t): out.insert(t.rawValue & (t.rawValue - 1) == 0 || t == .number ? "check" : "check.union")
        case .object(let o):
            out.insert("object")
            if o.fields.contains(where: { $0.sources.count > 1 }) { out.insert("object.manyToOne") }
            if o.fields.contains(where: { $0.destinations.count > 1 }) { out.insert("object.oneToMany") }
            if o.fields.contains(where: { $0.sources.contains { $0.steps.count > 1 } }) { out.insert("object.nestedSource") }
            if o.fields.contains(where: { $0.sources.contains { $0.steps.contains { arrayIndex($0) != nil } } }) { out.insert("object.indexPath") }
            if o.fields.contains(where: { $0.destinations.contains { $0.steps.count > 1 } }) { out.insert("object.nestedDestination") }
            if case .keep(let style, let values, _) = o.unmapped {
                out.insert("object.keep")
                if style != nil { out.insert("object.keep.keyStyle") }
                if values != nil { out.insert("object.keep.values") }
                // Plain renames of top-level keys around kept members: the stream engine's renamed copy.
                let plain = o.fields.allSatisfy { f in
                    guard f.sources.count == 1, f.destinations.count == 1, f.sources[0].steps.count == 1,
                          f.destinations[0].steps.count == 1 else { return false }
                    switch f.mapper.kind {
                    case .identity: return true
                    case .notNull(let m), .policy(let m, _): if case .identity = m.kind { return true } else { return false }
                    default: return false
                    }
                }
                if style == nil, values == nil, !o.fields.isEmpty, plain { out.insert("object.keep.renames") }
            }
        case .arrayOf: out.insert("arrayOf")
        case .first: out.insert("first")
        case .thread: out.insert("thread")
        case .split: out.insert("split")
        case .forward: out.insert("forward")
        case .backward: out.insert("backward")
        case .enumTable: out.insert("enumTable")
        case .convert(let c): out.insert("convert." + c.name)
        case .block: out.insert("block")
        case .postProcess: out.insert("postProcess")
        case .compute: out.insert("compute")
        }
        return node
    }
    return out
}
