/// A regular expression that matches in time linear in the text: compiled to a small program that a Pike VM
/// (Thompson's construction, every alternative followed in lock step) runs over the text's Unicode scalars. No
/// backtracking, so no pattern makes it slow: `(a*)*b` on a million `a`s takes a million steps times the program.
///
/// The subset (RE2's, without captures): literals; `.` (any scalar but `\n`); classes `[abc]`, `[a-z]`, `[^…]`;
/// `\d` `\w` `\s` and `\D` `\W` `\S` (ASCII: `[0-9]`, `[A-Za-z0-9_]`, space, tab, `\n`, `\r`, `\f`, `\v`); the
/// escapes `\t` `\n` `\r` `\f` `\v` and `\` before any punctuation; `^` and `$` (the start and end of the text);
/// groups `(…)` and `(?:…)`; `|`; `*`, `+`, `?`, `{n}`, `{n,}`, `{n,m}` (n, m ≤ 1000), each greedy or lazy (`*?`).
/// Back-references, look-around and the like are refused with a message (they cannot run in linear time). Matches
/// are leftmost-first, as in RE2 and Perl: the first alternative that matches wins.
struct LinearRegex: Sendable, Equatable {
    /// The pattern as written.
    let pattern: String
    private let program: [Instruction]

    /// The most instructions a pattern compiles to (counted repetitions multiply).
    static let largestProgram = 20_000
    /// Groups nest at most this deep.
    static let deepestNesting = 100

    enum Instruction: Sendable, Equatable {
        case scalar(Unicode.Scalar)
        case any
        case set(ranges: [ClosedRange<UInt32>], negated: Bool)
        /// Continue at both; the first has priority.
        case split(Int, Int)
        case jump(Int)
        case start, end
        case match
    }

    /// Why a pattern is refused: the message and the offset (in scalars) where the problem is.
    struct SyntaxError: Error, Equatable {
        var offset: Int
        var message: String
    }

    init(_ pattern: String) throws(SyntaxError) {
        var parser = RegexParser(Array(pattern.unicodeScalars))
        let node = try parser.parse()
        var compiler = RegexCompiler()
        try compiler.emit(node)
        compiler.append(.match)
        self.pattern = pattern
        self.program = compiler.program
    }

    static func == (a: LinearRegex, b: LinearRegex) -> Bool { bytesEqual(a.pattern, b.pattern) }

    /// Whether the pattern matches somewhere in `text`.
    func matches(_ text: [Unicode.Scalar]) -> Bool { firstMatch(in: text, from: 0) != nil }

    /// Each non-overlapping match, left to right, replaced by `replacement` (after an empty match the next scalar is
    /// kept and the search goes on after it).
    func replacingMatches(in text: [Unicode.Scalar], with replacement: String, longest: Int) -> String? {
        var out = String.UnicodeScalarView()
        var position = 0
        let insert = replacement.unicodeScalars
        var bytes = 0
        while position <= text.count, let (start, end) = firstMatch(in: text, from: position) {
            out.append(contentsOf: text[position..<start])
            out.append(contentsOf: insert)
            bytes += (start - position) + replacement.utf8.count
            if end == start {
                if start < text.count { out.append(text[start]) }
                position = start + 1
            } else {
                position = end
            }
            if bytes > longest { return nil }
        }
        if position < text.count { out.append(contentsOf: text[position...]) }
        return String(out)
    }

    /// The leftmost-first match starting at or after `from`: its start and end (scalar offsets).
    func firstMatch(in text: [Unicode.Scalar], from: Int) -> (Int, Int)? {
        var current = ThreadList(capacity: program.count)
        var next = ThreadList(capacity: program.count)
        var matched: (Int, Int)? = nil
        var stack: [(pc: Int, start: Int)] = []
        var i = from
        while true {
            if matched == nil { add(0, start: i, at: i, text.count, to: &current, &stack) }
            if current.isEmpty { break }
            let scalar: Unicode.Scalar? = i < text.count ? text[i] : nil
            for t in current.threads {
                switch program[t.pc] {
                case .match:
                    matched = (t.start, i)
                    break  // lower-priority threads are cut
                case .scalar(let c):
                    if scalar == c { add(t.pc + 1, start: t.start, at: i + 1, text.count, to: &next, &stack) }
                    continue
                case .any:
                    if let s = scalar, s != "\n" { add(t.pc + 1, start: t.start, at: i + 1, text.count, to: &next, &stack) }
                    continue
                case .set(let ranges, let negated):
                    if let s = scalar, ranges.contains(where: { $0.contains(s.value) }) != negated {
                        add(t.pc + 1, start: t.start, at: i + 1, text.count, to: &next, &stack)
                    }
                    continue
                default:
                    continue  // (never on a list: `add` follows them)
                }
                break
            }
            if i >= text.count { break }
            swap(&current, &next)
            next.clear()
            i += 1
        }
        return matched
    }

