/// Parses an expression into `ValueExpression`'s program, in one pass, by recursive descent that nests at most
/// `ValueExpression.maximumNesting` levels (a chain of binary operators is a loop, not a recursion).
///
///     expression := or
///     or         := and ("||" and)*              and := comparison ("&&" comparison)*
///     comparison := sum (("==" | "!=" | "<" | "<=" | ">" | ">=") sum)?
///     sum        := product (("+" | "-") product)*
///     product    := prefix (("*" | "/") prefix)*
///     prefix     := ("-" | "!")* primary
///     primary    := NUMBER | STRING | "true" | "false" | "null" | "(" expression ")"
///                 | "if" expression "then" expression "else" expression
///                 | NAME "(" (expression ("," expression)*)? ")" | PATH
///
/// NUMBER and STRING are JSON's. A PATH is written bare (`price`, `user.name`, `items.0.id`: letters, digits,
/// `_`, `$`, `@`, any non-ASCII character, and the delimiter) or between backquotes (`` `content-type` ``, a
/// backquote inside doubled). `true`, `false`, `null`, `if`, `then` and `else` are words of the language; a key
/// with such a name is written in backquotes.
struct ExpressionParser: ExpressionScanning {
    let bytes: [UInt8]
    let text: String
    private let delimiter: [UInt8]
    private let delimiterText: String
    var position = 0
    private var depth = 0

    private var program: [ValueExpression.Step] = []
    private var paths = DistinctPaths()

    init(text: String, delimiter: String) {
        self.text = text
        self.bytes = Array(text.utf8)
        self.delimiter = Array(delimiter.utf8)
        self.delimiterText = delimiter
    }

    mutating func parse() throws(ExpressionSyntaxError) -> ([ValueExpression.Step], [KeyPath]) {
        skipSpace()
        if position == bytes.count { throw error(at: 0, "the expression is empty") }
        try parseExpression()
        skipSpace()
        if position < bytes.count {
            if bytes[position] == UInt8(ascii: "=") { throw error(at: position, "expected \"==\" (a single \"=\" is not an operator)") }
            throw error(at: position, "expected an operator, found \(found(position))")
        }
        return (program, paths.paths)
    }

    /// For `where`: one comparison (`+ - * /`, functions, one comparison operator; no `&&`, `||`) from byte
    /// `offset` of the text; the program, its paths, and the offset where it stopped.
    mutating func parseTest(from offset: Int) throws(ExpressionSyntaxError) -> ([ValueExpression.Step], [KeyPath], Int) {
        position = offset
        depth = 1
        try parseComparison()
        return (program, paths.paths, position)
    }

    private mutating func parseExpression() throws(ExpressionSyntaxError) {
        depth += 1
        defer { depth -= 1 }
        if depth > ValueExpression.maximumNesting {
            throw error(at: position, "the expression nests more than \(ValueExpression.maximumNesting) levels deep")
        }
        try parseOr()
    }

    private mutating func parseOr() throws(ExpressionSyntaxError) {
        try parseAnd()
        while skipSpaceAndMatch("||") {
            let jump = emitPlaceholder()
            try parseAnd()
            program.append(.requireBoolean)
            program[jump] = .orJump(program.count)
        }
    }

    private mutating func parseAnd() throws(ExpressionSyntaxError) {
        try parseComparison()
        while skipSpaceAndMatch("&&") {
            let jump = emitPlaceholder()
            try parseComparison()
            program.append(.requireBoolean)
            program[jump] = .andJump(program.count)
        }
    }

    private mutating func parseComparison() throws(ExpressionSyntaxError) {
        try parseSum()
        guard let op = comparisonAhead() else { return }
        position += op.rawValue.utf8.count
        try parseSum()
        program.append(.compare(op))
        if comparisonAhead() != nil {
            throw error(at: position, "comparisons do not chain: write \"a < b && b < c\"")
        }
    }

    private mutating func comparisonAhead() -> ValueExpression.Comparison? {
        skipSpace()
        for op in [ValueExpression.Comparison.lessOrEqual, .greaterOrEqual, .equal, .notEqual, .less, .greater] where starts(with: op.rawValue) {
            return op
        }
        if position < bytes.count && bytes[position] == UInt8(ascii: "=") {
            return nil  // reported by the caller as "expected an operator" unless this is "=": say so
        }
        return nil
    }

