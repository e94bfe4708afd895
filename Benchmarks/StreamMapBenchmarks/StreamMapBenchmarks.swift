// StreamMap's micro-benchmarks (ordo-one/package-benchmark). Run from Benchmarks/: `swift package benchmark`.
// What each one measures: Benchmarks/README.md. The side-by-side comparison with jq, Python, Foundation and C is
// Benchmarks/compare.sh, not this target.
//
// Conventions: the corpus benchmarks ("… x1000") handle exactly 1 000 records per iteration (`scalingFactor: .kilo`),
// so their scaled (`*`) figures — wall clock, mallocCountTotal — are per record and throughput is records/s. The
// single-record benchmarks (deep nesting, big string, one tweet + N skipped objects) handle one record per iteration
// (`scalingFactor: .one`). `MB/s` is a custom metric: input bytes / wall time of the iteration (1 MB = 10^6 bytes).

import Benchmark
import Foundation
import StreamMap

// MARK: - Inputs (built once per benchmark process, never measured)

/// The seed corpus: the repository's `Samples/seed/{tweets,gh_events}.ndjson` (Samples/seed/README.md), or
/// `STREAMMAP_SEED_DIR`. Synthetic records otherwise.
enum Inputs {
    static let benchmarksDirectory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()

    static let seedDirectory: URL? = {
        let fm = FileManager.default
        if let env = ProcessInfo.processInfo.environment["STREAMMAP_SEED_DIR"], !env.isEmpty {
            return URL(fileURLWithPath: env)
        }
        let candidate = benchmarksDirectory.deletingLastPathComponent().appendingPathComponent("Samples/seed")
        return fm.fileExists(atPath: candidate.appendingPathComponent("tweets.ndjson").path) ? candidate : nil
    }()

    static func lines(_ name: String) -> [[UInt8]]? {
        guard let seedDirectory, let data = FileManager.default.contents(atPath: seedDirectory.appendingPathComponent(name).path)
        else { return nil }
        return data.split(separator: 0x0A).map { Array($0) }.filter { !$0.isEmpty }
    }

    /// Tweet-like records (122 seed tweets, ~4.2 KB each).
    static let tweets: [[UInt8]] = lines("tweets.ndjson") ?? Synthetic.tweets(count: 120)
    /// GitHub-event-like records (30 seed events, ~1.8 KB each).
    static let events: [[UInt8]] = lines("gh_events.ndjson") ?? Synthetic.events(count: 30)
    /// Tweets and events interleaved (identity mapping, mixed parse).
    static let mixed: [[UInt8]] = {
        var out: [[UInt8]] = []
        var e = 0
        for (i, t) in tweets.enumerated() {
            out.append(t)
            if i % 4 == 3, e < events.count { out.append(events[e]); e += 1 }
        }
        out.append(contentsOf: events[e...])
        return out
    }()

    static func spec(_ name: String) -> Mapper {
        let url = benchmarksDirectory.appendingPathComponent("specs/\(name)")
        guard let data = FileManager.default.contents(atPath: url.path) else { fatalError("missing \(url.path)") }
        do { return try Spec(json: Array(data), file: name).mapper } catch { fatalError("\(error)") }
    }

