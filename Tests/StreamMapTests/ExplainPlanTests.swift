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
        case let w as NotNullSink: return unwrapped(w.inner)
        case let w as NonFatalSink: return unwrapped(w.inner)
        case let w as PolicySink: return unwrapped(w.inner)
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
            let plan = CompiledPlan(mapper, mutation: nil)
            compared += Self.check(MapperExplanation(mapper), plan.root, "seed \(seed)")
        }
        #expect(compared > 900)  // 948 values in these 300 mappers
    }

    @Test func dateToNumberAndKeyStylesStream() {
        let epoch = Mapper.thread(.stringToDate([.named(.twitter)]), Mapper(.convert(.dateToNumber(.milliseconds))))
        #expect(MapperExplanation(epoch).handling == .streamed)
        #expect(MapperExplanation(.keys(.foundationCamel, deep: true)).handling == .streamed)
        #expect(MapperExplanation(.enumTable([("a", 1)])).handling == .materialized(because: "enum"))
    }
}
