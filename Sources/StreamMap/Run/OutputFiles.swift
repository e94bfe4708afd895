#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a file name or an inherited descriptor leads, to tell before anything is read or truncated when two
/// outputs — or an output and an input — are one file: by device and inode when the file exists, by its absolute
/// path (links followed) when it does not yet. Only regular files have one: a terminal, a pipe or `/dev/null`
/// written by two outputs loses nothing.
package enum FileIdentity: Equatable {
    case inode(device: UInt64, inode: UInt64)
    /// A file that `-o`/`--rejects` would create: its directory's real path and its name.
    case toBeCreated(String)

    /// The identity of what `path` names; nil for anything but a regular file, existing or to be created.
    package static func of(path: String) -> FileIdentity? {
        var st = stat()
        if stat(path, &st) == 0 { return regular(st) }
        guard errno == ENOENT else { return nil }
        // A file to be created, perhaps through a link that points at it: follow the links, then resolve the
        // directory (`same.txt`, `./same.txt`, `dir/../same.txt` and a link to it are one name).
        var name = path
        for _ in 0..<40 {
            var lst = stat()
            guard lstat(name, &lst) == 0, (lst.st_mode & S_IFMT) == S_IFLNK else { break }
            var target = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
            let n = readlink(name, &target, target.count - 1)
            guard n > 0 else { return nil }
            let link = String(decoding: target[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
            name = link.hasPrefix("/") ? link : directory(of: name) + "/" + link
        }
        guard let real = realpath(directory(of: name), nil) else { return nil }
        defer { free(real) }
        return .toBeCreated(String(cString: real) + "/" + base(of: name))
    }

    /// The identity of the file an inherited descriptor (standard output, standard error) writes to, if regular.
    package static func of(descriptor fd: Int32) -> FileIdentity? {
        var st = stat()
        return fstat(fd, &st) == 0 ? regular(st) : nil
    }

    private static func regular(_ st: stat) -> FileIdentity? {
        (st.st_mode & S_IFMT) == S_IFREG ? .inode(device: UInt64(st.st_dev), inode: UInt64(st.st_ino)) : nil
    }

    private static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        return slash == path.startIndex ? "/" : String(path[..<slash])
    }

    private static func base(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }
}

/// One of the map command's outputs: mapped records (`-o FILE` or standard output), rejects (`--rejects FILE`) or
/// the messages on standard error.
package struct OutputDestination {
    /// How messages name it: `-o out.ndjson`, `--rejects r.ndjson`, `standard output`, `standard error`.
    package let label: String
    /// The inherited descriptor it writes through (1 or 2), or nil for a file that the command opens itself.
    package let descriptor: Int32?
    package let identity: FileIdentity?

    /// `flag path`: `/dev/stdout` and `/dev/stderr` are written through the inherited descriptor (never reopened,
    /// so never truncated: records and rejects sent to one terminal, pipe or file interleave whole lines).
    package init(flag: String, path: String) {
        label = "\(flag) \(path)"
        descriptor = FileOutput.inheritedDescriptor(path)
        identity = descriptor.map(FileIdentity.of(descriptor:)) ?? FileIdentity.of(path: path)
    }

    package init(descriptor fd: Int32) {
        label = fd == 1 ? "standard output" : "standard error"
        descriptor = fd
        identity = FileIdentity.of(descriptor: fd)
    }

    /// Why two outputs cannot be written together, or nil: both are one regular file opened twice (each open
    /// would truncate it and write from its own offset, so one would overwrite the other). Two outputs through
    /// inherited descriptors are the caller's arrangement (`> f 2>&1` shares one offset) and are left alone.
    package static func conflict(_ a: OutputDestination, _ b: OutputDestination) -> String? {
        guard a.descriptor == nil || b.descriptor == nil, let identity = a.identity, identity == b.identity else { return nil }
        return "\(a.label) and \(b.label) are the same file: one would overwrite the other (use two files, or send both to /dev/stdout or /dev/stderr, where whole lines interleave)"
    }
}

extension FileOutput {
    /// `/dev/stdout` → 1, `/dev/stderr` → 2 (also as `/dev/fd/N`); nil for any other path.
    package static func inheritedDescriptor(_ path: String) -> Int32? {
        switch path {
        case "/dev/stdout", "/dev/fd/1": return 1
        case "/dev/stderr", "/dev/fd/2": return 2
        default: return nil
        }
    }

    /// `create`, except that `/dev/stdout` and `/dev/stderr` are the inherited descriptors, written as they are.
    /// Opens (creates or truncates) a file for writing.
    package static func create(_ path: String) -> Result<FileOutput, Errno> {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o666)
        return fd < 0 ? .failure(Errno(code: errno)) : .success(FileOutput(fd: fd, name: path))
    }

    package static func createOrInherit(_ path: String) -> Result<FileOutput, Errno> {
        if let fd = inheritedDescriptor(path) { return .success(FileOutput(fd: fd, name: path)) }
        return create(path)
    }
}
