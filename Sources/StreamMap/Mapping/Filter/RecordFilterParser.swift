/// Parses a `where` expression into `RecordFilter`'s postfix program, without recursion (operator precedence by
/// an explicit stack: `!` binds tightest, then `&&`, then `||`), in one pass over the text.
///
///     expression := term ("||" term)*          term := factor ("&&" factor)*
///     factor     := "!" factor | "(" expression ")" | test
///     test       := "exists" "(" PATH ")" | PATH "is" TYPE | PATH "in" JSON-ARRAY | PATH OP JSON
///     OP         := "==" | "!=" | "<" | "<=" | ">" | ">="
///
/// A PATH is written bare (`payload.size`, `items.0.id`: anything up to a space or one of `()!=<>&|"[]{},` and
/// a backquote — the delimiter itself always belongs to the path) or between backquotes (`` `first name` ``, a
/// backquote inside doubled). JSON is a JSON text (`"PushEvent"`, `12`, `true`, `null`, `[1, 2]`, `{"a": 1}`).
struct RecordFilterParser: ExpressionScanning {
    let bytes: [UInt8]
    let text: String
    private let delimiter: [UInt8]
    private let delimiterText: String
    var position = 0

    private var program: [RecordFilter.Instruction] = []
    private var paths = DistinctPaths()

    init(text: String, delimiter: String) {
        self.text = text
        self.bytes = Array(text.utf8)
        self.delimiter = Array(delimiter.utf8)
        self.delimiterText = delimiter
    }

    private enum Operator { case not, and, or, open }

    private static func precedence(_ op: Operator) -> Int {
        switch op {
        case .not: return 3
        case .and: return 2
        case .or: return 1
        case .open: return 0
        }
    }

    mutating func parse() throws(RecordFilterSyntaxError) -> ([RecordFilter.Instruction], [KeyPath]) {
        var operators: [(op: Operator, at: Int)] = []
        var expectsOperand = true
        skipSpace()
        if position == bytes.count { throw error(at: 0, "the expression is empty") }
        while true {
            skipSpace()
            let at = position
            if expectsOperand {
                guard position < bytes.count else { throw error(at: at, "expected a test, \"!\" or \"(\" here, found the end of the expression") }
                switch bytes[position] {
                case UInt8(ascii: "!") where peek(1) != UInt8(ascii: "="):
                    position += 1
                    operators.append((.not, at))
                case UInt8(ascii: "("):
                    position += 1
                    operators.append((.open, at))
                default:
                    try parseTest()
                    expectsOperand = false
                }
                continue
            }
            guard position < bytes.count else { break }
            if starts(with: "&&") || starts(with: "||") {
                let op: Operator = bytes[position] == UInt8(ascii: "&") ? .and : .or
                position += 2
                while let top = operators.last, top.op != .open, Self.precedence(top.op) >= Self.precedence(op) {
                    emit(operators.removeLast().op)
                }
                operators.append((op, at))
                expectsOperand = true
            } else if bytes[position] == UInt8(ascii: ")") {
                position += 1
                while let top = operators.last, top.op != .open { emit(operators.removeLast().op) }
                guard operators.popLast() != nil else { throw error(at: at, "\")\" closes no \"(\"") }
            } else if bytes[position] == UInt8(ascii: "&") || bytes[position] == UInt8(ascii: "|") {
                let c = Character(UnicodeScalar(bytes[position]))
                throw error(at: at, "expected \"\(c)\(c)\"")
            } else {
                throw error(at: at, "expected \"&&\", \"||\" or \")\" after a test, found \(found(at))")
            }
        }
        while let top = operators.popLast() {
            if top.op == .open { throw error(at: top.at, "this \"(\" is never closed") }
            emit(top.op)
        }
        return (program, paths.paths)
    }

    private mutating func emit(_ op: Operator) {
        switch op {
        case .not: program.append(.not)
        case .and: program.append(.and)
        case .or: program.append(.or)
        case .open: break
        }
    }

    // MARK: Tests

