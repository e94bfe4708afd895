#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import StreamMap

/// `streammap`: the command-line filter. `map` (the default subcommand) does the work; `check` and `explain`
/// look at a spec without reading input.
@main
struct StreamMapCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "streammap",
        abstract: "Reshape JSON records at stream speed.",
        discussion: """
            'streammap [OPTIONS] [FILE...]' maps records (see 'streammap map --help'); \
            'streammap check SPEC' validates a spec; 'streammap explain SPEC' shows how it maps and streams; \
            'streammap infer FILE' prints a spec inferred from sample records.
            """,
        version: "0.2.0",
        subcommands: [MapCommand.self, CheckCommand.self, ExplainCommand.self, InferCommand.self]
    )

    static let subcommandNames: Set<String> = ["map", "check", "explain", "infer", "help"]

    /// `streammap ARGS` runs `streammap map ARGS` unless ARGS start with a subcommand or a request ArgumentParser
    /// answers for the whole tool (completion scripts, the help dump used by `generate-manual`). So
    /// `streammap --help` shows the mapping options, and a file named `check` is read with `streammap ./check`.
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        var implied = false
        if let first = arguments.first,
           subcommandNames.contains(first) || first.hasPrefix("--generate-completion-script") || first.hasPrefix("---")
            || first == "--experimental-dump-help" || first == "--version"
        {
            // As given.
        } else {
            implied = true
        }
        do {
            // `map` implied: parsed as a command of its own first, which spares ArgumentParser building the whole
            // tool's tree (most of the start-up's 25 M instructions). Anything that does not parse that way —
            // help, an error — is parsed again as `streammap map ARGS`, which answers exactly as before.
            var command: ParsableCommand
            if implied, let mapping = try? MapCommand.parseAsRoot(arguments) {
                command = mapping
            } else {
                if implied { arguments.insert("map", at: 0) }
                command = try parseAsRoot(arguments)
            }
            try command.run()
        } catch {
            // What `main(arguments)` would do, but a "did you mean" that is no typo's is left out.
            let status = exitCode(for: error)
            let message = UnknownOption.withoutFarSuggestion(fullMessage(for: error))
            if !message.isEmpty {
                _ = FileOutput(fd: status.isSuccess ? 1 : 2, name: "").writeAll(Array((message + "\n").utf8))
            }
            Glibc.exit(status.rawValue)
        }
    }
}

/// ArgumentParser suggests the closest option for any unknown one (`--bogus`: "Did you mean '--jobs'?"). Its
/// suggestion stays only when it passes the rule the spec's typos get (`Suggest`: at most 2 edits or a third of
/// the word).
enum UnknownOption {
    static func withoutFarSuggestion(_ message: String) -> String {
        guard let start = message.firstRange(of: "Unknown option '"),
              let nameEnd = message[start.upperBound...].firstRange(of: "'. Did you mean '"),
              let suggestionEnd = message[nameEnd.upperBound...].firstRange(of: "'?")
        else { return message }
        let name = String(message[start.upperBound..<nameEnd.lowerBound])
        let suggestion = String(message[nameEnd.upperBound..<suggestionEnd.lowerBound])
        func bare(_ option: String) -> String { String(option.drop { $0 == "-" }) }
        if Suggest.closest(to: bare(name), in: [bare(suggestion)]) != nil { return message }
        var trimmed = message
        trimmed.replaceSubrange(nameEnd.lowerBound..<suggestionEnd.upperBound, with: "'.")
        return trimmed
    }
}
