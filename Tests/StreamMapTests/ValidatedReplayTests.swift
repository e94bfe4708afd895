import StreamMapTestSupport
import Testing
@testable import StreamMap

/// `feedScanned` delivers a validated value's events without yajl when it has no backslash (the replay, which is
/// what a projected record costs): every event, argument and `verbatim` flag must be yajl's own, and a handler that
/// stops the parse must stop it at the same event with the same error.
@Suite("JSON layer: replaying validated text")
struct ValidatedReplayTests {
    /// Every event with its bytes and flags, in order; throws at event `stopAt` (counting from 0) when set.
    struct EventLog: JSONEventHandler {
        var events: [String] = []
        var stopAt: Int? = nil
        struct Stop: Error, Equatable { let at: Int }
        private mutating func log(_ e: String) throws {
            if events.count == stopAt { throw Stop(at: events.count) }
            events.append(e)
        }
        private static func text(_ b: UnsafeRawBufferPointer) -> String { String(decoding: b, as: UTF8.self) }
        mutating func null() throws { try log("null") }
        mutating func bool(_ value: Bool) throws { try log("bool \(value)") }
        mutating func number(_ text: UnsafeRawBufferPointer) throws { try log("number \(Self.text(text))") }
        mutating func string(_ utf8: UnsafeRawBufferPointer) throws { Issue.record("no verbatim flag") }
        mutating func key(_ utf8: UnsafeRawBufferPointer) throws { Issue.record("no verbatim flag") }
        mutating func string(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) throws {
            try log("string \(Self.text(utf8)) \(verbatim)")
        }
        mutating func key(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) throws { try log("key \(Self.text(utf8)) \(verbatim)") }
        mutating func startObject() throws { try log("{") }
        mutating func endObject() throws { try log("}") }
        mutating func startArray() throws { try log("[") }
        mutating func endArray() throws { try log("]") }
    }

    /// The events of `text` and the error that ended its parse, from yajl (`feed`) or from the replay (`feedScanned`).
    static func events(_ text: [UInt8], replayed: Bool, stopAt: Int? = nil, depth: Int = 1024) -> ([String], String?) {
        let parser = YajlParserCore(handler: EventLog(stopAt: stopAt), options: JSONParserOptions(maximumDepth: depth))
        var failure: String?
        do {
            try text.withUnsafeBytes { replayed ? try parser.feedScanned($0) : try parser.feed($0) }
            try parser.finish()
        } catch {
            failure = "\(error)"
        }
        return (parser.handler.events, failure)
    }

    /// A random valid value without backslashes: nested objects and arrays (empty ones too), strings (empty,
    /// multi-byte), numbers of every form, literals, whitespace between any two tokens.
    static func value(_ rng: inout SplitMix64, depth: Int = 0) -> String {
        func space() -> String { ["", "", "", " ", "\n\t ", "\r\n"][Int(rng.next() % 6)] }
        let kind = depth > 5 ? 2 + Int(rng.next() % 4) : Int(rng.next() % 6)
        switch kind {
        case 0, 1:
            let count = Int(rng.next() % 5)
            let items = (0..<count).map { i in
                let item = space() + value(&rng, depth: depth + 1) + space()
                return kind == 0 ? space() + "\"k\(i)é\(rng.next() % 3)\"" + space() + ":" + item : item
            }
            return (kind == 0 ? "{" : "[") + space() + items.joined(separator: ",") + (kind == 0 ? "}" : "]")
        case 2:
            return ["\"\"", "\"a\"", "\"héllo wörld\"", "\"😀 x\"", "\"" + String(repeating: "z", count: 70) + "\""][Int(rng.next() % 5)]
        case 3:
            return ["0", "-0", "12", "-3.25", "1e10", "2E-3", "6.02e+23", "12345678901234567890123", "-0.0e0"][Int(rng.next() % 9)]
        default:
            return ["true", "false", "null"][Int(rng.next() % 3)]
        }
    }

    @Test func replayedEventsAreYajls() {
        var rng = SplitMix64(seed: 0x5EED_7E47)
        for _ in 0..<600 {
            let text = Array(Self.value(&rng).utf8)
            let yajl = Self.events(text, replayed: false), replay = Self.events(text, replayed: true)
            #expect(yajl.1 == nil)
            #expect(replay.0 == yajl.0, "\(String(decoding: text, as: UTF8.self))")
            #expect(replay.1 == yajl.1)
        }
    }

    /// A handler's error stops both at the same event, with the same error.
    @Test func aStoppedReplayStopsWhereYajlDoes() {
        var rng = SplitMix64(seed: 0xC0FFEE)
        for _ in 0..<200 {
            let text = Array(("{\"a\":" + Self.value(&rng) + ",\"b\":[1,{\"c\":null}]}").utf8)
            let all = Self.events(text, replayed: false).0.count
            let stop = Int(rng.next() % UInt64(all))
            let yajl = Self.events(text, replayed: false, stopAt: stop)
            let replay = Self.events(text, replayed: true, stopAt: stop)
            #expect(replay.0 == yajl.0)
            #expect(replay.1 == yajl.1 && yajl.1 != nil)
        }
    }

    /// Too deep for the parser's limit: the same events, then the same error at the same byte.
    @Test func theDepthLimitHoldsInAReplay() {
        let text = Array((String(repeating: "[", count: 6) + String(repeating: "]", count: 6)).utf8)
        let yajl = Self.events(text, replayed: false, depth: 4), replay = Self.events(text, replayed: true, depth: 4)
        #expect(replay.0 == yajl.0 && replay.0.count == 4)
        #expect(replay.1 == yajl.1 && yajl.1?.contains("nesting deeper than 4") == true)
    }

    /// Text with a backslash goes to yajl (which decodes escapes); a parser that replayed one record parses the
    /// next with yajl exactly as a fresh one, and the other way round.
    @Test func replayAndYajlTakeTurnsOnOneParser() throws {
        let texts = [#"{"a":"x\"y","b":[1]}"#, #"{"a":1,"b":[true,null]}"#, #"{"c":"d"}"#, #"[1,"\u00e9"]"#, "{}"].map { Array($0.utf8) }
        let parser = YajlParserCore(handler: EventLog(), options: JSONParserOptions())
        for (round, replayed) in [true, false, true, true, false, false, true].enumerated() {
            for text in texts {
                parser.restart()
                parser.handler.events = []
                try text.withUnsafeBytes { replayed ? try parser.feedScanned($0) : try parser.feed($0) }
                try parser.finish()
                #expect(parser.handler.events == Self.events(text, replayed: false).0, "round \(round)")
            }
        }
    }
}
