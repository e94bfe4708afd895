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
            'streammap check SPEC' validates a spec; 'streammap explain SPEC' shows how it maps and streams.
            """,
        version: "0.2.0",
        subcommands: [MapCommand.self, CheckCommand.self, ExplainCommand.self]
    )

    static let subcommandNames: Set<String> = ["map", "check", "explain", "help"]

    /// `streammap ARGS` runs `streammap map ARGS` unless ARGS start with a subcommand or a request ArgumentParser
    /// answers for the whole tool (completion scripts, the help dump used by `generate-manual`). So
    /// `streammap --help` shows the mapping options, and a file named `check` is read with `streammap ./check`.
    static func main() {
        var arguments = Array(CommandLine.arguments.dropFirst())
        if let first = arguments.first,
           subcommandNames.contains(first) || first.hasPrefix("--generate-completion-script") || first.hasPrefix("---")
            || first == "--experimental-dump-help" || first == "--version"
        {
            // As given.
        } else {
            arguments.insert("map", at: 0)
        }
        main(arguments)
    }
}
