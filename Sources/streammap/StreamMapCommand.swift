import ArgumentParser
import StreamMap

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Exit statuses (README.md, "Exit status").
enum ExitStatus: Int32 {
    case success = 0
    case recordsRejected = 1
    case invalidSpec = 2
    case ioError = 3
}

@main
struct StreamMapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streammap",
        abstract: "Map NDJSON records with a declarative spec.",
        discussion: """
            Reads NDJSON (one JSON value per line) from the files, or standard input when none is given or for '-', \
            maps each record with the spec and writes the mapped records as NDJSON on standard output. \
            A record that cannot be mapped is reported on standard error with its line number and is not written.

            EXIT STATUS
              0   every record was mapped
              1   some records were rejected
              2   the spec is invalid
              3   an input or output error
              64  command-line usage error
            """,
        version: "0.1.0"
    )

    @Option(name: [.short, .long], help: "The mapping spec (JSON).", completion: .file(extensions: ["json"]))
    var spec: String

    @Option(help: "The engine: 'stream' maps while parsing; 'tree' parses each record into a value, then maps it (the reference; same output).")
    var engine: EngineChoice = .stream

    @Flag(help: "Apply the spec's reverse mapping (model → original shape).")
    var reverse = false

    @Argument(help: "Input files; '-' or none reads standard input.", completion: .file())
    var inputs: [String] = []

    enum EngineChoice: String, ExpressibleByArgument, CaseIterable { case stream, tree }

    func run() throws {
        let stderr = FileOutput(fd: 2)
        let mapper: Mapper
        switch loadMapper() {
        case .success(let m): mapper = m
        case .failure(let message):
            stderr.line("streammap: \(message)")
            throw ExitCode(ExitStatus.invalidSpec.rawValue)
        }
        let status: ExitStatus
        switch engine {
        case .stream:
            var runner = Runner(engine: StreamEngine(mapper: mapper), stdout: FileOutput(fd: 1), stderr: stderr)
            status = runner.run(inputs: inputs.isEmpty ? ["-"] : inputs)
        case .tree:
            var runner = Runner(engine: TreeEngine(mapper: mapper), stdout: FileOutput(fd: 1), stderr: stderr)
            status = runner.run(inputs: inputs.isEmpty ? ["-"] : inputs)
        }
        if status != .success { throw ExitCode(status.rawValue) }
    }

    enum Loaded { case success(Mapper), failure(String) }

    func loadMapper() -> Loaded {
        guard let bytes = readWholeFile(spec) else {
            return .failure("\(spec): cannot read the spec: \(String(cString: strerror(errno)))")
        }
        do {
            let s = try Spec(json: bytes, file: spec)
            return .success(reverse ? try s.reversed() : s.mapper)
        } catch let e as SpecError {
            return .failure(e.description.split(separator: "\n").joined(separator: "\nstreammap: "))
        } catch {
            return .failure("\(spec): \(error)")
        }
    }
}

/// Reads inputs, maps every record, writes output and diagnostics.
struct Runner<Engine: RecordEngine>: RecordSegmentSink {
    var engine: Engine
    let stdout: FileOutput
    let stderr: FileOutput
    var output = JSONWriter(reservingCapacity: 1 << 17)
    var rejected = 0
    var ioFailed = false

    mutating func run(inputs: [String]) -> ExitStatus {
        for input in inputs { process(input) }
        if !stdout.write(output.bytes) { ioFailed = true }
        if ioFailed { return .ioError }
        return rejected > 0 ? .recordsRejected : .success
    }

    mutating func process(_ input: String) {
        let name = input == "-" ? "<stdin>" : input
        let fd = input == "-" ? 0 : open(input, O_RDONLY)
        guard fd >= 0 else {
            stderr.line("streammap: \(name): \(String(cString: strerror(errno)))")
            ioFailed = true
            return
        }
        defer { if fd != 0 { close(fd) } }
        var framer = NDJSONSegmenter()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        currentInput = name
        while true {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                stderr.line("streammap: \(name): \(String(cString: strerror(errno)))")
                ioFailed = true
                break
            }
            if n == 0 { break }
            buffer.withUnsafeBytes { raw in framer.feed(UnsafeRawBufferPointer(rebasing: raw[..<n]), into: &self) }
        }
        framer.finish(into: &self)
    }

    var currentInput = ""
    var location = RecordLocation(line: 0, byteOffset: 0)

    mutating func recordBegins(at location: RecordLocation) {
        self.location = location
        engine.beginRecord()
    }

    mutating func recordContinues(_ bytes: UnsafeRawBufferPointer) { engine.continueRecord(bytes) }

    mutating func recordEnds() {
        switch engine.endRecord(into: &output) {
        case .mapped:
            output.writeRaw(0x0A)
        case .rejected(let failure):
            rejected += 1
            for e in failure.errors where e.isFatal {
                let path = e.source.isEmpty ? "" : "\(e.source): "
                let what = e.code == "syntax" ? "invalid JSON: " : ""
                stderr.line("streammap: \(currentInput):\(location.line): \(path)\(what)\(Diagnostics.escape(e.message))")
            }
        }
        if output.bytes.count >= 1 << 16 { flush() }
    }

    mutating func flush() {
        if !stdout.write(output.bytes) { ioFailed = true }
        output.removeAll()
    }
}

enum Diagnostics {
    /// Control bytes shown as escapes so that a message never drives the terminal.
    static func escape(_ s: String) -> String {
        var out = ""
        for u in s.unicodeScalars {
            if u.value < 0x20 || u.value == 0x7F { out += "\\u" + String(repeating: "0", count: 4 - String(u.value, radix: 16).count) + String(u.value, radix: 16) } else { out.unicodeScalars.append(u) }
        }
        return out
    }
}

/// Unbuffered writes to a file descriptor, looping on partial writes and EINTR.
struct FileOutput {
    let fd: Int32

    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue }
                    return false
                }
                done += n
            }
            return true
        }
    }

    func line(_ s: String) { write(Array((s + "\n").utf8)) }
}

func readWholeFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 { if errno == EINTR { continue }; return nil }
        if n == 0 { return out }
        out.append(contentsOf: buffer[..<n])
    }
}
