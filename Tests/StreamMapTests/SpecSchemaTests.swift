// schema/streammap-spec.schema.json and the spec compiler cannot drift apart: the schema's key and mapper tables are
// the compiler's, every spec in the repository (and every spec the generators write, and every spec `infer` writes)
// passes both, and a set of broken specs is rejected by both. The validator is JSONSchemaSubset (test support: the
// draft 2020-12 keywords the schema uses, no tool needed); when Python's `jsonschema` is installed the same verdicts
// are checked with it too, the schema against the draft 2020-12 metaschema included.

import Foundation
import Testing

@testable import StreamMap

@Suite("Spec JSON Schema")
struct SpecSchemaTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let schemaURL = root.appendingPathComponent("schema/streammap-spec.schema.json")
    static let schemaValue: JSONValue = {
        let bytes = (try? Data(contentsOf: schemaURL)).map { Array($0) } ?? []
        return (try? JSONParser.parse(bytes)) ?? .null
    }()
    static let schema = JSONSchemaSubset(schemaValue)

    func defs(_ name: String) throws -> JSONValue { try #require(Self.schemaValue["$defs"]?[name]) }
    func enumNames(_ v: JSONValue?) -> [String] { v?["enum"]?.arrayValue?.compactMap(\.stringValue) ?? [] }
    func propertyNames(_ v: JSONValue?) -> Set<String> { Set(v?["properties"]?.objectValue?.keys ?? []) }

    @Test("The schema parses and uses only keywords the validator checks")
    func schemaIsUsable() {
        #expect(Self.schemaValue["$schema"] == "https://json-schema.org/draft/2020-12/schema")
        #expect(Self.schema.unsupportedKeywords == [])
    }

    @Test(
        "Every mapper name, option key, spec key and enumerated name of the compiler is in the schema, and nothing else"
    )
    func schemaTablesAreTheCompilers() throws {
        // Document, object and field keys.
        #expect(
            propertyNames(Self.schemaValue) == Set(SpecCompiler.documentKeys))
        #expect(propertyNames(try defs("objectSpec")) == Set(SpecCompiler.objectKeys))
        #expect(propertyNames(try defs("fieldObject")) == Set(SpecCompiler.fieldKeys))
        // Simple mappers.
        #expect(Set(enumNames(try defs("simpleMapper"))) == Set(SpecCompiler.simpleMappers.keys))
        // Parametric mappers: one alternative per entry of the compiler's table, with exactly its option keys.
        let alternatives = try #require(try defs("parametricMapper")["oneOf"]?.arrayValue)
        var byName: [String: Set<String>] = [:]
        for a in alternatives {
            let required = a["required"]?.arrayValue?.compactMap(\.stringValue) ?? []
            byName[required.first ?? ""] = propertyNames(a)
            #expect(a["additionalProperties"] == false)
        }
        #expect(Set(byName.keys) == Set(SpecCompiler.parametricNames))
        for m in SpecCompiler.parametricMappers {
            #expect(byName[m.name] == Set([m.name] + m.options), "options of \(m.name)")
        }
        // Names the compiler looks up.
        #expect(enumNames(try defs("keyStyle")) == KeyStyle.specNames)
        #expect(Set(enumNames(try defs("jsonType"))) == Set(SpecCompiler.jsonTypeNames))
        #expect(enumNames(try defs("epochUnit")) == EpochUnit.allCases.map(\.rawValue))
        #expect(enumNames(try defs("collisions")) == KeyCollisions.allCases.map(\.rawValue))
        #expect(enumNames(try defs("base64Alphabet")) == Base64Text.Alphabet.allCases.map(\.rawValue))
        #expect(enumNames(try defs("dateFormat")["anyOf"]?.arrayValue?.first) == NamedDateFormat.allNames)
    }

    /// Every spec file in the repository: `*.spec.json` anywhere, and Benchmarks/specs/.
    static func repositorySpecs() -> [URL] {
        var found: [URL] = []
        let skip: Set<String> = [".build", ".git", ".swiftpm", "node_modules"]
        var pending = [root]
        while let dir = pending.popLast() {
            let entries =
                (try? FileManager.default.contentsOfDirectory(at: dir, includingPropertiesForKeys: [.isDirectoryKey]))
                ?? []
            for e in entries where !skip.contains(e.lastPathComponent) {
                if (try? e.resourceValues(forKeys: [.isDirectoryKey]).isDirectory) == true {
                    pending.append(e)
                } else if e.lastPathComponent.hasSuffix(".spec.json")
                    || (e.deletingLastPathComponent().path.hasSuffix("Benchmarks/specs") && e.pathExtension == "json")
                {
                    found.append(e)
                }
            }
        }
        return found.sorted { $0.path < $1.path }
    }

    @Test("Every spec in the repository passes the schema and the compiler")
    func repositorySpecsAreValid() throws {
        let specs = Self.repositorySpecs()
        #expect(specs.count >= 5)
        for url in specs {
            let bytes = Array(try Data(contentsOf: url))
            #expect(Self.schema.errors(try JSONParser.parse(bytes)) == [], "\(url.path)")
            #expect(throws: Never.self, "\(url.path)") { try Spec(json: bytes, file: url.lastPathComponent) }
        }
    }

    @Test("Broken specs are rejected by the schema and by the compiler; the valid set is accepted by both")
    func verdictsAgree() throws {
        for text in SpecSchemaCases.broken {
            let value = try JSONParser.parse(text)
            #expect(Self.schema.errors(value) != [], "the schema accepts \(text)")
            #expect(throws: SpecError.self, "the compiler accepts \(text)") { try Spec(json: text) }
        }
        for text in SpecSchemaCases.valid {
            #expect(Self.schema.errors(try JSONParser.parse(text)) == [], "the schema rejects \(text)")
            #expect(throws: Never.self, "the compiler rejects \(text)") { try Spec(json: text) }
        }
    }

    @Test("Every spec the differential generators write, and every spec infer writes, passes the schema")
    func generatedSpecsAreValid() throws {
        var checked = 0
        for i in 0..<400 {
            var r = Rand(seed: SplitMix64.derive(0x5C4E_3A, UInt64(i)))
            var g = SpecGen(r.fork())
            let (text, _) = g.document()
            guard (try? Spec(json: text)) != nil else { continue }
            let errors = Self.schema.errors(try JSONParser.parse(text))
            #expect(errors == [], "\(text)")
            checked += 1
        }
        #expect(checked > 300)
        for i in 0..<100 {
            let c = try GeneratedCase.make(seed: SplitMix64.derive(0x1AFE_5EED, UInt64(i)), index: i)
            let inference = SpecInferenceTests.infer(c.records, keyStyle: i % 2 == 0 ? nil : .foundationCamel)
            guard inference.recordCount > 0 else { continue }
            #expect(Self.schema.errors(inference.document) == [], "\(inference.text)")
        }
    }

    @Test("The subset validator's verdicts are Python jsonschema's (Draft202012Validator), when it is installed")
    func pythonJSONSchemaAgrees() throws {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import jsonschema"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.run()) != nil else {
            print("skipped: no python3")
            return
        }
        probe.waitUntilExit()
        guard probe.terminationStatus == 0 else {
            print(
                "skipped: Python's jsonschema is not installed (pip install jsonschema); JSONSchemaSubset's verdicts stand alone"
            )
            return
        }
        var cases = SpecSchemaCases.broken + SpecSchemaCases.valid
        cases += try Self.repositorySpecs().map { String(decoding: try Data(contentsOf: $0), as: UTF8.self) }
        let input = cases.map { JSONWriter.string(try! JSONParser.parse($0)) }.joined(separator: "\n") + "\n"
        let script = """
            import json, sys
            from jsonschema import Draft202012Validator
            schema = json.load(open(sys.argv[1]))
            Draft202012Validator.check_schema(schema)
            v = Draft202012Validator(schema)
            for line in sys.stdin:
                print("valid" if v.is_valid(json.loads(line)) else "invalid")
            """
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        p.arguments = ["python3", "-c", script, Self.schemaURL.path]
        let stdin = Pipe()
        let stdout = Pipe()
        p.standardInput = stdin
        p.standardOutput = stdout
        try p.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        #expect(p.terminationStatus == 0, "the schema is not a valid draft 2020-12 schema, or the check failed")
        let python = out.split(separator: "\n").map(String.init)
        let ours = cases.map { Self.schema.errors(try! JSONParser.parse($0)).isEmpty ? "valid" : "invalid" }
        #expect(python.count == cases.count)
        for (i, (a, b)) in zip(python, ours).enumerated() {
            #expect(a == b, "python says \(a), JSONSchemaSubset \(b): \(cases[i])")
        }
    }
}
