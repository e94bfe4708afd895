// The engine-differential check behind the libFuzzer target (Fuzz/), shared with the regression tests that replay
// what the fuzzer found (Tests/StreamMapTests/HardeningTests.swift).
//
// A fuzz input is a 10-byte header and record bytes:
//
//     bytes 0..<8   seed (little-endian; missing bytes are 0): chooses and generates the mapper (Generators.swift)
//     byte  8       mode:  bits 0–1  mapper: 0 generated `Mapper` value, 1 generated spec file, 2 a fixed spec
//                                     (Examples/ and a few more) — in a quarter of the seeds with the first
//                                     record's bytes spliced into its text, a hostile spec near a real one —, 3 the
//                                     reverse of a generated mapper
//                          bit  2     also map 1–3 records generated for the mapper's shape
//                          bit  3     a small nesting limit (2–33 levels) instead of 10 000
//                          bit  4     also cut the first 4 records (≤ 128 bytes each) once at every offset
//                          bits 5, 6  both set: also map the first record after 300 000 spaces, in pieces: past
//                                     the size up to which the stream engine collects a record before parsing it
//                                     (256 KiB), so that pieces go to yajl as they come
//     byte  9       where records are cut into pieces (with the seed)
//     bytes 10...   records, one per line (`\n`; nothing else is stripped)
//
// Every record is mapped by one `TreeEngine` (the reference) and one `StreamEngine`, each reused across the records
// as a stream would use it: whole, as a single piece, then in pieces (a few cut points, or every byte). The stream
// engine must produce the same output bytes and the same outcome (errors compared byte for byte); the tree engine
// must too when fed in pieces; a rejected record must write nothing, a mapped one must write one canonical JSON
// value. From the record's start and its first 32 `{`, `[` and `"`, the validating skipper must also pass exactly
// the values yajl and the strict scanner accept, ending where they end (`ValueSkipperCheck`); the record projector
// must project exactly the records they accept whole, with exactly their events less the members it drops
// (`RecordProjectionCheck`, under a plan of keys taken from the record).

@_spi(Fuzzing) import StreamMap

public enum EngineFuzzing {
    public static let headerSize = 10

    /// One decoded fuzz input.
    public struct Case {
        public var seed: UInt64
        public var mode: UInt8
        public var pieceByte: UInt8
        /// nil when the generated spec does not compile (a generator problem, not an engine one: skipped).
        public var mapper: Mapper?
        /// What the mapper is, for reports: the spec text, or the mapper's description.
        public var label: String
        public var options: JSONParserOptions
        public var records: [[UInt8]]
        /// A random `where` for about a third of the seeds (drawn from the seed by a generator of its own), applied by
        /// both engines.
        public var filter: RecordFilter? = nil
        /// An explode for about a quarter of the seeds: of a key the mapped records have (mostly an array's), or of
        /// one they lack; applied by both engines (the tree engine on the value, the stream engine on its output).
        public var explode: RecordExplosion? = nil
        /// A fixed spec with the first record spliced into its text: its compile error, or the mapper's other uses
        /// (Arrow schema, table layout, reverse, `explain`), are worked out too — none may crash.
        public var splicedSpec: String? = nil
    }

