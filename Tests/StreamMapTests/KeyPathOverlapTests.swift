import Testing
import StreamMapTestSupport

@testable import StreamMap

/// `KeyPath.earlierOverlaps` (the linear destination check of spec compilation, the stream engine and explain)
/// against the definition it replaced, applied to every pair: one path's steps start with the other's.
@Suite("Destination overlaps")
struct KeyPathOverlapTests {
    static func overlaps(_ a: [String], _ b: [String]) -> Bool {
        let n = min(a.count, b.count)
        for i in 0..<n where !bytesEqual(a[i], b[i]) { return false }
        return true
    }

    @Test func matchesThePairwiseDefinition() {
        var r = Rand(seed: 0x0E_7A9)
        let steps = ["a", "b", "c", "é", "e\u{301}", ""]
        for _ in 0..<500 {
            let paths = (0..<r.int(0...12)).map { _ in (0..<r.int(0...3)).map { _ in r.pick(steps) } }
            let expected: [Int?] = paths.indices.map { i in paths[..<i].indices.first { Self.overlaps(paths[$0], paths[i]) } }
            #expect(KeyPath.earlierOverlaps(paths) == expected, "\(paths)")
        }
    }

    /// `KeyPath(_:delimiter:)` (linear: Knuth–Morris–Pratt) against the definition: at each occurrence of the
    /// delimiter from the left, by bytes, not overlapping the one before — on paths and delimiters of a small
    /// alphabet, where delimiters overlap themselves (`aa`, `aba`, `abab`) and each other's occurrences.
    @Test func splittingMatchesTheNaiveDefinition() {
        func naive(_ path: String, _ delimiter: String) -> [String] {
            let p = Array(path.utf8), d = Array(delimiter.utf8)
            var parts: [String] = [], start = 0, i = 0
            while i + d.count <= p.count {
                if p[i..<(i + d.count)].elementsEqual(d) {
                    parts.append(String(decoding: p[start..<i], as: UTF8.self))
                    i += d.count
                    start = i
                } else {
                    i += 1
                }
            }
            parts.append(String(decoding: p[start...], as: UTF8.self))
            return parts
        }
        var r = Rand(seed: 0x5_9117)
        let letters = ["a", "b", "é", "."]
        for _ in 0..<3000 {
            let path = (0..<r.int(0...24)).map { _ in r.pick(letters) }.joined()
            let delimiter = (0..<r.int(1...5)).map { _ in r.pick(["a", "b", "."]) }.joined()
            #expect(KeyPath(path, delimiter: delimiter).steps == naive(path, delimiter), "\(path) / \(delimiter)")
        }
        #expect(KeyPath("aaaaa", delimiter: "aa").steps == ["", "", "a"])
        #expect(KeyPath("abababab", delimiter: "abab").steps == ["", "", ""])
        #expect(KeyPath("x.\u{301}y", delimiter: ".").steps == ["x", "\u{301}y"])
    }

    /// A long delimiter in a long path: linear (the naive comparison at every byte took 16 s on 400 KB). Timed as a
    /// ratio of two sizes, so a slow or busy machine does not decide.
    @Test func splittingALongPathOnALongDelimiterIsLinear() throws {
        func input(_ n: Int) -> (path: String, delimiter: String) {
            (String(repeating: "a", count: 10 * n) + "b" + "c", String(repeating: "a", count: n) + "b")
        }
        let (path, delimiter) = input(20_000)
        #expect(KeyPath(path, delimiter: delimiter).steps == [String(repeating: "a", count: 180_000), "c"])
        let small = input(2_000), large = input(2_000 * LibraryScalingTests.factor)
        try LibraryScalingTests.expectLinear("a long path on a long delimiter", n: 1) {
            let (p, d) = $0 == 1 ? small : large
            _ = KeyPath(p, delimiter: d).steps
        }
    }
}
