import ArgumentParser
import StreamMap

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// `streammap infer [FILE...]`: a spec inferred from the first records of the inputs (`Spec/SpecInference`).
struct InferCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "infer",
        abstract: "Print a spec inferred from sample records.",
        discussion: """
            Reads up to --sample records from the files in order (or standard input), framed as 'streammap' frames \
            them, and prints a spec that maps them: every path in first-seen order, its type, nested object specs, \
            'arrayOf' for arrays of one kind of element, 'required' for paths present and non-null in every record, dates, URLs \
            and UUIDs when every value converts and converts back, small closed sets of strings as 'enum' tables, \
            destination names in --key-style. Mapping the sample with it rejects no valid record; --reverse gives \
            each record back. A record that is not valid JSON is reported and left out of the sample (status 1).

            EXAMPLES
              streammap infer events.ndjson > events.spec.json
              streammap infer --sample 1000 --key-style camel tweets.ndjson
            """
    )

    @Option(help: ArgumentHelp("Read at most N valid records.", valueName: "n"))
    var sample: Int = 10_000

    @Option(
        help: ArgumentHelp(
            "Destination names in this style: \(KeyStyle.specNames.joined(separator: ", ")).", valueName: "style"))
    var keyStyle: String?

    @Argument(
        help: ArgumentHelp("Input files; '-' or none reads standard input.", valueName: "file"),
        completion: .file(extensions: ["ndjson", "jsonl", "json"]))
    var inputs: [String] = []

    func validate() throws {
        if sample < 1 { throw ValidationError("--sample must be 1 or more") }
        if let keyStyle, KeyStyle(specName: keyStyle) == nil {
            throw ValidationError(
                "--key-style \(keyStyle): unknown key style (one of \(KeyStyle.specNames.joined(separator: ", ")))")
        }
    }

    func run() throws { try reportingUsageErrors(inferSpec) }

    private func inferSpec() throws {
        // `streammap infer f > f`: the shell emptied f before it could be sampled (as `map` and cat say).
        if let output = FileIdentity.of(descriptor: 1) {
            for path in inputs.isEmpty ? ["-"] : inputs
            where (path == "-" ? FileIdentity.of(descriptor: 0) : FileIdentity.of(path: path)) == output {
                throw ValidationError("\(path == "-" ? "<stdin>" : path): input file is output file (standard output writes to it)")
            }
        }
        let console = Console()
        defer { console.flush() }
        var sampler = RecordSampler(
            inference: SpecInference(keyStyle: keyStyle.flatMap(KeyStyle.init(specName:))), limit: sample)
        var status = ExitStatus.success
        for path in inputs.isEmpty ? ["-"] : inputs where !sampler.isFull {
            switch InputFile.open(path) {
            case .failure(let e):
                console.error("\(path): \(Console.describe(errno: e.code))")
                status = .ioError
            case .success(let input):
                defer { input.close() }
                if let code = sampler.read(input, console: console) {
                    console.error("\(input.name): \(Console.describe(errno: code))")
                    status = .ioError
                }
            }
        }
        if sampler.invalidRecords > 0 && status == .success { status = .recordsRejected }
        for note in sampler.inference.notes { console.error("note: \(note)") }
        guard sampler.inference.recordCount > 0 else {
            console.error("no records to infer a spec from")
            throw ExitCode(status == .success ? ExitStatus.recordsRejected.rawValue : status.rawValue)
        }
        guard case .ok = FileOutput(fd: 1, name: "<stdout>").writeAll(Array(sampler.inference.text.utf8)) else {
            throw ExitCode(ExitStatus.ioError.rawValue)
        }
        if status != .success { throw ExitCode(status.rawValue) }
    }
}

/// Feeds the records of inputs to a `SpecInference` until it has `limit` of them.
struct RecordSampler {
    var inference: SpecInference
    let limit: Int
    private(set) var invalidRecords = 0
    var isFull: Bool { inference.recordCount >= limit }

    init(inference: SpecInference, limit: Int) {
        self.inference = inference
        self.limit = limit
    }

    /// Reads `input` until its end or the limit; returns an errno when a read fails.
    mutating func read(_ input: InputFile, console: Console) -> Int32? {
        var framer = RecordFramer()
        var buffer = [UInt8](repeating: 0, count: InputFile.readBytes)
        func take(_ record: UnsafeRawBufferPointer, _ location: RecordLocation, _ framingError: JSONSyntaxError? = nil)
        {
            guard !isFull else { return }
            var failure = framingError
            if failure == nil {
                do {
                    try inference.add(json: record)
                } catch {
                    failure = error
                }
            }
            guard let failure else { return }
            invalidRecords += 1
            console.error("\(input.name):\(location.line): invalid JSON: \(failure.message) (left out of the sample)")
        }
        while !isFull {
            let n = buffer.withUnsafeMutableBytes { input.read(into: $0, interrupted: { false }) }
            guard let n else { return errno }
            if n == 0 { break }
            buffer.withUnsafeBytes { framer.feed(UnsafeRawBufferPointer(rebasing: $0[..<n])) { take($0, $1) } }
        }
        framer.finishReportingFramingErrors { take($0, $1, $2) }
        return nil
    }
}
