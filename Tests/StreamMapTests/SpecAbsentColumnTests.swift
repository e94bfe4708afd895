import Foundation
import Testing
@testable import StreamMap

/// docs/spec.md's mapper table says in its "absent →" column what each mapper gives for an absent value; every row
/// is run here, on a concrete mapper of the row, in both engines' shared evaluation, and the column must say it.
@Suite("docs/spec.md: absent →")
struct SpecAbsentColumnTests {
    enum Outcome: Equatable {
        case absent
        case value(JSONValue, warns: Bool)
        case fatal(MapError.Code)
    }

    /// Per row (by the start of its first cell): the column's text, a mapper of the row and what it gives.
    static let rows: [(row: String, column: String, mapper: String, outcome: Outcome)] = [
        ("`\"identity\"`", "absent", #""identity""#, .absent),
        ("`\"required\"`", "fatal `required`", #"{"required":"integer"}"#, .fatal(.required)),
        ("`\"optional\"`", "`V` (or absent) + warning", #"{"optional":"integer","default":7}"#, .value(7, warns: true)),
        ("`{\"nonFatal\"", "absent", #"{"nonFatal":"integer","default":7}"#, .absent),
        ("`{\"policy\"", "the `missing` action", #"{"policy":"integer","missing":{"default":3}}"#, .value(3, warns: false)),
        ("`\"string\"`", "absent (passes)", #""string""#, .absent),
        ("`{\"object\"", "absent", #"{"object":{"fields":{"a":"b"}}}"#, .absent),
        ("`{\"arrayOf\"", "fatal `type`", #"{"arrayOf":"integer"}"#, .fatal(.type)),
        ("`{\"first\"", "each `M` in turn; absent when none gives a value or an error", #"{"first":["integer","string"]}"#, .absent),
        ("`{\"thread\"", "through each stage", #"["integer",{"optional":"string","default":"d"}]"#, .value("d", warns: true)),
        ("`{\"split\"", "`M`'s", #"{"split":"integer","reverse":"integer"}"#, .absent),
        ("`{\"forward\"", "fatal `read`", #"{"forward":"a.b","via":"identity"}"#, .fatal(.read)),
        ("`{\"backward\"", "`M`, then an empty object `{}` when `M` gives absent", #"{"backward":"a.b","via":"identity"}"#, .value(.object(JSONObject()), warns: false)),
        ("`{\"enum\"", "fatal `required`", #"{"enum":{"a":1}}"#, .fatal(.required)),
        ("`{\"stringToDate\"", "fatal `required`", #"{"stringToDate":"iso8601"}"#, .fatal(.required)),
        ("`{\"dateToString\"", "fatal `required`", #"{"dateToString":"twitter"}"#, .fatal(.required)),
        ("`{\"numberToDate\"", "fatal `required`", #"{"numberToDate":"ms"}"#, .fatal(.required)),
        ("`\"stringToNumber\"", "fatal `required`", #""stringToNumber""#, .fatal(.required)),
        ("`\"toString\"", "fatal `required`", #""toString""#, .fatal(.required)),
        ("`\"url\"", "fatal `required`", #""url""#, .fatal(.required)),
        ("`\"uuid\"", "fatal `required`", #""uuid""#, .fatal(.required)),
        ("`{\"base64\"", "fatal `required`", #"{"base64":true,"from":"standard","to":"url"}"#, .fatal(.required)),
        ("`{\"multiply\"", "fatal `required`", #"{"multiply":6}"#, .fatal(.required)),
        ("`\"lower\"`", "absent", #"["trim",{"replace":["a","b"]}]"#, .absent),
        ("`{\"keys\"", "fatal `required`", #"{"keys":"camel"}"#, .fatal(.required)),
    ]

    /// The table's rows: first cell → the "absent →" cell.
    static func documented() throws -> [(String, String)] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/spec.md"), encoding: .utf8)
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex(of: "| mapper | forward | absent → | reverse |"))
        return lines[(start + 2)...].prefix { $0.hasPrefix("| ") }.map { line in
            let cells = line.dropFirst(2).dropLast(2).components(separatedBy: " | ")
            return (cells[0], cells[2])
        }
    }

    @Test func everyRowIsCoveredAndSaysWhatTheMapperDoes() throws {
        let table = try Self.documented()
        #expect(table.count == Self.rows.count)
        for (first, column) in table {
            let matches = Self.rows.filter { first.hasPrefix($0.row) }
            guard matches.count == 1, let row = matches.first else {
                Issue.record("no single case for the row \(first)")
                continue
            }
            #expect(column == row.column, "\(first)")
            let mapper = try Spec(json: #"{"mapper":\#(row.mapper)}"#).mapper
            let r = mapper.map(nil)
            let outcome: Outcome
            if let fatal = r.errors.first(where: \.isFatal) {
                outcome = .fatal(fatal.code)
            } else if let value = r.value {
                outcome = .value(value, warns: !r.errors.isEmpty)
            } else {
                outcome = .absent
            }
            #expect(outcome == row.outcome, "\(row.mapper)")
        }
    }
}
