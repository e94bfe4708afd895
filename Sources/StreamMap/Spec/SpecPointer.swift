/// A JSON Pointer into a spec, built a step at a time as the compiler descends: extending it is O(1) (a node that
/// points to its parent), and the text is only written when an issue needs it. A string extended at every level
/// would make a spec nested 10 000 deep hold 10 000 ever longer strings at once — quadratic in time and memory
/// (600 MB for a 60 KB spec).
struct SpecPointer: ExpressibleByStringInterpolation, CustomStringConvertible, Sendable {
    private final class Step: Sendable {
        let parent: Step?
        /// Already escaped, with its leading "/" (`/fields`, `/a~1b`).
        let text: String
        init(parent: Step?, text: String) {
            self.parent = parent
            self.text = text
        }
    }

    private let last: Step?

    private init(last: Step?) { self.last = last }

    /// A pointer written out (`""` for the whole document, `"/mapper"`).
    init(stringLiteral text: String) { last = text.isEmpty ? nil : Step(parent: nil, text: text) }

    init(stringInterpolation: DefaultStringInterpolation) { self.init(stringLiteral: String(stringInterpolation: stringInterpolation)) }

    /// This pointer followed by `text` (escaped already, starting with "/"). (A method, not `+`: an operator on
    /// a type that string literals make would join every `+` of strings in the module as a candidate, and the
    /// type checker gives up on long concatenations.)
    func appending(_ text: String) -> SpecPointer {
        SpecPointer(last: Step(parent: last, text: text))
    }

    var description: String {
        var texts: [String] = []
        var step = last
        while let s = step {
            texts.append(s.text)
            step = s.parent
        }
        return texts.reversed().joined()
    }
}