    /// Adds the thread at `pc`, following jumps, splits and assertions (without recursion), to `list` in priority
    /// order; a pc already on the list is not added again (a higher-priority thread has it).
    private func add(_ pc: Int, start: Int, at position: Int, _ count: Int, to list: inout ThreadList, _ stack: inout [(pc: Int, start: Int)]) {
        stack.append((pc, start))
        while let (pc, start) = stack.popLast() {
            guard list.mark(pc) else { continue }
            switch program[pc] {
            case .jump(let target):
                stack.append((target, start))
            case .split(let first, let second):
                stack.append((second, start))
                stack.append((first, start))
            case .start:
                if position == 0 { stack.append((pc + 1, start)) }
            case .end:
                if position == count { stack.append((pc + 1, start)) }
            default:
                list.threads.append((pc, start))
            }
        }
    }

    /// Threads in priority order, with a generation-stamped set of the pcs seen in this step.
    private struct ThreadList {
        var threads: [(pc: Int, start: Int)] = []
        var seen: [UInt32]
        var generation: UInt32 = 1

        init(capacity: Int) { seen = [UInt32](repeating: 0, count: capacity) }
        var isEmpty: Bool { threads.isEmpty }

        mutating func mark(_ pc: Int) -> Bool {
            if seen[pc] == generation { return false }
            seen[pc] = generation
            return true
        }

        mutating func clear() {
            threads.removeAll(keepingCapacity: true)
            generation &+= 1
            if generation == 0 {
                for i in seen.indices { seen[i] = 0 }
                generation = 1
            }
        }
    }
}

/// A parsed pattern.
private indirect enum RegexNode {
    case empty
    case scalar(Unicode.Scalar)
    case any
    case set([ClosedRange<UInt32>], negated: Bool)
    case start, end
    case concat([RegexNode])
    case alternation([RegexNode])
    case repeated(RegexNode, min: Int, max: Int?, greedy: Bool)
}

/// Recursive descent over the pattern's scalars; groups nest at most `LinearRegex.deepestNesting` deep.
private struct RegexParser {
    let s: [Unicode.Scalar]
    var i = 0
    var depth = 0

    init(_ s: [Unicode.Scalar]) { self.s = s }

    func fail(_ message: String, at offset: Int? = nil) -> LinearRegex.SyntaxError {
        LinearRegex.SyntaxError(offset: offset ?? i, message: message)
    }

    mutating func parse() throws(LinearRegex.SyntaxError) -> RegexNode {
        let node = try alternation()
        if i < s.count { throw fail(s[i] == ")" ? "\")\" closes no \"(\"" : "unexpected \"\(s[i])\"") }
        return node
    }

