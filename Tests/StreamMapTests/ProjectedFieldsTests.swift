// Fields written straight from the projector's slots (`ProjectedFields`): what it writes must be what the sinks
// (and the tree engine, the reference) write, and every record it is not sure of must go the usual way.

import StreamMapTestSupport
import Testing

@testable import StreamMap

@Suite struct ProjectedFieldsTests {
    static let spec = #"""
        {"fields": {
          "s": {"to": "s", "type": "string"},
          "any": {"to": "any"},
          "n": {"to": "num.n", "type": "integer"},
          "x": {"to": "num.x", "type": "number"},
          "b": {"to": "b", "type": "boolean", "default": false},
          "opt": {"to": "opt", "type": "integer", "missing": "omit", "null": "omit"},
          "def": {"to": "def", "type": "string", "default": "d"},
          "date": {"to": "ms", "via": [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}]},
          "u": {"to": "u", "via": ["url"], "required": false},
          "user.name": {"to": "user.name", "type": "string"},
          "user.deep.x": {"to": "x", "required": false},
          "w": {"to": "w", "type": "integer", "invalid": "omit", "required": false}
        }}
        """#

    /// What the projection's way does with a record.
    enum Way: Equatable {
        /// Written from the projection.
        case written
        /// Rejected there, with the errors the tree engine gives it.
        case rejected
        /// Declined: mapped the usual way.
        case declined
    }

    /// Records, and what the projection's way does with each.
    static let records: [(String, Way)] = [
        (#"{"s":"a","any":1,"n":2,"x":3,"b":true,"opt":4,"def":"e","date":"2020-01-02T03:04:05Z","u":"https://a.b/c","user":{"name":"N","deep":{"x":"y"}}}"#, .written),
        // Escapes of every kind in copied strings, numbers of every form, a date with an escape.
        (#"{"s":"q\"\\\/\b\f\n\r\t\u00e9\uD83D\uDE00\u001f","any":"\u0041","n":-0,"x":-1.5e+3,"b":false,"date":"2020-01-02T03:04:05.120\u005A","user":{"name":"\u4e2d"}}"#, .written),
        // Absent and null values the fields' policies decide; members in another order; whitespace everywhere.
        (#" { "user" : { "deep" : { "x" : null } , "name" : "" } , "opt" : null , "def" : null , "any" : "v" , "s" : "" , "n" : 0 , "x" : 0.5 , "date" : "1970-01-01T00:00:00Z" } "#, .written),
        (#"{"s":"a","any":[1],"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":{"name":"N"}}"#, .declined),  // a container
        (#"{"s":"a","any":{"k":1},"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":{"name":"N"}}"#, .declined),
        (#"{"s":"a","any":1,"n":2.0,"x":3,"date":"2020-01-02T03:04:05Z","user":{"name":"N"}}"#, .rejected),  // not an integer
        (#"{"s":1,"any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":{"name":"N"}}"#, .rejected),  // not a string
        (#"{"s":"a","any":1,"n":2,"x":"3","date":"2020-01-02T03:04:05Z","user":{"name":"N"}}"#, .rejected),
        (#"{"s":"a","s":"b","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":{"name":"N"}}"#, .declined),  // a key twice
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":"N"}"#, .declined),  // not an object on the way
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":null}"#, .declined),
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":{"name":"N"},"user":{"name":"M"}}"#, .declined),
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z"}"#, .rejected),  // a required value absent
        (#"{"s":"a","any":null,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":{"name":"N"}}"#, .rejected),  // or null
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":{"name":"N","deep":{"x":[1]}}}"#, .declined),
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"yesterday","user":{"name":"N"}}"#, .rejected),  // not a date
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","u":"::","user":{"name":"N"}}"#, .rejected),  // not a URL
        (#"{"s":"a","any":1,"n":2,"x":3,"b":"yes","date":"2020-01-02T03:04:05Z","user":{"name":"N"}}"#, .rejected),
        // Several fields fail: every error, in field order; a warning among them is reported with them.
        (#"{"w":"2","s":1,"any":null,"n":"2","x":3,"date":"yesterday","u":"::","user":{"deep":{"x":1}}}"#, .rejected),
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","w":false,"user":{"name":"N"}}"#, .declined),  // a warning alone
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","w":1.5,"user":{"name":7}}"#, .rejected),
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","w":7,"user":{"name":"N"}}"#, .written),
        (#"{"\u0073":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":{"name":"N"}}"#, .declined),  // an escaped key
        (#"{"s":"a","any":1,"n":2,"x":3,"date":"2020-01-02T03:04:05Z","user":{"name":"N"},}"#, .declined),  // a syntax error
        (#"{"s":"a","any":true,"n":2,"x":3,"opt":-7,"date":"2020-01-02T03:04:05+01:00","u":"mailto:a@b.c","user":{"deep":{"x":"deep"},"name":"N"}}"#, .written),
    ]

    @Test func writtenAsTheTreeWritesThemAndOnlyWhenSure() throws {
        let mapper = try Spec(json: Array(Self.spec.utf8), file: "projected.spec.json").mapper
        var stream = StreamEngine(mapper: mapper)
        let tree = TreeEngine(mapper: mapper)
        for (record, way) in Self.records + Self.records.reversed() {
            let before = (stream.projectedFieldRecords, stream.projectedFieldRejections)
            expectSameMapping(&stream, tree, Array(record.utf8))
            let taken: Way = stream.projectedFieldRecords > before.0 ? .written : stream.projectedFieldRejections > before.1 ? .rejected : .declined
            #expect(taken == way, "record: \(record)")
        }
    }

    /// With a `where`, the filter and the mapping share the projection, and the fields are still written from it.
    @Test func aFilterKeepsTheWay() throws {
        let mapper = try Spec(json: Array(Self.spec.utf8), file: "projected.spec.json").mapper
        let filter = try RecordFilter("n > 0 && exists(user.name)")
        var stream = StreamEngine(mapper: mapper, filter: filter)
        let tree = TreeEngine(mapper: mapper, filter: filter)
        for (record, _) in Self.records {
            expectSameMapping(&stream, tree, Array(record.utf8))
        }
        #expect(stream.filterSharesProjection)
        // (The first record, the last and the one with `"w":7`: the others are dropped, rejected or declined.)
        #expect(stream.projectedFieldRecords == 3)
        #expect(stream.projectedFieldRejections > 0)
        // (All but the escaped key, the syntax error, and the three records whose `user` is not one object.)
        #expect(stream.projectedFilterRecords == Self.records.count - 5)
    }

    /// The Arrow output's checks that each value fits its column (`ArrowSchema.checking`): a value that fits is
    /// written straight from the projection; one that does not (an integer past Int64) is declined, and the record
    /// is rejected as the tree rejects it.
    @Test func valuesCheckedForTheirColumns() throws {
        let spec = #"{"fields": {"s": {"to": "s", "type": "string"}, "n": {"to": "n", "type": "integer"}, "x": {"to": "x", "type": "number"}, "b": {"to": "b", "type": "boolean", "default": false}, "d": {"to": "ms", "via": [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}]}}}"#
        let plain = try Spec(json: Array(spec.utf8), file: "arrow.spec.json").mapper
        let mapper = try ArrowSchema(mapper: plain).checking(plain)
        var stream = StreamEngine(mapper: mapper)
        let tree = TreeEngine(mapper: mapper)
        let records: [(String, Bool)] = [
            (#"{"s":"a\u00e9","n":9223372036854775807,"x":-1.5e300,"b":true,"d":"2020-01-02T03:04:05Z"}"#, true),
            (#"{"s":"","n":-9223372036854775808,"x":0,"d":"2020-01-02T03:04:05.250Z"}"#, true),
            (#"{"s":"a","n":9223372036854775808,"x":1,"d":"2020-01-02T03:04:05Z"}"#, false),
            (#"{"s":"a","n":1,"x":1e400,"d":"2020-01-02T03:04:05Z"}"#, false),
        ]
        for (record, direct) in records {
            let before = stream.projectedFieldRecords
            expectSameMapping(&stream, tree, Array(record.utf8))
            #expect((stream.projectedFieldRecords > before) == direct, "record: \(record)")
        }
    }

    /// An object's layout for each set of fields a record fills (`DestinationTree`): the first 32 sets are kept,
    /// later ones made for their record and freed after it, and a mapping of more than 64 fields (written by the
    /// streamed object, not from the projection) has its layout made for every record. Every set of 7 optional
    /// fields with nested destinations, twice over, and 70 fields with a different handful absent per record: each
    /// record as the tree engine writes it.
    @Test func layoutsPastTheCacheAndPastSixtyFourFields() throws {
        let names = ["a", "b", "c", "d", "e", "f", "g"]
        let fields = names.enumerated().map { i, name in
            #""\#(name)": {"to": "\#(i % 2 == 0 ? "even" : "odd").\#(i % 3 == 0 ? "third." : "")\#(name)", "missing": "omit", "null": "omit"}"#
        }
        let mapper = try Spec(json: Array(#"{"fields": {\#(fields.joined(separator: ","))}}"#.utf8), file: "sets.spec.json").mapper
        var stream = StreamEngine(mapper: mapper)
        let tree = TreeEngine(mapper: mapper)
        for _ in 0..<2 {
            for set in 0..<(1 << names.count) {
                let members = names.indices.filter { set & (1 << $0) != 0 }.map { #""\#(names[$0])":\#($0)"# }
                expectSameMapping(&stream, tree, Array("{\(members.joined(separator: ","))}".utf8))
            }
        }
        #expect(stream.projectedFieldRecords == 2 << names.count)

        let many = (0..<70).map { #""k\#($0)": {"to": "o\#($0 % 5).k\#($0)", "missing": "omit"}"# }
        let wide = try Spec(json: Array(#"{"fields": {\#(many.joined(separator: ","))}}"#.utf8), file: "wide.spec.json").mapper
        var wideStream = StreamEngine(mapper: wide)
        let wideTree = TreeEngine(mapper: wide)
        for r in 0..<40 {
            let members = (0..<70).filter { ($0 * 7 + r) % 11 != 0 }.map { #""k\#($0)":\#($0 * r)"# }
            expectSameMapping(&wideStream, wideTree, Array("{\(members.joined(separator: ","))}".utf8))
        }
    }

    /// Mappings this way cannot write are not written this way: several sources, a computed field, kept members,
    /// a path through an array index, a field that reads an object whole.
    @Test func onlyFieldsOfOneScalarAtAPathOfKeys() throws {
        let record = Array(#"{"a":1,"b":{"c":2},"d":[3]}"#.utf8)
        let mappers: [Mapper] = [
            .object(ObjectMapping(fields: [.init(sources: [KeyPath("a"), KeyPath("b.c")], destinations: [KeyPath("ac")], mapper: .identity)])),
            .object(ObjectMapping(fields: [.init("a")], unmapped: .keep)),
            .object(ObjectMapping(fields: [.init("d.0", to: "d")])),
            .object(ObjectMapping(fields: [.init("b", to: "b"), .init("b.c", to: "c")])),
        ]
        for mapper in mappers {
            var stream = StreamEngine(mapper: mapper)
            expectSameMapping(&stream, TreeEngine(mapper: mapper), record)
            #expect(stream.projectedFieldRecords == 0)
        }
        let plain: Mapper = .object(ObjectMapping(fields: [.init("a", to: "x.y"), .init("b.c", to: "x.z")]))
        var stream = StreamEngine(mapper: plain)
        expectSameMapping(&stream, TreeEngine(mapper: plain), record)
        #expect(stream.projectedFieldRecords == 1)
    }

    /// Generated specs of such fields (types, defaults, policies, dates, a conversion, paths that nest and share
    /// prefixes) on generated records (values of every kind at the paths, absent ones, duplicate keys, escapes,
    /// whitespace, members the mapping skips), half of them with a generated `where`: the stream engine writes what
    /// the tree engine writes, and fair shares of the records are written, and filtered, straight from the projection.
    @Test func generatedFieldsMapAsTheTreeMapsThem() throws {
        var r = Rand(seed: 0x5107_F1E1_D500_0001)
        // Each rule, and values it maps (most values at a field's path are one of these; the rest any value).
        let strings = [#""plain""#, #""""#, #""q\"\\\/\n\u00e9\uD83D\uDE00""#, #""\u0000\t""#]
        let integers = ["0", "-0", "17", "-42", "123456789012345678901234567890"]
        let numbers = integers + ["1.5", "2e3", "-1E-2", "0.0"]
        let rules: [(String, [String])] = [
            (#"{"type": "string"}"#, strings), (#"{"type": "integer"}"#, integers), (#"{"type": "number"}"#, numbers),
            (#"{"type": "boolean"}"#, ["true", "false"]), (#"{}"#, strings + numbers + ["true"]),
            (#"{"required": false}"#, strings + ["null", "false"]), (#"{"type": "integer", "default": 0}"#, integers + ["null"]),
            (#"{"type": "string", "missing": "omit", "null": "omit"}"#, strings + ["null"]),
            (#"{"via": [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}]}"#,
             [#""2020-01-02T03:04:05Z""#, #""2020-01-02T03:04:05.5\u002B01:00""#, #""1969-12-31T23:59:59.999-00:30""#]),
            (#"{"via": ["url"], "required": false}"#, [#""https://a.b/c?d""#, #""mailto:x@y.z""#, "null"]),
            (#"{"optional": true, "type": "integer", "default": -1}"#, integers + ["null", #""x""#]),
            (#"{"type": "string", "null": "omit", "default": "none"}"#, strings + ["null"]),
            (#"{"via": [{"type": ["string", "integer"]}]}"#, strings + integers),
            (#"{"via": [{"type": "number"}], "missing": "omit"}"#, numbers),
            (#"{"type": "boolean", "default": true}"#, ["true", "false", "null"]),
        ]
        let values = strings + numbers + [#""2020-01-02T03:04:05Z""#, #""https://a.b/c""#, "true", "false", "null", "{}", #"{"k":[1]}"#, "[]", "[1,2]"]
        let keys = ["a", "b", "c", "d"]
        var mismatches = 0, total = 0, filtered = 0, checked = 0, computedDirect = 0
        let tally = TallyingStreamEngine.Tally()
        for index in 0..<300 {
            var sources: [[String]] = []
            for _ in 0..<r.int(1...7) {
                let path = (0..<r.weighted([(5, 1), (3, 2), (1, 3)])).map { _ in r.pick(keys) }
                if !sources.contains(path) { sources.append(path) }
            }
            var good: [[String]: [String]] = [:]
            let fields = sources.enumerated().map { i, path in
                let destination = r.percent(30) ? "n.o\(i)" : "o\(i)"
                let (rule, maps) = r.pick(rules)
                good[path] = maps
                return "\"\(path.joined(separator: "."))\": " + rule.replacingOccurrences(of: "{", with: "{\"to\": \"\(destination)\", ", options: [], range: rule.range(of: "{"))
                    .replacingOccurrences(of: ", }", with: "}")
            }
            // A third of the cases compute a field or two from the paths' values.
            var computed: [String] = []
            if r.percent(33) {
                for c in 0..<r.int(1...2) {
                    let a = r.pick(sources).joined(separator: "."), b = r.pick(sources).joined(separator: ".")
                    let expression = r.pick(["\(a) + 1", "\(a) * \(b)", "coalesce(\(a), 0) - 2", "lower(\(a))", "length(\(a))",
                                             "\\\"<\\\" + \(a) + \\\">\\\"", "\(a) == \(b)"])
                    computed.append("\"c\(c)\": {\"expr\": \"\(expression)\"" + (r.bool() ? ", \"invalid\": \"omit\"" : "") + "}")
                }
            }
            let text = "{\"fields\": {" + (fields + computed).joined(separator: ", ") + "}}"
            var mapper = try Spec(json: Array(text.utf8), file: "generated.spec.json").mapper
            // A third of the typed mappings carry the Arrow output's checks that each value fits its column.
            if r.percent(33), let schema = try? ArrowSchema(mapper: mapper) {
                mapper = schema.checking(mapper)
                checked += 1
            }
            /// An object holding values at `paths` (each with its remaining steps), sometimes not, sometimes twice.
            func object(_ paths: [[String]], depth: Int, at prefix: [String] = []) -> String {
                var members: [String] = []
                for key in r.shuffled(keys) {
                    let below = paths.filter { $0.first == key }.map { Array($0.dropFirst()) }
                    if below.isEmpty {
                        if r.percent(20) { members.append("\"\(key)\":\(r.pick(values))") }
                        continue
                    }
                    if r.percent(10) { continue }
                    let value: String
                    if below.contains([]) || depth > 3 || r.percent(5) {
                        value = r.percent(85) ? good[prefix + [key]].map { r.pick($0) } ?? r.pick(values) : r.pick(values)
                    } else {
                        value = object(below.filter { !$0.isEmpty }, depth: depth + 1, at: prefix + [key])
                    }
                    members.append("\"\(key)\":\(value)")
                    if r.percent(4) { members.append("\"\(key)\":\(r.pick(values))") }
                }
                if r.percent(30) { members.append(#""skip":{"x":[1,{"y":"\u0041"}],"z":"\#(String(repeating: "s", count: r.int(0...90)))"}"#) }
                let separator = r.percent(15) ? " , " : ","
                return "{" + r.shuffled(members).joined(separator: separator) + "}"
            }
            let records = (0..<12).map { _ in Array(object(sources, depth: 1).utf8) }
            total += records.count
            // Half the cases filter the records on the values at some of the paths (or at others).
            var filterText: String?
            if r.bool() {
                let literals = values.filter { $0.first != "{" && $0.first != "[" }
                func test() -> String {
                    let p = r.pick(sources + [["a"], ["b", "c"], ["d", "d"]]).joined(separator: ".")
                    switch r.below(5) {
                    case 0: return "\(p) == \(r.pick(literals))"
                    case 1: return "\(p) != \(r.pick(literals))"
                    case 2: return "\(p) \(r.pick(["<", "<=", ">", ">="])) \(r.pick(["0", "17", #""m""#, "1.5"]))"
                    case 3: return "exists(\(p))"
                    default: return "\(p) is \(r.pick(["string", "integer", "number", "boolean", "null"]))"
                    }
                }
                filterText = r.bool() ? test() : "\(test()) \(r.pick(["&&", "||"])) \(r.percent(30) ? "!" : "")(\(test()))"
            }
            let filter = try filterText.map { try RecordFilter($0) }
            if filter != nil { filtered += records.count }
            let before = tally.projectedFields
            defer { if !computed.isEmpty { computedDirect += tally.projectedFields - before } }
            mismatches += compare(mapper: mapper, records: records, makeCandidate: {
                TallyingStreamEngine(engine: StreamEngine(mapper: $0, filter: filter), tally: tally)
            }, context: CaseContext(seed: UInt64(index), index: index, origin: .spec, spec: text, filter: filterText), reportLimit: 5, filter: filter)
        }
        #expect(mismatches == 0)
        #expect(checked >= 30, "only \(checked) cases with the Arrow output's checks")
        #expect(computedDirect >= 25, "only \(computedDirect) records with computed fields written straight from their projections")
        #expect(tally.projectedFilter * 3 >= filtered, "\(tally.projectedFilter) of \(filtered) records filtered on the values in their projections")
        #expect(tally.projectedFields * 8 >= total, "\(tally.projectedFields) of \(total) records written straight from their projections")
        #expect(tally.projectedRejections * 30 >= total, "\(tally.projectedRejections) of \(total) records rejected on the values in their projections")
    }
}
