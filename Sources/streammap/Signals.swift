#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The first SIGINT or SIGTERM received (0: none). Written by the signal handler (a lock-free atomic store is
/// async-signal-safe), read by the pipeline between chunks.
private let receivedSignal = Atomic<Int32>(0)

/// Signal policy of the map command:
/// - SIGINT / SIGTERM: remembered; the pipeline stops at the next record boundary, writes out the whole records it
///   has, reports the counts and exits with 128 + the signal number. The handler is reset after one signal, so a
///   second Ctrl-C kills the process at once (for a reader that never drains the output).
/// - SIGPIPE: ignored, so that a closed output pipe is an EPIPE write error, handled quietly (exit 141) after the
///   progress line is cleared, instead of a kill in the middle of a redraw.
enum Signals {
    static func install() {
        _ = receivedSignal.load(ordering: .relaxed)  // initialize the global before a handler can touch it
        signal(SIGPIPE, SIG_IGN)
        var action = sigaction()
        #if canImport(Glibc)
        action.__sigaction_handler.sa_handler = { signo in receivedSignal.store(signo, ordering: .relaxed) }
        #else
        action.__sigaction_u.__sa_handler = { signo in receivedSignal.store(signo, ordering: .relaxed) }
        #endif
        // No SA_RESTART: a read blocked on a quiet pipe returns EINTR, so the signal is seen at once.
        action.sa_flags = Int32(bitPattern: UInt32(SA_RESETHAND))
        sigemptyset(&action.sa_mask)
        sigaction(SIGINT, &action, nil)
        sigaction(SIGTERM, &action, nil)
        // A parent may hand its blocked-signal mask down (test runners and some thread pools block them): a blocked
        // SIGINT would never stop the run.
        var unblock = sigset_t()
        sigemptyset(&unblock)
        sigaddset(&unblock, SIGINT)
        sigaddset(&unblock, SIGTERM)
        sigprocmask(SIG_UNBLOCK, &unblock, nil)
    }

    /// The signal received, or 0.
    static var received: Int32 { receivedSignal.load(ordering: .relaxed) }
}
