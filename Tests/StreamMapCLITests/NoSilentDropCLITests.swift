import Foundation
import Testing

/// No value is dropped without a word: every way a mapping leaves a present value out or replaces it — a warning
/// (a key collision under `warn`, a fallback for a value that does not map, an array element left out) or a
/// rejected record — says so on standard error by default, whatever the other flags; only `--quiet` silences it.
@Suite("No value dropped without a message")
struct NoSilentDropCLITests {
    /// Every kind of mapper (Sources/StreamMap/Mapping/Mapper.swift), read from the source: the ones that turn an
    /// error into a warning — and so can drop or replace a value — each have a case below; the others never warn.
    /// A new kind fails this test until it is classified.
    static let warningKinds: [String: String] = [
        "nonFatal": "optional, nonFatal: a value that does not map gives the default",
        "policy": "invalid: omit or a default",
        "object": "a key collision under warn (the spec's unmapped key style)",
        "arrayOf": "an element that maps to absent with a warning is left out",
        "first": "earlier alternatives' failures",
        "convert": "keys with collisions: warn",
        "compute": "invalid: omit, null or a default for a value that cannot be computed",
    ]
    static let silentKinds: Set<String> = [
        "identity", "notNull", "check", "thread", "split", "forward", "backward", "enumTable", "block", "postProcess",
    ]

    @Test func everyMapperKindIsClassified() throws {
        let source = try String(contentsOf: CLI.root.appendingPathComponent("Sources/StreamMap/Mapping/Mapper.swift"), encoding: .utf8)
        let body = try #require(source.range(of: "public indirect enum Kind").map { source[$0.upperBound...] })
        let end = try #require(body.range(of: "\n    }\n"))
        let kinds = body[..<end.lowerBound].split(separator: "\n").compactMap { line -> String? in
            let t = line.trimmingCharacters(in: .whitespaces)
            guard t.hasPrefix("case ") else { return nil }
            return String(t.dropFirst(5).prefix { $0.isLetter || $0.isNumber })
        }
        #expect(kinds.count > 10)
        for kind in kinds {
            #expect(Self.warningKinds[kind] != nil || Self.silentKinds.contains(kind), "unclassified mapper kind \(kind)")
        }
    }