    /// Decodes `data` (see the file comment). Generation is deterministic: the same bytes give the same case.
    public static func decode(_ data: UnsafeRawBufferPointer) -> Case {
        var seed: UInt64 = 0
        for i in 0..<min(8, data.count) { seed |= UInt64(data[i]) << (8 * UInt64(i)) }
        let mode: UInt8 = data.count > 8 ? data[8] : 0
        let pieceByte: UInt8 = data.count > 9 ? data[9] : 0
        var records: [[UInt8]] = []
        if data.count > headerSize {
            var line: [UInt8] = []
            for b in data[headerSize...] {
                if b == 0x0A {
                    records.append(line)
                    line.removeAll(keepingCapacity: true)
                } else {
                    line.append(b)
                }
            }
            records.append(line)
        }
        var options = JSONParserOptions()
        if mode & 0x08 != 0 { options.maximumDepth = 2 + Int(pieceByte % 32) }

        var r = Rand(seed: seed)
        var mapper: Mapper?
        var label = ""
        var shape = Shape.any
        var splicedSpec: String?
        switch mode & 0x03 {
        case 2:
            let (name, text) = fixedSpecs[Int(seed % UInt64(fixedSpecs.count))]
            if (seed >> 40) & 3 == 3, let fragment = records.first {
                let hostile = splice(fragment, into: text, seed: seed)
                mapper = try? Spec(json: hostile, file: name).mapper
                label = "\(name) spliced: \(printable(Array(hostile.utf8)))"
                splicedSpec = hostile
            } else {
                mapper = try? Spec(json: text, file: name).mapper
                label = "\(name): \(text)"
            }
        default:
            let fromSpec = mode & 0x03 == 1 || (mode & 0x03 == 3 && r.bool())
            if fromSpec {
                var g = SpecGen(r.fork())
                let (text, s) = g.document()
                mapper = try? Spec(json: text, file: "generated.spec.json").mapper
                shape = s
                label = "spec \(text)"
            } else {
                var g = MapperGen(r.fork())
                let (m, s) = g.record()
                mapper = m
                shape = s
                label = "mapper \(describe(m))"
            }
            if mode & 0x03 == 3, let m = mapper {
                if let back = try? m.reversed() {
                    mapper = back
                    label = "reverse of " + label
                    shape = .any
                }
            }
        }
        if mode & 0x04 != 0 {
            var inputs = InputGen(r.fork())
            records += inputs.records(for: shape, count: r.int(1...3))
        }
        var c = Case(seed: seed, mode: mode, pieceByte: pieceByte, mapper: mapper, label: label, options: options, records: records)
        c.splicedSpec = splicedSpec
        var filterRand = Rand(seed: SplitMix64.derive(seed, 0x7768_6572_65))
        if filterRand.percent(35) {
            var g = FilterGen(filterRand.fork())
            let (text, delimiter, filter) = g.filter(for: shape)
            c.filter = filter
            c.label += "\n  where \(text)  (delimiter \(delimiter))"
        }
        var explodeRand = Rand(seed: SplitMix64.derive(seed, 0x6578_706C_6F64_65))
        if let mapper, explodeRand.percent(25) {
            c.explode = explosion(mapper, c.records, &explodeRand)
            c.label += "\n  explode \(c.explode!)"
        }
        return c
    }

    /// An explode of a key the mapped `records` have — an array's three times in four where there is one, nested
    /// one level at times — or of a key they lack; empty records dropped or written with null.
    public static func explosion(_ mapper: Mapper, _ records: [[UInt8]], _ r: inout Rand) -> RecordExplosion {
        var arrays: [[String]] = [], others: [[String]] = []
        for record in records.prefix(4) {
            guard let value = try? JSONParser.parse(record), case .object(let o)? = mapper.map(value).value else { continue }
            for (key, v) in o {
                if case .array = v { arrays.append([key]) } else { others.append([key]) }
                guard case .object(let inner) = v else { continue }
                for (k, w) in inner.prefix(4) {
                    if case .array = w { arrays.append([key, k]) } else { others.append([key, k]) }
                }
            }
        }
        let path: [String]
        if !arrays.isEmpty && r.percent(75) {
            path = arrays[r.int(0...(arrays.count - 1))]
        } else if !others.isEmpty && r.percent(70) {
            path = others[r.int(0...(others.count - 1))]
        } else {
            path = [["a"], ["items"], ["a", "b"]][r.int(0...2)]
        }
        return RecordExplosion(path: path, empty: r.bool() ? .drop : .null)
    }

    /// Where record `index` of a case is cut: every byte (15 %), or 1–4 points.
    public static func cuts(count: Int, seed: UInt64, pieceByte: UInt8, index: Int) -> [Int] {
        guard count > 1 else { return [] }
        var r = Rand(seed: SplitMix64.derive(seed ^ (UInt64(pieceByte) << 56), UInt64(index)))
        if r.percent(15) { return Array(1..<count) }
        return Array(Set((0..<r.int(1...4)).map { _ in r.int(1...(count - 1)) })).sorted()
    }

    /// Leading spaces that make a record bigger than the stream engine collects before parsing (256 KiB, see
    /// `StreamEngine.continueRecord`), so that pieces go to yajl as they come, cut at token boundaries (mode bits
    /// 5 and 6).
    public static let paddingLength = 300_000

