/// A predicate over a record's values that keeps or drops the record (the spec's `where`, the `--where` flag).
///
/// It reads only its `paths` of the input record, each walked as a field's source path is (`KeyPath.read`: objects
/// by key, the last duplicate winning; array indexes; anything else absent). The expression is held as a postfix
/// program, so neither evaluating nor freeing it recurses, however deeply its `!` and parentheses nest; both take
/// time linear in the expression and the values it reads. Grammar and semantics: README, "Keeping and dropping
/// records".
public struct RecordFilter: Sendable, Equatable, CustomStringConvertible {
    /// The expression as written.
    public let text: String
    /// The separator of the steps of its paths (the spec's `delimiter`).
    public let delimiter: String
    /// The distinct paths the expression reads, in order of first use.
    public let paths: [KeyPath]
    let program: [Instruction]

    /// One step of the postfix program: tests push a truth value, the operators combine the top of the stack.
    enum Instruction: Sendable, Equatable {
        case test(path: Int, Test)
        /// A comparison of computed values (`length(name) > 3`, `contains(title, "swift")`, `a == b`): holds when
        /// the expression gives `true`; `paths[i]` is the filter's path of the expression's path `i`.
        case compute(ValueExpression, paths: [Int])
        case not, and, or
    }

    /// What is tested of the value at a path (absent: no value). Literals are taken apart once, when parsed.
    enum Test: Sendable, Equatable {
        /// Equal (numbers by value, strings by code points, containers member by member).
        case equals(Literal)
        case notEquals(Literal)
        /// An order (`<`, `<=`, `>`, `>=`) against a number or a string: holds only for a value of the same kind.
        /// `integer`: the literal's value when it is an integer of at most 18 digits (`NumberText.smallInteger`).
        case order(Comparison, ScalarKey, integer: Int?)
        /// Equal to one of these: the scalars looked up in a set, the containers compared one by one.
        case among(Set<ScalarKey>, containers: [JSONValue])
        /// Present (null included).
        case exists
        /// Present and of this type (`integer`: no fraction, no exponent; `number` includes integers).
        case type(JSONType)

        /// Whether `holds` reads the value's scalar key (`exists` and `type` read the value alone).
        var comparesKeys: Bool {
            switch self {
            case .equals, .notEquals, .order, .among: true
            case .exists, .type: false
            }
        }

        /// A comparison with an integer literal of at most 18 digits: the literal's value, for `holds(integer:)`.
        var integerLiteral: Int? {
            switch self {
            case .equals(let literal), .notEquals(let literal): literal.integer
            case .order(_, _, let integer): integer
            default: nil
            }
        }

        /// A comparison with a string literal: the literal's UTF-8, for `holds(string:literal:)`.
        var stringLiteral: [UInt8]? {
            switch self {
            case .equals(let literal), .notEquals(let literal):
                if case .string(let bytes)? = literal.key { bytes } else { nil }
            case .order(_, .string(let bytes), _): bytes
            default: nil
            }
        }

        /// `holds` for a string value, `value` its UTF-8, when `stringLiteral` is `literal`: compared where the
        /// string holds its bytes (code point order is UTF-8's byte order), not through a key made for each record.
        func holds(string value: UnsafeBufferPointer<UInt8>, literal: [UInt8]) -> Bool {
            switch self {
            case .equals: value.elementsEqual(literal)
            case .notEquals: !value.elementsEqual(literal)
            case .order(let comparison, _, _):
                comparison.holds(value.lexicographicallyPrecedes(literal) ? -1 : (value.elementsEqual(literal) ? 0 : 1))
            default: false
            }
        }

        /// `holds` for a value that is an integer of at most 18 digits, `value`, when `integerLiteral` is `literal`:
        /// the two compared as machine integers, not as exact keys (made from text, in arrays, for any size).
        func holds(integer value: Int, literal: Int) -> Bool {
            switch self {
            case .equals: value == literal
            case .notEquals: value != literal
            case .order(let comparison, _, _): comparison.holds(value < literal ? -1 : (value == literal ? 0 : 1))
            default: false
            }
        }
    }

    /// A literal: its value, and its key when it is a scalar.
    struct Literal: Sendable, Equatable {
        let value: JSONValue
        let key: ScalarKey?
        /// The value when it is an integer of at most 18 digits.
        let integer: Int?
        init(_ value: JSONValue) {
            self.value = value
            key = ScalarKey(value)
            if case .number(let n) = value { integer = NumberText.smallInteger(n.text) } else { integer = nil }
        }
    }

