import Testing

@testable import StreamMap

/// `PathWatch`: the paths the command line's flags read, looked for in the first records; those none has are
/// reported with their flag and a close path a record has. (The command line's side: NoSilentDropCLITests.)
@Suite("A path no record has")
struct PathWatchTests {
    static func look(_ watch: PathWatch, _ records: [String]) -> [Bool] {
        records.map { text in Array(text.utf8).withUnsafeBytes { watch.look(at: $0) } }
    }

    static func watched(_ pairs: [(String, String)], delimiter: String = ".") -> [PathWatch.Watched] {
        pairs.map { PathWatch.Watched(flag: $0.0, path: KeyPath($0.1, delimiter: delimiter)) }
    }

    @Test func pathsSeenAndNot() {
        let watch = PathWatch(Self.watched([("--field a", "a"), ("--field b.c", "b.c"), ("--where", "d.0.e")]))
        // Null is a value; an index reads through an array; a record that is not JSON is not counted.
        #expect(Self.look(watch, [#"{"a":null,"b":{"x":1}}"#, "{nope", #"{"d":[{"e":1}]}"#]) == [true, true, true])
        #expect(watch.recordsChecked == 2)
        #expect(watch.report == ["--field b.c: none of the 2 records has b.c"])
        #expect(watch.unseenPaths == ["b.c"])
        // Once every path is seen, nothing more is looked at (and nothing is parsed).
        #expect(Self.look(watch, [#"{"b":{"c":0}}"#, #"{"a":1}"#]) == [false, false])
        #expect(watch.recordsChecked == 3)
        #expect(watch.report == [])
    }

    @Test func noRecordNoReport() {
        let watch = PathWatch(Self.watched([("--field a", "a")]))
        #expect(Self.look(watch, ["[1,", ""]) == [true, true])
        #expect(watch.report == [])
        #expect(watch.unseenPaths == [])
    }

    @Test func theLimitAndTheWording() {
        let watch = PathWatch(Self.watched([("--field x", "x")]), limit: 3)
        #expect(Self.look(watch, [#"{"a":1}"#]) == [true])
        #expect(watch.report == ["--field x: the one record has no x"])
        #expect(Self.look(watch, [#"{"a":1}"#, #"{"a":1}"#, #"{"x":1}"#]) == [true, false, false])
        #expect(watch.recordsChecked == 3)
        #expect(watch.report == ["--field x: none of the first 3 records has x"])
    }

    /// The first missing key replaced by the closest key of the object there, when the record has that path; the
    /// first record that gives one gives it; the delimiter writes the paths.
    @Test func suggestions() {
        let watch = PathWatch(Self.watched([("--field usr/name", "usr/name"), ("--field user/nmae/x", "user/nmae/x"),
                                            ("--field user/zzzzzz", "user/zzzzzz"), ("--field tags/9", "tags/9")], delimiter: "/"),
                              delimiter: "/")
        _ = Self.look(watch, [#"{"user":{"name":"a"},"tags":[1]}"#, #"{"user":{"name":{"x":1}},"usr":{}}"#])
        #expect(watch.report == [
            #"--field usr/name: none of the 2 records has usr/name (did you mean "user/name"?)"#,
            #"--field user/nmae/x: none of the 2 records has user/nmae/x (did you mean "user/name/x"?)"#,
            "--field user/zzzzzz: none of the 2 records has user/zzzzzz",
            "--field tags/9: none of the 2 records has tags/9",
        ])
    }

    /// The bytes looked at are bounded too: records of a megabyte look at a few.
    @Test func theByteLimit() {
        let watch = PathWatch(Self.watched([("--field x", "x")]), byteLimit: 18)
        #expect(Self.look(watch, [#"{"a":"0123456789"}"#, #"{"a":1}"#]) == [false, false])
        #expect(watch.report == ["--field x: the first record has no x"])
        let two = PathWatch(Self.watched([("--field x", "x")]), byteLimit: 18)
        #expect(Self.look(two, [#"{"a":1}"#, #"{"b":1}"#, #"{"a":"0123456789"}"#, #"{"x":1}"#]) == [true, true, false, false])
        #expect(two.report == ["--field x: none of the first 3 records has x"])
        // Lines that are not JSON spend the bytes too (and are no records): a broken input is not parsed to its end.
        let broken = PathWatch(Self.watched([("--field x", "x")]), byteLimit: 18)
        #expect(Self.look(broken, [#"{"a":1}"#, #"{"a":"01234"#, #"{"x":1}"#]) == [true, false, false])
        #expect(broken.report == ["--field x: the first record has no x"])
    }

