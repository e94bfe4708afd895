/// A computed value: an expression over an object's paths (a spec field's `"expr"`, the `--set` flag).
///
///     price * qty                      exact decimal arithmetic: + - * /
///     first + " " + last               + joins two strings
///     if status == 200 then "ok" else "error"
///     coalesce(nickname, name, "anonymous")
///     lower(trim(email))
///
/// It reads only its `paths` of the input, each walked as a field's source path is (`KeyPath.read`), and is held
/// as a postfix program with jumps, so evaluating it never recurses and takes time linear in the program and the
/// values it makes. Parsing limits nesting to `maximumNesting` levels. Grammar and semantics: docs/spec.md,
/// "Computed fields".
///
/// An absent value (a path that is not there) or `null` given to an operator or a function makes the result
/// absent or `null` (SQL's rule): the field's `missing` and `null` policies then decide. `coalesce`, the
/// comparisons and `if` are the exceptions, as documented.
public struct ValueExpression: Sendable, Equatable, CustomStringConvertible {
    /// The expression as written.
    public let text: String
    /// The separator of the steps of its paths (the spec's `delimiter`).
    public let delimiter: String
    /// The distinct paths the expression reads, in order of first use.
    public let paths: [KeyPath]
    let program: [Step]

    /// Parentheses, `if`, function calls and prefix operators nest at most this deep.
    public static let maximumNesting = 64

    /// Parses `text`; paths are split on `delimiter`. Throws the first syntax error, with its column.
    public init(_ text: String, delimiter: String = ".") throws(ExpressionSyntaxError) {
        var parser = ExpressionParser(text: text, delimiter: delimiter)
        let (program, paths) = try parser.parse()
        self.text = text
        self.delimiter = delimiter
        self.paths = paths
        self.program = program
    }

    /// A parsed program (a `where` test parsed by `ExpressionParser.parseTest`).
    init(text: String, delimiter: String, program: [Step], paths: [KeyPath]) {
        self.text = text
        self.delimiter = delimiter
        self.paths = paths
        self.program = program
    }

    public var description: String { text }

    /// The same expression (by bytes) with the same delimiter.
    public static func == (a: ValueExpression, b: ValueExpression) -> Bool {
        bytesEqual(a.text, b.text) && bytesEqual(a.delimiter, b.delimiter)
    }

    /// One step of the program. Operands are on a stack; jumps go to an index of the program.
    enum Step: Sendable {
        case literal(JSONValue)
        case path(Int)
        case negate
        case not
        case arithmetic(Arithmetic)
        case compare(Comparison)
        /// `&&` after its left operand: `true` is popped and the right operand follows; `false`, absent and `null`
        /// stay as the result (jump).
        case andJump(Int)
        /// `||` after its left operand: `false` is popped and the right operand follows; `true`, absent and `null`
        /// stay as the result (jump).
        case orJump(Int)
        /// The right operand of `&&` or `||` must be a boolean (absent and `null` pass).
        case requireBoolean
        /// `if`: pops the condition; anything but `true` jumps to the `else` branch.
        case branch(Int)
        case jump(Int)
        /// `coalesce` after an argument that is not its last: a present, non-null value is the result (jump);
        /// anything else is popped and the next argument follows.
        case coalesceJump(Int)
        case call(ExpressionFunction, arguments: Int)
        /// `matches(s, "re")` (pops s) or `replaceMatches(s, "re", to)` (pops s and to): the pattern compiled once.
        case regex(LinearRegex, replaces: Bool)
    }

    enum Arithmetic: String, Sendable { case add = "+", subtract = "-", multiply = "*", divide = "/" }
    enum Comparison: String, Sendable {
        case equal = "==", notEqual = "!=", less = "<", lessOrEqual = "<=", greater = ">", greaterOrEqual = ">="
    }

    /// What evaluating gives: a value (nil: absent) and the path it came straight from (-1: none, it was made),
    /// or an error.
    enum Evaluation {
        case value(JSONValue?, origin: Int)
        case failure(MapError)
    }

    /// A value on the stack: nil is absent; `origin` is the index of the path it was read from, or -1.
    struct Operand {
        var value: JSONValue?
        var origin: Int
    }

    /// The JSON Pointer an error about path `i`'s value names (its steps as keys: the same in both engines).
    func pointer(_ i: Int) -> JSONPath { i >= 0 ? JSONPath(paths[i].steps.map { .key($0) }) : .root }

    /// Evaluates the program with its paths read from `input` (nil or a scalar: every path is absent).
    func evaluate(on input: JSONValue?) -> Evaluation {
        evaluate { i in input.flatMap { paths[i].read(from: $0)?.value } }
    }

    /// Evaluates the program, given the value at each of `paths` (by index; nil: absent).
    func evaluate(valueAt: (Int) -> JSONValue?) -> Evaluation {
        var stack: [Operand] = []
        return evaluate(stack: &stack, valueAt: valueAt)
    }

