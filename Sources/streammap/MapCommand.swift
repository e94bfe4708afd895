#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import StreamMap

/// `streammap [map] [OPTIONS] [FILE...]`: maps records from the files (or standard input) to standard output.
struct MapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "map",
        abstract: "Map JSON records (NDJSON by default) with a spec or one-liner flags.",
        usage: """
            streammap [OPTIONS] [FILE...]
            streammap check [SPEC] [OPTIONS]
            streammap explain [SPEC] [OPTIONS]
            streammap infer [FILE...] [OPTIONS]
            """,
        discussion: """
            EXAMPLES
              streammap -s events.spec.json events.ndjson > mapped.ndjson
              streammap --field id --field actor.login=user --key-style camel ev.ndjson
              streammap --require id --rejects bad.ndjson --stats data.ndjson
              streammap --framing array big-array.json | head -1
              streammap --jobs auto -s events.spec.json big.ndjson > mapped.ndjson
              streammap check events.spec.json     # validate a spec (explain: how it streams)

            Reads records from the files in order, or from standard input when no file or '-' is given, maps each \
            one and writes the mapped records as NDJSON on standard output (or -o FILE). A record that cannot be \
            mapped is not written: it is reported on standard error as 'streammap: FILE:LINE: /json/pointer: \
            message' (or written to --rejects FILE) and the run goes on. Without --spec and mapping flags, records \
            are copied (validated and written compactly).

            Flags and a spec file share one language: the flags amend the spec's field for the same source path \
            (flags win) or add fields after the spec's; --print-spec shows the result.

            \(ExitStatus.helpText)
            """
    )

    @OptionGroup(title: "Mapping") var specOptions: SpecOptions

    @Option(name: [.short, .long], help: ArgumentHelp("Write mapped records to FILE instead of standard output.", valueName: "file"),
            completion: .file())
    var output: String?

    @Option(help: ArgumentHelp("Write records as ndjson (the default; or by -o's name: .arrow, .feather and .arrows are Arrow), csv or tsv (a header row, then one row per record with one column per output field of the spec, in spec order; nested fields: their paths joined with the spec's delimiter), or arrow: Arrow IPC, typed columns from the spec (the file format when -o ends in .arrow or .feather, else the stream format; arrow-file and arrow-stream choose). Tables and Arrow need a spec that names every output field; Arrow also its type.",
                               valueName: "format"))
    var to: OutputFormat?

    @Option(help: ArgumentHelp("Compress the output: gzip, zstd, xz, bzip2 or none (default: by -o's name: .gz, .zst, .xz, .bz2; else none). Compressed inputs (gzip, zstd, xz, bzip2) are told by their first bytes and need no flag.",
                               valueName: "format"))
    var compress: CompressChoice?

    @Option(help: "How the input is cut into records: auto (NDJSON, a JSON array, concatenated values or an RFC 7464 sequence, detected from the start of each input), ndjson, array, concat, seq.")
    var framing: Framing = .auto

    @Option(help: "'stream' maps while parsing; 'tree' parses each record into a value first (the reference; same output).")
    var engine: MappingOptions.Engine = .stream

    // Parsed unconditionally: `--jobs -3` is a bad count, not a missing one.
    @Option(parsing: .unconditional,
            help: ArgumentHelp("Map on N threads ('auto': one per online CPU; 0 or 1: one). Records are read, written and reported in input order: the output, rejects, messages, counts and exit status are those of one thread. Two or more compressed files are decompressed and mapped N at a time, and one BGZF or many-frame zstd file is decompressed on N threads. Memory: up to 2×N batches of about 512 KiB of records in flight; compressed files mapped ahead keep up to 256 MiB of output in memory together, the rest in a temporary file in $TMPDIR.",
                               valueName: "n"),
            transform: JobCount.parse)
    var jobs: JobCount = .count(1)

    // (The hidden options have no default value of ArgumentParser's: it would describe each default for the help
    // it never shows, a run-time type check and a print at every start.)
    /// Input bytes per batch with --jobs (hidden: tests make it tiny so that many batches run).
    @Option(help: .hidden) var batchBytes: Int?
    /// What the compressed files mapped ahead with --jobs may hold in memory together (tests make it small).
    @Option(help: .hidden) var readAheadMemory: Int?
    /// Which inflate decompresses gzip: automatic (ISA-L where installed, else zlib) or zlib (benchmarks, tests).
    @Option(help: .hidden) var inflate: String?

    @Option(help: ArgumentHelp("Write rejected records to FILE as NDJSON (input, line, offset, errors with paths, raw text) instead of reporting each on standard error.",
                               valueName: "file"),
            completion: .file())
    var rejects: String?

    @Flag(help: "With --rejects: leave the raw record text out (its length is written instead).")
    var redact = false

    @Option(help: ArgumentHelp("With --rejects: keep at most N bytes of a record's text (then \"truncated\": true).", valueName: "n"))
    var rejectsRecordBytes: Int = RejectWriter.defaultMaximumRecordBytes

    @Option(help: "What a rejected record does: 'reject' (report it, go on, exit 1 at the end) or 'fail' (stop there, exit 4).")
    var onError: OnError = .reject

    @Option(help: ArgumentHelp("Stop (exit 4) when more than N records have been rejected.", valueName: "n"))
    var maxRejects: Int?

    @Flag(inversion: .prefixedNo,
          help: "Show progress (records, bytes, MB/s, ETA) on standard error (default: only when standard error is a terminal).")
    var progress: Bool?

    /// Redraw interval of the progress line (hidden; tests use 0 to draw at every chunk).
    @Option(help: .hidden) var progressInterval: Double?

    @Flag(help: "Print a JSON summary on standard error at the end: records in, out, rejected, warnings and errors by path and code, bytes, seconds, MB/s.")
    var stats = false

    @Flag(help: "Report each warning (a default or fallback was used) on standard error; without it, the warnings that dropped or replaced a value are counted in one line at the end.")
    var warnings = false

    @Flag(name: [.short, .long], help: "No per-record messages on standard error (the exit status and --stats still tell).")
    var quiet = false

    @Option(help: ArgumentHelp("Map only the NDJSON lines of bytes START..END of the one input FILE, split as Hadoop splits text (from the first LF at or after START, or byte 0, through the LF ending the line that crosses END); lines and offsets count from that first byte; with --stats, a line {\"byteRange\":{\"start\",\"end\",\"newlines\"}} before the summary. For running on Spark (Integrations/spark).",
                               valueName: "start:end"))
    var byteRange: ByteRange?

    @Argument(help: ArgumentHelp("Input files; '-' or none reads standard input.", valueName: "file"),
              completion: .file(extensions: ["ndjson", "jsonl", "json"]))
    var inputs: [String] = []

    func validate() throws {
        if let maxRejects, maxRejects < 0 { throw ValidationError("--max-rejects must be 0 or more") }
        if let batchBytes, batchBytes < 1 { throw ValidationError("--batch-bytes must be 1 or more") }
        if let readAheadMemory, readAheadMemory < 1 { throw ValidationError("--read-ahead-memory must be 1 or more") }
        if let inflate, Inflater(rawValue: inflate) == nil { throw ValidationError("--inflate must be automatic or zlib") }
        if rejectsRecordBytes < 0 { throw ValidationError("--rejects-record-bytes must be 0 or more") }
        if rejects == nil && redact { throw ValidationError("--redact needs --rejects FILE") }
        if output == "-" || rejects == "-" {
            throw ValidationError("'-' is not an output file (standard output is the default for records; rejects need a file)")
        }
        if byteRange != nil {
            if inputs.count != 1 || inputs[0] == "-" { throw ValidationError("--byte-range needs exactly one input FILE (not standard input)") }
            if framing != .auto && framing != .ndjson { throw ValidationError("--byte-range splits NDJSON only (not --framing \(framing.rawValue))") }
        }
    }

    func run() throws { try reportingUsageErrors(mapRecords) }

    private func mapRecords() throws {
        let console = Console()
        defer { console.flush() }
        let loaded = try specOptions.load(console: console)
        if specOptions.printSpec {
            guard case .ok = FileOutput(fd: 1, name: "<stdout>").writeAll(Array((JSONWriter.string(loaded.document) + "\n").utf8)) else {
                throw ExitCode(ExitStatus.ioError.rawValue)
            }
            return
        }
        Signals.install()
        let paths = inputs.isEmpty ? ["-"] : inputs
        let to = self.to ?? output.flatMap(OutputFormat.forFileName) ?? .ndjson
        let format = to.recordFormat(output: output)
        let formatted: FormattedMapping
        do {
            // For Arrow, the mapper gains the checks that reject a value its column cannot hold (both engines).
            formatted = try FormattedMapping(loaded.mapper, format: format, delimiter: loaded.document["delimiter"]?.stringValue ?? ".",
                                             explode: loaded.spec.explode)
        } catch {
            throw ValidationError("--to \(to.rawValue): \(error)")
        }
        if case .arrow = format, let c = compress.map(\.rawValue) ?? output.flatMap(Compression.forFileName)?.rawValue, c != "none" {
            throw ValidationError("--to \(to.rawValue): Arrow IPC is written uncompressed (not \(c))")
        }

        if byteRange != nil, let compression = InputFile.compression(of: paths[0]) {
            throw ValidationError("--byte-range: \(paths[0]) is \(compression.rawValue)-compressed, and compressed data cannot be split at byte offsets (map the file whole, or decompress it first)")
        }

        try refuseOverlappingFiles(inputs: paths)

        var out = FileOutput(fd: 1, name: "<stdout>")
        if let output {
            switch FileOutput.createOrInherit(output) {
            case .success(let f): out = f
            case .failure(let e):
                console.error("\(output): \(e.description)")
                throw ExitCode(ExitStatus.ioError.rawValue)
            }
        }
        var rejectsFile: RejectsFile?
        if let rejects {
            switch FileOutput.createOrInherit(rejects) {
            case .success(let f):
                rejectsFile = RejectsFile(file: f, format: RejectWriter(maximumRecordBytes: rejectsRecordBytes, redactRecord: redact))
            case .failure(let e):
                console.error("\(rejects): \(e.description)")
                throw ExitCode(ExitStatus.ioError.rawValue)
            }
        }

        if paths.contains("-") && isatty(0) == 1 && isatty(2) == 1 {
            console.error("reading records from the terminal (end with Ctrl-D; 'streammap --help' for usage)")
        }

        var window: ByteRangeWindow?
        if let byteRange {
            switch ByteRangeWindow.open(paths[0], byteRange) {
            case .success(let w): window = w
            case .failure(let e):
                console.error(e.message)
                throw ExitCode(ExitStatus.ioError.rawValue)
            }
        }

        let compression = compress.map(\.compression) ?? output.flatMap(Compression.forFileName)
        let recordOutput = formatted.writer(to: out, compressor: compression.map { OutputCompressor($0) })

        var settings = RunSettings()
        settings.pipeline.framing = byteRange != nil ? .ndjson : framing
        settings.pipeline.decompresses = byteRange == nil  // a window's first bytes are no file's magic bytes
        settings.pipeline.jobs = jobs.resolved
        settings.pipeline.batchBytes = batchBytes ?? RecordPipelineSettings.defaultBatchBytes
        settings.pipeline.readAheadMemoryBytes = readAheadMemory ?? RecordPipelineSettings.defaultReadAheadMemoryBytes
        settings.pipeline.inflater = inflate.flatMap(Inflater.init(rawValue:)) ?? .automatic
        settings.onError = onError
        settings.maxRejects = maxRejects
        settings.quiet = quiet
        settings.showWarnings = warnings
        if !loaded.isReversed { settings.pathWatch = PathWatch(flags: specOptions.amendment, spec: loaded.document) }
        let showProgress = progress ?? (isatty(2) == 1)
        let total = showProgress ? InputFile.totalSize(paths) : nil

        // With --jobs, each worker makes its engine on its own thread, from a mapper of its own: nothing shared.
        let mapper = formatted.mapper
        let mappers = loaded.independentMappers()
        let independent: @Sendable () -> (mapper: Mapper, filter: RecordFilter?) = { let m = mappers(); return (formatted.mapper(for: m.mapper), m.filter) }
        let kind = self.engine
        let explode = loaded.spec.explode
        let makeEngine: @Sendable () -> any RecordEngine = { let m = independent(); return kind.make(mapper: m.mapper, filter: m.filter, explode: explode) }
        var run = MapRun(engine: kind.make(mapper: mapper, filter: loaded.filter, explode: explode), makeEngine: makeEngine, settings: settings, file: recordOutput,
                         rejects: rejectsFile, console: console)
        run.window = window
        run.receivedSignal = { Signals.received }
        run.output.stats.collectsPaths = stats
        run.output.stats.filters = loaded.filter != nil
        run.output.stats.explodes = explode != nil
        if showProgress { run.output.progress = ProgressDisplay(totalBytes: total, interval: progressInterval ?? ProgressDisplay.defaultInterval) }
        let status = run.run(inputs: paths)
        let result = (status: status, stats: run.stats, signal: run.interruptingSignal)
        // No value is dropped without a word: warnings that left a value out or replaced it, when not listed.
        if !warnings && !quiet, let line = result.stats.valuesDroppedLine { console.error(line) }
        if !quiet, let line = result.stats.withoutElementsLine { console.error(line) }
        if stats, let window { console.line(window.statsLine) }
        if stats { console.line(result.stats.summary(exitStatus: result.status, interruptedBy: result.signal)) }
        if result.status != 0 { throw ExitCode(result.status) }
    }
}

