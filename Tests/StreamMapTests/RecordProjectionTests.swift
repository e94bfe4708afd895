// The record projector (Sources/CJSONScan/ProjectBody.h, `RecordProjector`): before yajl sees a record, the
// stream engine writes only the members its mapping reads. Held to the parser it shortcuts (`RecordProjectionCheck`:
// a projected record must be one yajl and the strict scanner accept whole, and the projection's events exactly
// the record's events less the dropped members) on written cases, random records and plans and mutations of them,
// both code paths; and through the engines, where the output must stay the tree engine's.

import CJSONScan
import Testing

@_spi(Fuzzing) @testable import StreamMap
import StreamMapTestSupport

@Suite struct RecordProjectionTests {
    typealias Plan = RecordProjectionCheck.Plan

    /// The tweet mapping's plan: eight top-level fields and four of `user`.
    static let tweetPlan = Plan(
        ["id", "id_str", "created_at", "text", "retweet_count", "favorite_count", "lang", "in_reply_to_status_id"]
            .map { ($0, nil) } + [("user", Plan([("id", nil), ("screen_name", nil), ("followers_count", nil), ("verified", nil)]))])

    func project(_ text: String, _ plan: Plan = tweetPlan, maximumDepth: Int = 10_000, portable: Bool = false) -> String? {
        Array(text.utf8).withUnsafeBytes { RecordProjectionCheck.project($0, plan: plan, maximumDepth: maximumDepth, portable: portable) }
            .map { String(decoding: $0.bytes, as: UTF8.self) }
    }

    func divergence(_ bytes: [UInt8], _ plan: Plan = tweetPlan, maximumDepth: Int = 10_000, liftCapacity: Int = 0) -> String? {
        bytes.withUnsafeBytes { RecordProjectionCheck.divergence($0, plan: plan, maximumDepth: maximumDepth, liftCapacity: liftCapacity) }
    }

    /// The tweet plan with its string fields lifted out.
    static let liftingPlan: Plan = {
        var plan = tweetPlan
        plan.lifted = ["id_str", "created_at", "text", "lang", "id"]
        plan.keys[plan.keys.count - 1].child!.lifted = ["screen_name"]
        return plan
    }()

    /// The projection, its lifted strings (as they are in the record), and where their `""` stand.
    func lifting(_ text: String, capacity: Int = 16, portable: Bool = false) -> (String, [String], [Int])? {
        let bytes = Array(text.utf8)
        guard let p = bytes.withUnsafeBytes({
            RecordProjectionCheck.project($0, plan: Self.liftingPlan, maximumDepth: 10_000, portable: portable, liftCapacity: capacity)
        }) else { return nil }
        return (String(decoding: p.bytes, as: UTF8.self),
                p.lifts.map { String(decoding: bytes[$0.start..<($0.start + $0.length)], as: UTF8.self) }, p.lifts.map(\.placeholder))
    }

    /// Non-empty strings and numbers of lifted keys are written `""` and `0` and listed in order, escapes and all;
    /// any other value of a lifted key (an empty string, an object…) stays; past the capacity, values stay.
    @Test func liftedStrings() {
        let record = #"{"id":7,"id_str":"7","x":"no","text":"a \"b\" \u00e9","user":{"screen_name":"s","id":1},"lang":"","created_at":{"k":"v"}}"#
        for portable in [false, true] {
            let (projection, lifted, placeholders) = lifting(record, portable: portable)!
            #expect(projection == #"{"id":0,"id_str":"","text":"","user":{"screen_name":"","id":1},"lang":"","created_at":{"k":"v"}}"#)
            #expect(lifted == ["7", #""7""#, #""a \"b\" \u00e9""#, #""s""#])
            #expect(placeholders == [6, 17, 27, 52])
        }
        let (projection, lifted, _) = lifting(record, capacity: 1)!
        #expect(projection == #"{"id":0,"id_str":"7","text":"a \"b\" \u00e9","user":{"screen_name":"s","id":1},"lang":"","created_at":{"k":"v"}}"#)
        #expect(lifted == ["7"])
        #expect(lifting(#"{"id":-1.5e+3,"text":1}"#)?.1 == ["-1.5e+3", "1"])
        #expect(divergence(Array(record.utf8), Self.liftingPlan, liftCapacity: 16) == nil)
        #expect(divergence(Array(record.utf8), Self.liftingPlan, liftCapacity: 1) == nil)
        // Duplicates are lifted each.
        #expect(lifting(#"{"text":"a","text":"b"}"#)?.1 == [#""a""#, #""b""#])
    }

