#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import StreamMap

/// A JSON Schema (draft 2020-12) validator for the subset of keywords schema/streammap-spec.schema.json uses, so
/// the tests that hold the schema to `SpecCompiler` need no tool beyond the toolchain. A keyword outside the subset
/// is an error (`unsupportedKeywords`), never silently ignored: the schema cannot use a keyword this validator would
/// skip. References are local (`#/$defs/NAME`). Numbers compare by value (`1` = `1.0`), as JSON Schema says.
public struct JSONSchemaSubset: Sendable {
    public let root: JSONValue

    /// Keywords that constrain (validated) and that annotate (ignored).
    public static let assertions: Set<String> = [
        "type", "const", "enum", "properties", "additionalProperties", "required", "minProperties", "items",
        "prefixItems",
        "minItems", "maxItems", "minLength", "pattern", "allOf", "anyOf", "oneOf", "not", "if", "then", "$ref"
    ]
    public static let annotations: Set<String> = ["$schema", "$id", "$defs", "title", "description", "$comment"]

    public init(_ root: JSONValue) { self.root = root }

    /// Keywords in the schema that this validator does not know (with their JSON Pointers).
    public var unsupportedKeywords: [String] {
        var found: [String] = []
        func walk(_ s: JSONValue, _ pointer: String) {
            switch s {
            case .object(let o):
                for (k, v) in o {
                    if !Self.assertions.contains(k) && !Self.annotations.contains(k) { found.append(pointer + "/" + k) }
                    switch k {
                    case "properties", "$defs":
                        for (name, sub) in v.objectValue ?? JSONObject() { walk(sub, pointer + "/" + k + "/" + name) }
                    case "allOf", "anyOf", "oneOf", "prefixItems":
                        for (i, sub) in (v.arrayValue ?? []).enumerated() { walk(sub, pointer + "/\(k)/\(i)") }
                    case "additionalProperties", "items", "not", "if", "then":
                        walk(v, pointer + "/" + k)
                    default: break
                    }
                }
            default: break
            }
        }
        walk(root, "")
        return found
    }

    /// The first reasons `value` does not match the schema (empty: it matches). Validation recurses a few frames per
    /// level of the value and the schema (large frames under AddressSanitizer), so it runs on a thread with a
    /// 256 MiB stack: a deep spec cannot overflow the test's stack.
    public func errors(_ value: JSONValue) -> [String] {
        final class Job: @unchecked Sendable {
            let schema: JSONSchemaSubset, value: JSONValue
            var result: [String] = []
            init(_ schema: JSONSchemaSubset, _ value: JSONValue) { (self.schema, self.value) = (schema, value) }
            func run() { schema.validate(value, schema.root, "", &result) }
        }
        let job = Job(self, value)
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setstacksize(&attributes, 1 << 28)
        let context = Unmanaged.passRetained(job).toOpaque()
        var thread = pthread_t()
        let status = pthread_create(&thread, &attributes, { context in
            Unmanaged<Job>.fromOpaque(context!).takeRetainedValue().run()
            return nil
        }, context)
        if status != 0 {
            Unmanaged<Job>.fromOpaque(context).release()
            job.run()
        } else {
            pthread_join(thread, nil)
        }
        return job.result
    }

    private func resolve(_ ref: String) -> JSONValue? {
        guard ref.hasPrefix("#/$defs/") else { return nil }
        return root["$defs"]?[String(ref.dropFirst("#/$defs/".count))]
    }