    enum Comparison: String, Sendable {
        case less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="

        /// Whether an order (-1, 0, 1: the value before, at or after the literal) satisfies the comparison.
        func holds(_ order: Int) -> Bool {
            switch self {
            case .less: order < 0
            case .lessOrEqual: order <= 0
            case .greater: order > 0
            case .greaterOrEqual: order >= 0
            }
        }
    }

    /// Parses `text`; paths are split on `delimiter`. Throws the first syntax error, with its column.
    public init(_ text: String, delimiter: String = ".") throws(RecordFilterSyntaxError) {
        var parser = RecordFilterParser(text: text, delimiter: delimiter)
        let (program, paths) = try parser.parse()
        self.text = text
        self.delimiter = delimiter
        self.paths = paths
        self.program = program
    }

    /// The expression as written.
    public var description: String { text }

    /// The same expression (by bytes) with the same delimiter.
    public static func == (a: RecordFilter, b: RecordFilter) -> Bool {
        bytesEqual(a.text, b.text) && bytesEqual(a.delimiter, b.delimiter)
    }

    /// Whether the record is kept.
    public func keeps(_ record: JSONValue) -> Bool {
        keeps { paths[$0].read(from: record)?.value }
    }

    /// Whether the record is kept, given the value at each of `paths` (by index; nil: absent). Each path's value is
    /// asked for at most once, and its scalar key made at most once, only for a test that compares it. Nothing is
    /// allocated per record for a usual expression (its values on the stack, its truth values as bits).
    public func keeps(valueAt value: (Int) -> JSONValue?) -> Bool {
        withUnsafeTemporaryAllocation(of: Read.self, capacity: paths.count) { values in
            values.initialize(repeating: .unread)
            defer { _ = values.deinitialize() }
            var stack = TruthStack()
            for instruction in program {
                switch instruction {
                case .test(let path, let test):
                    var read: JSONValue?, key: ScalarKey?, keyed = false
                    if case .read(let v, let k, let made) = values[path] {
                        (read, key, keyed) = (v, k, made)
                    } else {
                        read = value(path)
                    }
                    // An integer compared with an integer literal, both of at most 18 digits: as machine integers.
                    if let literal = test.integerLiteral, case .number(let n)? = read, let integer = NumberText.smallInteger(n.text) {
                        values[path] = .read(read, key, keyed: keyed)
                        stack.push(test.holds(integer: integer, literal: literal))
                        continue
                    }
                    // A string compared with a string literal: on the string's bytes where they are.
                    if case .string(let s)? = read, let literal = test.stringLiteral,
                       let holds = s.utf8.withContiguousStorageIfAvailable({ test.holds(string: $0, literal: literal) }) {
                        values[path] = .read(read, key, keyed: keyed)
                        stack.push(holds)
                        continue
                    }
                    if test.comparesKeys && !keyed {
                        key = read.flatMap(ScalarKey.init)
                        keyed = true
                    }
                    values[path] = .read(read, key, keyed: keyed)
                    stack.push(Self.holds(test, for: read, key: key))
                case .compute(let expression, let map):
                    let evaluation = expression.evaluate { i in
                        let path = map[i]
                        if case .read(let v, _, _) = values[path] { return v }
                        let v = value(path)
                        values[path] = .read(v, nil, keyed: false)
                        return v
                    }
                    if case .value(.bool(true)?, _) = evaluation { stack.push(true) } else { stack.push(false) }
                case .not:
                    stack.push(!stack.pop())
                case .and:
                    let right = stack.pop()
                    let left = stack.pop()
                    stack.push(left && right)
                case .or:
                    let right = stack.pop()
                    let left = stack.pop()
                    stack.push(left || right)
                }
            }
            return stack.isEmpty ? true : stack.pop()
        }
    }

    /// A path's value during one evaluation: not asked for yet, or the value (nil: absent) and, once a test
    /// compared it (`keyed`), its scalar key.
    private enum Read {
        case unread
        case read(JSONValue?, ScalarKey?, keyed: Bool)
    }

    /// The program's truth values: the first 64 as bits of a word, any deeper (a hostile expression's) in an array.
    private struct TruthStack {
        private var bits: UInt64 = 0
        private var count = 0
        private var deeper: [Bool] = []