    /// A lifted string's canonical text (what a copy writes for it) is what JSONWriter writes for its decoded
    /// text, on both code paths: every escape, control characters, runs around the 32-byte blocks.
    @Test func canonicalTextOfLiftedStrings() {
        var r = Rand(seed: 0xCA_0_1CA1)
        let pieces = ["a", "é", "😀", "\\n", "\\\"", "\\\\", "\\u0041", "\\uD83D\\uDE00", " ", "/", "\\/", "\\u001f",
                      "\\u007f", "\\b", "\\f", "\\r", "\\t", "\\u0000", "\\u2028", String(repeating: "x", count: 31)]
        for _ in 0..<3000 {
            let raw = Array(("\"" + (0..<r.int(0...12)).map { _ in r.pick(pieces) }.joined() + "\"").utf8)
            guard case .accepted(let events) = raw.withUnsafeBytes({ RecordProjectionCheck.Events.of($0, maximumDepth: 10) }),
                  events.count == 1 else { Issue.record("not a string: \(String(decoding: raw, as: UTF8.self))"); return }
            var decoded = [UInt8](repeating: 0, count: raw.count)
            let n = decoded.withUnsafeMutableBufferPointer { cjsonscan_decode_string(raw.withUnsafeBufferPointer { $0.baseAddress! + 1 }, raw.count - 2, $0.baseAddress) }
            var w = JSONWriter()
            decoded[..<n].withUnsafeBytes { w.writeString(utf8: $0) }
            for portable in [false, true] {
                var out = [UInt8](repeating: 0, count: raw.count + 32)
                let count = out.withUnsafeMutableBufferPointer { o in
                    raw.withUnsafeBufferPointer {
                        portable ? cjsonscan_canonical_string_portable($0.baseAddress, raw.count, o.baseAddress)
                                 : cjsonscan_canonical_string($0.baseAddress, raw.count, o.baseAddress)
                    }
                }
                #expect(count >= 0 && Array(out[..<count]) == w.bytes, "\(String(decoding: raw, as: UTF8.self))")
            }
        }
    }

