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

extension LayeringTests {
    /// No two folders of the library name each other's top-level types in code (comments aside): the folders
    /// layer (JSON under Mapping, framing under the record front doors, the models over the feeds…).
    @Test func noTwoFoldersDependOnEachOther() throws {
        let library = Self.root.appendingPathComponent("Sources/StreamMap")
        let folders = try FileManager.default.contentsOfDirectory(atPath: library.path)
            .filter { !$0.hasSuffix(".docc") && !$0.hasSuffix(".swift") }.sorted()
        let declaration = try NSRegularExpression(
            pattern: #"^(?:public |package |final |indirect )*(?:class|struct|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)"#,
            options: .anchorsMatchLines)
        let word = try NSRegularExpression(pattern: #"[A-Za-z0-9_]+"#)
        var declared: [String: Set<String>] = [:], named: [String: Set<String>] = [:]
        for folder in folders {
            for file in try Self.swiftFiles(under: "Sources/StreamMap/" + folder) {
                let text = try String(contentsOf: file, encoding: .utf8)
                for m in declaration.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                    declared[folder, default: []].insert(String(text[Range(m.range(at: 1), in: text)!]))
                }
                let code = text.split(separator: "\n", omittingEmptySubsequences: false)
                    .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }.joined(separator: "\n")
                for m in word.matches(in: code, range: NSRange(code.startIndex..., in: code)) {
                    named[folder, default: []].insert(String(code[Range(m.range, in: code)!]))
                }
            }
        }
        #expect(folders.count >= 8)
        for (i, a) in folders.enumerated() {
            for b in folders[(i + 1)...] {
                let ab = named[a, default: []].intersection(declared[b, default: []])
                let ba = named[b, default: []].intersection(declared[a, default: []])
                #expect(ab.isEmpty || ba.isEmpty, "\(a) names \(ab.sorted().prefix(5)) of \(b), which names \(ba.sorted().prefix(5)) of \(a)")
            }
        }
    }
}