    private mutating func parseSum() throws(ExpressionSyntaxError) {
        try parseProduct()
        while true {
            skipSpace()
            guard position < bytes.count else { return }
            let op: ValueExpression.Arithmetic
            switch bytes[position] {
            case UInt8(ascii: "+"): op = .add
            case UInt8(ascii: "-"): op = .subtract
            default: return
            }
            position += 1
            try parseProduct()
            program.append(.arithmetic(op))
        }
    }

    private mutating func parseProduct() throws(ExpressionSyntaxError) {
        try parsePrefixed()
        while true {
            skipSpace()
            guard position < bytes.count else { return }
            let op: ValueExpression.Arithmetic
            switch bytes[position] {
            case UInt8(ascii: "*"): op = .multiply
            case UInt8(ascii: "/"): op = .divide  // (a delimiter "/" inside a bare path was taken by the path)
            default: return
            }
            position += 1
            try parsePrefixed()
            program.append(.arithmetic(op))
        }
    }

    /// Prefix operators are counted, not recursed into, then applied innermost first.
    private mutating func parsePrefixed() throws(ExpressionSyntaxError) {
        var prefixes: [ValueExpression.Step] = []
        while true {
            skipSpace()
            guard position < bytes.count else { break }
            if bytes[position] == UInt8(ascii: "-") {
                prefixes.append(.negate)
            } else if bytes[position] == UInt8(ascii: "!") && peek(1) != UInt8(ascii: "=") {
                prefixes.append(.not)
            } else {
                break
            }
            position += 1
            if prefixes.count > ValueExpression.maximumNesting {
                throw error(at: position, "the expression nests more than \(ValueExpression.maximumNesting) levels deep")
            }
        }
        try parsePrimary()
        program.append(contentsOf: prefixes.reversed())
    }

    private mutating func parsePrimary() throws(ExpressionSyntaxError) {
        skipSpace()
        let start = position
        guard position < bytes.count else { throw error(at: start, "expected a value, a path or \"(\" here, found the end of the expression") }
        let b = bytes[position]
        switch b {
        case UInt8(ascii: "("):
            position += 1
            try parseExpression()
            skipSpace()
            guard position < bytes.count, bytes[position] == UInt8(ascii: ")") else {
                throw error(at: position, "expected \")\" to close the \"(\" at column \(column(start)), found \(found(position))")
            }
            position += 1
        case UInt8(ascii: "\""):
            program.append(.literal(try parseString()))
        case UInt8(ascii: "0")...UInt8(ascii: "9"):
            program.append(.literal(try parseNumber()))
        case UInt8(ascii: "`"):
            program.append(.path(try parsePath()))
        default:
            if wordAhead("true") || wordAhead("false") || wordAhead("null") {
                let word = bytes[position] == UInt8(ascii: "t") ? "true" : bytes[position] == UInt8(ascii: "f") ? "false" : "null"
                position += word.utf8.count
                program.append(.literal(word == "null" ? .null : .bool(word == "true")))
            } else if wordAhead("if") {
                try parseIf()
            } else if let name = functionNameAhead() {
                try parseCall(name, at: start)
            } else if Self.endsBarePath(b) && !starts(with: delimiter) {
                throw error(at: start, "expected a value, a path or \"(\" here, found \(found(start))")
            } else {
                for word in ["then", "else"] where wordAhead(word) {
                    throw error(at: start, "\"\(word)\" without \"if\" (a key named \(word) is written `\(word)`)")
                }
                program.append(.path(try parsePath()))
            }
        }
    }

    private mutating func parseIf() throws(ExpressionSyntaxError) {
        let start = position
        position += 2
        depth += 1
        defer { depth -= 1 }
        try parseExpression()
        try expectWord("then", after: "the condition of the \"if\" at column \(column(start))")
        let branch = emitPlaceholder()
        try parseExpression()
        try expectWord("else", after: "the \"then\" branch of the \"if\" at column \(column(start))")
        let jump = emitPlaceholder()
        program[branch] = .branch(program.count)
        try parseExpression()
        program[jump] = .jump(program.count)
    }