    /// Maps every record of the input with both engines, whole and in pieces. Returns nil when everything agrees
    /// (or the case is skipped), else a report of the first divergence.
    public static func check(_ data: UnsafeRawBufferPointer) -> String? {
        let c = decode(data)
        if let text = c.splicedSpec { useEverywhere(text, c.mapper) }
        guard let mapper = c.mapper else { return nil }
        var tree = TreeEngine(mapper: mapper, filter: c.filter, explode: c.explode, parserOptions: c.options)
        var stream = StreamEngine(mapper: mapper, filter: c.filter, explode: c.explode, parserOptions: c.options)
        for (i, record) in c.records.enumerated() {
            let pieces = cuts(count: record.count, seed: c.seed, pieceByte: c.pieceByte, index: i)
            // The stream engine whole, as one piece (what the command line does with a line), in pieces; the tree
            // engine in pieces; with mode bit 4, the stream engine cut once at every offset of a short record.
            var variants: [(String, [Int]?)] = [("stream", nil), ("stream", []), ("stream", pieces), ("tree", pieces)]
            if c.mode & 0x10 != 0 && i < 4 && record.count <= 128 && record.count > 1 {
                variants += (1..<record.count).map { ("stream", [$0]) }
            }
            if let report = verify(record, variants, c, i, &tree, &stream) { return report }
            if let report = checkSkipper(record, c, i) { return report }
            if let report = checkVerbatimCopy(record, c, i) { return report }
            if let report = checkProjection(record, c, i) { return report }
            if let report = checkEscapeText(record, c, i) { return report }
            // Mode bits 5 and 6: the first record again after 300 000 spaces, in pieces (the first piece ends with
            // the padding). Only the first, and only in a quarter of the inputs: the padding costs milliseconds.
            if c.mode & 0x60 == 0x60 && i == 0 {
                let padded = [UInt8](repeating: 0x20, count: paddingLength) + record
                let shifted = [paddingLength] + pieces.map { $0 + paddingLength }
                let single = (record.count > 1 ? [paddingLength + record.count / 2] : []) + [paddingLength]
                if let report = verify(padded, [("stream", shifted), ("stream", single.sorted()), ("stream", [])], c, i, &tree, &stream) {
                    return report
                }
            }
        }
        return nil
    }

    /// `text` with `fragment` spliced in where a token starts — after a `{`, `[`, `,`, `:` or `"` that `seed`
    /// picks — either inserted there (a third of the time) or in place of what follows up to the next `,`, `}`,
    /// `]` or `"` (a member, a value, a string's text). The fragment is read as UTF-8 (invalid sequences repaired,
    /// as a spec file's text would be).
    public static func splice(_ fragment: [UInt8], into text: String, seed: UInt64) -> String {
        let bytes = Array(text.utf8)
        let starts = [0] + bytes.indices.filter { [0x7B, 0x5B, 0x2C, 0x3A, 0x22].contains(bytes[$0]) }.map { $0 + 1 }
        let at = starts[Int((seed >> 16) & 0xFFFF) % starts.count]
        var end = at
        if (seed >> 32) % 3 != 0 {
            while end < bytes.count, ![0x2C, 0x7D, 0x5D, 0x22].contains(bytes[end]) { end += 1 }
        }
        return String(decoding: bytes[..<at] + fragment + bytes[end...], as: UTF8.self)
    }

    /// A spliced spec put to every use a spec has besides mapping (which `check` compares): its errors' text, or its
    /// Arrow schema, table layout, reverse and `explain`. Each must end with a value or an error, never a crash.
    static func useEverywhere(_ text: String, _ mapper: Mapper?) {
        guard let mapper else {
            do { _ = try Spec(json: text) } catch { _ = "\(error)" }
            return
        }
        _ = (try? ArrowSchema(mapper: mapper)).map { $0.checking(mapper) }
        _ = try? TableLayout(mapper: mapper)
        _ = try? mapper.reversed()
        _ = MapperExplanation(mapper).summary
    }

    /// The validating skipper against the parser it shortcuts (`ValueSkipperCheck`): from the record's start and
    /// from each of its first 32 `{`, `[` and `"`, the skipper must pass exactly the values the parser accepts,
    /// ending where the parser's end.
    static func checkSkipper(_ record: [UInt8], _ c: Case, _ i: Int) -> String? {
        let starts = [0] + record.indices.lazy.filter { [0x7B, 0x5B, 0x22].contains(record[$0]) }.prefix(32)
        return record.withUnsafeBytes { bytes in
            for start in starts {
                let rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
                if let divergence = ValueSkipperCheck.divergence(rest, maximumDepth: c.options.maximumDepth) {
                    return "StreamMap fuzz: the skipper differs from the parser: \(divergence)\n"
                        + "  seed \(hexText(c.seed)), mode \(hexText(UInt64(c.mode))), max depth \(c.options.maximumDepth), record \(i), from byte \(start)\n"
                        + "  bytes: \(printable(Array(rest)))"
                }
            }
            return nil
        }
    }

