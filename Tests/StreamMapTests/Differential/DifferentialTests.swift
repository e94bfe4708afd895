// The central invariant (docs/performance.md, "Engines"): for every spec and every input, the stream engine writes byte-identical
// output and reports identical errors (codes, fatality, source and destination paths, messages) to the tree
// engine, the reference. These tests generate mappers (as values and as spec files) and records (Generators.swift),
// map every record with both engines and compare.
//
// Replay a failing case: the report names its seed, e.g.
//     STREAMMAP_DIFF_SEED=0x1234abcd swift test --filter Differential
// runs only that case and prints the mapper, every record, both outputs and both outcomes.
// STREAMMAP_DIFF_CASES=N changes the number of generated cases (default 1000).

import Testing

@testable import StreamMap

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The engine under test.
func makeStreamEngine(_ mapper: Mapper) -> any RecordEngine {
    StreamEngine(mapper: mapper)
}

/// The stream engine, counting the records it wrote straight from a projection's slots (`ProjectedFields`) into
/// `tally`, so that a differential run can say how much of it went that way.
struct TallyingStreamEngine: RecordEngine {
    final class Tally { var projectedFields = 0, projectedFilter = 0, projectedRejections = 0 }
    var engine: StreamEngine
    let tally: Tally
    private mutating func counting(_ body: (inout StreamEngine) -> RecordOutcome) -> RecordOutcome {
        let before = (engine.projectedFieldRecords, engine.projectedFilterRecords, engine.projectedFieldRejections)
        let outcome = body(&engine)
        tally.projectedFields += engine.projectedFieldRecords - before.0
        tally.projectedFilter += engine.projectedFilterRecords - before.1
        tally.projectedRejections += engine.projectedFieldRejections - before.2
        return outcome
    }
    mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        counting { $0.map(record: record, into: &writer) }
    }
    mutating func beginRecord() { engine.beginRecord() }
    mutating func continueRecord(_ part: UnsafeRawBufferPointer) { engine.continueRecord(part) }
    mutating func endRecord(into writer: inout JSONWriter) -> RecordOutcome { counting { $0.endRecord(into: &writer) } }
}

// MARK: - Cases

/// Where a generated case comes from, for reports and replay.
struct CaseContext: Sendable {
    enum Origin: String, Sendable { case values = "Mapper values", spec = "spec file", reversed = "reversed mapper", fixed = "fixed case" }
    var seed: UInt64 = 0
    var index: Int = 0
    var origin: Origin = .fixed
    /// The spec text, for mappers compiled from a spec.
    var spec: String? = nil
    var label: String = ""
    /// The `where` expression and its delimiter, when the case filters records.
    var filter: String? = nil
    /// The explode, when the case explodes records.
    var explode: String? = nil
}

/// One generated case: a mapper and the records to map with it.
struct GeneratedCase {
    var context: CaseContext
    var mapper: Mapper
    var records: [[UInt8]]
    /// A random `where` (in 40% of the cases), applied by both engines.
    var filter: RecordFilter? = nil
    /// A random explode (in 30% of the cases) of a key the mapped records have (`EngineFuzzing.explosion`),
    /// applied by both engines: the tree engine on the mapped value, the stream engine on the bytes it wrote.
    var explode: RecordExplosion? = nil

    enum Failure: Error, CustomStringConvertible {
        case invalidSpec(String, SpecError)
        case invalidFilter(String, String)
        var description: String {
            switch self {
            case .invalidSpec(let text, let e): return "the generator wrote a spec that does not compile:\n\(text)\n\(e)"
            case .invalidFilter(let text, let d): return "the generator wrote a where expression that does not parse (delimiter \(d)):\n\(text)"
            }
        }
    }

    /// Everything is derived from `seed`, so the case can be replayed from the seed alone.
    static func make(seed: UInt64, index: Int = 0) throws(Failure) -> GeneratedCase {
        var r = Rand(seed: seed)
        var context = CaseContext(seed: seed, index: index)
        let mapper: Mapper
        let shape: Shape
        if r.percent(55) {
            var g = MapperGen(r.fork())
            (mapper, shape) = g.record()
            context.origin = .values
        } else {
            var g = SpecGen(r.fork())
            let (text, s) = g.document()
            do {
                mapper = try Spec(json: text, file: "generated.spec.json").mapper
            } catch {
                throw .invalidSpec(text, error)
            }
            shape = s
            context.origin = .spec
            context.spec = text
        }
        var inputs = InputGen(r.fork())
        var records = inputs.records(for: shape, count: r.int(6...14))
        // The filter from a generator of its own, so that the rest of the case is what it was without filters.
        var filterRand = Rand(seed: SplitMix64.derive(seed, 0x7768_6572_65))
        var filter: RecordFilter? = nil
        if filterRand.percent(40) {
            var g = FilterGen(filterRand.fork())
            let (text, delimiter, compiled) = g.filter(for: shape)
            guard let compiled else { throw .invalidFilter(text, delimiter) }
            filter = compiled
            context.filter = "\(text)  (delimiter \(delimiter))"
        }
        // Sometimes: the reverse mapper, fed the forward outputs of records that fit (model → JSON).
        if r.percent(15), let back = try? mapper.reversed() {
            let tree = TreeEngine(mapper: mapper)
            var outputs: [JSONValue] = []
            for _ in 0..<12 {
                var w = JSONWriter()
                let bytes = inputs.render(inputs.sample(shape))
                let outcome = bytes.withUnsafeBytes { tree.map(record: $0, into: &w) }
                if case .mapped = outcome, let v = try? JSONParser.parse(w.bytes) { outputs.append(v) }
            }
            records = inputs.records(from: outputs) + inputs.records(for: .any, count: 2)
            context.origin = .reversed
            context.label = "reverse of " + describe(mapper)
            return GeneratedCase(context: context, mapper: back, records: records, filter: filter).exploding(seed: seed)
        }
        return GeneratedCase(context: context, mapper: mapper, records: records, filter: filter).exploding(seed: seed)
    }