    private mutating func expectWord(_ word: String, after what: String) throws(ExpressionSyntaxError) {
        skipSpace()
        guard wordAhead(word) else { throw error(at: position, "expected \"\(word)\" after \(what), found \(found(position))") }
        position += word.utf8.count
    }

    /// A word followed by `(`: the function's name (the position stays at the word).
    private func functionNameAhead() -> String? {
        var end = position
        while end < bytes.count && Self.isWordByte(bytes[end]) { end += 1 }
        guard end > position else { return nil }
        var after = end
        while after < bytes.count && Self.isSpace(bytes[after]) { after += 1 }
        guard after < bytes.count && bytes[after] == UInt8(ascii: "(") else { return nil }
        return String(decoding: bytes[position..<end], as: UTF8.self)
    }

    private mutating func parseCall(_ name: String, at start: Int) throws(ExpressionSyntaxError) {
        guard let function = ExpressionFunction(rawValue: name) else {
            let names = ExpressionFunction.allCases.map(\.rawValue)
            let hint = Suggest.closest(to: name, in: names).map { " (did you mean \"\($0)\"?)" } ?? ""
            throw error(at: start, "unknown function \"\(name)\"\(hint); the functions are \(names.joined(separator: ", "))")
        }
        position += name.utf8.count
        skipSpace()
        position += 1  // "("
        depth += 1
        defer { depth -= 1 }
        var count = 0
        var pendingJumps: [Int] = []
        skipSpace()
        if function == .matches || function == .replaceMatches {
            try parseRegexArguments(function, name: name, at: start)
            return
        }
        if position < bytes.count && bytes[position] == UInt8(ascii: ")") {
            position += 1
        } else {
            while true {
                try parseExpression()
                count += 1
                skipSpace()
                guard position < bytes.count else {
                    throw error(at: position, "expected \",\" or \")\" in the call of \(name)() at column \(column(start)), found the end of the expression")
                }
                if bytes[position] == UInt8(ascii: ",") {
                    position += 1
                    if function == .coalesce { pendingJumps.append(emitPlaceholder()) }
                    continue
                }
                guard bytes[position] == UInt8(ascii: ")") else {
                    throw error(at: position, "expected \",\" or \")\" in the call of \(name)() at column \(column(start)), found \(found(position))")
                }
                position += 1
                break
            }
        }
        guard function.arity.contains(count) else {
            let arity = function.arity
            let wanted = arity.upperBound == Int.max ? "at least \(arity.lowerBound)"
                : arity.lowerBound == arity.upperBound ? "\(arity.lowerBound)" : "\(arity.lowerBound) or \(arity.upperBound)"
            throw error(at: start, "\(name)() takes \(wanted) argument\(wanted == "1" ? "" : "s"), found \(count)")
        }
        if function == .coalesce {
            for j in pendingJumps { program[j] = .coalesceJump(program.count) }
        } else {
            program.append(.call(function, arguments: count))
        }
    }

