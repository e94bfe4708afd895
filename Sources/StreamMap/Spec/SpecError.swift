/// One problem in a spec file, located by a JSON Pointer into the spec.
public struct SpecIssue: Sendable, Equatable, CustomStringConvertible {
    /// Where in the spec, as a JSON Pointer (`/fields/age/via`); empty for the whole document.
    public var pointer: String
    /// What is wrong, with a "did you mean" when a name looks like a typo.
    public var message: String
    public var description: String { pointer.isEmpty ? message : "\(pointer): \(message)" }
}

/// Everything wrong with a spec, found before any input is read. Printed one issue per line as
/// `spec.json: /fields/age/via: unknown mapper "integr" (did you mean "integer"?)`.
public struct SpecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The spec's name, as given to `Spec(json:file:)` (`spec` by default).
    public var file: String
    /// Every problem found (the compiler goes on after the first); never empty when thrown.
    public var issues: [SpecIssue]

    /// An error for the spec named `file` with `issues`.
    public init(file: String, issues: [SpecIssue]) {
        self.file = file
        self.issues = issues
    }

    public var description: String { issues.map { "\(file): \($0)" }.joined(separator: "\n") }
}

/// "Did you mean …?": the closest candidate by edit distance (case-insensitive), when it is close enough to be a
/// typo — at most 2 edits, or a third of the word. Spec errors and the command line's flags use the same rule.
public enum Suggest {
    /// The candidate closest to `word`, or nil when none is close enough (or there are none).
    public static func closest(to word: String, in candidates: [String]) -> String? {
        let scored = candidates.map { ($0, distance(word.lowercased(), $0.lowercased())) }
        guard let best = scored.min(by: { $0.1 < $1.1 }) else { return nil }
        return best.1 <= max(2, word.count / 3) ? best.0 : nil
    }

    /// ` (did you mean "x"?)`, or nothing.
    public static func hint(_ word: String, _ candidates: [String]) -> String {
        closest(to: word, in: candidates).map { " (did you mean \"\($0)\"?)" } ?? ""
    }

    static func distance(_ a: String, _ b: String) -> Int {
        let a = Array(a.unicodeScalars), b = Array(b.unicodeScalars)
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        for i in 1...a.count {
            var current = [i] + Array(repeating: 0, count: b.count)
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
