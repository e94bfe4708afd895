#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser

/// `--jobs N|auto`: how many threads map records. 0 and 1 both mean one (the one-thread pipeline); `auto` means
/// the number of online CPUs.
enum JobCount: ExpressibleByArgument, Equatable {
    case count(Int)
    case auto

    /// More would only cost memory (each job has its engine and two batches in the window).
    static let maximum = 256

    init?(argument: String) {
        if argument == "auto" {
            self = .auto
        } else if let n = Int(argument), n >= 0, n <= Self.maximum {
            self = .count(n)
        } else {
            return nil
        }
    }

    /// `--jobs`'s value, or why it is not one.
    static func parse(_ argument: String) throws -> JobCount {
        guard let count = JobCount(argument: argument) else {
            throw ValidationError("expected a number of threads from 0 to \(maximum), or 'auto'")
        }
        return count
    }

    var defaultValueDescription: String {
        switch self {
        case .count(let n): return String(n)
        case .auto: return "auto"
        }
    }

    static var defaultCompletionKind: CompletionKind { .list(["auto", "1", "2", "4"]) }

    /// The number of mapping threads: at least 1.
    var resolved: Int {
        switch self {
        case .count(let n): return max(1, n)
        case .auto: return min(Self.maximum, max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        }
    }
}
