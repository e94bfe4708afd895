import ArgumentParser
import StreamMap

/// `streammap check SPEC`: validates a spec (amended by any mapping flags) without reading input.
struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "check",
        abstract: "Validate a spec without reading any input.",
        discussion: """
            Prints 'SPEC: ok' on standard output and exits 0 when the spec (amended by the mapping flags, if any) \
            is valid — with --reverse, when its reverse is valid too. Otherwise every problem is reported on \
            standard error as 'streammap: SPEC: /json/pointer: message' and the status is 2.
            """
    )

    @Argument(help: ArgumentHelp("The spec file (or use --spec).", valueName: "spec"), completion: .file(extensions: ["json"]))
    var specFile: String?

    @OptionGroup(title: "Mapping") var specOptions: SpecOptions

    func validate() throws {
        if specFile != nil && specOptions.spec != nil { throw ValidationError("give the spec once: as an argument or with --spec") }
        if specFile == nil && specOptions.spec == nil && !specOptions.hasMappingFlags {
            throw ValidationError("nothing to check: give a spec file or mapping flags")
        }
    }

    func run() throws { try reportingUsageErrors(checkSpec) }

    private func checkSpec() throws {
        let loaded = try specOptions.load(file: specFile, console: Console())
        let text = specOptions.printSpec ? JSONWriter.string(loaded.document) : "\(loaded.name): ok"
        guard case .ok = FileOutput(fd: 1, name: "<stdout>").writeAll(Array((text + "\n").utf8)) else {
            throw ExitCode(ExitStatus.ioError.rawValue)
        }
    }
}

/// `streammap explain SPEC`: the compiled mapping — output order, required fields, what streams.
struct ExplainCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "explain",
        abstract: "Show how a spec maps and what the stream engine streams.",
        discussion: """
            For every output key, in the order it is written: its source path, what an absent and a null source do \
            (reject the record, omit the field, or write a value), the mapper, and whether the stream engine maps \
            the value while parsing ('streamed') or builds it in memory first ('materialized', harmless for \
            scalars, costly for large objects and arrays). Then what happens to other keys and the required source \
            paths, and the Arrow columns --to arrow writes (or why the spec cannot give them). --json prints the \
            same as JSON.
            """
    )

    @Argument(help: ArgumentHelp("The spec file (or use --spec; without either, the mapping flags alone).", valueName: "spec"),
              completion: .file(extensions: ["json"]))
    var specFile: String?

    @OptionGroup(title: "Mapping") var specOptions: SpecOptions

    @Flag(help: "Print the explanation as JSON.")
    var json = false

    func validate() throws {
        if specFile != nil && specOptions.spec != nil { throw ValidationError("give the spec once: as an argument or with --spec") }
    }

    func run() throws { try reportingUsageErrors(explainSpec) }

    private func explainSpec() throws {
        let loaded = try specOptions.load(file: specFile, console: Console())
        let explanation = MapperExplanation(loaded.mapper)
        var text = json ? JSONWriter.string(explanation.jsonValue) + "\n" : explanation.description
        // The columns `--to arrow` writes: the same schema, from the same mapper (the flags applied), exploded alike.
        let columns = Result { () throws(ArrowSchemaError) -> ArrowSchema in
            let schema = try ArrowSchema(mapper: loaded.mapper)
            return try loaded.spec.explode.map { e throws(ArrowSchemaError) in try schema.exploding(e) } ?? schema
        }
        if json {
            var o = (try? JSONParser.parse(text))?.objectValue ?? JSONObject()
            switch columns {
            case .success(let schema):
                o["arrow"] = .object(JSONObject([("columns", .array(schema.fields.map {
                    .object(JSONObject([("name", .string($0.name)), ("type", .string($0.type.description))]))
                }))]))
            case .failure(let error):
                o["arrow"] = .object(JSONObject([("error", .string(error.description))]))
            }
            text = JSONWriter.string(.object(o)) + "\n"
        } else {
            switch columns {
            case .success(let schema):
                text += "arrow columns (--to arrow): " + schema.fields.map { "\($0.name) \($0.type)" }.joined(separator: ", ") + "\n"
            case .failure(let error):
                text += "arrow columns (--to arrow): none: \(error)\n"
            }
        }
        if let filter = loaded.filter {
            let reads = filter.paths.map { $0.steps.joined(separator: filter.delimiter) }
            if json {
                var o = explanation.jsonValue.objectValue ?? JSONObject()
                o["where"] = .object(JSONObject([("expression", .string(filter.text)), ("reads", .array(reads.map { .string($0) }))]))
                text = JSONWriter.string(.object(o)) + "\n"
            } else {
                text += "where: \(filter.text)\n"
                text += "  records it drops are counted as filtered, not mapped; it reads \(reads.joined(separator: ", "))"
                text += " (each value captured as the record streams past, so the mapping skips nothing inside yajl)\n"
            }
        }
        if let explode = loaded.spec.explode {
            let delimiter = loaded.document["delimiter"]?.stringValue ?? "."
            let path = explode.path.joined(separator: delimiter.isEmpty ? "." : delimiter)
            if json {
                var o = (try? JSONParser.parse(text))?.objectValue ?? JSONObject()
                o["explode"] = .object(JSONObject([("path", .string(path)), ("empty", .string(explode.empty.rawValue))]))
                text = JSONWriter.string(.object(o)) + "\n"
            } else {
                text += "explode: \(path)\n"
                text += "  each mapped record is written once per element of this array of its output, the element in its place;"
                text += explode.empty == .drop ? " an empty array, null or none: no record (counted)\n" : " an empty array or null: once, with null\n"
            }
        }
        guard case .ok = FileOutput(fd: 1, name: "<stdout>").writeAll(Array(text.utf8)) else {
            throw ExitCode(ExitStatus.ioError.rawValue)
        }
    }
}

extension ParsableCommand {
    /// Runs `body`; a usage error it finds (a flag the spec refuses, an output that is also an input) is reported
    /// as one found while parsing is — `Error: …`, this command's usage, where to find its help, status 64 — not
    /// with the tool's bare `streammap <subcommand>` line, which is what an error thrown from `run` would get.
    func reportingUsageErrors(_ body: () throws -> Void) throws {
        do {
            try body()
        } catch let error as ValidationError {
            let usage = StreamMapCommand.usageString(for: Self.self).split(separator: "\n").joined(separator: "\n       ")
            let name = Self.configuration.commandName.map { "streammap \($0)" } ?? "streammap"
            let text = "Error: \(error.message)\nUsage: \(usage)\n  See '\(name) --help' for more information.\n"
            _ = FileOutput(fd: 2, name: "<stderr>").writeAll(Array(text.utf8))
            throw ExitCode(ExitStatus.usage.rawValue)
        }
    }
}
