import Foundation
import Testing

/// Runs every `console` block of README.md and of the manual (docs/*.md): `$ command` lines are run by bash in the
/// package root with the built `streammap` first on PATH; the lines after a command are its expected standard
/// output, `stderr: ` lines its expected standard error, and `exit: N` its expected status (0 when not given).
@Suite("README examples")
struct ReadmeExamplesTests {
    struct Example: CustomTestStringConvertible {
        var page: String
        var command: String
        var stdout: [String] = []
        var stderr: [String] = []
        var status: Int32 = 0
        var testDescription: String { "\(page): \(command)" }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    /// README.md, then the manual's pages in name order.
    static func pages() throws -> [String] {
        let docs = try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("docs").path)
        return ["README.md"] + docs.filter { $0.hasSuffix(".md") }.sorted().map { "docs/" + $0 }
    }

    static func examples() throws -> [Example] {
        try pages().flatMap { try examples(in: $0) }
    }

    static func examples(in page: String) throws -> [Example] {
        let text = try String(contentsOf: root.appendingPathComponent(page), encoding: .utf8)
        var out: [Example] = []
        var inBlock = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inBlock = line == "```console"
                continue
            }
            guard inBlock else { continue }
            if line.hasPrefix("$ ") {
                out.append(Example(page: page, command: String(line.dropFirst(2))))
            } else if line.hasPrefix("stderr: ") {
                out[out.count - 1].stderr.append(String(line.dropFirst(8)))
            } else if line.hasPrefix("exit: ") {
                out[out.count - 1].status = Int32(line.dropFirst(6))!
            } else {
                out[out.count - 1].stdout.append(String(line))
            }
        }
        return out
    }

    @Test func readmeHasExamples() throws {
        #expect(try Self.examples(in: "README.md").count >= 3)
        // The manual's pages that show commands: every one of them is run.
        for page in ["docs/cli.md", "docs/spec.md"] {
            #expect(try !Self.examples(in: page).isEmpty, "\(page)")
        }
    }

    /// GitHub's anchor for a heading: lowercased, punctuation but `-` and `_` dropped, spaces as `-`.
    static func anchor(_ heading: String) -> String {
        String(heading.lowercased().compactMap { c -> Character? in
            c == " " ? "-" : (c.isLetter || c.isNumber || c == "-" || c == "_") ? c : nil
        })
    }

    /// Every relative link of the front page and the manual names a file that exists, and a heading in it when it
    /// has a `#fragment`: pages moved or renamed cannot leave dead links behind.
    @Test func linksResolve() throws {
        for page in try Self.pages() {
            let text = try String(contentsOf: Self.root.appendingPathComponent(page), encoding: .utf8)
            let base = URL(fileURLWithPath: page).deletingLastPathComponent().relativePath
            var rest = Substring(text)
            while let open = rest.firstRange(of: "](") {
                rest = rest[open.upperBound...]
                guard let close = rest.firstIndex(of: ")") else { break }
                let target = String(rest[..<close])
                rest = rest[close...]
                if target.hasPrefix("http") || target.hasPrefix("#") || target.contains(" ") { continue }
                let parts = target.split(separator: "#", maxSplits: 1).map(String.init)
                let file = Self.root.appendingPathComponent(base == "." ? parts[0] : base + "/" + parts[0]).standardizedFileURL
                #expect(FileManager.default.fileExists(atPath: file.path), "\(page): \(target)")
                guard parts.count == 2, file.pathExtension == "md",
                      let linked = try? String(contentsOf: file, encoding: .utf8) else { continue }
                let anchors = linked.split(separator: "\n").filter { $0.hasPrefix("#") }
                    .map { Self.anchor(String($0.drop { $0 == "#" }.drop { $0 == " " })) }
                #expect(anchors.contains(parts[1]), "\(page): \(target)")
            }
        }
    }

    @Test(arguments: try examples())
    func example(_ example: Example) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = ["-c", example.command]
        process.currentDirectoryURL = Self.root
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = CLI.binary.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "")
        process.environment = environment
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let lines = { (d: Data) in String(decoding: d, as: UTF8.self).split(separator: "\n").map(String.init) }
        #expect(lines(stdout) == example.stdout)
        #expect(lines(stderr) == example.stderr)
        #expect(process.terminationStatus == example.status)
    }
}