    /// This case, with an explode in 30% of the seeds (from a generator of its own).
    func exploding(seed: UInt64) -> GeneratedCase {
        var r = Rand(seed: SplitMix64.derive(seed, 0x6578_706C_6F64_65))
        guard r.percent(30) else { return self }
        var c = self
        c.explode = EngineFuzzing.explosion(mapper, records, &r)
        c.context.explode = c.explode!.description
        return c
    }
}

// MARK: - The harness

/// One record on which the candidate engine and the tree engine disagree.
struct Mismatch: CustomStringConvertible {
    var context: CaseContext
    var recordIndex: Int
    var mapper: Mapper
    var record: [UInt8]
    /// The offsets where the record was cut when it was fed in pieces; nil when it was mapped whole.
    var pieces: [Int]? = nil
    var treeOutput: [UInt8]
    var candidateOutput: [UInt8]
    var treeOutcome: RecordOutcome
    var candidateOutcome: RecordOutcome

    var description: String {
        var lines = ["differential mismatch: seed \(hex(context.seed)), case \(context.index) (\(context.origin.rawValue)), record \(recordIndex)"]
        if !context.label.isEmpty { lines.append("  case:      \(context.label)") }
        lines.append("  mapper:    \(describe(mapper))")
        if let spec = context.spec { lines.append("  spec:      \(spec)") }
        if let filter = context.filter { lines.append("  where:     \(filter)") }
        if let explode = context.explode { lines.append("  explode:   \(explode)") }
        lines.append("  record:    \(printable(record))")
        if let pieces { lines.append("  fed in pieces, cut at byte offsets \(pieces.count > 40 ? "1, 2, 3, … (every byte)" : "\(pieces)")") }
        lines.append("  tree:      \(printable(treeOutput))")
        lines.append("  candidate: \(printable(candidateOutput))")
        lines.append("  tree outcome:      \(render(treeOutcome))")
        lines.append("  candidate outcome: \(render(candidateOutcome))")
        lines.append("  first difference:  \(firstDifference)")
        if context.origin != .fixed { lines.append("  replay: STREAMMAP_DIFF_SEED=\(hex(context.seed)) swift test --filter Differential") }
        return lines.joined(separator: "\n")
    }
}

extension Mismatch {
    /// Where the two sides part: an output byte offset, or the first error that differs.
    var firstDifference: String {
        if treeOutput != candidateOutput {
            let i = zip(treeOutput, candidateOutput).prefix { $0 == $1 }.count
            return "output byte \(i) (tree \(treeOutput.count) bytes, candidate \(candidateOutput.count) bytes)"
        }
        func parts(_ o: RecordOutcome) -> (String, [MapError]) {
            switch o {
            case .mapped(warnings: let w, _): return ("mapped", w)
            case .rejected(.mapping(let e)): return ("rejected by mapping", e)
            case .rejected(.syntax): return ("syntax error", [])
            case .rejected(.noOutput(_)): return ("no output", [])
            case .filtered: return ("filtered", [])
            }
        }
        let (tk, te) = parts(treeOutcome), (ck, ce) = parts(candidateOutcome)
        if tk != ck { return "outcome: tree \(tk), candidate \(ck)" }
        for i in 0..<max(te.count, ce.count) {
            let t = i < te.count ? render(te[i]) : "(none)", c = i < ce.count ? render(ce[i]) : "(none)"
            if Array(t.utf8) != Array(c.utf8) { return "error #\(i): tree \(t) | candidate \(c)" }
        }
        return "\(tk): \(render(treeOutcome)) | \(render(candidateOutcome))"
    }
}

/// Maps every record with a fresh `TreeEngine` and a fresh candidate (each engine is reused across the records, as
/// a stream would use it) and returns the records where they disagree: output bytes, or the outcome — compared with
/// `==` and also byte for byte, since `==` on Swift strings equates canonically equivalent text (`é` and `e\u0301`).
///
/// With `pieces`, every record is also fed to the candidate in pieces (`beginRecord`, `continueRecord`,
/// `endRecord`), cut at points drawn from that seed (sometimes one byte at a time), and compared again.
func findMismatches(
    mapper: Mapper, records: [[UInt8]], makeCandidate: (Mapper) -> any RecordEngine, context: CaseContext = CaseContext(),
    pieces: UInt64? = nil, limit: Int = .max, filter: RecordFilter? = nil, explode: RecordExplosion? = nil
) -> [Mismatch] {
    let tree = TreeEngine(mapper: mapper, filter: filter, explode: explode)
    var candidate = makeCandidate(mapper)
    var treeWriter = JSONWriter()
    var candidateWriter = JSONWriter()
    var found: [Mismatch] = []
    for (i, record) in records.enumerated() where found.count < limit {
        let treeStart = treeWriter.bytes.count
        let treeOutcome = record.withUnsafeBytes { tree.map(record: $0, into: &treeWriter) }
        let treeOutput = Array(treeWriter.bytes[treeStart...])
        var attempts: [[Int]?] = [nil]
        if let pieces { attempts.append(cuts(record.count, seed: SplitMix64.derive(pieces, UInt64(i)))) }
        for cutPoints in attempts {
            let candidateStart = candidateWriter.bytes.count
            let candidateOutcome: RecordOutcome
            if let cutPoints {
                candidate.beginRecord()
                var from = 0
                for to in cutPoints + [record.count] {
                    record[from..<to].withUnsafeBytes { candidate.continueRecord($0) }
                    from = to
                }
                candidateOutcome = candidate.endRecord(into: &candidateWriter)
            } else {
                candidateOutcome = record.withUnsafeBytes { candidate.map(record: $0, into: &candidateWriter) }
            }
            let candidateOutput = Array(candidateWriter.bytes[candidateStart...])
            let same = treeOutput == candidateOutput && treeOutcome == candidateOutcome
                && Array(render(treeOutcome).utf8) == Array(render(candidateOutcome).utf8)
            if !same {
                found.append(Mismatch(
                    context: context, recordIndex: i, mapper: mapper, record: record, pieces: cutPoints, treeOutput: treeOutput,
                    candidateOutput: candidateOutput, treeOutcome: treeOutcome, candidateOutcome: candidateOutcome))
                break
            }
        }
    }
    return found
}

