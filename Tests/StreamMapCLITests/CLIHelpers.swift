import Foundation
import StreamMapTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// Runs the built `streammap` binary with arguments and standard input; captures stdout, stderr and the status.
struct CLIResult {
    var stdout: String
    var stderr: String
    var status: Int32
    /// Standard error split into lines (without the empty string after the last newline).
    var stderrLines: [String] { stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
    var stdoutLines: [String] { stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init) }
}

enum CLI {
    static var binary: URL {
        // The test bundle lives in .build/<config>/; the executable is built next to it.
        var dir = Bundle.main.bundleURL
        for _ in 0..<4 {
            let candidate = dir.appendingPathComponent("streammap")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
            dir = dir.deletingLastPathComponent()
        }
        let fallback = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug/streammap")
        return fallback
    }

    /// The package root (README.md, Examples/).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func run(_ arguments: [String], stdin: String = "", directory: URL? = nil) throws -> CLIResult {
        try run(arguments, stdinData: Data(stdin.utf8), directory: directory)
    }

    /// Runs the binary; standard input is written and both outputs are read concurrently (no pipe deadlock).
    static func run(_ arguments: [String], stdinData: Data, directory: URL? = nil) throws -> CLIResult {
        try execute(binary, arguments, stdinData: stdinData, directory: directory)
    }

    /// Runs `script` with bash in the package root, with the built `streammap` first on PATH.
    static func shell(_ script: String, stdin: String = "") throws -> CLIResult {
        try execute(URL(fileURLWithPath: "/bin/bash"), ["-c", script], stdinData: Data(stdin.utf8), directory: root)
    }

    static var environment: [String: String] {
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = binary.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "")
        // Messages as they are off a terminal, whatever the test runner's own settings (tests set these themselves).
        environment["NO_COLOR"] = nil
        environment["CLICOLOR_FORCE"] = nil
        return environment
    }

    static func execute(_ executable: URL, _ arguments: [String], stdinData: Data, directory: URL?) throws -> CLIResult {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.environment = environment
        if let directory { process.currentDirectoryURL = directory }
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let watchdog = watchdog(process, seconds: 60)
        defer { watchdog.cancel() }
        let writer = Thread {
            input.fileHandleForWriting.write(stdinData)
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let errBox = DataBox()
        let errReader = Thread {
            errBox.data = error.fileHandleForReading.readDataToEndOfFile()
            errBox.done.signal()
        }
        errReader.start()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        errBox.done.wait()
        process.waitUntilExit()
        // The pipes' descriptors go now, not when the last reference to them does.
        try? output.fileHandleForReading.close()
        try? error.fileHandleForReading.close()
        return CLIResult(stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: errBox.data, as: UTF8.self),
                         status: process.terminationStatus)
    }

    final class DataBox: @unchecked Sendable {
        var data = Data()
        let done = DispatchSemaphore(value: 0)
    }

    /// Kills `process` (SIGKILL, by its id) if it is still running after `seconds`, so that a test of a process
    /// that should have stopped fails instead of hanging. Cancel it once the process is done.
    /// (The queue keeps a cancelled item until its time comes: it holds the process only weakly, so that the
    /// process and its pipes' descriptors are not kept for that long — hundreds of quick runs would pile them up.)
    static func watchdog(_ process: Process, seconds: Double = 20) -> DispatchWorkItem {
        let pid = process.processIdentifier
        let item = DispatchWorkItem { [weak process] in
            if process?.isRunning == true { kill(pid, SIGKILL) }
        }
        DispatchQueue.global().asyncAfter(deadline: .now() + seconds, execute: item)
        return item
    }

    /// A fresh temporary directory (removed when the test process exits: `TestScratch`).
    static func temporaryDirectory() throws -> URL {
        try TestScratch.directory()
    }

    /// Writes `contents` to a fresh temporary file and returns its path.
    static func temporaryFile(_ contents: String, name: String = "spec.json") throws -> String {
        let url = try temporaryDirectory().appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url.path
    }

    /// The contents of a file as text ("" when it does not exist).
    static func read(_ path: String) -> String {
        (try? String(contentsOfFile: path, encoding: .utf8)) ?? ""
    }

    /// The path of an example file under Examples/.
    static func example(_ name: String) -> String { root.appendingPathComponent("Examples").appendingPathComponent(name).path }
}

/// A running `streammap` whose standard streams are pipes, for tests that feed it over time or signal it:
/// standard error is collected as it arrives (on a thread of its own), so a test can wait for a message.
final class LiveCLI {
    let process = Process()
    private let input = Pipe(), output = Pipe(), error = Pipe()
    private let errors = CLI.DataBox()
    private let lock = NSLock()
    private let watchdog: DispatchWorkItem

    init(_ arguments: [String]) throws {
        process.executableURL = CLI.binary
        process.arguments = arguments
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        watchdog = CLI.watchdog(process)
        let (error, errors, lock) = (error, errors, lock)
        Thread {
            while true {
                let chunk = error.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                lock.withLock { errors.data.append(chunk) }
            }
            errors.done.signal()
        }.start()
    }

    deinit { watchdog.cancel() }

    func write(_ text: String) { input.fileHandleForWriting.write(Data(text.utf8)) }

    /// Waits (up to 15 s) until standard error contains `text`.
    func waitForStandardError(containing text: String) {
        let deadline = Date().addingTimeInterval(15)
        while Date() < deadline && !lock.withLock({ String(decoding: errors.data, as: UTF8.self).contains(text) }) {
            Thread.sleep(forTimeInterval: 0.02)
        }
    }

    func signal(_ signal: Int32) { kill(process.processIdentifier, signal) }

    /// Closes standard input (unless `keepInputOpen`), waits for the end, and returns what the tool wrote; standard
    /// error is what follows the last progress line (each message starts by clearing it).
    func finish(keepInputOpen: Bool = false) -> CLIResult {
        if !keepInputOpen { try? input.fileHandleForWriting.close() }
        let out = output.fileHandleForReading.readDataToEndOfFile()
        errors.done.wait()
        process.waitUntilExit()
        try? input.fileHandleForWriting.close()
        let text = String(decoding: errors.data, as: UTF8.self)
        return CLIResult(stdout: String(decoding: out, as: UTF8.self),
                         stderr: text.components(separatedBy: "\r\u{1B}[K").last ?? text, status: process.terminationStatus)
    }
}