    private func validate(_ v: JSONValue, _ schema: JSONValue, _ at: String, _ out: inout [String]) {
        if case .bool(let b) = schema {
            if !b { out.append("\(at): false schema") }
            return
        }
        guard case .object(let s) = schema else {
            out.append("\(at): the schema is not an object")
            return
        }
        func fail(_ m: String) { out.append("\(at.isEmpty ? "/" : at): \(m)") }
        func matches(_ sub: JSONValue, _ value: JSONValue, _ path: String) -> Bool {
            var e: [String] = []
            validate(value, sub, path, &e)
            return e.isEmpty
        }
        if let ref = s["$ref"]?.stringValue {
            if let target = resolve(ref) { validate(v, target, at, &out) } else { fail("unresolvable $ref \(ref)") }
        }
        if let t = s["type"] {
            let names = t.arrayValue?.compactMap(\.stringValue) ?? [t.stringValue ?? ""]
            if !names.contains(where: { Self.hasType(v, $0) }) {
                fail("expected \(names.joined(separator: " or ")), found \(JSONWriter.string(v))")
            }
        }
        if let c = s["const"], !Self.equal(c, v) { fail("expected \(JSONWriter.string(c))") }
        if let e = s["enum"]?.arrayValue, !e.contains(where: { Self.equal($0, v) }) {
            fail("\(JSONWriter.string(v)) is not one of \(JSONWriter.string(.array(e)))")
        }
        if case .object(let o) = v {
            let properties = s["properties"]?.objectValue ?? JSONObject()
            for (k, member) in o {
                if let p = properties[k] {
                    validate(member, p, at + "/" + k, &out)
                } else if let extra = s["additionalProperties"] {
                    if case .bool(false) = extra {
                        fail("unknown key \"\(k)\"")
                    } else {
                        validate(member, extra, at + "/" + k, &out)
                    }
                }
            }
            for r in s["required"]?.arrayValue ?? [] where o[r.stringValue ?? ""] == nil {
                fail("missing key \(JSONWriter.string(r))")
            }
            if let n = s["minProperties"].flatMap(Self.int), o.count < n { fail("expected at least \(n) keys") }
        }
        if case .array(let a) = v {
            let prefix = s["prefixItems"]?.arrayValue ?? []
            for (i, e) in a.enumerated() {
                if i < prefix.count {
                    validate(e, prefix[i], at + "/\(i)", &out)
                } else if let items = s["items"] {
                    validate(e, items, at + "/\(i)", &out)
                }
            }
            if let n = s["minItems"].flatMap(Self.int), a.count < n { fail("expected at least \(n) items") }
            if let n = s["maxItems"].flatMap(Self.int), a.count > n { fail("expected at most \(n) items") }
        }
        if case .string(let str) = v {
            if let n = s["minLength"].flatMap(Self.int), str.unicodeScalars.count < n {
                fail("expected at least \(n) characters")
            }
            if let p = s["pattern"]?.stringValue {
                if let regex = try? Regex(p) {
                    if (try? regex.firstMatch(in: str)) == nil { fail("\(JSONWriter.string(v)) does not match \(p)") }
                } else {
                    fail("invalid pattern \(p)")
                }
            }
        }
        for sub in s["allOf"]?.arrayValue ?? [] { validate(v, sub, at, &out) }
        if let any = s["anyOf"]?.arrayValue, !any.contains(where: { matches($0, v, at) }) {
            fail("matches none of the alternatives")
        }
        if let one = s["oneOf"]?.arrayValue {
            let n = one.filter { matches($0, v, at) }.count
            if n != 1 { fail(n == 0 ? "matches none of the alternatives" : "matches \(n) alternatives, expected one") }
        }
        if let not = s["not"], matches(not, v, at) { fail("matches a schema it must not match") }
        if let condition = s["if"], matches(condition, v, at), let then = s["then"] { validate(v, then, at, &out) }
    }

    static func int(_ v: JSONValue) -> Int? { if case .number(let n) = v { return Int(n.text) } else { return nil } }

    static func hasType(_ v: JSONValue, _ name: String) -> Bool {
        switch (v, name) {
        case (.null, "null"), (.bool, "boolean"), (.string, "string"), (.array, "array"), (.object, "object"),
            (.number, "number"):
            return true
        case (.number(let n), "integer"):
            guard let d = Double(n.text) else { return false }
            return d.rounded() == d
        default:
            return false
        }
    }

    /// JSON Schema equality: numbers by value, objects regardless of key order.
    static func equal(_ a: JSONValue, _ b: JSONValue) -> Bool {
        switch (a, b) {
        case (.number(let x), .number(let y)): return Double(x.text) == Double(y.text)
        case (.array(let x), .array(let y)): return x.count == y.count && zip(x, y).allSatisfy { equal($0, $1) }
        case (.object(let x), .object(let y)):
            return x.count == y.count && x.allSatisfy { e in y[e.key].map { equal(e.value, $0) } ?? false }
        default: return a == b
        }
    }
}
