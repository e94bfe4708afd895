/// "Did you mean …?": the closest candidate by edit distance (case-insensitive), when it is close enough to be a
/// typo — at most 2 edits, or a third of the word, and some letter kept (`x` is no typo of `a`, nor `zz` of `id`)
/// — or else the shortest candidate that starts with the word, when
/// it has 3 letters or more (`int` → `integer`, `bool` → `boolean`). Spec errors and the command line's flags use
/// the same rule.
///
/// Bounded whatever the names (a spec is hostile input): a word longer than `longestWord` or a candidate longer
/// than `longestCandidate` bytes is never matched, and one suggestion spends at most a budget of work — a cell of
/// the edit-distance table or a candidate looked at, each one unit — after which it answers with what it has.
public enum Suggest {
    /// Words longer than this (in Unicode scalars) get no suggestion: names people mistype are short.
    public static let longestWord = 64
    /// Candidates longer than this (in UTF-8 bytes) are never suggested.
    public static let longestCandidate = 1024
    /// The work one suggestion may spend by default: a 64-letter word against about 200 names of its length, or
    /// 10 000 short ones.
    public static let defaultBudget = 1 << 20

    /// The candidate closest to `word`, or nil when none is close enough (or there are none).
    public static func closest(to word: String, in candidates: [String]) -> String? {
        var budget = defaultBudget
        return closest(to: word, in: candidates, budget: &budget)
    }

    /// The candidate closest to `word`, spending at most `budget` (what is left of it stays there, for the next
    /// suggestion); nil when none is close enough among the candidates looked at.
    public static func closest(to word: String, in candidates: [String], budget: inout Int) -> String? {
        guard word.utf8.count <= 4 * longestWord else { return nil }
        let w = Array(word.lowercased().unicodeScalars)
        guard !w.isEmpty, w.count <= longestWord else { return nil }
        let limit = max(2, w.count / 3)
        var best: (candidate: String, distance: Int)?
        var prefixed: (candidate: String, length: Int)?
        for candidate in candidates {
            budget -= 1
            guard budget > 0 else { break }
            guard candidate.utf8.count <= longestCandidate else { continue }
            let c = Array(candidate.lowercased().unicodeScalars)
            budget -= c.count
            if w.count >= 3, c.count > w.count, c.starts(with: w), c.count < prefixed?.length ?? .max {
                prefixed = (candidate, c.count)
            }
            guard abs(c.count - w.count) <= limit else { continue }
            budget -= w.count * c.count
            let d = distance(w, c)
            if d <= limit, d < max(w.count, c.count), d < best?.distance ?? .max { best = (candidate, d) }
        }
        return best?.candidate ?? prefixed?.candidate
    }

    /// ` (did you mean "x"?)`, or nothing.
    public static func hint(_ word: String, _ candidates: [String]) -> String {
        closest(to: word, in: candidates).map(phrase) ?? ""
    }

    /// ` (did you mean "x"?)`, or nothing, spending at most `budget`.
    public static func hint(_ word: String, _ candidates: [String], budget: inout Int) -> String {
        closest(to: word, in: candidates, budget: &budget).map(phrase) ?? ""
    }

    static func phrase(_ suggestion: String) -> String { " (did you mean \"\(suggestion)\"?)" }

    /// Levenshtein distance.
    static func distance(_ a: [Unicode.Scalar], _ b: [Unicode.Scalar]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        var previous = Array(0...b.count)
        var current = previous
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1))
            }
            swap(&previous, &current)
        }
        return previous[b.count]
    }
}