    /// `evaluate(valueAt:)` with the operand stack's memory kept by the caller from one evaluation to the next (a
    /// sink evaluates its expression for every record).
    func evaluate(stack: inout [Operand], valueAt: (Int) -> JSONValue?) -> Evaluation {
        defer { stack.removeAll(keepingCapacity: true) }
        stack.removeAll(keepingCapacity: true)
        stack.reserveCapacity(8)
        var pc = 0
        func fail(_ at: Operand, _ error: MapError) -> Evaluation {
            var e = error
            e.sourcePath = pointer(at.origin)
            return .failure(e)
        }
        while pc < program.count {
            let step = program[pc]
            pc += 1
            switch step {
            case .literal(let v):
                stack.append(Operand(value: v, origin: -1))
            case .path(let i):
                stack.append(Operand(value: valueAt(i), origin: i))
            case .negate:
                let a = stack[stack.count - 1]
                guard let v = a.value, !v.isNull else { continue }
                guard case .number(let n) = v, let negated = DecimalArithmetic.negate(n.text) else {
                    return fail(a, .typeMismatch(expected: "number", found: v))
                }
                stack[stack.count - 1] = Operand(value: .number(JSONNumber(unchecked: DecimalArithmetic.plainInteger(negated))), origin: -1)
            case .not:
                let a = stack[stack.count - 1]
                guard let v = a.value, !v.isNull else { continue }
                guard case .bool(let b) = v else { return fail(a, .typeMismatch(expected: "boolean", found: v)) }
                stack[stack.count - 1] = Operand(value: .bool(!b), origin: -1)
            case .arithmetic(let op):
                let b = stack.removeLast(), a = stack.removeLast()
                if let p = Self.propagated(a, b) {
                    stack.append(p)
                    continue
                }
                switch Self.arithmetic(op, a.value!, b.value!) {
                case .success(let v): stack.append(Operand(value: v, origin: -1))
                case .failure(let f): return fail(f.left ? a : b, f.error)
                }
            case .compare(let op):
                let b = stack.removeLast(), a = stack.removeLast()
                stack.append(Operand(value: .bool(Self.compare(op, a.value, b.value)), origin: -1))
            case .andJump(let target), .orJump(let target):
                let a = stack[stack.count - 1]
                guard let v = a.value, !v.isNull else {
                    pc = target
                    continue
                }
                guard case .bool(let truth) = v else { return fail(a, .typeMismatch(expected: "boolean", found: v)) }
                let isAnd: Bool
                if case .andJump = step { isAnd = true } else { isAnd = false }
                if truth == isAnd {
                    stack.removeLast()
                } else {
                    pc = target
                }
            case .requireBoolean:
                let a = stack[stack.count - 1]
                if let v = a.value, !v.isNull {
                    guard case .bool = v else { return fail(a, .typeMismatch(expected: "boolean", found: v)) }
                }
            case .branch(let target):
                let c = stack.removeLast()
                switch c.value {
                case .bool(true)?: break
                case nil, .null?, .bool(false)?: pc = target
                case let v?: return fail(c, .typeMismatch(expected: "boolean", found: v))
                }
            case .jump(let target):
                pc = target
            case .coalesceJump(let target):
                if let v = stack[stack.count - 1].value, !v.isNull {
                    pc = target
                } else {
                    stack.removeLast()
                }
            case .regex(let pattern, let replaces):
                let count = replaces ? 2 : 1
                let arguments = Array(stack[(stack.count - count)...])
                stack.removeLast(count)
                if let p = Self.propagated(arguments) {
                    stack.append(p)
                    continue
                }
                for a in arguments {
                    guard case .string = a.value! else { return fail(a, .typeMismatch(expected: "string", found: a.value)) }
                }
                guard case .string(let s) = arguments[0].value! else { continue }
                let text = Array(s.unicodeScalars)
                if replaces {
                    guard case .string(let replacement) = arguments[1].value!,
                          let out = pattern.replacingMatches(in: text, with: replacement, longest: ExpressionFunction.longestResult) else {
                        return fail(arguments[0], MapError(.value, "replaceMatches(): the result would be longer than \(ExpressionFunction.longestResult >> 20) MiB"))
                    }
                    stack.append(Operand(value: .string(out), origin: -1))
                } else {
                    stack.append(Operand(value: .bool(pattern.matches(text)), origin: -1))
                }
            case .call(let function, let count):
                let arguments = Array(stack[(stack.count - count)...])
                stack.removeLast(count)
                if let p = Self.propagated(arguments) {
                    stack.append(p)
                    continue
                }
                switch function.apply(arguments.map { $0.value! }) {
                case .success(let v): stack.append(Operand(value: v, origin: -1))
                case .failure(let f): return fail(arguments[f.argument], f.error)
                }
            }
        }
        let result = stack.last ?? Operand(value: nil, origin: -1)
        return .value(result.value, origin: result.origin)
    }

    /// The first absent operand, else the first null one: it becomes the result of an operator or a function.
    private static func propagated(_ operands: [Operand]) -> Operand? {
        operands.first { $0.value == nil } ?? operands.first { $0.value!.isNull }
    }

