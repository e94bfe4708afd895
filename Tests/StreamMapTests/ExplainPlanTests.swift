import Testing

@testable import StreamMap
import StreamMapTestSupport

/// `explain` reads the compiled plan: for generated mappers, every value the explanation calls streamed is compiled
/// to a sink that streams (never the base sink, which builds containers whole), and every value it calls
/// materialized to one that does not — field by field, element mappers and pass-through values included.
@Suite("explain reads the compiled plan")
struct ExplainPlanTests {
    /// The sink a chain of wrapper sinks ends in.
    static func unwrapped(_ s: ValueSink) -> ValueSink {
        switch s {
        case let w as WrapperSink: return unwrapped(w.inner)
        default: return s
        }
    }

    /// Checks `explanation` against `sink`; returns how many values were compared.
    static func check(_ explanation: MapperExplanation, _ sink: ValueSink, _ where_: String) -> Int {
        let worker = unwrapped(sink)
        let buildsWhole = type(of: worker) == ValueSink.self
        #expect(explanation.handling.isStreamed == !buildsWhole, "\(where_): \(explanation.summary) is \(explanation.handling), compiled as \(type(of: worker))")
        var compared = 1
        switch explanation.structure {
        case .arrayOf(let item)?:
            if let array = worker as? ArraySink { compared += check(item, array.item, where_ + "[]") }
        case .object(let object)?:
            guard let objectSink = worker as? ObjectSink else { break }
            for (field, fieldSink) in zip(object.fields, objectSink.fieldSinks) where field.sources.count == 1 && field.destinations.count == 1 {
                compared += check(field.value, fieldSink, where_ + "/" + field.destinations[0].description)
            }
            if let values = object.unmapped.values, let sink = objectSink.passThroughValues { compared += check(values, sink, where_ + "/*") }
        case nil:
            break
        }
        return compared
    }

    @Test func generatedMappers() {
        var compared = 0
        for seed in 0..<300 as Range<UInt64> {
            var r = Rand(seed: 0xE4_0000 + seed)
            var g = MapperGen(r.fork())
            let (mapper, _) = g.record()
            let plan = CompiledPlan(mapper)
            compared += Self.check(MapperExplanation(mapper), plan.root, "seed \(seed)")
        }
        #expect(compared > 900)  // 948 values in these 300 mappers
    }

    /// A mapper nested thousands deep: the text shows `deepestShown` levels and says how many more there are, the
    /// JSON every level, and no summary grows past `longestName` — so both stay linear in the nesting (every
    /// level's summary named everything below it, and each line's label and indentation grew with the depth:
    /// `explain` of a spec 3 300 arrays deep wrote 22 MB).
    @Test func deepMappersAreExplainedInLinearSpace() {
        func nested(_ depth: Int) -> Mapper {
            var m = Mapper.integer
            for _ in 0..<depth { m = Mapper(.arrayOf(m)) }
            return m
        }
        let shallow = MapperExplanation(nested(3))
        #expect(shallow.summary == "arrayOf(arrayOf(arrayOf(type(integer))))")
        #expect(!shallow.description.contains("more nested"))

        let depth = 600  // (every walk of a mapper recurses per level: deeper overflows a thread's stack under ASan)
        let deep = MapperExplanation(nested(depth))
        #expect(deep.summary.utf8.count <= MapperExplanation.longestName + 100)
        #expect(deep.summary.hasPrefix("arrayOf(arrayOf(") && deep.summary.contains("…"))
        let text = deep.description
        let lines = text.split(separator: "\n")
        #expect(lines.count == MapperExplanation.deepestShown + 2, "\(lines.count)")
        #expect(lines.last?.hasSuffix("… \(depth + 1 - MapperExplanation.deepestShown - 1) more nested levels (explain --json shows them)") == true,
                "\(lines.last ?? "")")
        #expect(text.utf8.count < 10_000)
        // The JSON has every level, each with a bounded summary.
        var json = deep.jsonValue
        var levels = 0
        while case .object(let o) = json, let next = o["arrayOf"] {
            #expect((o["mapper"]?.stringValue?.utf8.count ?? .max) <= MapperExplanation.longestName + 100)
            json = next
            levels += 1
        }
        #expect(levels == depth)
        #expect(json.objectValue?["mapper"] == .string("type(integer)"))

        // A user's key path in a name is cut short too.
        let key = String(repeating: "k", count: 100_000)
        let walk = MapperExplanation(Mapper(.arrayOf(Mapper(.forward(KeyPath(steps: [key]), .integer)))))
        #expect(walk.summary.hasPrefix("arrayOf(forward(kkk") && walk.summary.hasSuffix("…))"), "\(walk.summary.prefix(200))")
        #expect(walk.summary.utf8.count <= MapperExplanation.longestName + 10)
        #expect(MapperExplanation(Mapper(.forward(KeyPath(steps: ["a", "b"]), .integer))).summary == "forward(a.b, type(integer))")
    }

    @Test func dateToNumberAndKeyStylesStream() {
        let epoch = Mapper.thread(.stringToDate([.named(.twitter)]), Mapper(.convert(.dateToNumber(.milliseconds))))
        #expect(MapperExplanation(epoch).handling == .streamed)
        #expect(MapperExplanation(.keys(.foundationCamel, deep: true)).handling == .streamed)
        #expect(MapperExplanation(.enumTable([("a", 1)])).handling == .materialized(because: "enum"))
    }
}