    /// One scenario per way of dropping or replacing a value (a spec or flags, and a record that triggers it).
    static let scenarios: [(name: String, arguments: [String], spec: String?, record: String)] = [
        ("--key-collisions warn", ["--key-style", "snake", "--key-collisions", "warn"], nil,
         #"{"my_url_property":1,"myURLProperty":2}"#),
        ("unmapped key style with collisions: warn", [],
         #"{"fields":{"id":"id"},"unmapped":{"keys":"snake","collisions":"warn"}}"#,
         #"{"id":1,"my_url_property":1,"myURLProperty":2}"#),
        ("keys mapper with collisions: warn", [],
         #"{"fields":{"u":{"to":"u","via":{"keys":"snake","collisions":"warn"}}}}"#,
         #"{"u":{"my_url_property":1,"myURLProperty":2}}"#),
        ("optional field, invalid value", [], #"{"fields":{"a":{"to":"a","type":"integer","optional":true}}}"#, #"{"a":"x"}"#),
        ("optional mapper with a default", [], #"{"fields":{"a":{"to":"a","via":{"optional":"integer","default":0}}}}"#, #"{"a":"x"}"#),
        ("nonFatal mapper", [], #"{"fields":{"a":{"to":"a","via":{"nonFatal":{"url":["https"]}}}}}"#, #"{"a":"ftp://x"}"#),
        ("invalid: omit", [], #"{"fields":{"a":{"to":"a","type":"integer","invalid":"omit"}}}"#, #"{"a":"x"}"#),
        ("invalid: default", [], #"{"fields":{"a":{"to":"a","type":"integer","invalid":{"default":0}}}}"#, #"{"a":"x"}"#),
        ("array element left out", [], #"{"fields":{"a":{"to":"a","via":{"arrayOf":"optional"}}}}"#, #"{"a":[1,null]}"#),
        ("array element that does not map", [], #"{"fields":{"a":{"to":"a","via":{"arrayOf":{"optional":"integer"}}}}}"#, #"{"a":["x",1]}"#),
        ("first alternative fails", [], #"{"fields":{"a":{"to":"a","via":{"first":["integer","toString"]}}}}"#, #"{"a":true}"#),
        ("a rejected record", ["--type", "a=integer"], nil, #"{"a":"x"}"#),
        ("computed field, invalid: omit", [], #"{"fields":{"t":{"expr":"a * 2","invalid":"omit"}}}"#, #"{"a":"x"}"#),
        ("computed field that cannot be computed", ["--set", "t=a * 2"], nil, #"{"a":"x"}"#),
        ("optional field, null", [], #"{"fields":{"a":{"to":"a","optional":true}}}"#, #"{"a":null}"#),
        ("optional object, a required member absent", [],
         #"{"fields":{"u":{"to":"u","optional":true,"via":{"object":{"fields":{"age":{"to":"age","required":true}}}}}}}"#,
         #"{"u":{"name":"x"}}"#),
        ("invalid: omit, a required member absent", [],
         #"{"fields":{"u":{"to":"u","invalid":"omit","via":{"object":{"fields":{"age":{"to":"age","required":true}}}}}}}"#,
         #"{"u":{"name":"x"}}"#),
    ]

    static let flagSets: [[String]] = [[], ["--engine", "tree"], ["--jobs", "2"], ["--stats"], ["--on-error", "fail"], ["OUTPUT"], ["REJECTS"]]

    @Test(arguments: scenarios.indices)
    func aDroppedValueIsAlwaysReported(_ index: Int) throws {
        let scenario = Self.scenarios[index]
        let dir = try CLI.temporaryDirectory()
        var base = scenario.arguments
        if let spec = scenario.spec { base += ["--spec", try CLI.temporaryFile(spec)] }
        let record = scenario.record + "\n"
        for flags in Self.flagSets {
            var arguments = base
            for flag in flags {
                switch flag {
                case "OUTPUT": arguments += ["-o", dir.appendingPathComponent("out.ndjson").path]
                case "REJECTS": arguments += ["--rejects", dir.appendingPathComponent("rejects.ndjson").path]
                default: arguments.append(flag)
                }
            }
            let r = try CLI.run(arguments, stdin: record)
            let message = r.stderrLines.filter { !$0.hasPrefix("{\"recordsIn\"") }
            #expect(!message.isEmpty, "\(scenario.name) \(flags): nothing on standard error")
            // --warnings lists each; --quiet may silence all of it.
            let listed = try CLI.run(arguments + ["--warnings"], stdin: record)
            #expect(listed.stderr.contains("<stdin>:1:") || listed.stderr.contains("rejected"), "\(scenario.name) \(flags) --warnings: \(listed.stderr)")
            #expect(!listed.stderr.contains("dropped or replaced"), "\(scenario.name): the count line repeats the list")
            let quiet = try CLI.run(arguments + ["--quiet"], stdin: record)
            #expect(!quiet.stderr.contains("dropped or replaced"), "\(scenario.name) --quiet")
        }
    }

    /// The count line, in the singular and the plural; absent values that a default or `optional` stands in for
    /// drop nothing and are not counted.
    @Test func theCountLine() throws {
        let spec = try CLI.temporaryFile(#"{"fields":{"a":{"to":"a","type":"integer","optional":true},"b":{"to":"b","optional":true}}}"#)
        let one = try CLI.run(["--spec", spec], stdin: #"{"a":"x"}"# + "\n")
        #expect(one.stdout == "{}\n")
        #expect(one.stderr == "streammap: 1 value was dropped or replaced with a warning (a key collision, a default or fallback for a value that does not map): --warnings lists them\n")
        let three = try CLI.run(["--spec", spec], stdin: String(repeating: #"{"a":"x","b":1}"# + "\n", count: 3))
        #expect(three.stderr.hasPrefix("streammap: 3 values were dropped or replaced with a warning"))
        let absent = try CLI.run(["--spec", spec], stdin: #"{}"# + "\n")
        #expect(absent.stdout == "{}\n")
        #expect(absent.stderr == "")
        // An optional object: absent, nothing dropped (also when an optional member inside a present one is
        // absent); present but without a required member, the object is dropped and counted.
        let nested = try CLI.temporaryFile(#"{"fields":{"u":{"to":"u","optional":true,"via":{"object":{"fields":{"age":{"to":"age","required":true},"b":{"to":"b","optional":true}}}}}}}"#)
        for (record, out, counted) in [(#"{}"#, "{}", false), (#"{"u":{"age":1}}"#, #"{"u":{"age":1}}"#, false), (#"{"u":{"name":"x"}}"#, "{}", true)] {
            for engine in ["stream", "tree"] {
                let r = try CLI.run(["--spec", nested, "--engine", engine], stdin: record + "\n")
                #expect(r.stdout == out + "\n")
                #expect(r.stderr == (counted ? "streammap: 1 value was dropped or replaced with a warning (a key collision, a default or fallback for a value that does not map): --warnings lists them\n" : ""), "\(record) \(engine)")
            }
        }
    }

    /// A path the flags read that no record has — a typo maps nothing and raises no error — is named at the end,
    /// with its flag and the close path a record has; present paths, `--default`'s and `--require`'s, a spec's own
    /// and `--reverse` give no line; `--quiet` silences it; with `--jobs`, and with either engine, the same line.
    @Test func aPathNoRecordHasIsNamed() throws {
        let records = #"{"id":1,"user":{"name":"Ada","tags":["x"]}}"# + "\n" + #"{"id":2,"user":{}}"# + "\n" + #"not json"# + "\n"
        let cases: [(arguments: [String], stdout: String, lines: [String])] = [
            (["--field", "id", "--field", "usr.name"], "{\"id\":1}\n{\"id\":2}\n",
             [#"streammap: --field usr.name: none of the 2 records has usr.name (did you mean "user.name"?)"#]),
            (["--field", "user.nmae=n"], "{}\n{}\n", [#"streammap: --field user.nmae=n: none of the 2 records has user.nmae (did you mean "user.name"?)"#]),
            (["--where", #"usr.name == "Ada""#], "", [#"streammap: --where: none of the 2 records has usr.name (did you mean "user.name"?)"#]),
            (["--set", "n=id + zz"], "{}\n{}\n", [#"streammap: --set n=id + zz: none of the 2 records has zz"#]),
            (["--field", "id", "--type", "user.tag.0=string"], "{\"id\":1}\n{\"id\":2}\n",
             [#"streammap: --type user.tag.0=string: none of the 2 records has user.tag.0 (did you mean "user.tags.0"?)"#]),
            // Present in one record: no line; an array index read through.
            (["--field", "user.name", "--field", "user.tags.0=t"], #"{"user":{"name":"Ada"},"t":"x"}"# + "\n{}\n", []),
            (["--field", "id", "--default", "lnag=1", "--require", "id"], "{\"id\":1,\"lnag\":1}\n{\"id\":2,\"lnag\":1}\n", []),
        ]
        for c in cases {
            for extra in [[], ["--engine", "tree"], ["--jobs", "2"]] {
                let r = try CLI.run(c.arguments + extra, stdin: records)
                #expect(r.stdout == c.stdout, "\(c.arguments) \(extra)")
                let lines = r.stderrLines.filter { !$0.contains("<stdin>:3") && !$0.contains("rejected") }
                #expect(lines == c.lines, "\(c.arguments) \(extra)")
                let quiet = try CLI.run(c.arguments + extra + ["--quiet"], stdin: records)
                #expect(quiet.stderr == "", "\(c.arguments) \(extra) --quiet")
            }
        }
        // --stats lists them (also with --quiet), as the flags write them; none found: no member.
        let stats = try CLI.run(["--field", "id", "--field", "usr.name", "--where", "x.y != 1", "--stats", "--quiet"], stdin: records)
        #expect(stats.stderrLines.count == 1)
        #expect(stats.stderr.contains(#""errorsByPath":{"":{"syntax":1}},"pathsNotFound":["usr.name","x.y"],"bytesIn""#), "\(stats.stderr)")
        #expect(!(try CLI.run(["--field", "id", "--stats"], stdin: records).stderr.contains("pathsNotFound")))
        // A spec's own paths are not looked for, nor any with --reverse.
        let spec = try CLI.temporaryFile(#"{"fields":{"usr.name":"name"}}"#)
        #expect(try CLI.run(["--spec", spec], stdin: records).stderrLines.filter { $0.contains("none of") } == [])
        #expect(try CLI.run(["--field", "usr.name=name", "--reverse"], stdin: #"{"name":"x"}"# + "\n").stderr == "")
        // The look stops after the first 1000 records: the line says so.
        let many = String(repeating: #"{"id":1}"# + "\n", count: 1500)
        let r = try CLI.run(["--field", "idd"], stdin: many)
        #expect(r.stderrLines == [#"streammap: --field idd: none of the first 1000 records has idd (did you mean "id"?)"#])
    }
}
