import Foundation
import Testing

/// The folders' layering, read from the sources: the JSON layer knows no engine (every type the engines declare
/// is absent from JSON/, comments included), and the command line stays flags → settings → run → exit status.
@Suite("Layering")
struct LayeringTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func swiftFiles(under folder: String) throws -> [URL] {
        let base = root.appendingPathComponent(folder)
        let names = try FileManager.default.subpathsOfDirectory(atPath: base.path)
        return names.filter { $0.hasSuffix(".swift") }.sorted().map { base.appendingPathComponent($0) }
    }

    @Test func theJSONLayerNamesNoEngineType() throws {
        var engineTypes = Set<String>()
        let declaration = try NSRegularExpression(pattern: #"\b(?:class|struct|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)"#)
        for file in try Self.swiftFiles(under: "Sources/StreamMap/Engines") {
            let text = try String(contentsOf: file, encoding: .utf8)
            for m in declaration.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                engineTypes.insert(String(text[Range(m.range(at: 1), in: text)!]))
            }
        }
        #expect(engineTypes.isSuperset(of: ["StreamEngine", "TreeEngine", "StreamParser", "ParseSkip", "CopySink"]))
        let word = try NSRegularExpression(pattern: #"[A-Za-z0-9_]+"#)
        for file in try Self.swiftFiles(under: "Sources/StreamMap/JSON") {
            let text = try String(contentsOf: file, encoding: .utf8)
            let named = Set(word.matches(in: text, range: NSRange(text.startIndex..., in: text)).map { String(text[Range($0.range, in: text)!]) })
            let engineNames = named.intersection(engineTypes).sorted()
            #expect(engineNames == [], "\(file.lastPathComponent)")
        }
    }
}

extension LayeringTests {
    /// The command line parses flags into settings, runs, and turns the outcome into an exit status: everything
    /// else (inputs, writers, counters, rejects, messages) is the library's. Its brief: at most 1,200 lines.
    @Test func theCommandLineStaysSmall() throws {
        var lines = 0
        for file in try Self.swiftFiles(under: "Sources/streammap") {
            lines += try String(contentsOf: file, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: false).count - 1
        }
        #expect(lines > 500 && lines <= 1200, "Sources/streammap has \(lines) lines")
    }
}
