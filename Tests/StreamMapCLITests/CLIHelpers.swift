import Foundation

/// Runs the built `streammap` binary with arguments and standard input; captures stdout, stderr and the status.
struct CLIResult {
    var stdout: String
    var stderr: String
    var status: Int32
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

    static func run(_ arguments: [String], stdin: String = "") throws -> CLIResult {
        let process = Process()
        process.executableURL = binary
        process.arguments = arguments
        let input = Pipe(), output = Pipe(), error = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = error
        try process.run()
        let writer = Thread {
            input.fileHandleForWriting.write(Data(stdin.utf8))
            try? input.fileHandleForWriting.close()
        }
        writer.start()
        let out = output.fileHandleForReading.readDataToEndOfFile()
        let err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return CLIResult(stdout: String(decoding: out, as: UTF8.self), stderr: String(decoding: err, as: UTF8.self),
                         status: process.terminationStatus)
    }

    /// Writes `contents` to a fresh temporary file and returns its path.
    static func temporaryFile(_ contents: String, name: String = "spec.json") throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("streammap-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let url = dir.appendingPathComponent(name)
        try Data(contents.utf8).write(to: url)
        return url.path
    }
}
