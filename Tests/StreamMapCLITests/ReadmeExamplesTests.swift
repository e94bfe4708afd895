import Foundation
import Testing

/// Runs every `console` block of README.md: `$ command` lines are run by bash in the package root with the
/// built `streammap` first on PATH; the lines after a command are its expected standard output, `stderr: ` lines
/// its expected standard error, and `exit: N` its expected status (0 when not given).
@Suite("README examples")
struct ReadmeExamplesTests {
    struct Example: CustomTestStringConvertible {
        var command: String
        var stdout: [String] = []
        var stderr: [String] = []
        var status: Int32 = 0
        var testDescription: String { command }
    }

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func examples() throws -> [Example] {
        let readme = try String(contentsOf: root.appendingPathComponent("README.md"), encoding: .utf8)
        var out: [Example] = []
        var inBlock = false
        for line in readme.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("```") {
                inBlock = line == "```console"
                continue
            }
            guard inBlock else { continue }
            if line.hasPrefix("$ ") {
                out.append(Example(command: String(line.dropFirst(2))))
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
        #expect(try Self.examples().count >= 4)
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
