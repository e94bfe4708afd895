#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import ArgumentParser
import StreamMap

/// The spec a command works with: the spec file amended by the flags, compiled.
struct LoadedSpec {
    var document: JSONValue
    var spec: Spec
    /// Name in messages: the spec file, `<flags>`, or `FILE with flags`.
    var name: String
    /// The mapper to run (the reverse one with `--reverse`).
    var mapper: Mapper
    /// `mapper` is the spec's reverse.
    var isReversed = false
    /// The spec's `where` (with `--where`, the flag's): which input records are mapped.
    var filter: RecordFilter? { spec.filter }

    /// Makes mappers equal to `mapper` that share no storage with it or with one another: each call compiles the
    /// spec again from its text. Each `--jobs` worker maps with its own, because a mapper's parts are
    /// reference-counted and a count written from two cores makes its cache line bounce between them (a few percent
    /// of `--jobs 2`'s time on the tweet mapping). Falls back to `mapper` itself should the text not compile again.
    /// Each comes with its own copy of the filter.
    func independentMappers() -> @Sendable () -> (mapper: Mapper, filter: RecordFilter?) {
        let text = JSONWriter.bytes(document)
        let (reversed, shared, sharedFilter, name) = (isReversed, mapper, filter, name)
        return {
            guard let spec = try? Spec(json: text, file: name) else { return (shared, sharedFilter) }
            return (reversed ? ((try? spec.reversed()) ?? shared) : spec.mapper, spec.filter)
        }
    }
}

extension SpecOptions {
    /// Reads, amends and compiles the spec. An invalid spec is reported on standard error and ends the command
    /// with status 2; flags that cannot amend the spec are a usage error (64). Nothing is read from the inputs.
    func load(file: String? = nil, console: Console) throws -> LoadedSpec {
        let path = file ?? spec
        var base: Spec?
        if let path {
            guard let bytes = readWholeFile(path) else {
                console.error("\(path): cannot read the spec: \(Console.describe(errno: errno))")
                throw ExitCode(ExitStatus.invalidSpec.rawValue)
            }
            base = try compile { () throws(SpecError) in try Spec(json: bytes, file: path) }
        }
        var loaded: Spec
        var name = path ?? "<flags>"
        if let expression = amendment.filter {
            // Checked here, against the spec's delimiter, so that a mistake is a usage error with a caret.
            let delimiter = base?.document.objectValue?["delimiter"]?.stringValue ?? "."
            do {
                _ = try RecordFilter(expression, delimiter: delimiter.isEmpty ? "." : delimiter)
            } catch {
                throw ValidationError((["--where: \(error.description)"] + error.caretLines().map { "  " + $0 }).joined(separator: "\n"))
            }
        }
        if !amendment.computed.isEmpty {
            let delimiter = base?.document.objectValue?["delimiter"]?.stringValue ?? "."
            for flag in amendment.computed {
                do {
                    _ = try ValueExpression(SpecAmendment.split(flag).1 ?? "", delimiter: delimiter.isEmpty ? "." : delimiter)
                } catch {
                    throw ValidationError((["--set \(flag): \(error.description)"] + error.caretLines().map { "  " + $0 }).joined(separator: "\n"))
                }
            }
        }
        if hasMappingFlags {
            let document: JSONValue
            do {
                document = try amendment.apply(to: base?.document)
            } catch {
                throw ValidationError(error.message)
            }
            if path != nil { name += " with flags" }
            let display = name
            loaded = try compile { () throws(SpecError) in try Spec(document: document, file: display) }
        } else if let base {
            loaded = base
        } else {
            // Neither a spec nor flags: every record is copied (validated, written compactly).
            name = "<identity>"
            loaded = try compile { () throws(SpecError) in try Spec(document: ["mapper": "identity"], file: "<identity>") }
        }
        var mapper = loaded.mapper
        if reverse {
            do {
                mapper = try loaded.reversed()
            } catch {
                console.error("\(name): cannot reverse the mapping: \(error)")
                throw ExitCode(ExitStatus.invalidSpec.rawValue)
            }
        }
        return LoadedSpec(document: loaded.document, spec: loaded, name: name, mapper: mapper, isReversed: reverse)

        func compile(_ body: () throws(SpecError) -> Spec) throws -> Spec {
            do {
                return try body()
            } catch {
                for line in error.description.split(separator: "\n", omittingEmptySubsequences: false) { console.error(String(line)) }
                throw ExitCode(ExitStatus.invalidSpec.rawValue)
            }
        }
    }
}

/// The whole file, or nil (errno set).
func readWholeFile(_ path: String) -> [UInt8]? {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var st = stat()
    if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
        errno = EISDIR
        return nil
    }
    var out: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 1 << 16)
    while true {
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if n < 0 {
            if errno == EINTR { continue }
            return nil
        }
        if n == 0 { return out }
        out.append(contentsOf: buffer[..<n])
    }
}
