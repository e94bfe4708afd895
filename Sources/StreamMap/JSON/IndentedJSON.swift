/// JSON text for people to read and edit (`streammap infer`'s spec): a value whose compact text fits in the line
/// is written compactly, otherwise its members go one per line, indented by two spaces. Same value, same text.
enum IndentedJSON {
    /// Line width a compact value may take, indentation included.
    static let width = 120

    static func text(_ value: JSONValue) -> String {
        var out = ""
        write(value, indent: 0, prefixWidth: 0, into: &out)
        return out + "\n"
    }

    /// One line: `{"a": 1, "b": [true, null]}`.
    static func spaced(_ value: JSONValue) -> String {
        switch value {
        case .object(let o) where !o.isEmpty:
            return "{" + o.map { JSONWriter.string(.string($0.key)) + ": " + spaced($0.value) }.joined(separator: ", ")
                + "}"
        case .array(let a) where !a.isEmpty:
            return "[" + a.map(spaced).joined(separator: ", ") + "]"
        default:
            return JSONWriter.string(value)
        }
    }

    /// Recursion is as deep as the value: for spec documents, whose depth the inference bounds.
    private static func write(_ value: JSONValue, indent: Int, prefixWidth: Int, into out: inout String) {
        let compact = spaced(value)
        let pad = String(repeating: " ", count: indent)
        switch value {
        case .object(let o) where !o.isEmpty && indent + prefixWidth + compact.utf8.count > width:
            out += "{\n"
            for (i, (key, member)) in o.enumerated() {
                let name = JSONWriter.string(.string(key)) + ": "
                out += pad + "  " + name
                write(member, indent: indent + 2, prefixWidth: name.utf8.count, into: &out)
                out += i == o.count - 1 ? "\n" : ",\n"
            }
            out += pad + "}"
        case .array(let a) where !a.isEmpty && indent + prefixWidth + compact.utf8.count > width:
            out += "[\n"
            for (i, element) in a.enumerated() {
                out += pad + "  "
                write(element, indent: indent + 2, prefixWidth: 0, into: &out)
                out += i == a.count - 1 ? "\n" : ",\n"
            }
            out += pad + "]"
        default:
            out += compact
        }
    }
}
