import Testing
import StreamMapTestSupport

@testable import StreamMap

/// `--to csv|tsv` in the library: the columns a mapper's output has (`TableLayout`) and the rows of mapped
/// records (`TableWriter`).
@Suite("TableRows")
struct TableRowsTests {
    static func layout(_ spec: String) throws -> TableLayout { try TableLayout(mapper: Spec(json: spec, file: "t").mapper) }

    static func rows(_ spec: String, _ records: [String], format: TableFormat = .csv, delimiter: String = ".") throws -> String {
        let mapper = try Spec(json: spec, file: "t").mapper
        let writer = TableWriter(layout: try TableLayout(mapper: mapper), format: format, delimiter: delimiter)
        var out: [UInt8] = []
        writer.writeHeader(into: &out)
        var engine = StreamEngine(mapper: mapper)
        for record in records {
            var json = JSONWriter()
            let bytes = Array(record.utf8)
            guard case .mapped = bytes.withUnsafeBytes({ engine.map(record: $0, into: &json) }) else { continue }
            json.bytes.withUnsafeBytes { writer.writeRow($0, into: &out) }
        }
        return String(decoding: out, as: UTF8.self)
    }

    @Test func columnsFollowTheSpecsOutputLeavesInOrder() throws {
        let spec = #"""
        {"fields": {
          "id": "id",
          "user.name": {"to": "user.name", "required": false},
          "user": {"to": "profile", "via": {"object": {"fields": {"a": "first", "b": {"to": "deep.second", "required": false}}}}},
          "tags": {"to": "tags", "via": {"arrayOf": "string"}, "required": false},
          "raw": {"to": "raw", "required": false},
          "kept": {"to": "kept", "via": {"object": {"unmapped": "keep", "fields": {"x": "x"}}}, "required": false}
        }}
        """#
        let layout = try Self.layout(spec)
        #expect(layout.columns == [["id"], ["user", "name"], ["profile", "first"], ["profile", "deep", "second"], ["tags"], ["raw"], ["kept"]])
        #expect(layout.header() == ["id", "user.name", "profile.first", "profile.deep.second", "tags", "raw", "kept"])
        #expect(layout.header(delimiter: "/") == ["id", "user/name", "profile/first", "profile/deep/second", "tags", "raw", "kept"])
    }

    @Test func outputsWhoseKeysComeFromTheRecordsHaveNoLayout() throws {
        for (spec, reason) in [
            (#"{"mapper": "identity"}"#, "identity"),
            (#"{"unmapped": "keep", "fields": {"id": "id"}}"#, "\"unmapped\": \"keep\""),
            (#"{"unmapped": {"keys": "camel"}, "fields": {"id": "id"}}"#, "\"unmapped\": \"keep\""),
            (#"{"mapper": {"keys": "camel"}}"#, "key style"),
        ] {
            #expect(throws: TableLayoutError.self) { try Self.layout(spec) }
            do {
                _ = try Self.layout(spec)
            } catch let error as TableLayoutError {
                #expect(error.description.contains(reason), "\(spec): \(error)")
                #expect(error.description.contains("not known before the records are read"))
            }
        }
    }

    @Test func cellsAreQuotedAsRFC4180Says() throws {
        let spec = #"{"fields": {"s": {"to": "s", "required": false}, "n": {"to": "n", "required": false}, "o": {"to": "o", "required": false}}}"#
        let csv = try Self.rows(spec, [
            #"{"s": "plain", "n": 12345678901234567890123, "o": {"a": [1, "x,y"]}}"#,
            #"{"s": "a,b", "n": -1.50e+300, "o": [true, null]}"#,
            #"{"s": "say \"hi\"\nbye\r", "n": 0.1}"#,
            #"{"s": "", "n": null, "o": null}"#,
            #"{"s": "tab\there \u00e9\ud83d\ude00 \u0001"}"#,
        ])
        #expect(csv == """
            s,n,o
            plain,12345678901234567890123,"{""a"":[1,""x,y""]}"
            "a,b",-1.50e+300,"[true,null]"
            "say ""hi""
            bye\r",0.1,
            "",,
            tab\there é😀 \u{01},,

            """)
        let tsv = try Self.rows(spec, [#"{"s": "tab\there, comma", "n": 1}"#, #"{"s": "a,b"}"#], format: .tsv)
        #expect(tsv == "s\tn\to\n\"tab\there, comma\"\t1\t\na,b\t\t\n")
    }

    @Test func nestedDestinationsAndTheSpecsDelimiter() throws {
        let spec = #"{"delimiter": "/", "fields": {"a/b": "x/y", "c": {"to": "x/z", "required": false}, "d,e": {"to": "d,e", "required": false}}}"#
        let csv = try Self.rows(spec, [#"{"a": {"b": 1}, "c": "C", "d,e": 2}"#, #"{"a": {"b": {"k": "v"}}}"#], delimiter: "/")
        #expect(csv == "x/y,x/z,\"d,e\"\n1,C,2\n\"{\"\"k\"\":\"\"v\"\"}\",,\n")
    }

    /// `writeRow` takes any compact object, not only one in the columns' order: members left out in the middle,
    /// in another order, unknown ones (also holding an object), keys written with escapes, nested objects in
    /// another order — each cell is still its column's value.
    @Test func membersInAnyOrderFindTheirColumns() throws {
        let spec = #"{"fields": {"a": "a", "b": "b", "c.x": "c.x", "c.y": "c.y", "d": "d", "é": "e"}}"#
        let writer = TableWriter(layout: try Self.layout(spec), format: .csv)
        func row(_ line: String) -> String {
            var out: [UInt8] = []
            Array(line.utf8).withUnsafeBytes { writer.writeRow($0, into: &out) }
            return String(decoding: out, as: UTF8.self)
        }
        #expect(row(#"{"a":1,"b":2,"c":{"x":3,"y":4},"d":5,"e":6}"#) == "1,2,3,4,5,6\n")
        #expect(row(#"{"a":1,"c":{"y":4},"d":5}"#) == "1,,,4,5,\n")
        #expect(row(#"{"e":6,"d":5,"c":{"y":4,"x":3},"b":2,"a":1}"#) == "1,2,3,4,5,6\n")
        #expect(row(#"{"z":{"a":9,"b":[9]},"b":2,"q":"a","a":1,"c":{"w":0,"x":3}}"#) == "1,2,3,,,\n")
        #expect(row(#"{"\u0061":1,"b":2,"c":{"\u0078":3,"y":4},"\u0064":5,"e":6}"#) == "1,2,3,4,5,6\n")
        #expect(row(#"{"b":2,"a":1,"b":7}"#) == "1,7,,,,\n")
        #expect(row(#"{}"#) == ",,,,,\n")
    }

    /// The reference: a row built from the tree engine's output value, looked up path by path (no scanning).
    static func referenceRow(_ value: JSONValue, _ layout: TableLayout, _ format: TableFormat) -> String {
        func quote(_ s: String) -> String {
            let sep = format == .csv ? "," : "\t"
            guard s.contains(sep) || s.contains("\"") || s.unicodeScalars.contains(where: { $0 == "\n" || $0 == "\r" }) else { return s }
            return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
        }
        let cells = layout.columns.map { steps -> String in
            var v: JSONValue? = value
            for step in steps { v = v?[step] }
            switch v {
            case nil, .null?: return ""
            case .string(let s)?: return s.isEmpty ? "\"\"" : quote(s)
            case let other?: return quote(JSONWriter.string(other))
            }
        }
        return cells.joined(separator: format == .csv ? "," : "\t") + "\n"
    }

    /// Differential: generated mappers whose output has a layout, their records mapped by both engines; each
    /// mapped record's row equals the reference built from the tree engine's value.
    @Test func generatedCasesGiveTheReferenceRows() throws {
        var checked = 0
        for i in 0..<400 {
            let seed = SplitMix64.derive(0x7AB1E, UInt64(i))
            let c = try GeneratedCase.make(seed: seed, index: i)
            guard let layout = try? TableLayout(mapper: c.mapper) else { continue }
            let format: TableFormat = i % 2 == 0 ? .csv : .tsv
            let writer = TableWriter(layout: layout, format: format)
            var stream = StreamEngine(mapper: c.mapper)
            let tree = TreeEngine(mapper: c.mapper)
            for record in c.records {
                var a = JSONWriter(), b = JSONWriter()
                let oa = record.withUnsafeBytes { stream.map(record: $0, into: &a) }
                let ob = record.withUnsafeBytes { tree.map(record: $0, into: &b) }
                guard case .mapped = oa, case .mapped = ob else { continue }
                var rowA: [UInt8] = [], rowB: [UInt8] = []
                a.bytes.withUnsafeBytes { writer.writeRow($0, into: &rowA) }
                b.bytes.withUnsafeBytes { writer.writeRow($0, into: &rowB) }
                #expect(rowA == rowB, "seed \(seed)")
                let value = try JSONParser.parse(String(decoding: b.bytes, as: UTF8.self))
                #expect(String(decoding: rowB, as: UTF8.self) == Self.referenceRow(value, layout, format),
                        "seed \(seed): \(String(decoding: b.bytes, as: UTF8.self)) columns \(layout.columns)")
                checked += 1
            }
        }
        #expect(checked > 300)
    }
}