    /// `matches(s, "pattern")`, `replaceMatches(s, "pattern", to)`: the pattern is a string literal, compiled here
    /// (a pattern outside the linear-time subset is a syntax error at its place).
    private mutating func parseRegexArguments(_ function: ExpressionFunction, name: String, at start: Int) throws(ExpressionSyntaxError) {
        try parseExpression()
        try expectComma(name, at: start)
        skipSpace()
        let literalStart = position
        guard position < bytes.count, bytes[position] == UInt8(ascii: "\"") else {
            throw error(at: position, "\(name)() takes its pattern as a string literal (\"^[a-z]+$\"), found \(found(position))")
        }
        guard case .string(let pattern) = try parseString() else { return }
        let regex: LinearRegex
        do {
            regex = try LinearRegex(pattern)
        } catch {
            throw self.error(at: literalStart, "in the pattern \(JSONWriter.string(.string(pattern))), at \(error.offset + 1): \(error.message)")
        }
        if function == .replaceMatches {
            try expectComma(name, at: start)
            try parseExpression()
        }
        skipSpace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ")") else {
            let takes = function == .matches ? "2 arguments" : "3 arguments"
            throw error(at: position, "\(name)() takes \(takes): expected \")\", found \(found(position))")
        }
        position += 1
        program.append(.regex(regex, replaces: function == .replaceMatches))
    }

    private mutating func expectComma(_ name: String, at start: Int) throws(ExpressionSyntaxError) {
        skipSpace()
        guard position < bytes.count, bytes[position] == UInt8(ascii: ",") else {
            throw error(at: position, "expected \",\" in the call of \(name)() at column \(column(start)), found \(found(position))")
        }
        position += 1
    }

    private mutating func emitPlaceholder() -> Int {
        program.append(.jump(-1))
        return program.count - 1
    }

    // MARK: Literals and paths

    /// A JSON string: its extent found by scanning (backslash escapes), then parsed strictly.
    private mutating func parseString() throws(ExpressionSyntaxError) -> JSONValue {
        let start = position
        position += 1
        while position < bytes.count && bytes[position] != UInt8(ascii: "\"") {
            position += bytes[position] == UInt8(ascii: "\\") ? 2 : 1
        }
        guard position < bytes.count else { throw error(at: start, "this string is never closed") }
        position += 1
        do {
            return try JSONParser.parse(Array(bytes[start..<position]))
        } catch {
            throw self.error(at: start, "not a JSON string: \(error.message)")
        }
    }

    /// A JSON number (no sign: a leading `-` is the operator).
    private mutating func parseNumber() throws(ExpressionSyntaxError) -> JSONValue {
        let start = position
        func digits() { while position < bytes.count && bytes[position] >= UInt8(ascii: "0") && bytes[position] <= UInt8(ascii: "9") { position += 1 } }
        digits()
        if position + 1 < bytes.count && bytes[position] == UInt8(ascii: ".") && Self.isDigit(bytes[position + 1]) {
            position += 1
            digits()
        }
        if position < bytes.count && (bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E")) {
            var next = position + 1
            if next < bytes.count && (bytes[next] == UInt8(ascii: "+") || bytes[next] == UInt8(ascii: "-")) { next += 1 }
            if next < bytes.count && Self.isDigit(bytes[next]) {
                position = next
                digits()
            }
        }
        if position < bytes.count && Self.isWordByte(bytes[position]) {
            throw error(at: start, "not a number: \(found(start)) (a key that starts with a digit is written in backquotes)")
        }
        let lexeme = String(decoding: bytes[start..<position], as: UTF8.self)
        guard let n = JSONNumber(lexeme) else { throw error(at: start, "not a JSON number: \(found(start))") }
        return .number(n)
    }

    private mutating func parsePath() throws(ExpressionSyntaxError) -> Int {
        let start = position
        var raw: [UInt8] = []
        if bytes[position] == UInt8(ascii: "`") {
            raw = try backquoted()
        } else {
            while position < bytes.count {
                if !delimiter.isEmpty && starts(with: delimiter) && position + delimiter.count < bytes.count
                    && !Self.endsBarePath(bytes[position + delimiter.count]) {
                    raw += delimiter
                    position += delimiter.count
                } else if Self.endsBarePath(bytes[position]) {
                    break
                } else {
                    raw.append(bytes[position])
                    position += 1
                }
            }
            guard !raw.isEmpty else { throw error(at: start, "expected a path here, found \(found(start))") }
        }
        let path = KeyPath(String(decoding: raw, as: UTF8.self), delimiter: delimiterText)
        return paths.index(of: path)
    }

    // MARK: Characters

    /// Anything but letters, digits, `_`, `$`, `@` and non-ASCII bytes ends a bare path.
    private static func endsBarePath(_ b: UInt8) -> Bool {
        !(isWordByte(b) || b == UInt8(ascii: "$") || b == UInt8(ascii: "@") || b >= 0x80)
    }

    private mutating func skipSpaceAndMatch(_ s: String) -> Bool {
        skipSpace()
        guard starts(with: s) else { return false }
        position += s.utf8.count
        return true
    }

}