    /// Every escape decodes as yajl decodes it (surrogate pairs, `\u0000`, `\/`).
    @Test func liftedStringsDecodeAsYajl() {
        let strings = [#""\u0000\uD83D\uDE00\/\b\f\n\r\t\"\\\u00e9\u4e2d""#, #""plain""#, #""\uDBFF\uDFFF end""#, #""\u0041\u0062""#]
        for s in strings {
            #expect(divergence(Array(#"{"text":\#(s)}"#.utf8), Self.liftingPlan, liftCapacity: 4) == nil, "\(s)")
        }
    }

    @Test func keepsTheMembersThePlanNamesAsTheyAre() {
        let record = #"{"id":1,"extra":{"a":[1,2,{"b":"c"}]},"user":{"id":2,"name":"n","screen_name":"s"},"text":"t","lang":null}"#
        for portable in [false, true] {
            #expect(project(record, portable: portable) == #"{"id":1,"user":{"id":2,"screen_name":"s"},"text":"t","lang":null}"#)
        }
        // Whitespace inside kept members stays; between members it goes.
        #expect(project(#" { "id" : 1 ,  "x" : 2 , "text" :"a b" } "#) == #"{"id" : 1,"text" :"a b"}"#)
        #expect(project(#"{}"#) == "{}")
        #expect(project(#"{"x":1,"y":[]}"#) == "{}")
        #expect(project(#"{"user":{}}"#) == #"{"user":{}}"#)
        #expect(project(#"{"user":{"x":{"id":1}}}"#) == #"{"user":{}}"#)
    }

    @Test func duplicateKeysAreKeptInOrder() {
        #expect(project(#"{"id":1,"x":0,"id":2,"user":{"id":3},"user":[1]}"#) == #"{"id":1,"id":2,"user":{"id":3},"user":[1]}"#)
    }

    @Test func aValueThatIsNotAnObjectIsKeptWhereThePlanDescends() {
        #expect(project(#"{"user":"someone","id":1}"#) == #"{"user":"someone","id":1}"#)
        #expect(project(#"{"user":[{"id":1,"x":2}]}"#) == #"{"user":[{"id":1,"x":2}]}"#)
        #expect(project(#"{"user":null}"#) == #"{"user":null}"#)
    }

    /// A key is matched as it is written: a filtered object with a key written with an escape (read or not) is not
    /// projected (the record is parsed whole); escapes elsewhere are fine.
    @Test func escapesAreFineButNotInAFilteredObjectsKeys() {
        #expect(project(#"{"id":"a\"b\u00e9\\","x":{"y\u0041":1}}"#) == #"{"id":"a\"b\u00e9\\"}"#)
        #expect(project(#"{"user":{"\u0069d":1}}"#) == nil)  // (`id` written with an escape)
        #expect(project(#"{"i\u0064":1}"#) == nil)
        #expect(project(#"{"x\u0041":1}"#) == nil)
        #expect(project(#"{"extra":{"\u0069d":1}}"#) == #"{}"#)  // (not a filtered object)
        #expect(divergence(Array(#"{"user":{"\u0069d":1}}"#.utf8)) == nil)
    }

    @Test func recordsThatAreNotObjectsOrNotWholeAreDeclined() {
        for text in ["[1]", "1", #""s""#, "", "   ", #"{"id":1} x"#, #"{"id":1}{}"#, #"{"id":1"#, "{", "null"] {
            #expect(project(text) == nil, "\(text)")
            #expect(divergence(Array(text.utf8)) == nil, "\(text)")
        }
        #expect(project("{\"id\":1}\r\n\t ") == #"{"id":1}"#)
        // yajl takes a record followed by a string it never sees the end of (found by the fuzz target): the
        // projector declines it, and the record is parsed whole, as before.
        #expect(project(#"{"id":1}"x"#) == nil)
        #expect(divergence(Array(#"{"id":1,"name":"x","user":{"name":"y"},"data":[1,2]}""#.utf8)) == nil)
    }

    /// Every invalid value of the skipper's tests, as a kept member, a dropped one, inside a filtered object and
    /// deep inside a dropped one: declined, and never projected where the parser rejects.
    @Test func invalidValuesAnywhereAreDeclined() {
        for (what, value) in SkipperCases.allInvalid {
            let records: [[UInt8]] = [
                Array(#"{"id":"#.utf8) + value + Array("}".utf8),
                Array(#"{"x":"#.utf8) + value + Array(#","id":1}"#.utf8),
                Array(#"{"user":{"name":"#.utf8) + value + Array(#","id":1},"id":2}"#.utf8),
                Array(#"{"extra":[{"a":{"b":"#.utf8) + value + Array(#"}}],"id":2}"#.utf8),
            ]
            for record in records {
                #expect(divergence(record) == nil, "\(what)")
                #expect(divergence(record, Self.liftingPlan, liftCapacity: 4) == nil, "\(what)")
                #expect(record.withUnsafeBytes { RecordProjectionCheck.project($0, plan: Self.liftingPlan, maximumDepth: 10_000, portable: false, liftCapacity: 4) } == nil,
                        "\(what): \(EngineFuzzing.printable(record))")
            }
        }
    }

    /// A skipped number of 1 to 7 digits is read from one word, the rest by the number grammar: numbers of every
    /// length around one, two and three words, signed or not, followed by every kind of byte (a delimiter, a
    /// fraction, an exponent, a digit, junk, the record's end), in skipped members and arrays — held to the
    /// reference in both code paths.
    @Test func numbersAroundTheWordReadAtOnce() {
        let digitsText = String(repeating: "1234567890", count: 3), reversed = String(repeating: "9876543210", count: 3)
        for digits in 1...26 {
            for number in [String(digitsText.prefix(digits)), "-" + String(reversed.prefix(digits)), "0" + String(digitsText.prefix(digits - 1))] {
                for after in ["", ",", "}", "]", " ", ".5", ".", "e3", "E-2", "e+", "x", "0", "\n", "\t", "/", ":"] {
                    for record in [#"{"x":\#(number)\#(after),"id":1}"#, #"{"x":[\#(number)\#(after)],"id":1}"#,
                                   #"{"id":1,"x":\#(number)\#(after)}"#, #"{"id":1,"x":\#(number)\#(after)"#,
                                   #"{"id":1,"x":[7,\#(number)\#(after)]}   "#] {
                        #expect(divergence(Array(record.utf8)) == nil, "\(record)")
                    }
                }
            }
        }
    }

    /// The filtered objects' own grammar (the projector walks them itself): every way of breaking it is declined.
    @Test func brokenFilteredObjectsAreDeclined() {
        let broken = [
            #"{"id" 1}"#, #"{"id";1}"#, #"{"id"::1}"#, #"{"id":1 "text":2}"#, #"{"id":1,}"#, #"{,"id":1}"#, #"{"id":1;"text":2}"#,
            #"{"id":1}}"#, #"{"id":1]"#, #"{'id':1}"#, #"{id:1}"#, #"{"id":}"#, #"{"id"}"#, #"{"id":1,,"text":2}"#,
            #"{"user":{"id" 1}}"#, #"{"user":{"id":1,}}"#, #"{"user":{"id":1]}"#, #"{"user":{"id":1}"#, #"{"user":{"id":1}}]"#,
            #"{"user":{"x":1 "id":2}}"#, #"{"user":{"x":1},}"#, #"{"user"{"id":1}}"#, #"{"x":1}x"#, #"{"id":1}]"#,
            "{\"id\"\u{0B}:1}", "{\"id\":1\u{0C}}", "{\"i\u{01}d\":1}", "{\"id\":\"a\u{01}\"}",
        ]
        for text in broken {
            #expect(project(text) == nil, "\(text)")
            #expect(project(text, portable: true) == nil, "\(text)")
            #expect(divergence(Array(text.utf8)) == nil, "\(text)")
        }
    }

    /// The kernel checks UTF-8 itself (no strict scan before it): valid and invalid characters of every length
    /// at every offset around the 64-byte blocks it classifies, in kept and skipped strings, after runs of blocks
    /// without a string; and `\u` surrogates, paired, lone and mismatched. It must agree with the strict scanner
    /// and yajl on each, on both code paths.
    @Test func utf8AndSurrogatesAroundBlocks() {
        let characters: [[UInt8]] = [
            [0xC3, 0xA9], [0xE6, 0x9D, 0xB1], [0xF0, 0x9F, 0x98, 0x80], [0xEF, 0xBF, 0xBF], [0xF4, 0x8F, 0xBF, 0xBF],
            [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80], [0x80], [0xE2, 0x82],
            [0xFF], [0xC3], [0xF0, 0x9F, 0x98],
        ]
        for character in characters {
            for offset in 40..<140 {
                for key in ["text", "x"] {
                    var record = Array(#"{"id":1,"\#(key)":""#.utf8)
                    record += [UInt8](repeating: 0x61, count: max(0, offset - record.count)) + character + Array(#"b"}"#.utf8)
                    if let d = divergence(record, Self.liftingPlan, liftCapacity: 4) { Issue.record("\(d)") }
                    if let d = divergence(record) { Issue.record("\(d)") }
                }
            }
            // A string in a block after blocks that hold none (numbers only).
            let numbers = (0..<60).map { "\($0)" }.joined(separator: ",")
            let record = Array(#"{"a":[\#(numbers)],"x":""#.utf8) + character + Array(#""}"#.utf8)
            if let d = divergence(record) { Issue.record("\(d)") }
        }
        for escape in [#"\uD83D\uDE00"#, #"\uD800"#, #"\uDC00"#, #"\uD800\u0041"#, #"\uDBFF\uDFFF"#, #"\uD800\uD800"#, #"\uDFFF"#] {
            for offset in 50..<80 {
                for key in ["text", "x"] {
                    var record = Array(#"{"\#(key)":""#.utf8)
                    record += [UInt8](repeating: 0x61, count: max(0, offset - record.count)) + Array(escape.utf8) + Array(#""}"#.utf8)
                    if let d = divergence(record, Self.liftingPlan, liftCapacity: 4) { Issue.record("\(d)") }
                }
            }
        }
    }

    /// Short strings of ASCII end at the first quote of the 64 bytes at hand (`ascii_string_end`: the AVX2 kernel
    /// reads them 32 at a time, the portable one 8), unless a backslash, a control byte or a byte of 0x80 or more
    /// comes first, or fewer bytes than a window are left: each of those, and bytes that do not stop it, at the
    /// places around the windows' edges (32-byte and 8-byte) of strings of every length up to past the last window,
    /// in a value kept, skipped and inside a skipped container, and in a key; the record's end near and far. On
    /// both code paths the projector agrees with the parser, and projects every valid record (an escaped key aside).
    @Test func shortStringsAndWhatStopsThemInTheWindow() {
        let stoppers: [(bytes: [UInt8], valid: Bool)] = [
            (Array(#"\n"#.utf8), true), (Array(#"\""#.utf8), true), (Array(#"\u00e9"#.utf8), true), (Array(#"\x"#.utf8), false),
            ([0x01], false), ([0x1F], false), ([0x7F], true), ([0x20], true), ([0xC3, 0xA9], true), ([0xE6, 0x9D, 0xB1], true),
            ([0xFF], false), ([0xC3], false), ([0x80], false),
        ]
        let farTail = Array(#","z":"\#(String(repeating: "c", count: 40))"}"#.utf8)
        for length in 0..<70 {
            let edges = [0, 1, 2, 29, 30, 31, 32, 33, 61, 62, 63, 64, 65, length - 1, length]
                + stride(from: 8, through: 56, by: 8).flatMap { [$0 - 1, $0, $0 + 1] }
            for place in length <= 12 ? Array(0...length) : Set(edges).filter({ $0 >= 0 && $0 <= length }).sorted() {
                for stopper in stoppers {
                    let body = [UInt8](repeating: 0x61, count: place) + stopper.bytes + [UInt8](repeating: 0x62, count: length - place)
                    for tail in [Array("}".utf8), farTail] {
                        let values = [
                            Array(#"{"text":""#.utf8) + body + Array(#"","id":1"#.utf8) + tail,
                            Array(#"{"x":""#.utf8) + body + [0x22] + tail,
                            Array(#"{"x":[""#.utf8) + body + Array(#"",{"k":1}]"#.utf8) + tail,
                        ]
                        let key = Array(#"{"id":1,""#.utf8) + body + Array(#"":2"#.utf8) + tail
                        for (record, projects) in values.map({ ($0, stopper.valid) }) + [(key, stopper.valid && !stopper.bytes.contains(0x5C))] {
                            if let d = divergence(record) { Issue.record("\(d)") }
                            for portable in [false, true] {
                                let projected = record.withUnsafeBytes {
                                    RecordProjectionCheck.project($0, plan: Self.tweetPlan, maximumDepth: 10_000, portable: portable)
                                }
                                if (projected != nil) != projects {
                                    Issue.record("\(String(decoding: record, as: UTF8.self)): projected \(projected != nil), portable \(portable)")
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    @Test func theNestingLimitIsTheParsers() {
        let deep = #"{"x":"# + String(repeating: "[", count: 38) + String(repeating: "]", count: 38) + #","id":1}"#
        #expect(project(deep, maximumDepth: 39) == #"{"id":1}"#)
        #expect(project(deep, maximumDepth: 38) == nil)
        for limit in [1, 2, 38, 39, 40] { #expect(divergence(Array(deep.utf8), maximumDepth: limit) == nil) }
        let nested = Plan([("a", Plan([("a", Plan([("a", nil)]))]))])
        #expect(project(#"{"a":{"a":{"a":{"b":1}}}}"#, nested, maximumDepth: 3) == nil)
        #expect(project(#"{"a":{"a":{"a":{"b":1}}}}"#, nested, maximumDepth: 4) == #"{"a":{"a":{"a":{"b":1}}}}"#)
        let tooDeep = String(repeating: #"{"x":"#, count: 5000) + "1" + String(repeating: "}", count: 5000)
        #expect(project(tooDeep) == nil)
        #expect(divergence(Array(tooDeep.utf8)) == nil)
    }

    /// Keys are matched by their length and first 8 bytes, then the rest: keys that share their first 8 bytes
    /// (and their length), keys of exactly 8 bytes, short keys that differ in one byte, the empty key — each is
    /// kept only where the plan names it, on both code paths.
    @Test func keysThatShareTheirFirstEightBytes() {
        // (Keys of 9 to 16 bytes are told apart by their first and last 8 bytes; longer ones by all the rest.)
        let named = ["abcdefgh", "abcdefghX", "abcdefghY1", "abcdefghY2", "abc", "", "abcdefgh_long_key_1", "k",
                     "abcdefgh12345678", "abcdefgh123456789"]
        let others = ["abcdefgi", "abcdefghZ", "abcdefghY3", "abcdefghY", "abd", "ab", "abcdefgh_long_key_2",
                      "abcdefgh_long_key_", "K", "kk", "abcdefgh12345679", "abcdefgh02345678", "abcdefgh123456780",
                      "abcdefgh023456789"]
        let plan = Plan(named.map { ($0, nil) })
        var members: [(String, Bool)] = []
        for (i, key) in (named + others).enumerated() { members.append((key, i < named.count)) }
        for rotation in 0..<members.count {
            let order = Array(members[rotation...] + members[..<rotation])
            let record = "{" + order.enumerated().map { #""\#($1.0)":\#($0)"# }.joined(separator: ",") + "}"
            let kept = "{" + order.enumerated().filter { $1.1 }.map { #""\#($1.0)":\#($0)"# }.joined(separator: ",") + "}"
            for portable in [false, true] {
                #expect(project(record, plan, portable: portable) == kept, "\(record)")
            }
        }
        // Many keys of one length and one first 8 bytes: a lookup passes several of them in the table.
        let many = Plan((0..<40).map { ("abcdefgh_\($0 + 10)", nil) })
        let record = "{" + (10..<90).map { #""abcdefgh_\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        let kept = "{" + (10..<50).map { #""abcdefgh_\#($0)":\#($0)"# }.joined(separator: ",") + "}"
        for portable in [false, true] { #expect(project(record, many, portable: portable) == kept) }
    }

    /// Strings across the 64-byte blocks of the string walk, escapes at every offset around a block's end.
    @Test func stringsAcrossBlocks() {
        for length in 0..<140 {
            for escape in ["", #"\""#, #"\\"#, #"\u00e9"#, #"\n"#] {
                let body = String(repeating: "a", count: length) + escape + "b"
                let record = #"{"x":"\#(body)","id":"\#(body)","\#(String(repeating: "k", count: length % 70))":1}"#
                #expect(divergence(Array(record.utf8)) == nil, "\(record)")
                #expect(project(record) == #"{"id":"\#(body)"}"#)
            }
        }
    }

    /// Runs of `\u` escapes (crossed six bytes at a time) of every length from every offset around a block's end,
    /// and what may end them: the string's end, another escape, surrogates paired, lone and mismatched, a bad or
    /// cut escape, a control byte, valid and invalid UTF-8 — in kept, lifted and skipped strings, on both code paths.
    @Test func runsOfUnicodeEscapesAcrossBlocks() {
        let ends = ["", #"\n"#, #"\\"#, #"\uD83D\uDE00"#, #"\uD800"#, #"\uDC00x"#, #"\uD800\u0041"#, #"\u00G0"#, #"\u004G"#, #"\uG000"#, #"\u0G00"#, #"\u00"#,
                    #"\U0041"#, "\u{1}", "é", "\u{FFFF}", #"\u00g0"#, #"\u00:0"#, #"\u00/0"#, #"\u00@0"#, #"\u00`0"#, #"\uDc00"#, #"\udBFF\uDC00"#, #"\uD8"#,
                    #"\uD7FF"#, #"\uE000"#]
        let invalid: [[UInt8]] = [[0xC3], [0xED, 0xA0, 0x80], [0xFF]]
        // (Escapes of each kind of digit.)
        let kinds = [#"\u4e00"#, #"\u00E9"#, #"\uFFFD"#, #"\u0041"#, #"\uabcd"#, #"\u9fA5"#, #"\ud7ff"#]
        for run in [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12] {
            let escapes = (0..<run).map { kinds[$0 % kinds.count] }.joined()
            for offset in 40..<140 {
                for end in ends.map({ Array($0.utf8) }) + invalid {
                    for key in ["text", "x", "id"] {
                        var record = Array(#"{"\#(key)":""#.utf8)
                        record += [UInt8](repeating: 0x61, count: max(0, offset - record.count)) + Array(escapes.utf8) + end
                        record += Array(#"b","id2":1}"#.utf8)
                        if let d = divergence(record, Self.liftingPlan, liftCapacity: 4) { Issue.record("\(d)") }
                        if key == "x", let d = divergence(record) { Issue.record("\(d)") }
                    }
                }
            }
        }
    }

    /// A bad escape or a surrogate inside a long run of `\u` escapes, with good ones after it: at each place of the
    /// run, from offsets around a block's end, on both code paths.
    @Test func aBadEscapeInsideARunOfUnicodeEscapes() {
        let bad = [#"\uG000"#, #"\u0G00"#, #"\u00G0"#, #"\u004G"#, #"\u00g0"#, #"\u00:0"#, #"\u00/0"#, #"\uD800"#, #"\uDC00"#, #"\udbff"#,
                   #"\uD83D\uDE00"#, #"\U0041"#, #"\x0041"#, #"\\u0041"#, "\u{1}00000", "é"]
        for place in 0..<13 {
            for wrong in bad {
                let escapes = (0..<14).map { $0 == place ? wrong : #"\u4E2d"# }.joined()
                for offset in 56..<72 {
                    var record = Array(#"{"x":""#.utf8)
                    record += [UInt8](repeating: 0x61, count: offset - record.count) + Array(escapes.utf8) + Array(#"","id":1}"#.utf8)
                    if let d = divergence(record) { Issue.record("\(d)") }
                    if let d = divergence(record, Self.liftingPlan, liftCapacity: 4) { Issue.record("\(d)") }
                }
            }
        }
    }

    /// Flips, inserts, removes or cuts a few bytes: JSON's structure, and any other ASCII byte.
    static func mutate(_ bytes: inout [UInt8], _ r: inout Rand) {
        let specials: [UInt8] = Array("{}[]\",:\\ 0-.eE+tfnu\u{0B}\u{0C}\u{01}".utf8) + [0x80, 0xC0, 0xED, 0xF4, 0xFF, 0x7F]
        for _ in 0..<r.int(1...3) {
            guard !bytes.isEmpty else { return }
            let at = r.int(0...(bytes.count - 1))
            let byte = r.percent(70) ? r.pick(specials) : UInt8(r.int(0...127))
            switch r.int(0...3) {
            case 0: bytes[at] = byte
            case 1: bytes.insert(byte, at: at)
            case 2: bytes.remove(at: at)
            default: bytes.removeSubrange(at...)
            }
        }
    }

    /// Random records (tweet-like keys, every kind of value) under random plans, and mutations of them: the
    /// projector and the parser agree, on both code paths.
    @Test func randomRecordsPlansAndMutations() {
        var r = Rand(seed: 0x9_0_1EC7)
        var projected = 0, checked = 0
        let keys = ["id", "user", "text", "a", "b", "entities", "", "é", "id_str", "k\(0)"]
        func plan(_ depth: Int) -> Plan {
            Plan((0..<r.int(0...4)).map { _ in (r.pick(keys), depth < 3 && r.percent(40) ? plan(depth + 1) : nil) },
                 lifted: Set((0..<r.int(0...3)).map { _ in r.pick(keys) }))
        }
        func value(_ depth: Int) -> String {
            switch r.int(0...(depth > 4 ? 3 : 6)) {
            case 0: return r.pick(["0", "-1", "12.5", "1e9", "-0.0E-3", "123456789012345678901234567890"])
            case 1: return r.pick(["true", "false", "null"])
            case 2, 3:
                return "\"" + (0..<r.int(0...70)).map { _ in
                    r.pick(["a", "é", "😀", "\\n", "\\\"", "\\\\", "\\u0041", "\\uD83D\\uDE00", " ", "/", "\\/", "東"]) }.joined() + "\""
            case 4: return "[" + (0..<r.int(0...4)).map { _ in value(depth + 1) }.joined(separator: r.pick([",", " , ", ",\n"])) + "]"
            default: return object(depth + 1)
            }
        }
        func object(_ depth: Int) -> String {
            "{" + (0..<r.int(0...6)).map { _ in
                let key = r.percent(5) ? "\\u0069d" : r.pick(keys)
                return "\"\(key)\"" + r.pick([":", " : ", ":\t"]) + value(depth)
            }.joined(separator: r.pick([",", " ,", ", "])) + "}"
        }
        for _ in 0..<1500 {
            let p = plan(0)
            let bytes = Array(object(0).utf8)
            for mutation in 0..<4 {
                var m = bytes
                if mutation > 0 { Self.mutate(&m, &r) }
                let limit = r.percent(15) ? r.int(1...5) : 10_000
                if let d = divergence(m, p, maximumDepth: limit, liftCapacity: r.int(0...4)) {
                    Issue.record("\(d): \(EngineFuzzing.printable(m)) plan \(p.keys.map(\.key))")
                    return
                }
                if m.withUnsafeBytes({ RecordProjectionCheck.project($0, plan: p, maximumDepth: limit, portable: false) }) != nil {
                    projected += 1
                }
                checked += 1
            }
        }
        #expect(checked == 6000)
        #expect(projected > 1000)  // (the valid ones without escaped keys where filtered)
    }
}

/// Through the engines: the stream engine projects records whose mapping reads some members of objects, and its
/// output is the tree engine's — for valid records, records with invalid members anywhere, duplicate keys, escaped
/// keys and nested mappings, whole and in pieces.
@Suite struct RecordProjectionEngineTests {
    static let mapper: Mapper = .object {
        Field("id", to: "id")
        Field("user.name", to: "name")
        Field("user.deep.v", to: "v")
        Field("tags", to: "tags", .arrayOf(.check(.string)))
    }

    static let records: [String] = [
        #"{"id":1,"skip":{"a":[1,2,3]},"user":{"name":"n","deep":{"v":true,"w":1},"x":2},"tags":["a","b"]}"#,
        #"{"user":{"name":"n","name":"m"},"id":1,"id":2,"tags":[]}"#,
        #"{"id":1,"user":{"n\u0061me":"escaped key"},"tags":[]}"#,
        #"{"id":1,"user":"not an object","tags":[1]}"#,
        #"{"id":1,"user":{"deep":[{"v":1}]},"tags":["x"],"other":"\u00e9\n"}"#,
        #"{"id":1,"bad":[1,2,tru],"tags":[]}"#,
        #"{"id":1,"bad":"\uD800","tags":[]}"#,
        #"[1,2]"#,
        #"{"user":{"deep":{"v":{"nested":[1,{"a":null}]}}},"id":{"k":1},"tags":[]}"#,
    ]

    @Test func theStreamEngineProjectsAndMapsAsTheTreeEngine() {
        var stream = StreamEngine(mapper: Self.mapper)
        let tree = TreeEngine(mapper: Self.mapper)
        for record in Self.records {
            expectSameMapping(&stream, tree, Array(record.utf8))
        }
        // Five of them (valid objects without an escaped key where the mapping filters) were projected.
        #expect(stream.projections == 5)
    }

    /// String fields of every kind of sink take their strings lifted out of the projection (copies, type checks,
    /// required and defaulted fields, dates, conversions, several sources): the output and the errors are the tree
    /// engine's, for strings with and without escapes, empty ones, duplicates, and values of other types.
    @Test func liftedStringsMapAsTheTreeMapsThem() throws {
        let spec = try Spec(json: Array(#"""
            {"fields": {
              "s": {"to": "s", "type": "string"},
              "any": {"to": "any"},
              "req": {"to": "req", "required": true},
              "def": {"to": "def", "type": "string", "default": "d"},
              "n": {"to": "n", "type": "integer"},
              "date": {"to": "ms", "via": [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}]},
              "u": {"to": "u", "via": ["url"]},
              "user.name": {"to": "name", "type": "string"},
              "user.deep.x": {"to": "x"},
              "full": {"from": ["first", "last"], "to": "full"}
            }}
            """#.utf8), file: "lift.spec.json")
        let records = [
            #"{"s":"plain","any":"a","req":"r","def":"x","n":1,"date":"2020-01-02T03:04:05Z","u":"https://a.b/c","user":{"name":"N","deep":{"x":"y"}},"first":"A","last":"B"}"#,
            #"{"s":"esc \"q\" \u00e9 \uD83D\uDE00 \n","any":"\u0000\/","req":"","def":"","n":"7","date":"2020-01-02T03:04:05.123+02:00","u":"not a url","user":{"name":"\u004E"},"first":"\u0041","last":""}"#,
            #"{"s":1,"any":{"k":"v"},"req":null,"def":null,"n":"x","date":"nope","u":"https://x.y","user":{"name":["a"]},"first":1,"last":"B"}"#,
            #"{"s":"a","s":"b","req":"1","req":"2","user":{"name":"1"},"user":{"deep":{"x":"z"}},"user":{"name":"3"}}"#,
            #"{"any":"x","user":"string user","req":"r"}"#,
            #"{"s":"\u00e9\"\\","any":"\uD83D\uDE00","req":"\t","def":"\u0000","n":2,"date":"2020-01-02T03:04:05\u005A","u":"https:\/\/a.b","user":{"name":"\u4e2d","deep":{"x":"\n"}},"first":"\u0041","last":"\u0042"}"#,
            #"{"req":"r","pad":"\#(String(repeating: "p", count: 300))","s":"after a skipped member"}"#,
        ]
        var stream = StreamEngine(mapper: spec.mapper)
        let tree = TreeEngine(mapper: spec.mapper)
        for record in records {
            expectSameMapping(&stream, tree, Array(record.utf8))
        }
        #expect(stream.projections == records.count)

        #expect(stream.liftedStrings > 10)
    }

    /// More lifted strings in a record than the side table holds (it grows for the next records, up to a
    /// bound; the strings past it stay in the projection): every record still maps as the tree maps it.
    @Test func moreLiftedStringsThanTheTableHolds() {
        let mapper = Mapper.object(ObjectMapping(fields: (0..<300).map { ObjectMapping.Field("f\($0)", .check(.string)) }))
        var stream = StreamEngine(mapper: mapper)
        let tree = TreeEngine(mapper: mapper)
        for count in [300, 70, 300, 300, 129] {
            let record = "{" + (0..<count).map { #""f\#($0)":"v\#($0)\u00e9""# }.joined(separator: ",") + "}"
            expectSameMapping(&stream, tree, Array(record.utf8))
        }
        #expect(stream.liftedStrings > 600)
    }

    /// A projection without a backslash is replayed, not parsed by yajl (`YajlParserBase.feedScanned`): where a copy
    /// takes a kept container from its text and the replay goes on at its closing bracket (`copiesAhead`), where the
    /// copy declines (a duplicate key inside, a short container), and next to records whose projections have escapes
    /// (parsed by yajl), the output is the tree engine's.
    @Test func replayedProjectionsGoOnWhereACopyAsks() {
        let mapper: Mapper = .object {
            Field("id", to: "id")
            Field("user", to: "user")
            Field("list", to: "list", .arrayOf(.identity))
            Field("meta.tag", to: "tag", .check(.string))
        }
        let big = #"{"name":"someone with a long name","counts":[1,2,3,4,5,6,7,8,9,10],"nested":{"a":{"b":[true,false,null]},"c":"#
            + #""text"},"more":"\#(String(repeating: "m", count: 80))"}"#
        let records = [
            #"{"id":1,"skip":[1,2],"user":\#(big),"list":[\#(big),{"x":1},\#(big)],"meta":{"tag":"t","z":0}}"#,
            #"{"id":2,"user":{"a":1,"a":2,"pad":"\#(String(repeating: "p", count: 120))"},"list":[{"k":1,"k":2}]}"#,
            #"{"id":3,"user":{"short":"\u00e9"},"list":[],"meta":{"tag":"\u00e9"}}"#,
            #"{"id":4,"user":\#(big),"list":[\#(big)],"meta":{"tag":5}}"#,
            #"{"user":[\#(big),\#(big)],"id":{"k":[1,2,3]},"list":"no list"}"#,
            #"{"id":5, "user" : \#(big) ,"list":[ \#(big) , 1 ], "meta":{ "tag" : "spaced" } }"#,
        ]
        var stream = StreamEngine(mapper: mapper)
        let tree = TreeEngine(mapper: mapper)
        for record in records + records.reversed() {
            expectSameMapping(&stream, tree, Array(record.utf8))
        }
        #expect(stream.projections == 2 * records.count)
        // (All but the record with an escape in its projection were replayed: a replay that failed would have
        // been parsed whole after it, with the same output.)
        #expect(stream.replayedProjections == 2 * (records.count - 1))
    }

    @Test func aMappingThatKeepsEverythingIsNotProjected() {
        for mapper in [Mapper.identity, .object(ObjectMapping(fields: [.init("a")], unmapped: .keep))] {
            var stream = StreamEngine(mapper: mapper)
            var w = JSONWriter()
            _ = Array(#"{"a":1,"b":2}"#.utf8).withUnsafeBytes { stream.map(record: $0, into: &w) }
            #expect(stream.projections == 0)
        }
    }
}
