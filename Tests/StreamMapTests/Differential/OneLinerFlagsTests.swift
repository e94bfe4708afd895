import Testing
@testable import StreamMap
import StreamMapTestSupport

// One-liner checks and defaults (`--require`, `--type`, `--default` on their own) on nested paths: the spec
// SpecAmendment builds for them (`"unmapped": "inPlace"`) maps alike in both engines, and a mapped record differs
// from its input only at the flagged paths — every other key, nested ones too, stays where it was.
// Replay a case: the report names its seed and the flags.

@Suite("One-liner flags on nested paths (differential)")
struct OneLinerFlagsTests {
    static let baseSeed: UInt64 = 0x0F1A_65EE_D001

    /// Every key path of `value` down to `depth` levels (object keys and array indexes), parents first.
    static func paths(_ value: JSONValue, depth: Int = 3) -> [[String]] {
        guard depth > 0 else { return [] }
        var out: [[String]] = []
        switch value {
        case .object(let o):
            for (k, v) in o where !k.contains(".") && !k.isEmpty {
                out.append([k])
                out += paths(v, depth: depth - 1).map { [k] + $0 }
            }
        case .array(let a):
            for (i, v) in a.enumerated().prefix(3) {
                out.append([String(i)])
                out += paths(v, depth: depth - 1).map { [String(i)] + $0 }
            }
        default:
            break
        }
        return out
    }

    /// Paths the flags may name: present ones, and absent keys under a present object (so that a default has
    /// somewhere to go); none that nests in another (the spec refuses overlapping destinations).
    static func pickPaths(_ record: JSONValue, _ r: inout Rand) -> [[String]] {
        var candidates = paths(record)
        for p in paths(record) where r.percent(20) {
            if case .object? = KeyPath(steps: p).read(from: record)?.value { candidates.append(p + ["added"]) }
        }
        candidates.append(["absent"])
        var chosen: [[String]] = []
        for _ in 0..<r.int(1...3) {
            let p = r.pick(candidates)
            if chosen.contains(where: { $0.starts(with: p) || p.starts(with: $0) }) { continue }
            chosen.append(p)
        }
        return chosen
    }

    static func record(_ r: inout Rand) -> TV {
        var gen = InputGen(r.fork())
        var members: [(key: String, value: TV)] = [(key: "id", value: gen.scalar())]
        for _ in 0..<r.int(1...4) {
            members.append((key: r.pick(Catalog.sourceKeys + Catalog.extraKeys), value: gen.anyValue(depth: 1)))
        }
        members.insert((key: "u", value: .object([(key: "age", value: gen.scalar()), (key: "name", value: gen.anyValue(depth: 2)),
                                                   (key: "tags", value: .array([gen.scalar(), gen.anyValue(depth: 2)]))])),
                       at: r.below(members.count + 1))
        return .object(members)
    }

