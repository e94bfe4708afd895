// Only in builds that compile the mutations in (STREAMMAP_MUTATIONS: debug builds, the ones `swift test` makes;
// Package.swift). A release build's engine has no rule to break.
#if STREAMMAP_MUTATIONS
import Testing
@testable import StreamMap

/// The differential harness catches a bug in the stream engine itself: each `StreamMutation` breaks one rule in a
/// copy of the real engine, and generated cases must expose it (while the unmutated engine agrees everywhere).
@Suite("Differential: stream engine mutations")
struct DifferentialStreamMutationTests {
    @Test(arguments: StreamMutation.allCases)
    func harnessCatchesABrokenRuleInTheStreamEngine(_ mutation: StreamMutation) throws {
        var found: [Mismatch] = []
        var control = 0
        for i in 0..<300 where found.isEmpty {
            let c = try GeneratedCase.make(seed: SplitMix64.derive(0x5EED_0F_BAD, UInt64(i)), index: i)
            found += findMismatches(
                mapper: c.mapper, records: c.records,
                makeCandidate: { StreamEngine(mapper: $0, filter: c.filter, mutation: mutation) }, context: c.context,
                limit: 1, filter: c.filter)
            control += findMismatches(
                mapper: c.mapper, records: c.records, makeCandidate: { StreamEngine(mapper: $0, filter: c.filter) },
                context: c.context, filter: c.filter
            ).count
        }
        #expect(!found.isEmpty, "the harness did not notice the mutation \(mutation)")
        #expect(control == 0, "the unmutated stream engine disagreed with the tree engine")
    }
}
#endif
