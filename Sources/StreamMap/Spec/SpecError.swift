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
    /// The problems found (the compiler goes on after the first), at most ``mostIssues`` of them; never empty
    /// when thrown.
    public var issues: [SpecIssue]
    /// How many more problems were found than `issues` holds.
    public var moreIssues: Int

    /// The most issues one error holds: a hostile spec can have a problem at every level of a deep nesting, each
    /// reported with a pointer as long as its depth.
    public static let mostIssues = 100

    /// An error for the spec named `file` with `issues`, and `moreIssues` found but not kept.
    public init(file: String, issues: [SpecIssue], moreIssues: Int = 0) {
        self.file = file
        self.issues = issues
        self.moreIssues = moreIssues
    }

    public var description: String {
        let more = moreIssues > 0 ? ["\(file): … and \(moreIssues) more issue\(moreIssues == 1 ? "" : "s")"] : []
        return (issues.map { "\(file): \($0)" } + more).joined(separator: "\n")
    }
}

