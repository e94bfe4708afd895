import Foundation
import Testing

@Suite("streammap (tree engine, minimal CLI)")
struct MinimalCLITests {
    static let spec = #"{"fields":{"id":"id","name":{"to":"user.name","via":"string"},"age":{"to":"age","type":"integer","missing":"omit"}}}"#

    @Test func mapsStandardInputToStandardOutput() throws {
        let specPath = try CLI.temporaryFile(Self.spec)
        let r = try CLI.run(["--spec", specPath], stdin: "{\"id\":1,\"name\":\"a\",\"age\":3}\n{\"id\":12345678901234567890,\"name\":\"b\"}\n")
        #expect(r.stdout == "{\"id\":1,\"user\":{\"name\":\"a\"},\"age\":3}\n{\"id\":12345678901234567890,\"user\":{\"name\":\"b\"}}\n")
        #expect(r.stderr == "")
        #expect(r.status == 0)
    }

    @Test func rejectedRecordsGoToStandardErrorWithExactLineNumbers() throws {
        let specPath = try CLI.temporaryFile(Self.spec)
        // Line 2 is blank, line 3 ends in CRLF, line 4 has a wrong type, line 5 is not JSON, line 6 has no newline.
        let input = "{\"id\":1}\n\n{\"id\":2}\r\n{\"id\":3,\"age\":\"x\"}\n{\"id\":\n{\"id\":6}"
        let r = try CLI.run(["--spec", specPath], stdin: input)
        #expect(r.stdout == "{\"id\":1}\n{\"id\":2}\n{\"id\":6}\n")
        #expect(r.stderr == """
            streammap: <stdin>:4: /age: expected integer, found string "x"
            streammap: <stdin>:5: invalid JSON: premature EOF

            """)
        #expect(r.status == 1)
    }

    @Test func filesAreReadInOrderAndDashIsStandardInput() throws {
        let specPath = try CLI.temporaryFile(Self.spec)
        let a = try CLI.temporaryFile("{\"id\":\"a\"}\n", name: "a.ndjson")
        let b = try CLI.temporaryFile("{\"id\":\"b\"}\n", name: "b.ndjson")
        let r = try CLI.run(["--spec", specPath, a, "-", b], stdin: "{\"id\":\"stdin\"}\n")
        #expect(r.stdout == "{\"id\":\"a\"}\n{\"id\":\"stdin\"}\n{\"id\":\"b\"}\n")
        #expect(r.status == 0)
    }

    @Test func aMissingFileIsAnIOErrorButOtherFilesAreStillMapped() throws {
        let specPath = try CLI.temporaryFile(Self.spec)
        let b = try CLI.temporaryFile("{\"id\":\"b\"}\n", name: "b.ndjson")
        let r = try CLI.run(["--spec", specPath, "/nonexistent/x.ndjson", b])
        #expect(r.stdout == "{\"id\":\"b\"}\n")
        #expect(r.stderr == "streammap: /nonexistent/x.ndjson: No such file or directory\n")
        #expect(r.status == 3)
    }

    @Test func anInvalidSpecIsReportedBeforeAnyInputIsRead() throws {
        let specPath = try CLI.temporaryFile(#"{"fields":{"age":{"to":"age","via":"integr"}}}"#)
        // Standard input stays open: the tool must not wait for it.
        let process = Process()
        process.executableURL = CLI.binary
        process.arguments = ["--spec", specPath]
        let input = Pipe(), err = Pipe()
        process.standardInput = input
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        let finished = !process.isRunning
        if !finished { process.terminate() }
        try? input.fileHandleForWriting.close()
        process.waitUntilExit()
        #expect(finished)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(stderr == "streammap: \(specPath): /fields/age/via: unknown mapper \"integr\" (did you mean \"integer\"?)\n")
        #expect(process.terminationStatus == 2)
    }

    @Test func anUnreadableSpecIsAnInvalidSpec() throws {
        let r = try CLI.run(["--spec", "/nonexistent/spec.json"])
        #expect(r.stderr == "streammap: /nonexistent/spec.json: cannot read the spec: No such file or directory\n")
        #expect(r.status == 2)
    }

    @Test func reverseMapsBackToTheOriginalShape() throws {
        let specPath = try CLI.temporaryFile(Self.spec)
        let r = try CLI.run(["--spec", specPath, "--reverse"], stdin: "{\"id\":1,\"user\":{\"name\":\"a\"},\"age\":3}\n")
        #expect(r.stdout == "{\"id\":1,\"name\":\"a\",\"age\":3}\n")
        #expect(r.status == 0)
    }

    @Test func anIrreversibleSpecIsReportedUnderReverse() throws {
        let specPath = try CLI.temporaryFile(#"{"fields":{"a":{"to":"b","via":"toString"}}}"#)
        let r = try CLI.run(["--spec", specPath, "--reverse"], stdin: "")
        #expect(r.stderr.contains("toString is not reversible"))
        #expect(r.status == 2)
    }

    @Test func helpDocumentsTheExitStatuses() throws {
        let r = try CLI.run(["--help"])
        #expect(r.status == 0)
        #expect(r.stdout.contains("EXIT STATUS"))
        #expect(r.stdout.contains("--spec"))
    }

    @Test func usageErrorsExitWith64() throws {
        let r = try CLI.run(["--spec"])
        #expect(r.status == 64)
        #expect(r.stderr.contains("--spec"))
    }

    @Test func largeInputIsWrittenCompletely() throws {
        let specPath = try CLI.temporaryFile(#"{"unmapped":"keep"}"#)
        let lines = (0..<20_000).map { "{\"n\":\($0),\"s\":\"\(String(repeating: "x", count: $0 % 50))\"}" }
        let r = try CLI.run(["--spec", specPath], stdin: lines.joined(separator: "\n") + "\n")
        #expect(r.stdout == lines.joined(separator: "\n") + "\n")
        #expect(r.status == 0)
    }
}
