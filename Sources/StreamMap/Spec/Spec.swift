/// A mapping spec: the declarative file format shared by the command-line tool and library users.
/// The format is documented in README.md ("Spec files"); `SpecCompiler` turns it into `Mapper` values.
public struct Spec: Sendable {
    /// The mapper the spec describes (forward: input JSON → output JSON).
    public let mapper: Mapper
    /// The spec's `where`: which input records are mapped (nil: all of them).
    public let filter: RecordFilter?
    /// The spec's `explode`: each mapped record written once per element of an array of its output (nil: once).
    public let explode: RecordExplosion?
    /// The parsed spec document.
    public let document: JSONValue

    /// Parses and fully validates a spec. `file` names the spec in messages.
    public init(json bytes: [UInt8], file: String = "spec") throws(SpecError) {
        let document: JSONValue
        do {
            document = try JSONParser.parse(bytes, rejectingDuplicateKeys: true)
        } catch {
            let (line, column) = Self.lineAndColumn(of: error.byteOffset, in: bytes)
            throw SpecError(file: file, issues: [SpecIssue(pointer: "", message: "line \(line), column \(column): \(error.message)")])
        }
        try self.init(document: document, file: file)
    }

    /// Parses and fully validates a spec from its text. `file` names the spec in messages.
    ///
    /// ```swift
    /// let spec = try Spec(json: #"{"fields": {"user.name": "name", "age": {"to": "age", "type": "integer"}}}"#)
    /// let result = spec.mapper.map(try JSONParser.parse(#"{"user": {"name": "Ada"}, "age": 36}"#))
    /// ```
    ///
    /// - Throws: ``SpecError`` with every issue found: invalid JSON (with its line and column), a duplicate key, an
    ///   unknown mapper or option (with a "did you mean"), a bad date pattern…
    public init(json text: String, file: String = "spec") throws(SpecError) {
        try self.init(json: Array(text.utf8), file: file)
    }

    /// Validates and compiles a spec document already parsed (the object a spec file holds). `file` names the spec
    /// in messages.
    ///
    /// - Throws: ``SpecError`` with every issue found, each at its JSON Pointer into `document`.
    public init(document: JSONValue, file: String = "spec") throws(SpecError) {
        var compiler = SpecCompiler()
        let mapper = compiler.compileDocument(document)
        let filter = compiler.compileFilter(document)
        let explode = compiler.compileExplode(document, mapper: mapper)
        guard compiler.issues.isEmpty, let mapper else { throw SpecError(file: file, issues: compiler.issues, moreIssues: compiler.moreIssues) }
        self.mapper = mapper
        self.filter = filter
        self.explode = explode
        self.document = document
    }

    /// The reverse mapper (model → JSON), derived from the spec. A spec that explodes records has none (many
    /// records cannot be told back into one).
    public func reversed() throws(NotReversibleError) -> Mapper {
        if let explode {
            throw NotReversibleError(mapper: "explode", reason: "one record written once per element of \(explode.pointer) cannot be made one again")
        }
        return try mapper.reversed()
    }

    static func lineAndColumn(of offset: Int, in bytes: [UInt8]) -> (Int, Int) {
        var line = 1, column = 1
        for b in bytes.prefix(offset) {
            if b == 0x0A { line += 1; column = 1 } else if b & 0xC0 != 0x80 { column += 1 }
        }
        return (line, column)
    }
}
