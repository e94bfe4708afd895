#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Seconds on the monotonic clock.
package func monotonicSeconds() -> Double {
    var t = timespec()
    clock_gettime(CLOCK_MONOTONIC, &t)
    return Double(t.tv_sec) + Double(t.tv_nsec) / 1e9
}

/// `x` with a fixed number of decimals (no Foundation).
package func fixed(_ x: Double, _ decimals: Int) -> String {
    guard x.isFinite else { return "0" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let n = Int((abs(x) * scale).rounded())
    let whole = n / Int(scale), fraction = n % Int(scale)
    var text = (x < 0 && n != 0 ? "-" : "") + String(whole)
    if decimals > 0 {
        let f = String(fraction)
        text += "." + String(repeating: "0", count: decimals - f.count) + f
    }
    return text
}

/// Counters of a run, and the `--stats` summary.
package struct RunStats {
    package var recordsIn = 0
    package var recordsOut = 0
    package var recordsRejected = 0
    /// Dropped by the `where` filter: recordsIn = recordsOut + recordsFiltered + recordsRejected (without an explode).
    package var recordsFiltered = 0
    /// The run has a `where` filter: the summary has `recordsFiltered` (without one it is always 0 and left out).
    package var filters = false
    /// The run explodes records (`--explode`): the summary has `recordsMapped` and `recordsWithoutElements`, since
    /// recordsOut counts elements (recordsIn = recordsMapped + recordsFiltered + recordsRejected).
    package var explodes = false
    /// Mapped records whose array was empty, null or absent, and which so gave no output record.
    package var recordsWithoutElements = 0

    /// A mapped record gave `records` output records (an explode; one is the rule without).
    package mutating func noteExploded(_ records: Int) {
        if records == 0 { recordsWithoutElements += 1 }
    }
    package var warnings = 0
    package var bytesIn = 0
    /// The paths the flags read that none of the records looked at has (`PathWatch`): `pathsNotFound` when some.
    package var pathsNotFound: [String] = []
    package let started = monotonicSeconds()
    /// Warnings and rejection errors by source path (array indexes shown as `*`) and code; only with `--stats`.
    package var collectsPaths = false
    private(set) var warningsByPath: [String: [String: Int]] = [:]
    private(set) var errorsByPath: [String: [String: Int]] = [:]
    package static let maximumPaths = 1000

    /// Warnings that left a value out or replaced it: all but those that say an absent value was stood in for
    /// (`MapError.standsInForAbsent`: a default or `optional` for a value the record lacks drops nothing). Without
    /// `--warnings`, a count line tells.
    package var valuesDropped = 0

    package mutating func noteWarnings(_ warnings: [MapError]) {
        self.warnings += warnings.count
        for w in warnings where !w.standsInForAbsent { valuesDropped += 1 }
        guard collectsPaths else { return }
        for w in warnings { Self.count(Self.generalized(w.sourcePath), w.code.rawValue, in: &warningsByPath) }
    }

    package mutating func noteRejection(_ failure: RecordFailure) {
        guard collectsPaths else { return }
        failure.forEachError { e in
            if e.isFatal { Self.count(Self.generalized(e.sourcePath.pointer), e.code.rawValue, in: &errorsByPath) }
        }
    }

    private static func count(_ path: String, _ code: String, in table: inout [String: [String: Int]]) {
        let key = table[path] != nil || table.count < maximumPaths ? path : "(other paths)"
        table[key, default: [:]][code, default: 0] += 1
    }

    /// `3 values dropped or replaced, …` when a warning left a present value out or replaced it; nil otherwise.
    package var valuesDroppedLine: String? {
        guard valuesDropped > 0 else { return nil }
        let what = valuesDropped == 1 ? "1 value was" : "\(valuesDropped) values were"
        return "\(what) dropped or replaced with a warning (a key collision, a default or fallback for a value that does not map): --warnings lists them"
    }

    /// `3 records had no element to explode …` when an explode that drops such records dropped some; nil otherwise.
    package var withoutElementsLine: String? {
        guard explodes, recordsWithoutElements > 0 else { return nil }
        let what = recordsWithoutElements == 1 ? "1 record had" : "\(recordsWithoutElements) records had"
        return "\(what) no element to explode (an empty array, null or no value) and gave no output record: --explode-empty null writes them once, with null"
    }

    package static func generalized(_ path: JSONPath) -> String {
        JSONPath(path.components.map { if case .index = $0 { return .key("*") } else { return $0 } }).pointer
    }

    /// A JSON Pointer with its array indexes (all-digit steps) shown as `*`.
    package static func generalized(_ pointer: String) -> String {
        guard pointer.utf8.contains(where: { $0 >= 0x30 && $0 <= 0x39 }) else { return pointer }
        return pointer.split(separator: "/", omittingEmptySubsequences: false).map { step in
            !step.isEmpty && step.allSatisfy({ $0.isASCII && $0.isNumber }) ? "*" : String(step)
        }.joined(separator: "/")
    }

    package var seconds: Double { monotonicSeconds() - started }

    /// The `--stats` line: one JSON object.
    package func summary(exitStatus: Int32, interruptedBy signal: Int32?) -> String {
        let secs = seconds
        func table(_ t: [String: [String: Int]]) -> JSONValue {
            .object(JSONObject(t.keys.sorted().map { path in
                (path, .object(JSONObject(t[path]!.keys.sorted().map { ($0, .number(JSONNumber(t[path]![$0]!))) })))
            }))
        }
        var o = JSONObject()
        o["recordsIn"] = .number(JSONNumber(recordsIn))
        o["recordsOut"] = .number(JSONNumber(recordsOut))
        o["recordsRejected"] = .number(JSONNumber(recordsRejected))
        if filters { o["recordsFiltered"] = .number(JSONNumber(recordsFiltered)) }
        if explodes {
            o["recordsMapped"] = .number(JSONNumber(recordsIn - recordsFiltered - recordsRejected))
            o["recordsWithoutElements"] = .number(JSONNumber(recordsWithoutElements))
        }
        o["warnings"] = .number(JSONNumber(warnings))
        o["warningsByPath"] = table(warningsByPath)
        o["errorsByPath"] = table(errorsByPath)
        if !pathsNotFound.isEmpty { o["pathsNotFound"] = .array(pathsNotFound.map(JSONValue.string)) }
        o["bytesIn"] = .number(JSONNumber(bytesIn))
        o["seconds"] = .number(JSONNumber(unchecked: fixed(secs, 3)))
        o["mbPerSecond"] = .number(JSONNumber(unchecked: fixed(secs > 0 ? Double(bytesIn) / 1e6 / secs : 0, 1)))
        o["exitStatus"] = .number(JSONNumber(Int(exitStatus)))
        if let signal { o["interruptedBy"] = .string(signal == SIGINT ? "SIGINT" : signal == SIGTERM ? "SIGTERM" : "signal \(signal)") }
        return JSONWriter.string(.object(o))
    }
}