    static let tweetMapper = spec("tweets.spec.json")
    static let identityMapper: Mapper = {
        do { return try Spec(json: #"{"mapper":"identity"}"#).mapper } catch { fatalError("\(error)") }
    }()
    /// Rename one key, pass every other one through (`unmapped: keep`).
    static let keepMapper: Mapper = {
        do { return try Spec(json: #"{"fields":{"id_str":"idStr"},"unmapped":"keep"}"#).mapper } catch { fatalError("\(error)") }
    }()

    /// ~50% rejected: every other tweet is broken, in turn by a mapping error (id as a string, an unparseable
    /// date, a missing required nested field) or a syntax error (truncated line, bad literal).
    static let halfRejected: [[UInt8]] = {
        var out: [[UInt8]] = []
        for (i, t) in tweets.enumerated() {
            guard i % 2 == 1 else { out.append(t); continue }
            var s = String(decoding: t, as: UTF8.self)
            switch (i / 2) % 5 {
            case 0: s = replacingFirst(#""id":"#, with: #""id":"x","x_":"#, in: s)
            case 1: s = replacingFirst(#""created_at":""#, with: #""created_at":"yesterday","_c":""#, in: s)
            case 2: s = replacingFirst(#""screen_name":"#, with: #""screen_nam":"#, in: s)
            case 3: s = String(s.prefix(s.utf8.count / 2))
            default: s = replacingFirst(#""truncated":false"#, with: #""truncated":flase"#, in: s)
            }
            out.append(Array(s.utf8))
        }
        return out
    }()

    static func replacingFirst(_ a: String, with b: String, in s: String) -> String {
        guard let r = s.range(of: a) else { return s }
        return s.replacingCharacters(in: r, with: b)
    }

    /// One record nested `levels` deep (objects and arrays alternating), a string and a number at the bottom.
    static func deep(levels: Int) -> [UInt8] {
        var s = #"{"id":1,"deep":"#
        for i in 0..<(levels - 1) { s += i % 2 == 0 ? "[" : #"{"k":"# }
        s += #""bottom \u00e9 \ud83d\ude00""#
        for i in (0..<(levels - 1)).reversed() { s += i % 2 == 0 ? "]" : "}" }
        s += "}"
        return Array(s.utf8)
    }

    /// One record with a string of `bytes` bytes (mixed ASCII, 2-, 3- and 4-byte UTF-8 and escapes).
    static func bigString(bytes: Int) -> [UInt8] {
        let piece = #"The quick brown fox, «naïve» café — 東京 😀 \"quoted\" \n\t\u00e9 "#
        var body = ""
        body.reserveCapacity(bytes + piece.utf8.count)
        while body.utf8.count < bytes { body += piece }
        return Array((#"{"id":1,"text":""# + body + #"","lang":"en"}"#).utf8)
    }

    /// A tweet with an extra unmapped array of `n` small objects: the events per record grow, the mapping does not.
    static func tweetWithSkippedArray(_ n: Int) -> [UInt8] {
        let extra = (0..<n).map { #"{"i":\#($0),"v":[1.5,null,true,"x"]}"# }.joined(separator: ",")
        var t = tweets[0]
        t.removeLast()  // "}"
        return t + Array(#","extra":[\#(extra)]}"#.utf8)
    }
}

/// Records shaped like the seeds, when the seed files are not there (deterministic).
enum Synthetic {
    static func tweets(count: Int) -> [[UInt8]] {
        (0..<count).map { i in
            let id = 505_874_924_095_815_681 + i * 7919
            let reply = i % 5 == 0 ? "\(id - 3)" : "null"
            let lang = i % 6 == 0 ? "" : #","lang":"\#(["en", "ja", "es"][i % 3])""#
            return Array(
                (#"{"metadata":{"result_type":"recent","iso_language_code":"ja"},"created_at":"Sun Aug 31 00:29:\#(10 + i % 50) +0000 2014","id":\#(id),"id_str":"\#(id)","#
                    + #""text":"tweet \#(i) caf\u00e9 東京 😀 \"q\"","source":"<a href=\"http://twitter.com\">web</a>","truncated":false,"in_reply_to_status_id":\#(reply),"#
                    + #""user":{"id":\#(1_186_275_104 + i),"id_str":"\#(1_186_275_104 + i)","name":"User \#(i)","screen_name":"user\#(i)","location":"","followers_count":\#(i * 31),"verified":\#(i % 7 == 0),"entities":{"description":{"urls":[]}}},"#
                    + #""geo":null,"coordinates":null,"place":null,"retweet_count":\#(i % 13),"favorite_count":\#(i % 17),"#
                    + #""entities":{"hashtags":[{"text":"tag\#(i)","indices":[0,4]}],"urls":[],"user_mentions":[]},"favorited":false,"retweeted":false,"score":\#(i).25\#(lang)}"#)
                    .utf8)
        }
    }

    static func events(count: Int) -> [[UInt8]] {
        (0..<count).map { i in
            Array(
                (#"{"type":"PushEvent","created_at":"2013-01-10T07:58:\#(10 + i)Z","actor":{"login":"dev\#(i)","id":\#(138_052 + i),"url":"https://api.github.com/users/dev\#(i)"},"#
                    + #""repo":{"id":\#(6_357_414 + i),"name":"dev\#(i)/repo","url":"https://api.github.com/repos/dev\#(i)/repo"},"public":true,"#
                    + #""payload":{"commits":[{"sha":"05570a3080693f6e55244e012b3b1ec59516c01b","message":"fix \u2014 \#(i)","distinct":true}],"size":1,"push_id":\#(134_107_894 + i)},"id":"\#(1_652_857_722 + i)"}"#)
                    .utf8)
        }
    }
}

// MARK: - Helpers

/// yajl events, ignored: the parse ceiling of this design.
struct NoOpHandler: JSONEventHandler {
    mutating func null() throws {}
    mutating func bool(_ value: Bool) throws {}
    mutating func number(_ text: UnsafeRawBufferPointer) throws {}
    mutating func string(_ utf8: UnsafeRawBufferPointer) throws {}
    mutating func startObject() throws {}
    mutating func key(_ utf8: UnsafeRawBufferPointer) throws {}
    mutating func endObject() throws {}
    mutating func startArray() throws {}
    mutating func endArray() throws {}
}

let megabytesPerSecond = BenchmarkMetric.custom("MB/s", polarity: .prefersLarger, useScalingFactor: false)

/// 1 000 records per iteration, cycling through `records`.
func thousand(_ records: [[UInt8]]) -> (records: [[UInt8]], bytes: Int) {
    let r = (0..<1000).map { records[$0 % records.count] }
    return (r, r.reduce(0) { $0 + $1.count })
}

/// Measures `body` only (the engine and writer made before it are setup, and recording the MB/s metric after it
/// allocates), then records MB/s for it.
@inline(__always)
func timed(_ benchmark: Benchmark, bytes: Int, _ body: () -> Void) {
    benchmark.startMeasurement()
    let start = ContinuousClock.now
    body()
    let elapsed = ContinuousClock.now - start
    benchmark.stopMeasurement()
    let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
    if seconds > 0 { benchmark.measurement(megabytesPerSecond, Int((Double(bytes) / 1e6 / seconds).rounded())) }
}

func parseNoOp(_ record: [UInt8]) -> Bool {
    let parser = JSONPushParser(handler: NoOpHandler())
    do {
        try record.withUnsafeBytes { try parser.feed($0) }
        try parser.finish()
        return true
    } catch {
        return false
    }
}

/// Maps each record whole; the writer is emptied after each record, as the CLI flushes it.
func mapWhole<E: RecordEngine>(_ engine: inout E, _ records: [[UInt8]], _ writer: inout JSONWriter) -> Int {
    var mapped = 0
    for r in records {
        if case .mapped = r.withUnsafeBytes({ engine.map(record: $0, into: &writer) }) { mapped += 1 }
        writer.removeAll(keepingCapacity: true)
    }
    return mapped
}

/// A benchmark that maps every record of `input` whole with an engine from `makeEngine` per iteration (after one
/// warm-up record, not measured): MB/s of input and mallocs per record.
func wholeRecordsBenchmark<E: RecordEngine>(_ name: String, _ input: (records: [[UInt8]], bytes: Int), _ makeEngine: @escaping () -> E) {
    Benchmark(name) { benchmark in
        var engine = makeEngine()
        var writer = JSONWriter(reservingCapacity: 1 << 16)
        var n = mapWhole(&engine, [input.records[0]], &writer)
        timed(benchmark, bytes: input.bytes) { n = mapWhole(&engine, input.records, &writer) }
        blackHole(n)
    }
}

/// Maps each record fed in pieces of `chunk` bytes through beginRecord / continueRecord / endRecord.
func mapPieces<E: RecordEngine>(_ engine: inout E, _ records: [[UInt8]], chunk: Int, _ writer: inout JSONWriter) -> Int {
    var mapped = 0
    for r in records {
        engine.beginRecord()
        r.withUnsafeBytes { raw in
            var i = 0
            while i < raw.count {
                let end = min(i + chunk, raw.count)
                engine.continueRecord(UnsafeRawBufferPointer(rebasing: raw[i..<end]))
                i = end
            }
        }
        if case .mapped = engine.endRecord(into: &writer) { mapped += 1 }
        writer.removeAll(keepingCapacity: true)
    }
    return mapped
}

/// Setup check (not measured): both engines must give the same bytes, whole and in pieces. A mismatch is
/// reported on standard error and does not stop the run.
func checkEngines(_ name: String, _ mapper: Mapper, _ records: [[UInt8]], chunk: Int = 64) {
    var stream = StreamEngine(mapper: mapper)
    var tree = TreeEngine(mapper: mapper)
    for (i, r) in records.enumerated() {
        var a = JSONWriter(), b = JSONWriter(), c = JSONWriter()
        let oa = r.withUnsafeBytes { stream.map(record: $0, into: &a) }
        let ob = r.withUnsafeBytes { tree.map(record: $0, into: &b) }
        stream.beginRecord()
        r.withUnsafeBytes { raw in
            for start in stride(from: 0, to: raw.count, by: chunk) {
                stream.continueRecord(UnsafeRawBufferPointer(rebasing: raw[start..<min(start + chunk, raw.count)]))
            }
        }
        let oc = stream.endRecord(into: &c)
        if a.bytes != b.bytes || oa != ob || a.bytes != c.bytes || oa != oc {
            let what = a.bytes != b.bytes || oa != ob ? "stream and tree" : "whole and pieces of \(chunk) B"
            FileHandle.standardError.write(Data("StreamMapBenchmarks: \(what) differ on \(name) record \(i)\n".utf8))
        }
    }
}

// MARK: - Benchmarks

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident, megabytesPerSecond],
        warmupIterations: 2,
        scalingFactor: .kilo,
        maxDuration: .seconds(1),
        maxIterations: 1_000
    )

    let tweets = thousand(Inputs.tweets)
    let mixed = thousand(Inputs.mixed)
    let rejects = thousand(Inputs.halfRejected)

    // Parse ceiling: the library's yajl driver with handlers that do nothing.
    Benchmark("Parse no-op handler, tweets x1000") { benchmark in
        var ok = 0
        timed(benchmark, bytes: tweets.bytes) { for r in tweets.records where parseNoOp(r) { ok += 1 } }
        blackHole(ok)
    }
    Benchmark("Parse no-op handler, tweets+events x1000") { benchmark in
        var ok = 0
        timed(benchmark, bytes: mixed.bytes) { for r in mixed.records where parseNoOp(r) { ok += 1 } }
        blackHole(ok)
    }

    // The realistic 12-field tweet mapping (specs/tweets.spec.json), the same one compare.sh runs.
    wholeRecordsBenchmark("Map tweets.spec tree engine, tweets x1000", tweets) { TreeEngine(mapper: Inputs.tweetMapper) }
    wholeRecordsBenchmark("Map tweets.spec stream engine, tweets x1000", tweets) { StreamEngine(mapper: Inputs.tweetMapper) }

    // Identity: every value re-emitted through the shared writer.
    wholeRecordsBenchmark("Map identity stream engine, tweets+events x1000", mixed) { StreamEngine(mapper: Inputs.identityMapper) }
    wholeRecordsBenchmark("Map keep-unmapped stream engine, tweets+events x1000", mixed) { StreamEngine(mapper: Inputs.keepMapper) }
    wholeRecordsBenchmark("Map identity tree engine, tweets+events x1000", mixed) { TreeEngine(mapper: Inputs.identityMapper) }

    // Chunk-size sweep: records arriving in pieces (begin / continue / end), stream engine.
    for (label, chunk) in [("64 B", 64), ("4 KiB", 4096), ("64 KiB", 65_536)] {
        Benchmark("Map tweets.spec stream engine, pieces of \(label), tweets x1000") { benchmark in
            var engine = StreamEngine(mapper: Inputs.tweetMapper)
            var writer = JSONWriter(reservingCapacity: 1 << 16)
            var n = mapPieces(&engine, [tweets.records[0]], chunk: chunk, &writer)  // warm-up, not measured
            timed(benchmark, bytes: tweets.bytes) { n = mapPieces(&engine, tweets.records, chunk: chunk, &writer) }
            blackHole(n)
        }
    }

    // ~50% rejected records (mapping errors and syntax errors): the failure path.
    wholeRecordsBenchmark("Map tweets.spec stream engine, 50% rejects x1000", rejects) { StreamEngine(mapper: Inputs.tweetMapper) }
    wholeRecordsBenchmark("Map tweets.spec tree engine, 50% rejects x1000", rejects) { TreeEngine(mapper: Inputs.tweetMapper) }

    // Allocations per record must not grow with the events per record: the same tweet with 10 and with 1 000
    // extra (unmapped, skipped) objects in it, ~9 events each. One record per iteration, mapped by an engine that
    // has already mapped one record: the figures are the steady state per record.
    // No peakMemoryResident here: its sampler (a background thread reading /proc) allocates ~16 times per iteration,
    // which the process-wide malloc counter would add to the record's count.
    let perRecordMallocs = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal, megabytesPerSecond],
        warmupIterations: 2, scalingFactor: .one, maxDuration: .seconds(1), maxIterations: 2_000
    )
    let perRecord = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal, .peakMemoryResident, megabytesPerSecond],
        warmupIterations: 2, scalingFactor: .one, maxDuration: .seconds(1), maxIterations: 2_000
    )
    for n in [10, 1_000] {
        let record = Inputs.tweetWithSkippedArray(n)
        Benchmark("Map tweets.spec stream engine, one tweet + \(n) skipped objects", configuration: perRecordMallocs) { benchmark in
            var engine = StreamEngine(mapper: Inputs.tweetMapper)
            var writer = JSONWriter(reservingCapacity: 1 << 16)
            // Warm up (not measured): an engine's first record allocates storage that later records reuse.
            var mapped = mapWhole(&engine, [record], &writer)
            timed(benchmark, bytes: record.count) { mapped = mapWhole(&engine, [record], &writer) }
            blackHole(mapped)
        }
    }

    // One record nested 5 000 levels deep (objects and arrays alternating); 1 record per iteration, the engines
    // warmed up by one record first (as for the big string below).
    let deep = Inputs.deep(levels: 5_000)
    Benchmark("Deep nesting 5000 levels, parse no-op handler", configuration: perRecord) { benchmark in
        var ok = false
        timed(benchmark, bytes: deep.count) { ok = parseNoOp(deep) }
        blackHole(ok)
    }
    for (name, mapper) in [("identity", Inputs.identityMapper)] {
        Benchmark("Deep nesting 5000 levels, \(name) stream engine", configuration: perRecord) { benchmark in
            var engine = StreamEngine(mapper: mapper)
            var writer = JSONWriter(reservingCapacity: 1 << 16)
            var n = mapWhole(&engine, [deep], &writer)  // warm-up, not measured
            timed(benchmark, bytes: deep.count) { n = mapWhole(&engine, [deep], &writer) }
            blackHole(n)
        }
        Benchmark("Deep nesting 5000 levels, \(name) tree engine", configuration: perRecord) { benchmark in
            var engine = TreeEngine(mapper: mapper)
            var writer = JSONWriter(reservingCapacity: 1 << 16)
            var n = mapWhole(&engine, [deep], &writer)  // warm-up, not measured
            timed(benchmark, bytes: deep.count) { n = mapWhole(&engine, [deep], &writer) }
            blackHole(n)
        }
    }

    // One record holding a 4 MB string; mapped with identity, whole and in 64 KiB pieces (the held-token path).
    let big = Inputs.bigString(bytes: 4_000_000)
    Benchmark("Big string 4 MB, parse no-op handler", configuration: perRecord) { benchmark in
        var ok = false
        timed(benchmark, bytes: big.count) { ok = parseNoOp(big) }
        blackHole(ok)
    }
    Benchmark("Big string 4 MB, identity stream engine", configuration: perRecord) { benchmark in
        var engine = StreamEngine(mapper: Inputs.identityMapper)
        var writer = JSONWriter(reservingCapacity: 1 << 23)
        var n = mapWhole(&engine, [big], &writer)  // warm-up, not measured
        timed(benchmark, bytes: big.count) { n = mapWhole(&engine, [big], &writer) }
        blackHole(n)
    }
    Benchmark("Big string 4 MB, identity stream engine, pieces of 64 KiB", configuration: perRecord) { benchmark in
        var engine = StreamEngine(mapper: Inputs.identityMapper)
        var writer = JSONWriter(reservingCapacity: 1 << 23)
        var n = mapPieces(&engine, [big], chunk: 65_536, &writer)  // warm-up, not measured
        timed(benchmark, bytes: big.count) { n = mapPieces(&engine, [big], chunk: 65_536, &writer) }
        blackHole(n)
    }
    Benchmark("Big string 4 MB, identity tree engine", configuration: perRecord) { benchmark in
        var engine = TreeEngine(mapper: Inputs.identityMapper)
        var writer = JSONWriter(reservingCapacity: 1 << 23)
        var n = mapWhole(&engine, [big], &writer)  // warm-up, not measured
        timed(benchmark, bytes: big.count) { n = mapWhole(&engine, [big], &writer) }
        blackHole(n)
    }

    // Not measured: the engines must agree on every input used above.
    if ProcessInfo.processInfo.environment["STREAMMAP_BENCH_SKIP_CHECK"] == nil {
        checkEngines("tweets", Inputs.tweetMapper, Inputs.tweets)
        checkEngines("half-rejected", Inputs.tweetMapper, Inputs.halfRejected)
        checkEngines("mixed identity", Inputs.identityMapper, Inputs.mixed)
        checkEngines("mixed keep-unmapped", Inputs.keepMapper, Inputs.mixed)
    }
}