extension MapCommand {
    /// Before anything is read or truncated: never write over an input (`-o`, `--rejects`, or standard output or
    /// error redirected onto it: `streammap f > f` would map the file the shell has just emptied), and never open
    /// one file for two outputs (`-o same --rejects same`: each open truncates it and one overwrites the other).
    func refuseOverlappingFiles(inputs paths: [String]) throws {
        // Standard output is an output when records go there; an input that is its file is refused anyway, as cat
        // does (the shell emptied it before streammap started).
        let standardOutput = OutputDestination(descriptor: 1)
        var outputs = [OutputDestination(descriptor: 2)]
        if let output { outputs.append(OutputDestination(flag: "-o", path: output)) } else { outputs.append(standardOutput) }
        if let rejects { outputs.append(OutputDestination(flag: "--rejects", path: rejects)) }
        for path in paths {
            guard let input = path == "-" ? FileIdentity.of(descriptor: 0) : FileIdentity.of(path: path) else { continue }
            for o in outputs + [standardOutput] where o.identity == input {
                if o.descriptor != nil {
                    let name = path == "-" ? "<stdin>" : path
                    throw ValidationError("\(name): input file is output file (\(o.label) writes to it)")
                }
                throw ValidationError("\(o.label) is also an input; it would be overwritten before it is read")
            }
        }
        for (i, a) in outputs.enumerated() {
            for b in outputs[(i + 1)...] {
                if let reason = OutputDestination.conflict(a, b) { throw ValidationError(reason) }
            }
        }
    }
}

