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
}
