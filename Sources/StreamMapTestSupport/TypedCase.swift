// TypedCase.swift — random typed specs and records for them, for the Arrow tests (ArrowOutputTests) and the fuzz
// target's Arrow check (ArrowFuzzing).

/// Random typed specs (every field's type known) and records for them: right values mostly, and absent, null,
/// wrong types, integers beyond int64, numbers beyond a double, escapes and non-ASCII text.
public enum TypedCase {
    /// A spec of 2 to 7 fields (sources `f0`, `f1`, …: `fields` of them) and up to 39 records.
    public static func generate(_ rng: inout SplitMix64) -> (spec: String, records: [String], fields: Int) {
        let kinds = ["integer", "number", "string", "boolean", "ints", "strings", "object", "date", "timestamp", "decimal", "bigint"]
        var fields: [String] = []
        var makers: [(String, (inout SplitMix64) -> String?)] = []
        let count = Int(rng.next() % 6) + 2
        for i in 0..<count {
            let kind = kinds[Int(rng.next() % UInt64(kinds.count))]
            let source = "f\(i)"
            let destination = rng.next() % 3 == 0 ? "g.f\(i)" : (rng.next() % 4 == 0 ? "g.h.f\(i)" : "f\(i)")
            var entry: String
            switch kind {
            case "ints": entry = #""via": {"arrayOf": "integer"}"#
            case "strings": entry = #""via": {"arrayOf": "string"}"#
            case "date": entry = #""via": [{"stringToDate": "iso8601"}, {"dateToNumber": "ms"}]"#
            case "timestamp":
                let unit = ["timestamp", "timestamp(s)", "timestamp(ms)", "timestamp(ns)"][Int(rng.next() % 4)]
                entry = rng.next() % 2 == 0 ? #""via": {"stringToDate": "iso8601"}, "column": "\#(unit)""# : #""type": "string", "column": "\#(unit)""#
            case "decimal": entry = #""type": "number", "column": "decimal(\#(["9,3", "12,0", "38,10"][Int(rng.next() % 3)]))""#
            case "bigint": entry = #""type": "integer", "column": "decimal(38,0)""#
            default: entry = #""type": "\#(kind)""#
            }
            switch rng.next() % 4 {
            case 0: entry += #", "optional": true"#
            case 1: entry += #", "missing": "omit", "null": "omit""#
            case 2 where ["integer", "number", "string", "boolean"].contains(kind):
                entry += #", "default": \#(["integer": "7", "number": "0.25", "string": "\"d\"", "boolean": "true"][kind]!)"#
            default: break
            }
            fields.append(#""\#(source)": {"to": "\#(destination)", \#(entry)}"#)
            makers.append((source, { rng in value(kind, &rng) }))
        }
        let spec = #"{"fields": {\#(fields.joined(separator: ", "))}}"#
        var records: [String] = []
        for _ in 0..<Int(rng.next() % 40) {
            var members: [String] = []
            for (name, make) in makers {
                if let v = make(&rng) { members.append(#""\#(name)": \#(v)"#) }
            }
            records.append("{" + members.joined(separator: ", ") + "}")
        }
        return (spec, records, count)
    }

    /// A value for a field of `kind`, or nil for absent.
    public static func value(_ kind: String, _ rng: inout SplitMix64) -> String? {
        switch rng.next() % 20 {
        case 0: return nil
        case 1: return "null"
        case 2: return #""wrong""#
        case 3: return "18446744073709551621"
        case 4: return "1e400"
        default: break
        }
        let strings = [#""a""#, #""é \"quoted\" \\ \u00e9 \ud83d\ude00""#, #""""#, #""x,y""#]
        switch kind {
        case "integer": return ["0", "-1", "9223372036854775807", "-9223372036854775808", "42"][Int(rng.next() % 5)]
        case "number": return ["0.1", "-2.5e10", "3", "1e-300", "123456789.123456789"][Int(rng.next() % 5)]
        case "string": return strings[Int(rng.next() % UInt64(strings.count))]
        case "boolean": return rng.next() % 2 == 0 ? "true" : "false"
        case "ints": return ["[]", "[1, 2, -3]", "[null, 5]", "[1.5]"][Int(rng.next() % 4)]
        case "strings": return ["[]", #"["a", "b"]"#, #"[null]"#, "[1]"][Int(rng.next() % 4)]
        case "object": return [#"{"k": [1, {"z": null}]}"#, "{}", #"{"a": "\u00e9"}"#][Int(rng.next() % 3)]
        case "timestamp": return [#""2014-08-31T00:29:15Z""#, #""1969-12-31T23:59:59.999+00:30""#, #""2014-08-31T00:29:15.123456789Z""#, #""2300-01-01""#, #""2014-08-31T00:29:15.5Z""#][Int(rng.next() % 5)]
        case "decimal": return ["0", "-1.5", "123456.789", "1e3", "0.0000000001", "12345678901234567890", "-0.000"][Int(rng.next() % 7)]
        case "bigint": return ["0", "-170141183460469231731687303715884105727", "99999999999999999999999999999999999999", "100000000000000000000000000000000000000"][Int(rng.next() % 4)]
        default: return [#""2014-08-31T00:29:15Z""#, #""2014-08-31T00:29:15.25+02:00""#, #""not a date""#][Int(rng.next() % 3)]
        }
    }
}