        var isEmpty: Bool { count == 0 }

        mutating func push(_ value: Bool) {
            if count < 64 {
                bits = value ? bits | (1 << UInt64(count)) : bits & ~(1 << UInt64(count))
            } else {
                deeper.append(value)
            }
            count += 1
        }

        mutating func pop() -> Bool {
            count -= 1
            return count < 64 ? bits & (1 << UInt64(count)) != 0 : deeper.removeLast()
        }
    }

    /// `key`: the value's scalar key (nil for absent values and containers).
    static func holds(_ test: Test, for value: JSONValue?, key: ScalarKey?) -> Bool {
        switch test {
        case .exists:
            return value != nil
        case .type(let type):
            guard let value else { return false }
            return Self.type(value, is: type)
        case .equals(let literal):
            guard let value else { return false }
            return equal(value, key, literal)
        case .notEquals(let literal):
            guard let value else { return true }
            return !equal(value, key, literal)
        case .among(let scalars, let containers):
            guard let value else { return false }
            if let key { return scalars.contains(key) }
            return containers.contains { Self.equal(value, $0) }
        case .order(let comparison, let literal, _):
            switch (key, literal) {
            case (.number(let a)?, .number(let b)): return comparison.holds(ExactDecimal.compare(a, b))
            case (.string(let a)?, .string(let b)): return comparison.holds(a.lexicographicallyPrecedes(b) ? -1 : (a == b ? 0 : 1))
            default: return false
            }
        }
    }

    private static func equal(_ value: JSONValue, _ key: ScalarKey?, _ literal: Literal) -> Bool {
        if let key { return key == literal.key }
        return literal.key == nil && equal(value, literal.value)
    }

    static func type(_ value: JSONValue, is type: JSONType) -> Bool {
        switch (type, value) {
        case (.null, .null), (.boolean, .bool), (.number, .number), (.string, .string), (.array, .array),
             (.object, .object):
            return true
        case (.integer, .number(let n)):
            return n.isInteger
        default:
            return false
        }
    }

    /// JSON equality with numbers by exact value (`1` = `1.0`), strings by bytes, arrays element by element,
    /// objects by their members whatever their order. Iterative.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        var pending: [(JSONValue, JSONValue)] = [(a, b)]
        while let (x, y) = pending.popLast() {
            switch (x, y) {
            case (.null, .null): continue
            case (.bool(let p), .bool(let q)): if p != q { return false }
            case (.number(let p), .number(let q)): if ExactDecimal(p.text) != ExactDecimal(q.text) { return false }
            case (.string(let p), .string(let q)): if !bytesEqual(p, q) { return false }
            case (.array(let p), .array(let q)):
                guard p.count == q.count else { return false }
                for i in p.indices { pending.append((p[i], q[i])) }
            case (.object(let p), .object(let q)):
                guard p.count == q.count else { return false }
                for (key, value) in p {
                    guard let other = q[key] else { return false }
                    pending.append((value, other))
                }
            default: return false
            }
        }
        return true
    }
}

/// Why a `where` expression does not parse: the message and where (1-based column, in Unicode scalars).
public struct RecordFilterSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Where the mistake is: 1-based, in Unicode scalars.
    public var column: Int
    /// What is wrong, e.g. `expected "==" (a single "=" is not an operator)`.
    public var message: String
    /// The expression, for `caretLines`.
    public var text: String

    /// `column N: message`.
    public var description: String { "column \(column): \(message)" }

    /// Two lines: the expression (at most `width` scalars of it, around the column; control characters shown as
    /// spaces) and a caret under the column.
    public func caretLines(width: Int = 72) -> [String] {
        let (scalars, at, start, end) = window(width: width)
        var shown = start > 0 ? "…" : ""
        for s in scalars[start..<end] { shown.unicodeScalars.append(s.value < 0x20 || s.value == 0x7F ? " " : s) }
        if end < scalars.count { shown += "…" }
        let pad = (start > 0 ? 1 : 0) + at - start
        return [shown, String(repeating: " ", count: pad) + "^"]
    }

    /// The expression quoted for a one-line message (a spec's error): whole when it is at most `width` + 24
    /// scalars, else the `width` scalars around the column that `caretLines` shows, `…` where it goes on, and its
    /// length — an expression can be of any length.
    func quotedText(width: Int = 72) -> String {
        let (scalars, _, start, end) = window(width: width)
        guard scalars.count > width + 24 else { return JSONWriter.string(.string(text)) }
        var excerpt = ""
        excerpt.unicodeScalars.append(contentsOf: scalars[start..<end])
        return (start > 0 ? "…" : "") + JSONWriter.string(.string(excerpt)) + (end < scalars.count ? "…" : "")
            + " (\(scalars.count) characters)"
    }

    /// The text's scalars, the column's index among them, and the `width` of them around it.
    private func window(width: Int) -> (scalars: [Unicode.Scalar], at: Int, start: Int, end: Int) {
        let scalars = Array(text.unicodeScalars)
        let at = max(0, min(column - 1, scalars.count))
        let start = max(0, min(at - width / 2, scalars.count - width))
        return (scalars, at, start, min(scalars.count, start + width))
    }
}