    /// The record projector against the parser (`RecordProjectionCheck`), under a plan made of keys that occur in
    /// the record (its strings without escapes), some with plans of their own, chosen by the case's seed.
    static func checkProjection(_ record: [UInt8], _ c: Case, _ i: Int) -> String? {
        var names: [String] = []
        var at = 0
        while at < record.count, names.count < 16 {
            guard record[at] == 0x22, let end = record[(at + 1)...].firstIndex(where: { $0 == 0x22 || $0 == 0x5C }) else {
                at += 1
                continue
            }
            if record[end] == 0x22 { names.append(String(decoding: record[(at + 1)..<end], as: UTF8.self)) }
            at = end + 1
        }
        var r = Rand(seed: c.seed &+ UInt64(i) &* 0x9E37_79B9)
        func name() -> String { names.isEmpty || r.percent(10) ? "id" : r.pick(names) }
        func plan(_ depth: Int) -> RecordProjectionCheck.Plan {
            .init((0..<r.int(0...5)).map { _ in (name(), depth < 3 && r.percent(35) ? plan(depth + 1) : nil) },
                  lifted: Set((0..<r.int(0...3)).map { _ in name() }))
        }
        let p = plan(0)
        let capacity = r.int(0...6)
        return record.withUnsafeBytes { bytes in
            guard let divergence = RecordProjectionCheck.divergence(bytes, plan: p, maximumDepth: c.options.maximumDepth, liftCapacity: capacity)
            else { return nil }
            return "StreamMap fuzz: the record projector differs from the parser: \(divergence)\n"
                + "  seed \(hexText(c.seed)), mode \(hexText(UInt64(c.mode))), max depth \(c.options.maximumDepth), record \(i)\n"
                + "  plan: \(p), lifting at most \(capacity)\n  bytes: \(printable(record))"
        }
    }

    /// The string escaper behind every output string (`EscapeTextCheck`), both its code paths, on the record's
    /// bytes as a text.
    static func checkEscapeText(_ record: [UInt8], _ c: Case, _ i: Int) -> String? {
        record.withUnsafeBytes { bytes in
            guard let divergence = EscapeTextCheck.divergence(bytes) else { return nil }
            return "StreamMap fuzz: the string escaper differs from its rule: \(divergence)\n"
                + "  seed \(hexText(c.seed)), mode \(hexText(UInt64(c.mode))), record \(i)\n  bytes: \(printable(record))"
        }
    }

    /// Verbatim copies against the tree's `identity` (`VerbatimCopyCheck`), on the record and on each of its first
    /// 8 objects and arrays alone (where the skipper says they end).
    static func checkVerbatimCopy(_ record: [UInt8], _ c: Case, _ i: Int) -> String? {
        let starts = [0] + record.indices.lazy.filter { [0x7B, 0x5B].contains(record[$0]) }.prefix(8)
        return record.withUnsafeBytes { bytes in
            for start in starts {
                var rest = UnsafeRawBufferPointer(rebasing: bytes[start...])
                if start > 0 {  // the inner value alone
                    let end = ValueSkipperCheck.skipperEnd(rest, maximumDepth: c.options.maximumDepth)
                    guard end > 0 else { continue }
                    rest = UnsafeRawBufferPointer(rebasing: rest[..<end])
                }
                if let divergence = VerbatimCopyCheck.divergence(rest, maximumDepth: c.options.maximumDepth) {
                    return "StreamMap fuzz: a verbatim copy differs from the tree: \(divergence)\n"
                        + "  seed \(hexText(c.seed)), mode \(hexText(UInt64(c.mode))), max depth \(c.options.maximumDepth), record \(i), from byte \(start)\n"
                        + "  bytes: \(printable(Array(rest)))"
                }
            }
            return nil
        }
    }