    private mutating func parseTest() throws(RecordFilterSyntaxError) {
        let start = position
        if functionCallAhead() { return try parseComputedTest(from: start) }
        if wordAhead("exists") {
            let afterWord = position + 6
            position = afterWord
            skipSpace()
            if position < bytes.count && bytes[position] == UInt8(ascii: "(") {
                position += 1
                skipSpace()
                let path = try parsePath(context: "exists(")
                skipSpace()
                guard position < bytes.count, bytes[position] == UInt8(ascii: ")") else {
                    throw error(at: position, "expected \")\" after exists(PATH, found \(found(position))")
                }
                position += 1
                program.append(.test(path: path, .exists))
                return
            }
            position = start  // a key named "exists"
        }
        let path = try parsePath(context: nil)
        skipSpace()
        let at = position
        if wordAhead("in") {
            position += 2
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: "[") else {
                throw error(at: position, "expected a JSON array after \"in\", found \(found(position))")
            }
            guard case .array(let list) = try parseJSON(after: "in") else {
                throw error(at: at, "expected a JSON array after \"in\"")
            }
            program.append(.test(path: path, .among(Set(list.compactMap(ScalarKey.init)),
                                                   containers: list.filter { ScalarKey($0) == nil })))
            return
        }
        if wordAhead("is") {
            position += 2
            skipSpace()
            let typeStart = position
            while position < bytes.count, Self.isWordByte(bytes[position]) { position += 1 }
            let name = String(decoding: bytes[typeStart..<position], as: UTF8.self)
            guard let type = JSONType(rawValue: name) else {
                let names = JSONType.allCases.map(\.rawValue).joined(separator: ", ")
                throw error(at: typeStart, name.isEmpty ? "expected a type after \"is\" (\(names))"
                    : "unknown type \"\(name)\" (one of \(names))")
            }
            program.append(.test(path: path, .type(type)))
            return
        }
        if position < bytes.count, [UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "*"), UInt8(ascii: "/")].contains(bytes[position]) {
            return try parseComputedTest(from: start)  // arithmetic on the left: `price * qty > 100`
        }
        let operators = ["==", "!=", "<=", ">=", "<", ">"]
        guard let op = operators.first(where: { starts(with: $0) }) else {
            if position < bytes.count && bytes[position] == UInt8(ascii: "=") {
                throw error(at: at, "expected \"==\" (a single \"=\" is not an operator)")
            }
            throw error(at: at, "expected ==, !=, <, <=, >, >=, \"in\" or \"is\" after the path, found \(found(at))")
        }
        position += op.utf8.count
        skipSpace()
        // Another field (in backquotes, so that a string written without quotes is not read as a path), a function
        // or an expression on the right: `` a == `b` ``, `a == lower(b)`, `n > (m * 2)`.
        if position < bytes.count && !jsonAhead()
            && (bytes[position] == UInt8(ascii: "`") || bytes[position] == UInt8(ascii: "(") || functionCallAhead() || wordAhead("if")) {
            return try parseComputedTest(from: start)
        }
        let literal = try parseJSON(after: op)
        switch op {
        case "==": program.append(.test(path: path, .equals(RecordFilter.Literal(literal))))
        case "!=": program.append(.test(path: path, .notEquals(RecordFilter.Literal(literal))))
        default:
            switch literal {
            case .number, .string: break
            default:
                let what: String
                switch literal {
                case .array: what = "an array"
                case .object: what = "an object"
                default: what = MapError.describe(literal)
                }
                throw error(at: at, "\(op) compares numbers or strings, not \(what)")
            }
            let integer: Int? = if case .number(let n) = literal { NumberText.smallInteger(n.text) } else { nil }
            program.append(.test(path: path, .order(RecordFilter.Comparison(rawValue: op)!, ScalarKey(literal)!, integer: integer)))
        }
    }

    /// A function call here (a word that names an expression function, then `(`).
    private func functionCallAhead() -> Bool {
        var end = position
        while end < bytes.count && Self.isWordByte(bytes[end]) { end += 1 }
        guard end > position, ExpressionFunction(rawValue: String(decoding: bytes[position..<end], as: UTF8.self)) != nil else { return false }
        while end < bytes.count && (bytes[end] == UInt8(ascii: " ") || bytes[end] == UInt8(ascii: "\t")) { end += 1 }
        return end < bytes.count && bytes[end] == UInt8(ascii: "(")
    }

    /// Whether a JSON value starts here (else the right side of a comparison is a path or an expression).
    private func jsonAhead() -> Bool {
        switch bytes[position] {
        case UInt8(ascii: "\""), UInt8(ascii: "["), UInt8(ascii: "{"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"):
            return peek(1).map { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") } ?? true
        default:
            return wordAhead("true") || wordAhead("false") || wordAhead("null")
        }
    }

    /// A test in the grammar of computed fields (ValueExpression): one comparison, parsed from `start`; its paths
    /// join the filter's.
    private mutating func parseComputedTest(from start: Int) throws(RecordFilterSyntaxError) {
        var parser = ExpressionParser(text: text, delimiter: delimiterText)
        let (steps, expressionPaths, end) = try parser.parseTest(from: start)
        let map = expressionPaths.map { paths.index(of: $0) }
        let source = String(decoding: bytes[start..<end], as: UTF8.self)
        program.append(.compute(ValueExpression(text: source, delimiter: delimiterText, program: steps, paths: expressionPaths), paths: map))
        position = end
    }

    /// A path, bare or between backquotes; returns its index in `paths`.
    private mutating func parsePath(context: String?) throws(RecordFilterSyntaxError) -> Int {
        let start = position
        var raw: [UInt8] = []
        if position < bytes.count && bytes[position] == UInt8(ascii: "`") {
            raw = try backquoted()
        } else {
            while position < bytes.count {
                if !delimiter.isEmpty && starts(with: delimiter) {
                    raw += delimiter
                    position += delimiter.count
                } else if Self.endsBarePath(bytes[position]) {
                    break
                } else {
                    raw.append(bytes[position])
                    position += 1
                }
            }
            guard !raw.isEmpty else {
                let what = context.map { "after \"\($0)\"" } ?? "here"
                throw error(at: start, "expected a path \(what), found \(found(start))")
            }
        }
        let path = KeyPath(String(decoding: raw, as: UTF8.self), delimiter: delimiterText)
        return paths.index(of: path)
    }

    /// A JSON text starting here: its extent found by scanning (strings, nested brackets), then parsed strictly.
    private mutating func parseJSON(after op: String) throws(RecordFilterSyntaxError) -> JSONValue {
        let start = position
        guard position < bytes.count else { throw error(at: start, "expected a JSON value after \(op), found the end of the expression") }
        var depth = 0
        scan: while position < bytes.count {
            let b = bytes[position]
            switch b {
            case UInt8(ascii: "\""):
                position += 1
                while position < bytes.count && bytes[position] != UInt8(ascii: "\"") {
                    position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1
                }
                position = min(position + 1, bytes.count)
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                position += 1
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if depth == 0 { break scan }
                depth -= 1
                position += 1
            default:
                if depth == 0 && !Self.isScalarLiteralByte(b) { break scan }
                position += 1
            }
            if depth == 0 { break }
        }
        if depth == 0 {
            while position < bytes.count, Self.isScalarLiteralByte(bytes[position]) { position += 1 }
        }
        guard position > start else { throw error(at: start, "expected a JSON value after \(op), found \(found(start))") }
        do {
            return try JSONParser.parse(Array(bytes[start..<position]), options: JSONParserOptions(maximumDepth: Self.maximumLiteralDepth))
        } catch {
            let bare = bytes[start] >= 0x80 || Self.isWordByte(bytes[start])
            throw self.error(at: start, "not a JSON value after \(op): \(error.message)"
                             + (bare ? " (a string is written in quotes, another field in backquotes: `name`)" : ""))
        }
    }

    /// Literals nest at most this deep (deeper ones would be freed by recursion).
    static let maximumLiteralDepth = JSONValue.iterativeReleaseDepth

    // MARK: Characters

    private static func endsBarePath(_ b: UInt8) -> Bool {
        switch b {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"), UInt8(ascii: "("),
             UInt8(ascii: ")"), UInt8(ascii: "!"), UInt8(ascii: "="), UInt8(ascii: "<"), UInt8(ascii: ">"),
             UInt8(ascii: "&"), UInt8(ascii: "|"), UInt8(ascii: "\""), UInt8(ascii: "["), UInt8(ascii: "]"),
             UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: ","), UInt8(ascii: "`"):
            return true
        default:
            return false
        }
    }

    /// Bytes of `true`, `false`, `null` and numbers.
    private static func isScalarLiteralByte(_ b: UInt8) -> Bool {
        isWordByte(b) || b == UInt8(ascii: "-") || b == UInt8(ascii: "+") || b == UInt8(ascii: ".")
    }

}