    /// The suggestions share one budget, spent over paths and records: records of many keys cannot make the
    /// look slow. Once it is spent, no path gets a suggestion.
    @Test func suggestionsSpendOneBudget() {
        let wide = "{" + (0..<5000).map { #""key\#($0)":1"# }.joined(separator: ",") + "}"
        let paths = Self.watched([("--field yek", "yek"), ("--field kez4999", "kez4999")])
        let ample = PathWatch(paths)
        #expect(Self.look(ample, Array(repeating: wide, count: 3)).allSatisfy { $0 })
        #expect(ample.report == ["--field yek: none of the 3 records has yek", #"--field kez4999: none of the 3 records has kez4999 (did you mean "key4999"?)"#])
        // `yek` spends the budget on the first record's keys and finds nothing; `kez4999` gets no search.
        let scant = PathWatch(paths, suggestionBudget: 1000)
        #expect(Self.look(scant, Array(repeating: wide, count: 3)).allSatisfy { $0 })
        #expect(scant.report == ["--field yek: none of the 3 records has yek", "--field kez4999: none of the 3 records has kez4999"])
    }

    /// Records longer than `longestRecord` are not parsed into a tree (nor counted).
    @Test func longRecordsAreNotLookedAt() {
        let watch = PathWatch(Self.watched([("--field a", "a")]))
        let long = #"{"b":""# + String(repeating: "x", count: PathWatch.longestRecord) + #""}"#
        #expect(Self.look(watch, [long]) == [true])
        #expect(watch.recordsChecked == 0)
    }

    /// Several engines (`--jobs`) share one watch: what one sees, the others need not look for.
    @Test func engineWrappers() {
        let watch = PathWatch(Self.watched([("--field a", "a"), ("--field b", "b")]))
        var first = PathWatchingEngine(MappingOptions.Engine.stream.make(mapper: .identity), watch: watch)
        var second = PathWatchingEngine(MappingOptions.Engine.tree.make(mapper: .identity), watch: watch)
        var writer = JSONWriter()
        for (engine, text) in [(0, #"{"a":1}"#), (1, #"{"c":1}"#)] {
            let outcome = Array(text.utf8).withUnsafeBytes { engine == 0 ? first.map(record: $0, into: &writer) : second.map(record: $0, into: &writer) }
            #expect(outcome == .mapped(warnings: []))
        }
        #expect(String(decoding: writer.bytes, as: UTF8.self) == #"{"a":1}{"c":1}"#)
        #expect(watch.report == ["--field b: none of the 2 records has b"])
    }

    /// What each flag reads, in the flags' order, each path once, split on the spec's delimiter; `--default`'s
    /// and `--require`'s paths left out.
    @Test func pathsTheFlagsRead() {
        var amendment = SpecAmendment()
        amendment.fields = ["a/b=x", "c"]
        amendment.types = ["c=integer", "t=string"]
        amendment.columns = ["k=int64"]
        amendment.defaults = ["d=1"]
        amendment.required = ["r"]
        amendment.computed = ["s=a/b + e"]
        amendment.filter = #"w == "x" && c > 1"#
        let read = amendment.pathsRead(delimiter: "/")
        // The spec's delimiter (an empty one is ".", as the compiler has it); no path read: no watch.
        #expect(PathWatch(flags: amendment, spec: ["delimiter": "/"])?.watched == read)
        #expect(PathWatch(flags: amendment, spec: ["delimiter": ""])?.watched.first?.path.steps == ["a/b"])
        #expect(PathWatch(flags: SpecAmendment(), spec: [:]) == nil)
        #expect(read.map(\.flag) == ["--field a/b=x", "--field c", "--type t=string", "--column k=int64", "--set s=a/b + e", "--where"])
        #expect(read.map(\.path.steps) == [["a", "b"], ["c"], ["t"], ["k"], ["e"], ["w"]])
        // A flag on a computed field's key (object form: its key; array form: its "to", or a --field source renamed
        // to it) names a value the mapping makes: not watched. The --set's own paths still are.
        let object: JSONValue = ["delimiter": "/", "fields": ["t": ["expr": "e + 1"], "a/b": "x"]]
        let array: JSONValue = ["fields": [["to": "k", "expr": "2"], ["from": "c", "to": "c"]]]
        #expect(amendment.computedKeys(in: object) == ["t"])
        #expect(amendment.computedKeys(in: array) == ["k"])
        amendment.fields.append("q=k")
        #expect(amendment.computedKeys(in: array) == ["k", "q"])
        #expect(PathWatch(flags: amendment, spec: object)?.watched.map(\.flag)
                == ["--field a/b=x", "--field c", "--field q=k", "--column k=int64", "--set s=a/b + e", "--where"])
    }
}
