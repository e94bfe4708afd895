// Random `where` expressions (RecordFilter) for the differential tests and the fuzz target: tests of every kind
// (comparisons, `in`, `exists`, `is`) on the paths a mapper's records have (from its Shape) and on random ones,
// with literals drawn from values that fit those paths (so that both outcomes are common), numbers that differ only
// past 2^53 or in spelling (`1` and `1.0`), strings that differ in a code point; combined with `!`, `&&`, `||` and
// parentheses. Paths are written bare or between backquotes, with a delimiter their keys do not contain.

import StreamMap

public struct FilterGen {
    public var r: Rand
    public init(_ r: Rand) { self.r = r }

    /// An expression, its delimiter and the filter it compiles to (nil only if the generator wrote an expression
    /// that does not parse — a generator bug, reported by the tests).
    public mutating func filter(for shape: Shape) -> (text: String, delimiter: String, filter: RecordFilter?) {
        var candidates: [(steps: [String], shape: Shape)] = []
        collect(shape, prefix: [], into: &candidates, depth: 0)
        for key in ["id", "type", "a", "0", "user", "missing", "é"] where r.percent(30) {
            candidates.append(([key], .any))
        }
        if candidates.isEmpty { candidates.append((["id"], .any)) }
        let delimiter = r.pick(Catalog.delimiters)
        // A path whose keys contain the delimiter cannot be written: it is left out.
        let usable = candidates.filter { c in !c.steps.contains { Self.contains(Array($0.utf8), Array(delimiter.utf8)) } }
        let paths = usable.isEmpty ? [(steps: ["id"], shape: Shape.any)] : usable
        let text = expression(paths, delimiter: delimiter, depth: 0)
        return (text, delimiter, try? RecordFilter(text, delimiter: delimiter))
    }

    private mutating func collect(_ shape: Shape, prefix: [String], into out: inout [(steps: [String], shape: Shape)], depth: Int) {
        guard depth < 4, out.count < 24 else { return }
        switch shape {
        case .object(let entries, _):
            for e in entries {
                let steps = prefix + e.steps
                out.append((steps, e.shape))
                collect(e.shape, prefix: steps, into: &out, depth: depth + 1)
            }
        case .oneOf(let members):
            for m in members { collect(m, prefix: prefix, into: &out, depth: depth + 1) }
        case .array(let item):
            out.append((prefix + ["0"], item))
            collect(item, prefix: prefix + ["0"], into: &out, depth: depth + 1)
        case .tuple(let items):
            for (i, item) in items.enumerated().prefix(3) { out.append((prefix + [String(i)], item)) }
        default:
            break
        }
    }

    private mutating func expression(_ paths: [(steps: [String], shape: Shape)], delimiter: String, depth: Int) -> String {
        let kind = depth >= 3 ? 0 : r.weighted([(55, 0), (12, 1), (15, 2), (12, 3), (6, 4)])
        switch kind {
        case 1: return "!" + space() + expression(paths, delimiter: delimiter, depth: depth + 1)
        case 2: return expression(paths, delimiter: delimiter, depth: depth + 1) + space() + "&&" + space() + expression(paths, delimiter: delimiter, depth: depth + 1)
        case 3: return expression(paths, delimiter: delimiter, depth: depth + 1) + space() + "||" + space() + expression(paths, delimiter: delimiter, depth: depth + 1)
        case 4: return "(" + space() + expression(paths, delimiter: delimiter, depth: depth + 1) + space() + ")"
        default:
            let (steps, shape) = r.pick(paths)
            if r.percent(15), let computed = expressionPath(steps, delimiter: delimiter) { return computedTest(computed) }
            return test(path(steps, delimiter: delimiter) ?? "id", shape)
        }
    }

    private mutating func test(_ path: String, _ shape: Shape) -> String {
        switch r.weighted([(28, 0), (10, 1), (18, 2), (12, 3), (10, 4), (10, 5), (12, 6)]) {
        case 0: return path + space() + "==" + space() + literal(shape)
        case 1: return path + space() + "!=" + space() + literal(shape)
        case 2:
            let op = r.pick(["<", "<=", ">", ">="])
            let value = r.percent(50) ? number() : quoted(r.pick(Self.strings))
            return path + space() + op + space() + value
        case 3:
            let items = (0..<r.int(0...3)).map { _ in literal(shape) }
            return path + " in [" + items.joined(separator: "," + space()) + "]"
        case 4: return "exists(" + space() + path + space() + ")"
        case 5: return path + " is " + r.pick(JSONType.allCases.map(\.rawValue))
        // Null against absent: the distinction most easily lost.
        default: return r.pick([path + " == null", path + " is null", path + " in [null," + space() + literal(shape) + "]",
                                "exists(" + path + ") && " + path + " != null"])
        }
    }