/// Where to cut a record of `count` bytes into pieces: a few random points, or every byte.
func cuts(_ count: Int, seed: UInt64) -> [Int] {
    var r = Rand(seed: seed)
    guard count > 1 else { return [] }
    if r.percent(15) { return Array(1..<count) }
    return Array(Set((0..<r.int(1...4)).map { _ in r.int(1...(count - 1)) })).sorted()
}

/// `findMismatches`, recording one issue per mismatch (at most `reportLimit`). Returns the number of mismatches.
@discardableResult
func compare(
    mapper: Mapper, records: [[UInt8]], makeCandidate: (Mapper) -> any RecordEngine, context: CaseContext = CaseContext(),
    pieces: UInt64? = nil, reportLimit: Int = 20, filter: RecordFilter? = nil, explode: RecordExplosion? = nil,
    sourceLocation: SourceLocation = #_sourceLocation
) -> Int {
    let mismatches = findMismatches(mapper: mapper, records: records, makeCandidate: makeCandidate, context: context, pieces: pieces,
                                    filter: filter, explode: explode)
    for m in mismatches.prefix(reportLimit) { Issue.record(Comment(rawValue: m.description), sourceLocation: sourceLocation) }
    return mismatches.count
}

// MARK: - Rendering for reports

func render(_ o: RecordOutcome) -> String {
    switch o {
    case .mapped(warnings: let w, _): return "mapped" + (w.isEmpty ? "" : ", warnings: " + w.map(render).joined(separator: "; "))
    case .rejected(.syntax(let e)): return "rejected: syntax error at byte \(e.byteOffset): \(JSONWriter.string(.string(e.message)))"
    case .rejected(.mapping(let errors)): return "rejected: " + errors.map(render).joined(separator: "; ")
    case .rejected(.noOutput(_)): return "rejected: no output"
    case .filtered: return "filtered"
    }
}

func render(_ e: MapError) -> String {
    let q = { (s: String) in JSONWriter.string(.string(s)) }
    return "\(e.code.rawValue) \(e.isFatal ? "fatal" : "warning") src=\(q(e.sourcePath.pointer)) dst=\(q(e.destinationPath.pointer)) \(q(e.message))"
}

func hex(_ v: UInt64) -> String { "0x" + String(v, radix: 16) }

/// Bytes as readable text (shared with the fuzz target).
func printable(_ bytes: [UInt8], limit: Int = 1500) -> String { EngineFuzzing.printable(bytes, limit: limit) }

func environment(_ name: String) -> String? { getenv(name).map { String(cString: $0) } }

func parseSeed(_ text: String) -> UInt64? {
    text.hasPrefix("0x") ? UInt64(text.dropFirst(2), radix: 16) : UInt64(text)
}

// MARK: - Deliberately broken engines (the harness must catch them)

/// An engine that only maps whole records: the pieces API collects the pieces and maps them at the end.
protocol WholeRecordEngine: RecordEngine {
    var pending: [UInt8] { get set }
}

extension WholeRecordEngine {
    mutating func beginRecord() { pending.removeAll() }
    mutating func continueRecord(_ part: UnsafeRawBufferPointer) { pending.append(contentsOf: part) }
    mutating func endRecord(into writer: inout JSONWriter) -> RecordOutcome {
        let record = pending
        pending.removeAll()
        return record.withUnsafeBytes { map(record: $0, into: &writer) }
    }
}

/// Maps with a mapper where every `nonFatal` fallback is dropped (absent instead of the default).
struct DroppedFallbackEngine: WholeRecordEngine {
    var tree: TreeEngine
    var pending: [UInt8] = []
    init(mapper: Mapper) {
        tree = TreeEngine(mapper: transform(mapper) { m in
            if case .nonFatal(let inner, _, let reverse) = m.kind { return Mapper(.nonFatal(inner, fallback: nil, reverseFallback: reverse)) }
            return m
        })
    }
    mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        tree.map(record: record, into: &writer)
    }
}

/// Writes the first two keys of an object record in swapped order.
struct SwappedKeysEngine: WholeRecordEngine {
    var tree: TreeEngine
    var pending: [UInt8] = []
    init(mapper: Mapper) {
        tree = TreeEngine(mapper: Mapper(.postProcess(mapper, PostProcessor(name: "swapFirstTwoKeys") { _, r in
            guard !r.isFatal, case .object(let o)? = r.value, o.count >= 2 else { return r }
            var entries = o.entries
            entries.swapAt(0, 1)
            return .success(.object(JSONObject(entries.map { ($0.key, $0.value) })), warnings: r.errors)
        })))
    }
    mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        tree.map(record: record, into: &writer)
    }
}