    /// The same for two operands, without an array (every binary operator asks).
    private static func propagated(_ a: Operand, _ b: Operand) -> Operand? {
        if a.value == nil { return a }
        if b.value == nil { return b }
        if a.value!.isNull { return a }
        return b.value!.isNull ? b : nil
    }

    struct OperandError: Error {
        var left: Bool
        var error: MapError
    }

    /// Operands whose significant digits exceed this are refused by `*` and `/` (their cost grows with the
    /// product of the two lengths): far beyond any decimal type (decimal128 holds 34 digits).
    public static let mostDigitsMultiplied = 1000
    /// Quotients that do not terminate are rounded to this many significant digits (or to the dividend's digits,
    /// when it has more), half to even: decimal128's precision.
    public static let divisionDigits = 34

    static func arithmetic(_ op: Arithmetic, _ a: JSONValue, _ b: JSONValue) -> Result<JSONValue, OperandError> {
        switch (a, b) {
        case (.number(let x), .number(let y)):
            // Integers of up to 18 digits whose result fits an Int (nearly all counts and ids): machine arithmetic,
            // the same digits as the decimal path's (whose zero is "0" too); the rest, and `/`, exactly below.
            if op != .divide, let i = NumberText.smallInteger(x.text), let j = NumberText.smallInteger(y.text) {
                let (r, overflow) = op == .add ? i.addingReportingOverflow(j)
                    : op == .subtract ? i.subtractingReportingOverflow(j) : i.multipliedReportingOverflow(by: j)
                if !overflow { return .success(.number(JSONNumber(r))) }
            }
            let result: String?
            switch op {
            case .add, .subtract:
                let right = op == .add ? y.text : DecimalArithmetic.negate(y.text) ?? y.text
                result = DecimalArithmetic.add(x.text, right)
                if result == nil {
                    return .failure(OperandError(left: false, error: MapError(.value, "the exact result of \(x.text.prefix(40)) \(op.rawValue) \(y.text.prefix(40)) is too long to write")))
                }
            case .multiply, .divide:
                func tooLong(_ text: String, left operand: Bool) -> OperandError? {
                    guard let digits = DecimalArithmetic.significantDigits(text) else {
                        return OperandError(left: operand, error: MapError(.value, "\(text.prefix(40)) is out of range for \"\(op.rawValue)\""))
                    }
                    guard digits <= mostDigitsMultiplied else {
                        return OperandError(left: operand, error: MapError(.value, "\"\(op.rawValue)\" takes numbers of at most \(mostDigitsMultiplied) significant digits"))
                    }
                    return nil
                }
                if let e = tooLong(x.text, left: true) ?? tooLong(y.text, left: false) { return .failure(e) }
                if op == .multiply {
                    result = DecimalArithmetic.multiply(x.text, y.text)
                } else {
                    guard DecimalArithmetic.significantDigits(y.text) != 0 else {
                        return .failure(OperandError(left: false, error: MapError(.value, "division by zero")))
                    }
                    result = DecimalArithmetic.divide(x.text, y.text, digits: divisionDigits)
                }
            }
            guard let result else {
                return .failure(OperandError(left: true, error: MapError(.value, "the result of \"\(op.rawValue)\" is out of range")))
            }
            return .success(.number(JSONNumber(unchecked: DecimalArithmetic.plainInteger(result))))
        case (.string(let x), .string(let y)) where op == .add:
            return .success(.string(x + y))
        case (.number, _):
            return .failure(OperandError(left: false, error: .typeMismatch(expected: "number", found: b)))
        case (.string, _) where op == .add:
            return .failure(OperandError(left: false, error: .typeMismatch(expected: "string", found: b)))
        default:
            return .failure(OperandError(left: true, error: .typeMismatch(expected: op == .add ? "number or string" : "number", found: a)))
        }
    }

    /// `==` and `!=` as `where` compares (numbers by value, strings by code points, containers member by member;
    /// absent equals nothing); the orders hold only between two numbers or two strings.
    static func compare(_ op: Comparison, _ a: JSONValue?, _ b: JSONValue?) -> Bool {
        switch op {
        case .equal, .notEqual:
            var same = false
            if let a, let b { same = RecordFilter.equal(a, b) }
            return op == .equal ? same : !same
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            let order: Int
            switch (a, b) {
            case (.number(let x)?, .number(let y)?): order = ExactDecimal.compare(ExactDecimal(x.text), ExactDecimal(y.text))
            case (.string(let x)?, .string(let y)?):
                order = x.utf8.lexicographicallyPrecedes(y.utf8) ? -1 : (bytesEqual(x, y) ? 0 : 1)
            default: return false
            }
            switch op {
            case .less: return order < 0
            case .lessOrEqual: return order <= 0
            case .greater: return order > 0
            default: return order >= 0
            }
        }
    }
}

/// Why an expression does not parse: the same shape as a `where` expression's error (message, 1-based column in
/// Unicode scalars, `caretLines`).
public typealias ExpressionSyntaxError = RecordFilterSyntaxError
