import Foundation
import Testing

/// A plain clone passes its own tests: nothing the tests, benchmarks, fuzz corpus or scripts read lies outside the
/// repository. `.ci/run` proves it by running the suite in a clone with nothing beside it; this catches a new
/// reference to a folder beside the checkout (or an absolute path on the build machine) at once.
@Suite("Self-contained clone")
struct SelfContainedCloneTests {
    /// The folders whose files read data, and the patterns that point outside the repository (spelt in pieces, so
    /// that this file does not match itself).
    static let folders = ["Tests", "Benchmarks", "Fuzz", "scripts", "Sources", "Integrations", "Examples"]
    static let outside = ["../" + "shared", "shared/" + "data", "/" + "work/"]

    @Test func nothingReadsBesideTheRepository() throws {
        let fm = FileManager.default
        var hits: [String] = []
        for folder in Self.folders {
            let base = CLI.root.appendingPathComponent(folder)
            guard let walker = fm.enumerator(atPath: base.path) else { continue }
            while let relative = walker.nextObject() as? String {
                let components = relative.split(separator: "/")
                if components.contains(where: { $0 == ".build" || $0 == "corpus" || $0.hasPrefix(".") }) {
                    continue
                }
                guard let text = try? String(contentsOfFile: base.appendingPathComponent(relative).path, encoding: .utf8)
                else { continue }
                for pattern in Self.outside where text.contains(pattern) { hits.append("\(folder)/\(relative): \(pattern)") }
            }
        }
        #expect(hits == [])
    }

    /// The sample records the tests read are in the repository, with their provenance and licence beside them.
    @Test func sampleRecordsAreInTheRepository() throws {
        let seed = CLI.root.appendingPathComponent("Samples/seed")
        for name in ["tweets.ndjson", "gh_events.ndjson", "canada_points.json", "README.md"] {
            #expect(FileManager.default.fileExists(atPath: seed.appendingPathComponent(name).path), "\(name)")
        }
        let readme = try String(contentsOf: seed.appendingPathComponent("README.md"), encoding: .utf8)
        #expect(readme.contains("Provenance") && readme.contains("Licence"))
    }
}