/// Reports the first error with its fatality flipped.
struct FlippedFatalityEngine: WholeRecordEngine {
    var tree: TreeEngine
    var pending: [UInt8] = []
    init(mapper: Mapper) { tree = TreeEngine(mapper: mapper) }
    mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        switch tree.map(record: record, into: &writer) {
        case .mapped(warnings: var w, _) where !w.isEmpty:
            w[0].isFatal.toggle()
            return .mapped(warnings: w)
        case .rejected(.mapping(var e)):
            e[0].isFatal.toggle()
            return .rejected(.mapping(e))
        case let other:
            return other
        }
    }
}

/// Keeps the *first* value of a duplicate key instead of the last (a typical streaming shortcut).
struct FirstKeyWinsEngine: WholeRecordEngine {
    var tree: TreeEngine
    var pending: [UInt8] = []
    init(mapper: Mapper) { tree = TreeEngine(mapper: mapper) }

    /// Builds values like `JSONTreeBuilder`, but a repeated key keeps its first value.
    struct FirstWinsBuilder: JSONEventHandler {
        enum Frame {
            case array([JSONValue])
            case object([(String, JSONValue)], key: String?)
        }
        var stack: [Frame] = []
        var result: JSONValue?

        mutating func add(_ v: JSONValue) {
            switch stack.popLast() {
            case nil: result = v
            case .array(var a)?:
                a.append(v)
                stack.append(.array(a))
            case .object(var members, let key)?:
                members.append((key!, v))
                stack.append(.object(members, key: nil))
            }
        }
        mutating func null() { add(.null) }
        mutating func bool(_ value: Bool) { add(.bool(value)) }
        mutating func number(_ text: UnsafeRawBufferPointer) { add(.number(JSONNumber(unchecked: String(decoding: text, as: UTF8.self)))) }
        mutating func string(_ utf8: UnsafeRawBufferPointer) { add(.string(String(decoding: utf8, as: UTF8.self))) }
        mutating func startObject() { stack.append(.object([], key: nil)) }
        mutating func key(_ utf8: UnsafeRawBufferPointer) {
            if case .object(let members, _)? = stack.popLast() { stack.append(.object(members, key: String(decoding: utf8, as: UTF8.self))) }
        }
        mutating func endObject() {
            guard case .object(let members, _)? = stack.popLast() else { return }
            var o = JSONObject()
            for (k, v) in members where o[k] == nil { o[k] = v }
            add(.object(o))
        }
        mutating func startArray() { stack.append(.array([])) }
        mutating func endArray() {
            if case .array(let a)? = stack.popLast() { add(.array(a)) }
        }
    }

    mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        var scratch = JSONWriter()
        let reference = tree.map(record: record, into: &scratch)
        if case .rejected(.syntax) = reference { return reference }
        let parser = JSONPushParser(handler: FirstWinsBuilder())
        guard (try? parser.feed(record)) != nil, (try? parser.finish()) != nil, let value = parser.handler.result else { return reference }
        return tree.map(value: value, into: &writer)
    }
}

// MARK: - Tests

@Suite("Differential: stream engine against tree engine")
struct DifferentialTests {
    static let baseSeed: UInt64 = 0x5EED_D1FF_2025
    static let defaultCaseCount = 1000

    /// Every kind of mapper the generators must produce in one run (see `kinds(_:)`).
    static let requiredKinds: Set<String> = [
        "identity", "notNull", "nonFatal", "nonFatal.default", "nonFatal.factory", "policy", "policy.passToMapper", "check",
        "check.union", "object", "object.manyToOne", "object.oneToMany", "object.nestedSource", "object.indexPath",
        "object.nestedDestination", "object.keep", "object.keep.keyStyle", "object.keep.values", "object.keep.renames", "arrayOf", "first", "thread",
        "split", "forward", "backward", "enumTable", "block", "postProcess", "convert.stringToDate", "convert.dateToString",
        "convert.numberToDate", "convert.dateToNumber", "convert.stringToNumber", "convert.numberToString", "convert.toString",
        "convert.url", "convert.urlToString", "convert.uuid", "convert.uuidToString", "convert.base64", "convert.keys", "compute",
    ]