/// The output's format (`--to`).
enum OutputFormat: String, RawStringArgument {
    case ndjson, csv, tsv, arrow
    case arrowFile = "arrow-file"
    case arrowStream = "arrow-stream"

    /// The library's format; `arrow` is Arrow's IPC file format when `-o` ends in .arrow or .feather, else the stream.
    func recordFormat(output: String?) -> RecordFormat {
        switch self {
        case .ndjson: return .ndjson
        case .csv: return .table(.csv)
        case .tsv: return .table(.tsv)
        case .arrowFile: return .arrow(.file)
        case .arrowStream: return .arrow(.stream)
        case .arrow: return .arrow(Self.forFileName(output ?? "") == .arrowFile ? .file : .stream)
        }
    }

    /// Arrow when `-o` names an Arrow file (.arrow, .feather; .arrows: the stream format), also behind a
    /// compression's suffix (`x.arrow.gz`: Arrow, which then refuses the compression).
    static func forFileName(_ path: String) -> OutputFormat? {
        var name = path.lowercased()
        if Compression.forFileName(name) != nil, let dot = name.lastIndex(of: ".") { name = String(name[..<dot]) }
        if name.hasSuffix(".arrow") || name.hasSuffix(".feather") { return .arrowFile }
        if name.hasSuffix(".arrows") { return .arrowStream }
        return nil
    }
}

/// The output's compression (`--compress`).
enum CompressChoice: String, RawStringArgument {
    case gzip, zstd, xz, bzip2, none

    var compression: Compression? { Compression(rawValue: rawValue) }
}