    /// Maps `record` with the tree engine whole (the reference) and then as each variant says (engine; nil: whole,
    /// else the cut points); returns a report of the first difference.
    static func verify(
        _ record: [UInt8], _ variants: [(String, [Int]?)], _ c: Case, _ i: Int, _ tree: inout TreeEngine, _ stream: inout StreamEngine
    ) -> String? {
        var treeWriter = JSONWriter()
        let reference = record.withUnsafeBytes { tree.map(record: $0, into: &treeWriter) }
        let referenceOutput = treeWriter.bytes
        func report(_ what: String, _ engine: String, _ cut: [Int]?, _ output: [UInt8], _ outcome: RecordOutcome) -> String {
            var lines = ["StreamMap fuzz: \(what)"]
            lines.append("  seed \(hexText(c.seed)), mode \(hexText(UInt64(c.mode))), piece byte \(c.pieceByte), max depth \(c.options.maximumDepth), record \(i) of \(c.records.count)")
            lines.append("  \(c.label)")
            let padding = record.prefix(while: { $0 == 0x20 }).count
            if padding >= paddingLength {
                lines.append("  record (\(padding) spaces, then \(record.count - padding) bytes): \(printable(Array(record[padding...])))")
            } else {
                lines.append("  record (\(record.count) bytes): \(printable(record))")
            }
            if let cut {
                lines.append(cut.isEmpty ? "  \(engine) fed as one piece (beginRecord, continueRecord, endRecord)"
                    : "  \(engine) fed in pieces cut at \(cut.count > 40 ? "every byte" : "\(cut)")")
            }
            lines.append("  tree (whole): \(printable(referenceOutput))")
            lines.append("  \(engine): \(printable(output))")
            lines.append("  tree outcome: \(render(reference))")
            lines.append("  \(engine) outcome: \(render(outcome))")
            return lines.joined(separator: "\n")
        }
        // The reference itself: exactly one place for the record.
        switch reference {
        case .mapped(_, let records):
            // One record written, or with an explode as many as it says (none included), a line each.
            let lines = referenceOutput.isEmpty ? [] : referenceOutput.split(separator: 0x0A, omittingEmptySubsequences: false).map(Array.init)
            if lines.count != records {
                return report("the tree engine mapped a record to \(records) records but wrote \(lines.count)", "tree", nil, referenceOutput, reference)
            }
            for line in lines {
                if line.isEmpty { return report("the tree engine mapped a record but wrote nothing", "tree", nil, referenceOutput, reference) }
                if let problem = canonicalProblem(line) { return report("the tree engine wrote \(problem)", "tree", nil, referenceOutput, reference) }
            }
        case .rejected:
            if !referenceOutput.isEmpty { return report("the tree engine rejected a record but wrote output", "tree", nil, referenceOutput, reference) }
        case .filtered:
            if !referenceOutput.isEmpty { return report("the tree engine filtered a record out but wrote output", "tree", nil, referenceOutput, reference) }
        }
        for (engine, cut) in variants {
            var writer = JSONWriter()
            let outcome: RecordOutcome
            if let cut {
                func feed<E: RecordEngine>(_ e: inout E) -> RecordOutcome {
                    e.beginRecord()
                    var from = 0
                    for to in cut + [record.count] {
                        record[from..<to].withUnsafeBytes { e.continueRecord($0) }
                        from = to
                    }
                    return e.endRecord(into: &writer)
                }
                outcome = engine == "stream" ? feed(&stream) : feed(&tree)
            } else {
                outcome = record.withUnsafeBytes { stream.map(record: $0, into: &writer) }
            }
            if writer.bytes != referenceOutput {
                return report("\(engine) engine output differs from the tree engine's", engine, cut, writer.bytes, outcome)
            }
            if outcome != reference || Array(render(outcome).utf8) != Array(render(reference).utf8) {
                return report("\(engine) engine outcome differs from the tree engine's", engine, cut, writer.bytes, outcome)
            }
        }
        return nil
    }

    /// nil when `bytes` is one JSON value written canonically (parses, and writing it again gives the same bytes).
    static func canonicalProblem(_ bytes: [UInt8]) -> String? {
        let value: JSONValue
        do {
            value = try JSONParser.parse(bytes)
        } catch {
            return "output that is not JSON (\(error))"
        }
        let again = JSONWriter.bytes(value)
        JSONValue.release(value)
        return again == bytes ? nil : "non-canonical output (written again: \(printable(again)))"
    }