    /// A test in the grammar of computed fields: functions, arithmetic, a path against itself.
    private mutating func computedTest(_ p: String) -> String {
        switch r.below(7) {
        case 0: return "length(" + p + ")" + space() + ">" + space() + String(r.below(4))
        case 1: return "contains(string(" + p + ")," + space() + quoted(r.pick(["a", "1", "", "é"])) + ")"
        case 2: return "startsWith(lower(string(" + p + "))," + space() + quoted(r.pick(["a", "t", "-"])) + ")"
        case 3: return p + space() + "==" + space() + p
        case 4: return p + " * 2 >= " + p + " + 1"
        case 5: return "coalesce(" + p + ", 0) != 0"
        default: return "trim(string(" + p + ")) == " + quoted(r.pick(["a", "1", "true"]))
        }
    }

    /// The path between backquotes as the expression grammar reads it (nil when that does not read back as these
    /// steps).
    private func expressionPath(_ steps: [String], delimiter: String) -> String? {
        var quoted = "`"
        for s in steps.joined(separator: delimiter).unicodeScalars {
            if s == "`" { quoted += "``" } else { quoted.unicodeScalars.append(s) }
        }
        quoted += "`"
        guard let e = try? ValueExpression(quoted, delimiter: delimiter), e.paths.count == 1,
              e.paths[0].steps.map({ Array($0.utf8) }) == steps.map({ Array($0.utf8) }) else { return nil }
        return quoted
    }

    /// The path written bare (when it reads back as these steps) or between backquotes (a backquote inside
    /// doubled); nil when neither reads back as these steps (the steps and the delimiter run into each other).
    private mutating func path(_ steps: [String], delimiter: String) -> String? {
        let text = steps.joined(separator: delimiter)
        func readsBack(_ written: String) -> Bool {
            guard let f = try? RecordFilter(written + " == 0", delimiter: delimiter), f.paths.count == 1 else { return false }
            return f.paths[0].steps.map { Array($0.utf8) } == steps.map { Array($0.utf8) }
        }
        if r.percent(70) && readsBack(text) { return text }
        var quoted = "`"
        for s in text.unicodeScalars {
            if s == "`" { quoted += "``" } else { quoted.unicodeScalars.append(s) }
        }
        quoted += "`"
        return readsBack(quoted) ? quoted : nil
    }

    /// A literal: mostly a value that fits the path's shape, else one of the tricky catalogue.
    private mutating func literal(_ shape: Shape) -> String {
        if r.percent(55) {
            var inputs = InputGen(r.fork())
            let bytes = inputs.render(inputs.sample(shape))
            if let value = try? JSONParser.parse(bytes, options: JSONParserOptions(maximumDepth: 64)) {
                let text = JSONWriter.string(value)
                if text.utf8.count < 400 { return text }
            }
        }
        switch r.below(4) {
        case 0: return number()
        case 1: return quoted(r.pick(Self.strings))
        case 2: return r.pick(["true", "false", "null", "[]", "{}", #"[1,"a"]"#, #"{"b":1,"a":[2.0]}"#])
        default: return r.pick(["0", "-0", "1", "1.0", "10e-1", #""1""#, #""""#])
        }
    }

    private mutating func number() -> String {
        r.pick(["0", "-0", "1", "1.0", "1e0", "-1", "2", "3.5", "-273.15", "1e2", "100", "9007199254740992",
                "9007199254740993", "12345678901234567890123", "1e-400", "1E+400", "0.1", "-1e5"])
    }

    private mutating func quoted(_ s: String) -> String { JSONWriter.string(.string(s)) }

    private mutating func space() -> String { r.pick(["", " ", " ", "  ", "\t"]) }

    private static func contains(_ bytes: [UInt8], _ part: [UInt8]) -> Bool {
        guard !part.isEmpty, bytes.count >= part.count else { return false }
        return (0...(bytes.count - part.count)).contains { bytes[$0..<($0 + part.count)].elementsEqual(part) }
    }

    static let strings = ["", "a", "b", "PushEvent", "Push", "é", "e\u{301}", "z", "Z", "😀", "\u{FFFF}", "a b", "0", "1"]
}
