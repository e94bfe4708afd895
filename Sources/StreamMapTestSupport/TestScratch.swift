#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where tests write their files: one directory per test process, `streammap-tests-PID` in the temporary directory,
/// removed when the process exits. A directory left by a process that died without exiting (a crash, a kill) is
/// removed by the next test process that asks for scratch space. So a run of the suite leaves nothing behind.
public enum TestScratch {
    /// This process's directory, created (and its removal at exit registered) on first use.
    public static let root: String = {
        let temporary = FileManager.default.temporaryDirectory.path
        removeAbandoned(in: temporary)
        let root = temporary + "/streammap-tests-\(getpid())"
        try? FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        atexit { try? FileManager.default.removeItem(atPath: TestScratch.root) }
        return root
    }()

    /// A fresh, empty directory inside `root`.
    public static func directory() throws -> URL {
        let dir = URL(fileURLWithPath: root).appendingPathComponent(UUID().uuidString)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir
    }

    /// A fresh file inside `root` holding `bytes`; its path.
    public static func file(_ bytes: [UInt8], suffix: String = "") throws -> String {
        let path = root + "/\(UUID().uuidString)\(suffix)"
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// The bytes of the file at `path`.
    public static func read(_ path: String) throws -> [UInt8] {
        Array(try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    /// Removes the `streammap-tests-PID` directories of processes that no longer run.
    static func removeAbandoned(in temporary: String) {
        let prefix = "streammap-tests-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: temporary)) ?? [] where name.hasPrefix(prefix) {
            guard let pid = pid_t(name.dropFirst(prefix.count)), pid != getpid(),
                  kill(pid, 0) != 0, errno == ESRCH else { continue }
            try? FileManager.default.removeItem(atPath: temporary + "/" + name)
        }
    }
}