    @Test func differentialAgainstStreamEngine() throws {
        let clock = ContinuousClock()
        let start = clock.now
        if let text = environment("STREAMMAP_DIFF_SEED") {
            let seed = try #require(parseSeed(text), "STREAMMAP_DIFF_SEED must be a decimal or 0x-hex UInt64")
            try replay(seed: seed)
            return
        }
        let count = environment("STREAMMAP_DIFF_CASES").flatMap { Int($0) } ?? Self.defaultCaseCount
        var remainingReports = 20
        var mismatches = 0
        var records = 0
        var covered: Set<String> = []
        var origins: [CaseContext.Origin: Int] = [:]
        var outcomes: [String: Int] = [:]
        var filteredCases = 0
        /// Valid records of cases with a filter: dropped, kept.
        var filterOutcomes = [0, 0]
        /// Records of cases with an explode, by what they became: no record, one, several, rejected by the explode.
        var explodeOutcomes = [0, 0, 0, 0]
        var explodedCases = 0
        let tally = TallyingStreamEngine.Tally()
        for i in 0..<count {
            let seed = SplitMix64.derive(Self.baseSeed, UInt64(i))
            let c: GeneratedCase
            do {
                c = try GeneratedCase.make(seed: seed, index: i)
            } catch {
                Issue.record("seed \(hex(seed)): \(error)")
                continue
            }
            covered.formUnion(kinds(c.mapper))
            origins[c.context.origin, default: 0] += 1
            records += c.records.count
            for o in Self.outcomeClasses(c) { outcomes[o, default: 0] += 1 }
            if let filter = c.filter {
                filteredCases += 1
                let tree = TreeEngine(mapper: c.mapper, filter: filter)
                for record in c.records {
                    var w = JSONWriter()
                    switch record.withUnsafeBytes({ tree.map(record: $0, into: &w) }) {
                    case .filtered: filterOutcomes[0] += 1
                    case .rejected(.syntax): break
                    default: filterOutcomes[1] += 1
                    }
                }
            }
            if let explode = c.explode {
                explodedCases += 1
                let tree = TreeEngine(mapper: c.mapper, filter: c.filter, explode: explode)
                for record in c.records {
                    var w = JSONWriter()
                    switch record.withUnsafeBytes({ tree.map(record: $0, into: &w) }) {
                    case .mapped(_, let n): explodeOutcomes[min(n, 2)] += 1
                    case .rejected(.mapping(let e)) where e.last?.message.hasPrefix("explode ") == true: explodeOutcomes[3] += 1
                    default: break
                    }
                }
            }
            let n = compare(mapper: c.mapper, records: c.records,
                            makeCandidate: { TallyingStreamEngine(engine: StreamEngine(mapper: $0, filter: c.filter, explode: c.explode), tally: tally) },
                            context: c.context, pieces: seed, reportLimit: max(remainingReports, 0), filter: c.filter, explode: c.explode)
            mismatches += n
            remainingReports -= n
        }
        let elapsed = clock.now - start
        print("""
            differential: \(count) cases (\(origins.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", "))), \
            \(records) records, \(mismatches) mismatches, \(elapsed); tree outcomes: \
            \(outcomes.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")); \
            \(covered.count) mapper kinds covered; \(filteredCases) cases with a where: \(filterOutcomes[0]) valid records \
            filtered, \(filterOutcomes[1]) kept; \(explodedCases) cases with an explode: records to none \(explodeOutcomes[0]), \
            to one \(explodeOutcomes[1]), to several \(explodeOutcomes[2]), rejected as no array \(explodeOutcomes[3]); \
            \(tally.projectedFields) records written straight from their projections
            """)
        // The fields written straight from a projection must meet the generated cases too.
        #expect(tally.projectedFields * 50 >= records, "too few records written straight from their projections: \(tally.projectedFields) of \(records)")
        // Random explodes must meet every case: no element, one, several, a value that is no array.
        #expect(explodedCases * 5 >= count, "too few cases with an explode: \(explodedCases) of \(count)")
        for (i, what) in ["none", "one", "several", "no array"].enumerated() {
            #expect(explodeOutcomes[i] >= 5, "too few exploded records gave \(what): \(explodeOutcomes[i])")
        }
        // Random predicates must both keep and drop a fair share of the valid records they see.
        #expect(filteredCases * 4 >= count, "too few cases with a where: \(filteredCases) of \(count)")
        #expect(filterOutcomes[0] * 5 >= filterOutcomes[1] && filterOutcomes[1] * 5 >= filterOutcomes[0],
                "the random where expressions keep \(filterOutcomes[1]) and drop \(filterOutcomes[0]) valid records")
        #expect(mismatches == 0, "\(mismatches) records mapped differently (the first \(min(mismatches, 20)) are reported above)")
        let missing = Self.requiredKinds.subtracting(covered)
        #expect(missing.isEmpty, "the generators never produced: \(missing.sorted())")
        // The inputs must exercise every path: mapped, mapped with warnings, rejected by mapping, malformed.
        for o in ["mapped", "mapped with warnings", "rejected", "syntax error"] {
            #expect((outcomes[o] ?? 0) * 50 >= records, "too few records end as \(o): \(outcomes[o] ?? 0) of \(records)")
        }
    }

    /// How the tree engine classifies each record of a case.
    static func outcomeClasses(_ c: GeneratedCase) -> [String] {
        let tree = TreeEngine(mapper: c.mapper)
        return c.records.map { record in
            var w = JSONWriter()
            switch record.withUnsafeBytes({ tree.map(record: $0, into: &w) }) {
            case .mapped(warnings: let warnings, _): return warnings.isEmpty ? "mapped" : "mapped with warnings"
            case .rejected(.syntax): return "syntax error"
            case .rejected(.noOutput(_)): return "no output"
            case .filtered: return "filtered"
            case .rejected(.mapping): return "rejected"
            }
        }
    }

    /// Runs one case and prints everything about it.
    func replay(seed: UInt64) throws {
        let c = try GeneratedCase.make(seed: seed)
        print("replaying seed \(hex(seed)) (\(c.context.origin.rawValue))\nmapper: \(describe(c.mapper))")
        if let spec = c.context.spec { print("spec: \(spec)") }
        let tree = TreeEngine(mapper: c.mapper)
        for (i, record) in c.records.enumerated() {
            var w = JSONWriter()
            let outcome = record.withUnsafeBytes { tree.map(record: $0, into: &w) }
            print("record \(i): \(printable(record))\n  tree: \(printable(w.bytes))\n  \(render(outcome))")
        }
        if let filter = c.context.filter { print("where: \(filter)") }
        compare(mapper: c.mapper, records: c.records, makeCandidate: { StreamEngine(mapper: $0, filter: c.filter) }, context: c.context,
                pieces: seed, filter: c.filter)
    }

    /// The harness can fail: engines that each break one rule (three in the mapper, one in the reading of records)
    /// are caught on generated cases, while the tree engine compared with itself is not.
    @Test func harnessCatchesAMutation() throws {
        let mutations: [(String, (Mapper) -> any RecordEngine)] = [
            ("every nonFatal fallback dropped", { DroppedFallbackEngine(mapper: $0) }),
            ("first two output keys swapped", { SwappedKeysEngine(mapper: $0) }),
            ("first error's fatality flipped", { FlippedFatalityEngine(mapper: $0) }),
            ("duplicate keys: the first value wins", { FirstKeyWinsEngine(mapper: $0) }),
        ]
        var cases: [GeneratedCase] = []
        for i in 0..<150 {
            cases.append(try GeneratedCase.make(seed: SplitMix64.derive(0xB0B0_CAFE, UInt64(i)), index: i))
        }
        for (name, makeCandidate) in mutations {
            var found: [Mismatch] = []
            for c in cases where found.count < 5 {
                found += findMismatches(mapper: c.mapper, records: c.records, makeCandidate: makeCandidate, context: c.context, limit: 5)
            }
            #expect(!found.isEmpty, "the harness did not notice: \(name)")
            print("mutation \"\(name)\": \(found.count) mismatches found")
            if let first = found.first {
                // The report is usable: it names the seed and shows both sides.
                #expect(first.description.contains(hex(first.context.seed)))
                #expect(first.description.contains("tree outcome:") && first.description.contains("candidate outcome:"))
            }
        }
        var control = 0
        for c in cases {
            control += findMismatches(mapper: c.mapper, records: c.records, makeCandidate: { TreeEngine(mapper: $0) }, context: c.context).count
        }
        #expect(control == 0, "the tree engine disagrees with itself")
    }

    /// Same seed, same case: generation is deterministic (so a reported seed replays the failure).
    @Test func generationIsDeterministic() throws {
        for i in 0..<20 {
            let seed = SplitMix64.derive(Self.baseSeed, UInt64(i))
            let a = try GeneratedCase.make(seed: seed), b = try GeneratedCase.make(seed: seed)
            #expect(describe(a.mapper) == describe(b.mapper))
            #expect(a.records == b.records)
            #expect(a.context.spec == b.context.spec)
        }
    }

    // MARK: Fixed regression cases

    static let personSpec = """
        {
          "fields": {
            "first_name": "firstName",
            "last_name": "lastName",
            "homepage": {"to": "homepage", "via": "url"},
            "age": "age",
            "children": {"to": "children", "via": {"arrayOf": {"object": {"fields": {
              "first_name": "firstName",
              "last_name": "lastName",
              "age": "age"
            }}}}}
          }
        }
        """

    /// Hydrant's Person records, crafted to hit the rules the stream engine is most likely to get wrong.
    static let personRecords: [String] = [
        // 0: the README example.
        #"{"first_name":"John","last_name":"Doe","homepage":"http://example.com","age":24,"children":[{"first_name":"Ann","last_name":"Doe","age":6}]}"#,
        // 1: Ann's age spelled `Age` (required, README rejection).
        #"{"first_name":"John","last_name":"Doe","homepage":"http://example.com","age":24,"children":[{"first_name":"Ann","last_name":"Doe","Age":6}]}"#,
        // 2: truncated.
        #"{"first_name":"#,
        // 3: duplicate keys (last wins at the first position), escaped keys and values, keys in another order.
        #"{"age":1,"first\u005fname":"J\u00f6rg","first_name":"J\u00F6rg \ud83d\ude00","last_name":"D\"o\\e","homepage":"https:\/\/example.com\/\u00e4","children":[],"age":2}"#,
        // 4: big and odd numbers pass through as their text; deep unmapped subtrees are skipped.
        #"{"extra":{"a":[[[[{"b":[1,2,{"c":null}]}]]]]},"first_name":"A","last_name":"B","homepage":"http://x.y","age":123456789012345678901234567890,"children":[{"first_name":"C","last_name":"D","age":-0},{"first_name":"E","last_name":"F","age":1E+2,"z":1e-400}]}"#,
        // 5: homepage absent and children not an array: several errors, all reported.
        #"{"first_name":"A","last_name":"B","age":3,"children":{"first_name":"C"}}"#,
        // 6: null where values are required; a null child.
        #"{"first_name":null,"last_name":"B","homepage":null,"age":null,"children":[null,{"first_name":"C","last_name":null,"age":1}]}"#,
        // 7: not an object.
        #"[{"first_name":"A"}]"#,
        // 8: invalid URL, NFC and NFD keys (different keys), whitespace everywhere.
        " {\n \"first_name\" : \"A\" , \"last_name\":\"B\",\t\"homepage\": \"not a url\", \"age\":1, \"children\": [ ], \"f\u{0069}rst_name\u{301}\": 1 } ",
        // 9: a raw control character inside a string (invalid JSON), then trailing garbage.
        "{\"first_name\":\"A\u{1}\",\"last_name\":\"B\"}",
        // 10: trailing garbage after a valid record.
        #"{"first_name":"A","last_name":"B","homepage":"http://x.y","age":1,"children":[]} x"#,
    ]

    @Test func personSpecRegressions() throws {
        let mapper = try Spec(json: Self.personSpec, file: "person.spec.json").mapper
        let records = Self.personRecords.map { Array($0.utf8) }
        // Pin the reference first: the README's documented results.
        let tree = TreeEngine(mapper: mapper)
        var w = JSONWriter()
        let first = records[0].withUnsafeBytes { tree.map(record: $0, into: &w) }
        #expect(first == .mapped(warnings: []))
        #expect(String(decoding: w.bytes, as: UTF8.self)
            == #"{"firstName":"John","lastName":"Doe","homepage":"http://example.com","age":24,"children":[{"firstName":"Ann","lastName":"Doe","age":6}]}"#)
        w = JSONWriter()
        if case .rejected(.mapping(let errors)) = records[1].withUnsafeBytes({ tree.map(record: $0, into: &w) }) {
            #expect(errors.map(\.sourcePath.pointer) == ["/children/0/age"])
            #expect(errors.map(\.message) == ["value is required, found absent"])
        } else {
            Issue.record("Ann's record should be rejected")
        }
        compare(mapper: mapper, records: records, makeCandidate: makeStreamEngine, context: CaseContext(label: "person.spec.json"),
                pieces: 0x9E25)

        // The same Person with the Swift API (docs/library.md): optional fields, dropped children.
        let child = Mapper.object {
            Field("first_name", to: "firstName")
            Field("last_name", to: "lastName")
            Field("age", to: "age", .optionally(.integer))
        }
        let person = Mapper.object {
            Field("first_name", to: "firstName")
            Field("homepage", to: "homepage", .optionally(.url(schemes: ["https", "http"])))
            Field("children", to: "children", .arrayOf(.optionally(child)))
        }
        compare(mapper: person, records: records, makeCandidate: makeStreamEngine, context: CaseContext(label: "README Person (Swift API)"),
                pieces: 0x9E26)
    }

    /// Small mappers with records aimed at single rules: pass-through order and collisions, nested destinations,
    /// many-to-one and one-to-many, shared subtrees, enum number matching, message truncation.
    @Test func focusedRegressions() throws {
        let cases: [(String, Mapper, [String])] = [
            ("pass-through with a key style: mapped fields first, collisions, reserved names",
             .object(unmapped: .keep(keyStyle: .foundationCamel, values: nil)) {
                 Field("id", to: "id")
                 Field("user.name", to: "userName")
             },
             [#"{"a_b":1,"aB":2,"id":3,"user":{"name":"x"},"user_name":4,"id":5}"#,
              #"{"id":1,"user":null,"snake_key":[1,{"deep_key":2}]}"#]),
            ("nested destinations take the place of their first field; write conflicts",
             Mapper(.object(ObjectMapping(fields: [
                 Field(sources: [KeyPath("a")], destinations: [KeyPath("out.x")], mapper: .identity),
                 Field(sources: [KeyPath("b")], destinations: [KeyPath("top")], mapper: .identity),
                 Field(sources: [KeyPath("c")], destinations: [KeyPath("out.y")], mapper: .identity),
                 Field(sources: [KeyPath("d")], destinations: [KeyPath("out")], mapper: .identity),
             ]))),
             [#"{"a":1,"b":2,"c":3}"#, #"{"a":1,"b":2,"c":3,"d":4}"#, #"{"c":3,"d":{"z":0}}"#, #"{"d":4,"a":1}"#]),
            ("many-to-one and one-to-many",
             Mapper(.object(ObjectMapping(fields: [
                 Field(sources: [KeyPath("a"), KeyPath("b.c"), KeyPath("l.0")], destinations: [KeyPath("all")], mapper: .identity),
                 Field(sources: [KeyPath("pair")], destinations: [KeyPath("p.first"), KeyPath("p.second")], mapper: .arrayOf(.string)),
             ]))),
             [#"{"a":1,"b":{"c":2},"l":[3],"pair":["x","y"]}"#, #"{"a":1,"l":[],"pair":["x"]}"#, #"{"pair":["x",2]}"#, #"{"pair":"xy","b":{"c":null}}"#]),
            ("enum tables match numbers by value, strings by bytes",
             .enumTable([(1, "one"), ("é", "precomposed"), (.null, "none"), (true, "yes")]),
             ["1", "1.0", "10e-1", "1E0", #""é""#, #""e\u0301""#, "null", "true", "2", "[1]"]),
            ("error messages truncate long values",
             .object { Field("s", to: "s", .integer) },
             [#"{"s":"\#(String(repeating: "x", count: 59))e\u0301\u0301yyyyyyyyyy"}"#, #"{"s":"\#(String(repeating: "👍🏽", count: 40))"}"#,
              #"{"s":1234567890123456789012345678901234567890123456789012345678901234567890.5}"#]),
            ("forward and backward",
             .thread(.forward("data.items.0"), .backward("first.item", .optionally(.string))),
             [#"{"data":{"items":["a","b"]}}"#, #"{"data":{"items":[]}}"#, #"{"data":{"items":[1]}}"#, #"{"data":{"items":{"0":"key"}}}"#, "5"]),
            ("duplicate keys: the last value wins at the first position, also for walked subtrees and pass-through",
             .object(unmapped: .keep(keyStyle: .foundationCamel, values: .optionally(.string))) {
                 Field("a", to: "a", .integer)
                 Field("u.n", to: "n", .optionally())
                 Field("u.m", to: "m", .optionally(.number))
             },
             [#"{"a":"x","a":1}"#, #"{"a":1,"a":"x"}"#, #"{"a":1,"u":{"n":1},"u":{"m":2}}"#, #"{"a":1,"u":{"n":1},"x":0,"u":{"n":2,"n":3}}"#,
              #"{"p_q":1,"a":2,"pQ":"s","p_q":"t"}"#, #"{"a":1,"u":[1],"u":{"n":null}}"#, #"{"a":1,"u":{"n":1},"u":5}"#,
              #"{"a":1,"x_y":{"deep":[1,{"x":2}]},"x_y":"last"}"#, #"{"a\u0000":1,"a":1,"a\u0000":"z"}"#]),
            ("one subtree read by several fields, by index, and passed through",
             .object(unmapped: .keep) {
                 Field("u", to: "whole", .identity)
                 Field("u.n", to: "n", .identity)
                 Field("u.list.1", to: "second", .identity)
                 Field("u.list.01", to: "notAnIndex", .identity)
                 Field("u.list.1.k", to: "deep", .identity)
             },
             [#"{"u":{"n":1,"list":[0,{"k":"v"}]},"v":2}"#, #"{"u":{"list":{"1":"key","01":"also"}}}"#, #"{"u":[{"n":1}],"u2":{}}"#,
              #"{"u":{"list":[0]},"u":{"list":[1,2,3]}}"#, #"{"v":1}"#]),
            ("the nesting limit (10 000 levels), in mapped and in skipped subtrees",
             .object { Field("a", to: "a", .optionally()) },
             [#"{"a":"# + String(repeating: "[", count: 9_999) + String(repeating: "]", count: 9_999) + "}",
              #"{"a":"# + String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000) + "}",
              #"{"skip":"# + String(repeating: #"{"k":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000) + #","a":1}"#,
              #"{"a":1,"skip":"# + String(repeating: "[", count: 9_999) + String(repeating: "]", count: 9_999) + "}"]),
            ("long key paths walked as one run (KeyChain): duplicates, arrays, scalars and missing steps on the way, a run shared with a field in between",
             .object(unmapped: .keep) {
                 Field("a.b.c.d.e", to: "deep", .optionally())
                 Field("p.q.r.s.t.u.v", to: "shared", .identity)
                 Field("p.q.r", to: "side", .optionally(.check(.object)))
                 Field("k.l.m.n.0.o", to: "indexed", .optionally())
             },
             [#"{"a":{"b":{"c":{"d":{"e":1}}}}}"#, #"{"a":{"b":{"c":{"d":{"e":1}}},"b":{"c":{"d":{"x":2}}}}}"#,
              #"{"a":{"b":[{"c":1}],"z":{"c":1}}}"#, #"{"a":{"b":{"c":5}}}"#, #"{"a":{"b":{"c":{"d":{"e":{"deep":[1,{"x":2}]},"e":3}}}},"a":7}"#,
              #"{"p":{"q":{"r":{"s":{"t":{"u":{"v":"w"}}}},"x":1}}}"#, #"{"p":{"q":{"x":1}}}"#,
              #"{"p":{"q":{"r":{"s":[{"t":1}],"s":{"t":{"u":{"v":null}}}}}}}"#, #"{"p":{"q":{"r":[{"s":1}]}}}"#,
              #"{"p":{"q":{"r":{"s":{"t":{"u":{"v":1}}},"s":{"z":[]}}}}}"#, #"{"a":[{"b":1}],"a":{"b":{"c":{"d":{"e":[1]}}}}}"#,
              #"{"k":{"l":{"m":{"n":[{"o":1},2]}}}}"#, #"{"k":{"l":{"m":{"n":{"0":{"o":1}}}}}}"#, #"{"a":{"b":{"c":{"d":{"e\u0000":1,"e":2}}}}}"#]),
            ("keys renamed while parsing: collisions (fail and warn), duplicates, shallow and deep, big and escaped keys",
             .object {
                 Field("f", to: "f", .keys(.foundationSnake, deep: true))
                 Field("w", to: "w", .keys(.hydrantCamel, deep: true, collisions: .warn))
                 Field("s", to: "s", .optionally(.keys(.uppercase)))
             },
             [#"{"f":{"myURLProperty":1,"x":{"aB":[{"cD":2}]}},"w":{"a_b":1,"aB":2,"a_b":3},"s":{"aB":{"cD":1}}}"#,
              #"{"f":{"my_url_property":3,"myURLProperty":4},"w":[{"x_y":1,"xY":{"p_q":1,"pQ":2}}],"s":{"ab":1,"AB":2}}"#,
              #"{"f":{"aB":1,"aB":2},"w":{"a\"b":1,"\u00e9_x":2},"s":{"a":{"b":1,"B":2}}}"#,
              #"{"f":{"k\#(String(repeating: "x", count: 70_000))":1,"aB":{"aB":1,"cD":{"a_b":2}}},"w":5,"s":"x"}"#,
              #"{"f":[],"w":{},"s":null}"#, #"{"f":{"a":{"bC":1,"b_c":2},"a":1}}"#]),
            ("ISO 8601: fractions of any length exact to the nanosecond, a date alone, finer than a nanosecond; epoch numbers finer than one",
             .object {
                 Field("d", to: "d", .stringToDate(.iso8601))
                 Field("e", to: "e", .optionally(.thread(.stringToDate(.twitter, .iso8601), .dateToNumber(.milliseconds))))
                 Field("n", to: "n", .optionally(.numberToDate(.seconds)))
             },
             [#"{"d":"2014-08-31T00:29:15.1234567890Z","e":"2014-08-31T00:29:15.123456789000Z","n":1.5}"#,
              #"{"d":"2014-08-31","e":"2014-08-31","n":1.0000000001}"#,
              #"{"d":"2014-08-31T00:29:15.1234567891Z"}"#, #"{"d":"2014-08-31T00:00:00Z","e":"2014-08-31T00:29:15.0000000000001+01:00","n":1e30}"#,
              #"{"d":"2014-02-30"}"#, #"{"d":"2014-08-31T00:29:15.000000000000000000000000000000000000001Z"}"#]),
            ("records that are not objects, or produce nothing",
             .object { Field("a", to: "a", .optionally()) },
             ["[]", "null", "\"s\"", "1", "{}", #"{"a":null}"#, "", " ", "{}{}"]),
        ]
        for (label, mapper, records) in cases {
            compare(mapper: mapper, records: records.map { Array($0.utf8) }, makeCandidate: makeStreamEngine,
                    context: CaseContext(label: label), pieces: 0xF0C5)
        }
    }
}