/// A scalar as compared by `where`: numbers by exact value, strings by their UTF-8 bytes (whose order is the code
/// points' order). Hashable, so that `in [...]` looks a value up in a set.
enum ScalarKey: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(ExactDecimal)
    case string([UInt8])

    /// nil for arrays and objects.
    init?(_ value: JSONValue) {
        switch value {
        case .null: self = .null
        case .bool(let b): self = .bool(b)
        case .number(let n): self = .number(ExactDecimal(n.text))
        case .string(let s): self = .string(Array(s.utf8))
        case .array, .object: return nil
        }
    }
}

/// A JSON number's exact value, of any size, as its canonical key taken apart (`NumberText.canonicalKey`:
/// `-1.5e-2`): sign (-1, 0, 1), significant digits without trailing zeros, decimal exponent as sign and digits.
/// Equal values give equal keys (`1 == 1.0 == 1e0`, `-0 == 0`); `compare` orders them.
struct ExactDecimal: Hashable, Sendable {
    var sign: Int8 = 0
    var digits: [UInt8] = []
    var exponentNegative = false
    var exponentDigits: [UInt8] = []

    init(_ lexeme: String) {
        let bytes = Array(NumberText.canonicalKey(lexeme).utf8)
        guard bytes != [UInt8(ascii: "0")], let e = bytes.firstIndex(of: UInt8(ascii: "e")) else { return }
        var i = 0
        sign = 1
        if bytes[0] == UInt8(ascii: "-") {
            sign = -1
            i = 1
        }
        digits = bytes[i..<e].filter { $0 != UInt8(ascii: ".") }
        var exponent = bytes[(e + 1)...]
        if exponent.first == UInt8(ascii: "-") {
            exponentNegative = true
            exponent = exponent.dropFirst()
        } else if exponent.first == UInt8(ascii: "+") {
            exponent = exponent.dropFirst()
        }
        exponentDigits = Array(exponent.drop { $0 == UInt8(ascii: "0") })
        if exponentDigits.isEmpty { exponentNegative = false }
    }

    /// -1, 0 or 1.
    static func compare(_ x: ExactDecimal, _ y: ExactDecimal) -> Int {
        if x.sign != y.sign { return x.sign < y.sign ? -1 : 1 }
        if x.sign == 0 { return 0 }
        let magnitude = compareMagnitude(x, y)
        return x.sign > 0 ? magnitude : -magnitude
    }

    /// Value d.ddd × 10^exponent with d ≠ 0: the larger exponent is the larger magnitude, then the digits.
    private static func compareMagnitude(_ x: ExactDecimal, _ y: ExactDecimal) -> Int {
        let exponentOrder = compareSigned(x.exponentNegative, x.exponentDigits, y.exponentNegative, y.exponentDigits)
        if exponentOrder != 0 { return exponentOrder }
        return x.digits.lexicographicallyPrecedes(y.digits) ? -1 : (x.digits == y.digits ? 0 : 1)
    }

    /// Two integers as sign and digits without leading zeros.
    private static func compareSigned(_ xn: Bool, _ x: [UInt8], _ yn: Bool, _ y: [UInt8]) -> Int {
        if xn != yn { return xn ? -1 : 1 }
        var order = x.count == y.count ? 0 : (x.count < y.count ? -1 : 1)
        if order == 0 { order = x.lexicographicallyPrecedes(y) ? -1 : (x == y ? 0 : 1) }
        return xn ? -order : order
    }
}