    mutating func alternation() throws(LinearRegex.SyntaxError) -> RegexNode {
        var branches = [try concatenation()]
        while i < s.count && s[i] == "|" {
            i += 1
            branches.append(try concatenation())
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    mutating func concatenation() throws(LinearRegex.SyntaxError) -> RegexNode {
        var items: [RegexNode] = []
        while i < s.count && s[i] != "|" && s[i] != ")" {
            var atom = try self.atom()
            if let (min, max, greedy) = try quantifier() {
                if case .start = atom { throw fail("nothing to repeat before the quantifier") }
                if case .end = atom { throw fail("nothing to repeat before the quantifier") }
                atom = .repeated(atom, min: min, max: max, greedy: greedy)
                if i < s.count, "*+?{".unicodeScalars.contains(s[i]) { throw fail("a quantifier cannot follow another (write a group: (a*)*)") }
            }
            items.append(atom)
        }
        return items.isEmpty ? .empty : items.count == 1 ? items[0] : .concat(items)
    }

    mutating func quantifier() throws(LinearRegex.SyntaxError) -> (Int, Int?, Bool)? {
        guard i < s.count else { return nil }
        var range: (Int, Int?)
        switch s[i] {
        case "*": range = (0, nil); i += 1
        case "+": range = (1, nil); i += 1
        case "?": range = (0, 1); i += 1
        case "{":
            let open = i
            i += 1
            guard let low = number() else { throw fail("expected a count after \"{\" (a literal \"{\" is written \\{)", at: open) }
            var high: Int? = low
            if i < s.count && s[i] == "," {
                i += 1
                high = number()
            }
            guard i < s.count && s[i] == "}" else { throw fail("expected \"}\" to close the count", at: open) }
            i += 1
            if low > 1000 || (high ?? 0) > 1000 { throw fail("a count is at most 1000", at: open) }
            if let high, high < low { throw fail("the counts are the wrong way round", at: open) }
            range = (low, high)
        default:
            return nil
        }
        var greedy = true
        if i < s.count && s[i] == "?" {
            greedy = false
            i += 1
        }
        return (range.0, range.1, greedy)
    }

    mutating func number() -> Int? {
        let start = i
        var value = 0
        while i < s.count, let d = s[i].properties.numericType == .decimal ? Int(String(s[i])) : nil, s[i].isASCII {
            value = min(value * 10 + d, 100_000)
            i += 1
        }
        return i > start ? value : nil
    }

    mutating func atom() throws(LinearRegex.SyntaxError) -> RegexNode {
        let c = s[i]
        switch c {
        case "(":
            let open = i
            i += 1
            if i < s.count && s[i] == "?" {
                guard i + 1 < s.count && s[i + 1] == ":" else {
                    throw fail("\"(?\" groups (look-around, flags, names) are not supported: only (?:…)", at: open)
                }
                i += 2
            }
            depth += 1
            defer { depth -= 1 }
            if depth > LinearRegex.deepestNesting { throw fail("groups nest more than \(LinearRegex.deepestNesting) deep", at: open) }
            let inner = try alternation()
            guard i < s.count && s[i] == ")" else { throw fail("this \"(\" is never closed", at: open) }
            i += 1
            return inner
        case "[":
            return try characterClass()
        case ".":
            i += 1
            return .any
        case "^":
            i += 1
            return .start
        case "$":
            i += 1
            return .end
        case "\\":
            let (node, _) = try escape(inClass: false)
            return node
        case "*", "+", "?":
            throw fail("nothing to repeat before \"\(c)\"")
        case "{":
            if i + 1 < s.count, s[i + 1].properties.numericType == .decimal { throw fail("nothing to repeat before \"{\"") }
            i += 1
            return .scalar(c)
        default:
            i += 1
            return .scalar(c)
        }
    }

    static let digit: [ClosedRange<UInt32>] = [0x30...0x39]
    static let word: [ClosedRange<UInt32>] = [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A]
    static let space: [ClosedRange<UInt32>] = [0x09...0x0D, 0x20...0x20]

    /// `\x` at `i`: a node, and for a class, its ranges (nil for a single scalar's node).
    mutating func escape(inClass: Bool) throws(LinearRegex.SyntaxError) -> (RegexNode, [ClosedRange<UInt32>]?) {
        let at = i
        i += 1
        guard i < s.count else { throw fail("a pattern cannot end with \\", at: at) }
        let c = s[i]
        i += 1
        switch c {
        case "d": return (.set(Self.digit, negated: false), Self.digit)
        case "w": return (.set(Self.word, negated: false), Self.word)
        case "s": return (.set(Self.space, negated: false), Self.space)
        case "D", "W", "S":
            if inClass { throw fail("\\\(c) inside a class is not supported", at: at) }
            return (.set(c == "D" ? Self.digit : c == "W" ? Self.word : Self.space, negated: true), nil)
        case "t": return (.scalar("\t"), nil)
        case "n": return (.scalar("\n"), nil)
        case "r": return (.scalar("\r"), nil)
        case "f": return (.scalar("\u{0C}"), nil)
        case "v": return (.scalar("\u{0B}"), nil)
        default:
            if c.isASCII && !(c.properties.isAlphabetic || c.properties.numericType != nil) {
                return (.scalar(c), nil)  // escaped punctuation
            }
            if c.properties.numericType != nil {
                throw fail("back-references (\\\(c)) are not supported: they cannot match in linear time", at: at)
            }
            throw fail("unknown escape \\\(c)", at: at)
        }
    }

    mutating func characterClass() throws(LinearRegex.SyntaxError) -> RegexNode {
        let open = i
        i += 1
        var negated = false
        if i < s.count && s[i] == "^" {
            negated = true
            i += 1
        }
        var ranges: [ClosedRange<UInt32>] = []
        var first = true
        while true {
            guard i < s.count else { throw fail("this \"[\" is never closed", at: open) }
            if s[i] == "]" && !first { i += 1; break }
            first = false
            var low: UInt32
            if s[i] == "\\" {
                let (node, set) = try escape(inClass: true)
                if let set {
                    ranges += set
                    continue
                }
                guard case .scalar(let c) = node else { continue }
                low = c.value
            } else {
                low = s[i].value
                i += 1
            }
            if i + 1 < s.count && s[i] == "-" && s[i + 1] != "]" {
                i += 1
                var high: UInt32
                if s[i] == "\\" {
                    let (node, set) = try escape(inClass: true)
                    guard set == nil, case .scalar(let c) = node else { throw fail("a class range cannot end with a class", at: i) }
                    high = c.value
                } else {
                    high = s[i].value
                    i += 1
                }
                if high < low { throw fail("the range is the wrong way round", at: i - 1) }
                ranges.append(low...high)
            } else {
                ranges.append(low...low)
            }
        }
        return .set(ranges, negated: negated)
    }
}

/// Emits the program; fails when it would exceed `LinearRegex.largestProgram` instructions, or when spelling out
/// the counts takes more than `mostVisits` steps although it emits little (`((){1000}){1000}` nested deep).
private struct RegexCompiler {
    var program: [LinearRegex.Instruction] = []
    private var visits = 0
    static let mostVisits = 200_000

    mutating func append(_ instruction: LinearRegex.Instruction) {
        program.append(instruction)
    }

    mutating func emit(_ node: RegexNode) throws(LinearRegex.SyntaxError) {
        visits += 1
        if program.count > LinearRegex.largestProgram || visits > Self.mostVisits {
            throw LinearRegex.SyntaxError(offset: 0, message: "the pattern is too large (over \(LinearRegex.largestProgram) steps once its counts are spelled out)")
        }
        switch node {
        case .empty: break
        case .scalar(let c): append(.scalar(c))
        case .any: append(.any)
        case .set(let ranges, let negated): append(.set(ranges: ranges, negated: negated))
        case .start: append(.start)
        case .end: append(.end)
        case .concat(let items):
            for item in items { try emit(item) }
        case .alternation(let branches):
            var jumps: [Int] = []
            for (k, branch) in branches.enumerated() {
                if k < branches.count - 1 {
                    let split = program.count
                    append(.split(split + 1, -1))
                    try emit(branch)
                    jumps.append(program.count)
                    append(.jump(-1))
                    program[split] = .split(split + 1, program.count)
                } else {
                    try emit(branch)
                }
            }
            for j in jumps { program[j] = .jump(program.count) }
        case .repeated(let inner, let min, let max, let greedy):
            for _ in 0..<min { try emit(inner) }
            if let max {
                // Each optional copy: split(body, end of all).
                var splits: [Int] = []
                for _ in min..<max {
                    splits.append(program.count)
                    append(.split(-1, -1))
                    try emit(inner)
                }
                for sp in splits { program[sp] = greedy ? .split(sp + 1, program.count) : .split(program.count, sp + 1) }
            } else {
                let loop = program.count
                append(.split(-1, -1))
                try emit(inner)
                append(.jump(loop))
                program[loop] = greedy ? .split(loop + 1, program.count) : .split(program.count, loop + 1)
            }
        }
    }
}