    @Test func checksAndDefaultsNeverChangeOtherKeys() throws {
        var cases = 0
        for i in 0..<250 {
            let seed = SplitMix64.derive(Self.baseSeed, UInt64(i))
            var r = Rand(seed: seed)
            var gen = InputGen(r.fork())
            let tv = Self.record(&r)
            let first = gen.render(tv)
            guard let value = try? JSONParser.parse(first) else { continue }
            var amendment = SpecAmendment()
            let chosen = Self.pickPaths(value, &r)
            for steps in chosen {
                let path = steps.joined(separator: ".")
                switch r.below(3) {
                case 0: amendment.required.append(path)
                case 1: amendment.types.append(path + "=" + r.pick(JSONType.allCases).rawValue)
                default: amendment.defaults.append(path + "=" + r.pick(["0", #""x""#, "null", "[1]", #"{"k":true}"#]))
                }
            }
            // Sometimes with --key-style (and --key-collisions): checked in place, then the record renamed.
            if r.percent(25) {
                amendment.keyStyle = r.pick(KeyStyle.allCases)
                amendment.keyCollisions = r.pick(KeyCollisions.allCases)
            }
            let flags = "required \(amendment.required) types \(amendment.types) defaults \(amendment.defaults)"
                + (amendment.keyStyle.map { " key style \($0.rawValue)" } ?? "")
            let document = try amendment.apply(to: nil)
            let inPlace = amendment.keyStyle == nil ? document["unmapped"] : document["mapper"]?.arrayValue?.first?["object"]?["unmapped"]
            #expect(inPlace == "inPlace", "seed \(hex(seed)): \(flags)")
            guard let spec = try? Spec(json: JSONWriter.string(document), file: "flags") else {
                Issue.record("seed \(hex(seed)): the flags' spec is refused: \(flags)")
                continue
            }
            cases += 1
            // The record, mutated ones (so that checks fail too), and others of the same kind.
            var records = [first]
            for _ in 0..<3 { records.append(gen.render(gen.mutate(tv))) }
            records.append(gen.render(Self.record(&r)))
            compare(mapper: spec.mapper, records: records, makeCandidate: makeStreamEngine,
                    context: CaseContext(seed: seed, index: i, origin: .spec, spec: JSONWriter.string(document), label: flags),
                    pieces: seed)

            // Nothing but the flagged paths changes: with the same mark written at each of them in both (where
            // either has it; a default adds missing objects on its way, the mark adds them too), input and output
            // are the same text — same keys, same order, same values.
            for bytes in records where amendment.keyStyle == nil {
                guard let input = try? JSONParser.parse(bytes), case .object = input else { continue }
                let result = spec.mapper.map(input)
                guard !result.isFatal, var output = result.value else { continue }
                var stripped = input
                for steps in chosen where KeyPath(steps: steps).read(from: input) != nil || KeyPath(steps: steps).read(from: output) != nil {
                    _ = ObjectMapping.replace(steps[...], with: "§", in: &stripped)
                    _ = ObjectMapping.replace(steps[...], with: "§", in: &output)
                }
                #expect(JSONWriter.string(output) == JSONWriter.string(stripped),
                        "seed \(hex(seed)): \(flags)\n  input  \(JSONWriter.string(input))\n  output \(JSONWriter.string(result.value!))")
            }
        }
        #expect(cases > 200)
    }

    /// Any generated object mapping made to map in place (each field writing where it reads): random mappers inside,
    /// random records — both engines alike, whether the stream engine keeps its copy or maps the record whole.
    @Test func generatedMappingsInPlace() throws {
        var objects = 0
        for i in 0..<400 {
            let seed = SplitMix64.derive(0x1A_C0FF_EE, UInt64(i))
            let c = try GeneratedCase.make(seed: seed, index: i)
            guard case .object(let mapping) = c.mapper.kind else { continue }
            let fields = mapping.fields.filter { $0.sources.count == 1 }.map {
                ObjectMapping.Field(sources: $0.sources, destinations: $0.sources, mapper: $0.mapper)
            }
            guard !fields.isEmpty else { continue }
            objects += 1
            var context = c.context
            context.label = "in place"
            compare(mapper: Mapper(.object(ObjectMapping(fields: fields, unmapped: .inPlace))), records: c.records,
                    makeCandidate: makeStreamEngine, context: context, pieces: seed)
        }
        #expect(objects > 50)
    }

    /// The issue's examples, in both engines: a check and a default keep `u.name` and the order of the keys.
    @Test func theIssuesExamples() throws {
        for (flags, record, expected) in [
            ({ (a: inout SpecAmendment) in a.types = ["u.age=integer"] }, #"{"id":1,"u":{"age":3,"name":"x"},"z":0}"#,
             #"{"id":1,"u":{"age":3,"name":"x"},"z":0}"#),
            ({ (a: inout SpecAmendment) in a.defaults = ["u.x=1"] }, #"{"u":{"age":3,"name":"x"}}"#, #"{"u":{"age":3,"name":"x","x":1}}"#),
            ({ (a: inout SpecAmendment) in a.required = ["u.tags.1"]; a.defaults = ["z=null"] }, #"{"z":null,"u":{"tags":[0,1]},"a":[]}"#,
             #"{"z":null,"u":{"tags":[0,1]},"a":[]}"#),
        ] as [((inout SpecAmendment) -> Void, String, String)] {
            var amendment = SpecAmendment()
            flags(&amendment)
            let spec = try Spec(json: JSONWriter.string(try amendment.apply(to: nil)), file: "flags")
            for var engine in [TreeEngine(mapper: spec.mapper) as any RecordEngine, makeStreamEngine(spec.mapper)] {
                var writer = JSONWriter()
                let outcome = Array(record.utf8).withUnsafeBytes { engine.map(record: $0, into: &writer) }
                #expect(outcome == .mapped(warnings: []))
                #expect(String(decoding: writer.bytes, as: UTF8.self) == expected)
            }
        }
    }
}
