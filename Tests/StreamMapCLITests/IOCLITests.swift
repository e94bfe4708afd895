import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// Inputs and outputs: files, `-o`, errors, closed pipes, full disks, signals.
@Suite("streammap input and output")
struct IOCLITests {
    @Test func outputFile() throws {
        let dir = try CLI.temporaryDirectory()
        let out = dir.appendingPathComponent("out.ndjson").path
        let r = try CLI.run(["--field", "id", "-o", out], stdin: "{\"id\":1,\"x\":2}\n")
        #expect(r.stdout == "")
        #expect(r.stderr == "")
        #expect(r.status == 0)
        #expect(CLI.read(out) == "{\"id\":1}\n")
    }

    @Test func anOutputThatIsAlsoAnInputIsRefused() throws {
        let input = try CLI.temporaryFile("{\"id\":1}\n", name: "in.ndjson")
        let r = try CLI.run(["-o", input, input])
        #expect(r.status == 64)
        #expect(r.stderr.contains("-o \(input) is also an input"))
        #expect(CLI.read(input) == "{\"id\":1}\n")
    }

    /// Two outputs that are one file — the same name, another spelling of it, a link to it (existing or not), or
    /// standard output or error redirected there — are refused before anything is read or created: opened twice,
    /// one would overwrite the other (the mapped records were lost to the rejects).
    @Test func oneFileForTwoOutputsIsRefused() throws {
        let dir = try CLI.temporaryDirectory()
        let input = dir.appendingPathComponent("r.ndjson").path
        try Data("{\"id\":1}\n{\"id\":\"x\"}\n{\"id\":3}\n".utf8).write(to: URL(fileURLWithPath: input))
        let same = dir.appendingPathComponent("same.txt").path
        let link = dir.appendingPathComponent("link.txt").path
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: "same.txt")  // dangling
        let spellings: [(String, String)] = [(same, same), (same, link), (same, dir.path + "/./sub/../same.txt")]
        try FileManager.default.createDirectory(atPath: dir.path + "/sub", withIntermediateDirectories: true)
        for (o, rejects) in spellings {
            let r = try CLI.run(["--type", "id=integer", "-o", o, "--rejects", rejects, input])
            #expect(r.status == 64, "\(o) \(rejects)")
            #expect(r.stderr.hasPrefix("Error: -o \(o) and --rejects \(rejects) are the same file: one would overwrite the other"), "\(r.stderr)")
            #expect(!FileManager.default.fileExists(atPath: same))  // nothing created
        }
        // An existing file, and one that standard output or standard error already writes to.
        try Data("keep\n".utf8).write(to: URL(fileURLWithPath: same))
        let existing = try CLI.run(["--type", "id=integer", "-o", same, "--rejects", link, input])
        #expect(existing.status == 64)
        #expect(CLI.read(same) == "keep\n")
        let other = dir.appendingPathComponent("other.txt").path
        for redirect in ["> '\(same)'", "2> '\(same)'"] {
            let r = try CLI.shell("streammap --type id=integer --rejects '\(same)' '\(input)' \(redirect); echo \"status $?\"")
            #expect(r.stdout == "status 64\n", "\(redirect): \(r.stdout)")
        }
        let messages = try CLI.shell("streammap --type id=integer -o '\(other)' '\(input)' 2> '\(other)'; echo \"status $?\"")
        #expect(messages.stdout == "status 64\n")
        #expect(CLI.read(other).hasPrefix("Error: standard error and -o \(other) are the same file"), "\(CLI.read(other))")
        // Standard output is not an output when -o is given: `-o f > f` loses nothing.
        let unused = try CLI.shell("streammap --type id=integer -o '\(other)' '\(input)' > '\(other)' 2>/dev/null; echo \"status $?\"")
        #expect(unused.stdout == "status 1\n")
        #expect(CLI.read(other) == "{\"id\":1}\n{\"id\":3}\n")
    }

    /// `/dev/stdout` and `/dev/stderr` are written through the inherited descriptor, never reopened: records and
    /// rejects sent there together interleave whole lines, on a pipe and on a file (which is not truncated).
    @Test(arguments: [[], ["--jobs", "2"], ["--engine", "tree"]])
    func recordsAndRejectsOnOneDescriptorInterleaveWholeLines(_ arguments: [String]) throws {
        var lines: [String] = []
        for i in 0..<20_000 { lines.append(i % 3 == 0 ? #"{"id":"x\#(i)","pad":"\#(String(repeating: "p", count: i % 50))"}"# : #"{"id":\#(i)}"#) }
        let input = try CLI.temporaryFile(lines.joined(separator: "\n") + "\n", name: "many.ndjson")
        let piped = try CLI.run(["--type", "id=integer", "-o", "/dev/stdout", "--rejects", "/dev/stdout"] + arguments + [input])
        #expect(piped.status == 1)
        #expect(piped.stdoutLines.count == 20_000)
        #expect(piped.stdoutLines.allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
        #expect(piped.stdoutLines.filter { $0.hasPrefix(#"{"input":"#) }.count == 6667)

        let file = try CLI.temporaryDirectory().appendingPathComponent("both.txt").path
        try Data("first line\n".utf8).write(to: URL(fileURLWithPath: file))
        let joined = arguments.joined(separator: " ")
        let r = try CLI.shell("echo kept >> '\(file)'; streammap --type id=integer -o /dev/stdout --rejects /dev/stdout \(joined) '\(input)' >> '\(file)' 2>/dev/null; echo \"status $?\"")
        #expect(r.stdout == "status 1\n")
        let written = CLI.read(file).split(separator: "\n").map(String.init)
        #expect(written.prefix(2) == ["first line", "kept"])
        #expect(written.count == 20_002)
        #expect(written.dropFirst(2).allSatisfy { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) != nil })
    }

    /// `streammap f > f`: the shell empties `f` before streammap starts, so mapping it would silently write
    /// nothing; like cat, "input file is output file" — for a named input, standard input and `>>` too.
    @Test func anInputThatStandardOutputWritesToIsRefused() throws {
        let dir = try CLI.temporaryDirectory()
        let file = dir.appendingPathComponent("f.ndjson").path
        for (command, name) in [("streammap '\(file)' > '\(file)'", file), ("streammap < '\(file)' >> '\(file)'", "<stdin>"),
                                ("streammap --field id '\(file)' -o /dev/stdout >> '\(file)'", file)] {
            try Data("{\"id\":1}\n".utf8).write(to: URL(fileURLWithPath: file))
            let r = try CLI.shell(command + "; echo \"status $?\"")
            #expect(r.stdout == "status 64\n", "\(command)")
            #expect(r.stderr.hasPrefix("Error: \(name): input file is output file ("), "\(r.stderr)")
        }
        #expect(CLI.read(file) == "{\"id\":1}\n")  // appended to: untouched
        let infer = try CLI.shell("streammap infer '\(file)' >> '\(file)'; echo \"status $?\"")
        #expect(infer.stdout == "status 64\n")
        #expect(infer.stderr.hasPrefix("Error: \(file): input file is output file ("), "\(infer.stderr)")
    }

    @Test func anUnwritableOutputFailsBeforeReading() throws {
        let r = try CLI.run(["-o", "/nonexistent/dir/out.ndjson"], stdin: "{}\n")
        #expect(r.stderr == "streammap: /nonexistent/dir/out.ndjson: No such file or directory\n")
        #expect(r.status == 3)
    }

    @Test func aDirectoryIsAnIOErrorAndOtherInputsAreStillRead() throws {
        let dir = try CLI.temporaryDirectory()
        let file = dir.appendingPathComponent("b.ndjson")
        try Data("{\"id\":\"b\"}\n".utf8).write(to: file)
        let r = try CLI.run([dir.path, file.path])
        #expect(r.stdout == "{\"id\":\"b\"}\n")
        #expect(r.stderr == "streammap: \(dir.path): Is a directory\n")
        #expect(r.status == 3)
    }

    @Test func aMissingFile() throws {
        let r = try CLI.run(["/nonexistent/x.ndjson", "-"], stdin: "{\"a\":1}\n")
        #expect(r.stdout == "{\"a\":1}\n")
        #expect(r.stderr == "streammap: /nonexistent/x.ndjson: No such file or directory\n")
        #expect(r.status == 3)
    }

    /// Messages that are not about a record go through the same escaping: a control character in a file name
    /// cannot drive the terminal.
    @Test func aMissingFileWithControlCharactersInItsName() throws {
        let r = try CLI.run(["/nonexistent/x\u{1B}[31m\u{85}é.ndjson"])
        #expect(r.stderr == "streammap: /nonexistent/x\\u001b[31m\\u0085é.ndjson: No such file or directory\n")
        #expect(r.status == 3)
    }

    @Test func anUnreadableFile() throws {
        let file = try CLI.temporaryFile("{\"a\":1}\n", name: "secret.ndjson")
        chmod(file, 0)
        // As root, permissions do not stop reading: run the binary as nobody.
        let r = getuid() == 0
            ? try CLI.execute(URL(fileURLWithPath: "/usr/bin/setpriv"),
                              ["--reuid=65534", "--regid=65534", "--clear-groups", CLI.binary.path, file], stdinData: Data(), directory: nil)
            : try CLI.run([file])
        #expect(r.stdout == "")
        #expect(r.stderr == "streammap: \(file): Permission denied\n")
        #expect(r.status == 3)
    }

    @Test func aReadError() throws {
        // Reading /proc/self/mem at offset 0 fails with EIO.
        let r = try CLI.run(["/proc/self/mem"])
        #expect(r.stderr == "streammap: /proc/self/mem: Input/output error\n")
        #expect(r.status == 3)
    }

    @Test func aFullDiskIsAWriteErrorNeverASilentLoss() throws {
        let r = try CLI.shell("streammap Examples/events.ndjson > /dev/full")
        #expect(r.stderr == "streammap: <stdout>: write error: No space left on device\n")
        #expect(r.status == 3)
        let o = try CLI.shell("streammap -o /dev/full Examples/events.ndjson")
        #expect(o.stderr == "streammap: /dev/full: write error: No space left on device\n")
        #expect(o.status == 3)
        let rejects = try CLI.shell("streammap --require nope --rejects /dev/full Examples/events.ndjson")
        #expect(rejects.stderr.hasPrefix("streammap: /dev/full: write error: No space left on device\n"))
        #expect(rejects.status == 3)
    }

    @Test func aClosedPipeEndsQuietlyAndAtOnce() throws {
        let dir = try CLI.temporaryDirectory()
        let big = dir.appendingPathComponent("big.ndjson")
        let lines = (0..<300_000).map { "{\"n\":\($0),\"pad\":\"abcdefghijklmnopqrstuvwxyz\"}" }.joined(separator: "\n") + "\n"
        try Data(lines.utf8).write(to: big)
        let started = Date()
        let r = try CLI.shell("streammap --field n '\(big.path)' | head -1; echo \"status ${PIPESTATUS[0]}\"")
        #expect(r.stdout == "{\"n\":0}\nstatus 141\n")
        #expect(r.stderr == "")
        #expect(Date().timeIntervalSince(started) < 10)
    }

    /// Writes three records and the start of a fourth into a pipe, waits until the tool reports (on its progress
    /// line, redrawn at every chunk) that it has read three records, interrupts it while it waits for more, and
    /// returns what it wrote: only whole records, and the counts.
    func interrupt(with signal: Int32, extraArguments: [String] = []) throws -> CLIResult {
        let run = try LiveCLI(["--field", "n", "--progress", "--progress-interval", "0"] + extraArguments)
        run.write("{\"n\":1}\n{\"n\":2}\n{\"n\":3,\"x\":\"")
        Thread.sleep(forTimeInterval: 0.1)
        run.write("rest\"}\n{\"n\":")  // record 3 ends; record 4 is cut
        run.waitForStandardError(containing: "streammap: 3 records")
        Thread.sleep(forTimeInterval: 0.1)  // back in read(2), waiting for the rest of record 4
        run.signal(signal)
        return run.finish(keepInputOpen: true)
    }

    @Test func sigintStopsAtARecordBoundaryAndReportsCounts() throws {
        let r = try interrupt(with: SIGINT, extraArguments: ["--stats"])
        #expect(r.stdout == "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n")
        #expect(r.stderrLines.first == "streammap: interrupted: 3 records read, 3 written, 0 rejected")
        #expect(r.stderrLines.last?.hasPrefix(#"{"recordsIn":3,"recordsOut":3,"recordsRejected":0,"#) == true)
        #expect(r.stderrLines.last?.hasSuffix(#""exitStatus":130,"interruptedBy":"SIGINT"}"#) == true)
        #expect(r.status == 130)
    }

    @Test func sigtermToo() throws {
        let r = try interrupt(with: SIGTERM)
        #expect(r.stdout == "{\"n\":1}\n{\"n\":2}\n{\"n\":3}\n")
        #expect(r.stderr == "streammap: interrupted: 3 records read, 3 written, 0 rejected\n")
        #expect(r.status == 143)
    }

    /// Inside a huge record (its first 4 MB written, the rest never comes) with a key style: the signal stops the
    /// run at once, the records before it are written, and the cut record is neither written nor counted.
    @Test func aSignalInsideAHugeRecordStopsAtOnce() throws {
        let run = try LiveCLI(["--key-style", "camel", "--progress", "--progress-interval", "0"])
        run.write("{\"first_one\":1}\n{\"second_one\":2}\n{\"items_list\":[")
        let objects = (0..<40_000).map { "{\"item_id\":\($0),\"item_name\":\"n\($0)\",\"nested_obj\":{\"inner_key\":\($0)}}," }
        for piece in stride(from: 0, to: objects.count, by: 4_000) { run.write(objects[piece..<piece + 4_000].joined()) }
        run.waitForStandardError(containing: "streammap: 2 records")
        Thread.sleep(forTimeInterval: 0.2)
        let signalled = Date()
        run.signal(SIGTERM)
        let r = run.finish(keepInputOpen: true)
        #expect(Date().timeIntervalSince(signalled) < 5)
        #expect(r.stdout == "{\"firstOne\":1}\n{\"secondOne\":2}\n")
        #expect(r.stderrLines.last == "streammap: interrupted: 2 records read, 2 written, 0 rejected")
        #expect(r.status == 143)
    }

    @Test func largeOutputIsWrittenCompletely() throws {
        let lines = (0..<50_000).map { "{\"n\":\($0),\"s\":\"\(String(repeating: "x", count: $0 % 50))\"}" }
        let r = try CLI.run([], stdin: lines.joined(separator: "\n") + "\n")
        #expect(r.stdout == lines.joined(separator: "\n") + "\n")
        #expect(r.status == 0)
    }
}
