/// Exit statuses (README.md, "Exit status"; `streammap --help`). When several apply, the first in this list wins:
/// interrupted, I/O error, closed output pipe, stopped early, rejected.
package enum ExitStatus: Int32 {
    /// Every record was mapped.
    case success = 0
    /// Some records were rejected (sticky: a later good record does not clear it); all input was read.
    case recordsRejected = 1
    /// The spec (file or flags) is invalid; nothing was read.
    case invalidSpec = 2
    /// An input could not be read or the output could not be written.
    case ioError = 3
    /// Stopped early at a rejected record: `--on-error fail`, or more than `--max-rejects` rejected.
    case stopped = 4
    /// Command-line usage error (ArgumentParser's `EX_USAGE`).
    case usage = 64
    /// The reader of standard output went away (`streammap … | head -1`): the status a process killed by SIGPIPE
    /// reports (128 + 13), but the tool ends quietly on its own, clearing its progress line.
    case closedPipe = 141

    /// 128 + the signal number: 130 for SIGINT, 143 for SIGTERM.
    package static func interrupted(by signal: Int32) -> Int32 { 128 + signal }

    package static let helpText = """
        EXIT STATUS
          0    every record was mapped
          1    some records were rejected (sticky); all input was read
          2    the spec is invalid (reported before any input is read)
          3    input or output error (missing/unreadable file, directory, write)
          4    stopped at a rejected record (--on-error fail, --max-rejects)
          64   command-line usage error
          130  interrupted by SIGINT (143: SIGTERM), at a record boundary
          141  standard output was closed by its reader ('| head -1')
        """
}