    /// Specs from Examples/ and a few more, for mode 2.
    public static let fixedSpecs: [(String, String)] = [
        ("person.spec.json", #"""
            {"fields":{"first_name":"firstName","last_name":"lastName","homepage":{"to":"homepage","via":"url"},"age":"age",
             "children":{"to":"children","via":{"arrayOf":{"object":{"fields":{"first_name":"firstName","last_name":"lastName","age":"age"}}}}}}}
            """#),
        ("cats.spec.json", #"{"unmapped":{"keys":"kvmapper.llama","values":{"multiply":6}}}"#),
        ("events.spec.json", #"""
            {"streammap":1,"fields":{"id":{"to":"id","type":"string"},
             "type":{"to":"kind","invalid":{"default":"other"},"via":{"enum":{"PushEvent":"push","CreateEvent":"create","ForkEvent":"fork"}}},
             "actor.login":"actor.login","actor.avatar_url":{"to":"actor.avatar","via":{"url":["https"]},"missing":"omit","invalid":"omit"},
             "repo.name":"repo","created_at":{"to":"createdAtMs","via":[{"stringToDate":"iso8601"},{"dateToNumber":"ms"}]},
             "payload.size":{"to":"commits","type":"integer","missing":"omit","null":"omit"},
             "public":{"to":"public","type":"boolean","default":true}}}
            """#),
        ("keep.spec.json", #"{"fields":{"id":"id","user.name":{"to":"name","optional":true}},"unmapped":"keep"}"#),
        ("identity.spec.json", #"{"mapper":"identity"}"#),
        ("tweets.spec.json", #"""
            {"fields":{"id_str":"id","created_at":{"to":"createdAt","via":{"stringToDate":"twitter"}},"text":"text",
             "user.screen_name":{"to":"user","optional":true},"entities.hashtags":{"to":"tags","via":{"arrayOf":{"forward":"text"}},"missing":"omit"},
             "retweet_count":{"to":"retweets","type":"integer","default":0}},"unmapped":{"keys":"camel"}}
            """#),
        ("deep.spec.json", #"{"mapper":{"keys":"snake","deep":true}}"#),
        ("arrays.spec.json", #"{"mapper":{"arrayOf":{"first":["integer",{"object":{"fields":{"a.b.0":"x"},"unmapped":"keep"}},"toString"]}}}"#),
    ]

    // MARK: Reports

    public static func render(_ o: RecordOutcome) -> String {
        switch o {
        case .mapped(warnings: let w, let n):
            return "mapped" + (n == 1 ? "" : " to \(n) records") + (w.isEmpty ? "" : ", warnings: " + w.map(render).joined(separator: "; "))
        case .rejected(.syntax(let e)): return "rejected: syntax error at byte \(e.byteOffset): \(JSONWriter.string(.string(e.message)))"
        case .rejected(let failure): return "rejected: " + failure.allErrors.map(render).joined(separator: "; ")
        case .filtered: return "filtered"
        }
    }

    static func render(_ e: MapError) -> String {
        let q = { (s: String) in JSONWriter.string(.string(s)) }
        return "\(e.code.rawValue) \(e.isFatal ? "fatal" : "warning") src=\(q(e.sourcePath.pointer)) "
            + "dst=\(q(e.destinationPath.pointer)) \(q(e.message))"
    }

    static func hexText(_ v: UInt64) -> String { "0x" + String(v, radix: 16) }

    /// Bytes as readable text: valid UTF-8 as is (control characters escaped), invalid bytes as `\xNN`; long texts cut.
    public static func printable(_ bytes: [UInt8], limit: Int = 2000) -> String {
        var out = ""
        var i = 0
        while i < bytes.count && i < limit {
            let b = bytes[i]
            let n = b < 0x80 ? 1 : b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : b >= 0xC0 ? 2 : 0
            if n > 1, i + n <= bytes.count, let s = String(validating: bytes[i..<i + n], as: UTF8.self) {
                out += s
                i += n
                continue
            }
            switch b {
            case 0x0A: out += "\\n"
            case 0x0D: out += "\\r"
            case 0x09: out += "\\t"
            case 0x20..<0x7F: out.unicodeScalars.append(Unicode.Scalar(b))
            default: out += "\\x" + (b < 16 ? "0" : "") + String(b, radix: 16)
            }
            i += 1
        }
        if bytes.count > limit { out += "… (\(bytes.count) bytes)" }
        return out
    }
}
