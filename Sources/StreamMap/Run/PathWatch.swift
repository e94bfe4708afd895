/// Whether the records have the paths the command line's flags name. A mistyped path maps nothing and says
/// nothing — a `--field` with no value is left out of every record, a `--where` finds it absent in every record,
/// a `--type` on it checks nothing — so a path that none of the records looked at has is reported at the end of
/// the run, with the flag that names it and, when a record has a path one key away that comes close, that path
/// (`--field usr.name: none of the 2 records has usr.name (did you mean "user.name"?)`).
///
/// The first `limit` records that are JSON are looked at (each parsed into a tree; at most `byteLimit` bytes of
/// them in all, records over `longestRecord` passed by), and no more once every path has been seen — on the first
/// record when nothing is wrong — so the cost is bounded whatever the input; the suggestions share one budget of
/// `Suggest`'s work. With `--jobs` the workers' engines share one watch (each looks at the records it maps).
package final class PathWatch: @unchecked Sendable {
    // @unchecked: the state below is read and written only with `monitor` held; the rest is immutable.

    /// A path a flag reads from each record.
    package struct Watched: Sendable, Equatable {
        /// The flag as given (`--field usr.name=name`), or `--where` for a filter's paths.
        package var flag: String
        package var path: KeyPath
        package init(flag: String, path: KeyPath) {
            self.flag = flag
            self.path = path
        }
    }

    package let watched: [Watched]
    /// Records looked at, at most, and their bytes.
    package let limit: Int
    package let byteLimit: Int
    /// How paths are written in the messages (the spec's `delimiter`).
    private let delimiter: String
    /// Records longer than this are not looked at (a tree of a long record costs its size again in memory).
    static let longestRecord = 1 << 20

    private let monitor = Monitor()
    private var seen: [Bool]
    private var unseen: Int
    private var checked = 0
    private var checkedBytes = 0
    /// What the suggestions may still spend (`Suggest.closest(to:in:budget:)`), for all paths and records.
    private var suggestionBudget: Int
    /// Per path not seen, a path that the first record with a close key has (see `suggestion(for:in:)`).
    private var suggestions: [String?]

    /// The watch of the paths `flags` read, split and written with the delimiter of the spec they amend
    /// (`document`, after the amendment); nil when they read none.
    package convenience init?(flags: SpecAmendment, spec document: JSONValue) {
        let given = document.objectValue?["delimiter"]?.stringValue ?? "."
        let delimiter = given.isEmpty ? "." : given
        let watched = flags.pathsRead(delimiter: delimiter, computedKeys: flags.computedKeys(in: document))
        guard !watched.isEmpty else { return nil }
        self.init(watched, delimiter: delimiter)
    }

    package init(_ watched: [Watched], delimiter: String = ".", limit: Int = 1000, byteLimit: Int = 4 << 20,
                 suggestionBudget: Int = 4 * Suggest.defaultBudget) {
        self.watched = watched
        self.suggestionBudget = suggestionBudget
        self.delimiter = delimiter
        self.limit = limit
        self.byteLimit = byteLimit
        seen = Array(repeating: false, count: watched.count)
        unseen = watched.count
        suggestions = Array(repeating: nil, count: watched.count)
    }

    /// Looks for the paths not seen yet in `record` (one JSON value's text). False once nothing is left to look
    /// for: every path seen, or `limit` records or `byteLimit` bytes looked at. A record that is not JSON is not
    /// counted as a record, but its bytes are.
    package func look(at record: UnsafeRawBufferPointer) -> Bool {
        // (Asked first, so that an engine whose first record comes after the paths were all seen parses nothing.)
        guard monitor.withLock({ isLooking }) else { return false }
        guard record.count <= Self.longestRecord else { return true }
        guard let value = try? JSONParser.parse(record) else {
            // (Not counted as a record, but its bytes were parsed: an input of broken lines stops the look too.)
            return monitor.withLock {
                checkedBytes += record.count
                return isLooking
            }
        }
        return monitor.withLock {
            guard isLooking else { return false }
            checked += 1
            checkedBytes += record.count
            for i in watched.indices where !seen[i] {
                if watched[i].path.read(from: value) != nil {
                    seen[i] = true
                    unseen -= 1
                } else if suggestions[i] == nil {
                    suggestions[i] = suggestion(for: watched[i].path, in: value)
                }
            }
            return isLooking
        }
    }

    private var isLooking: Bool { unseen > 0 && checked < limit && checkedBytes < byteLimit }

    /// Records looked at so far.
    package var recordsChecked: Int { monitor.withLock { checked } }

    /// The paths (as the flags write them) that none of the records looked at has; none when no record was.
    package var unseenPaths: [String] {
        monitor.withLock { checked > 0 ? watched.indices.filter { !seen[$0] }.map { written(watched[$0].path.steps) } : [] }
    }

    /// One line per path that none of the records looked at has (none when no record was looked at):
    /// `FLAG: none of the N records has PATH` (`the one record has no PATH`), `… of the first N records …` when a
    /// limit stopped the look, and ` (did you mean "P"?)` when a record had a close path.
    package var report: [String] {
        monitor.withLock {
            guard checked > 0 else { return [] }
            let limited = checked >= limit || checkedBytes >= byteLimit
            let subject = checked == 1
                ? (limited ? "the first record has no" : "the one record has no")
                : (limited ? "none of the first \(checked) records has" : "none of the \(checked) records has")
            return watched.indices.filter { !seen[$0] }.map { i in
                let hint = suggestions[i].map(Suggest.phrase) ?? ""
                return "\(watched[i].flag): \(subject) \(written(watched[i].path.steps))\(hint)"
            }
        }
    }

    /// The path with its first missing key replaced by the closest key of the object there (`Suggest`), when
    /// `value` has that path; nil otherwise.
    private func suggestion(for path: KeyPath, in value: JSONValue) -> String? {
        var current = value
        for (i, step) in path.steps.enumerated() {
            switch current {
            case .object(let object):
                if let next = object[step] {
                    current = next
                    continue
                }
                guard suggestionBudget > 0, let key = Suggest.closest(to: step, in: object.keys, budget: &suggestionBudget)
                else { return nil }
                var steps = path.steps
                steps[i] = key
                return KeyPath(steps: steps).read(from: value) == nil ? nil : written(steps)
            case .array(let array):
                guard let k = KeyPath.arrayIndex(step), k < array.count else { return nil }
                current = array[k]
            default:
                return nil
            }
        }
        return nil
    }

    private func written(_ steps: [String]) -> String { steps.joined(separator: delimiter) }
}

/// An engine that shows the records it maps whole to a `PathWatch` until the watch has seen enough, then only
/// maps. Records that come in pieces (longer than the pipeline holds whole) are not shown.
package struct PathWatchingEngine: RecordEngine {
    private var base: any RecordEngine
    private let watch: PathWatch
    private var looking = true

    package init(_ base: any RecordEngine, watch: PathWatch) {
        self.base = base
        self.watch = watch
    }

    package mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        if looking { looking = watch.look(at: record) }
        return base.map(record: record, into: &writer)
    }

    package mutating func beginRecord() { base.beginRecord() }
    package mutating func continueRecord(_ part: UnsafeRawBufferPointer) { base.continueRecord(part) }
    package mutating func endRecord(into writer: inout JSONWriter) -> RecordOutcome { base.endRecord(into: &writer) }
}

extension SpecAmendment {
    /// The paths the flags read from each record, each with the first flag that names it, in the order of the
    /// flags: `--field`, `--type` and `--column` sources, `--set`'s and `--where`'s paths (split on `delimiter`, as
    /// the spec's compiler splits them). Left out: `--require`'s (a record without the path is rejected, which says
    /// so), `--default`'s (the default is written where the path is absent: a mistyped path shows in the output),
    /// and a `--field`, `--type` or `--column` whose path is one of `computedKeys` (`computedKeys(in:)`): it names a
    /// computed field, a value the mapping makes, and reads nothing from the record.
    package func pathsRead(delimiter: String, computedKeys: Set<String> = []) -> [PathWatch.Watched] {
        var result: [PathWatch.Watched] = []
        func add(_ flag: String, _ path: KeyPath) {
            guard !path.steps.isEmpty, !result.contains(where: { $0.path.steps == path.steps }) else { return }
            result.append(PathWatch.Watched(flag: flag, path: path))
        }
        for (name, flags) in [("--field", fields), ("--type", types), ("--column", columns)] {
            for flag in flags where !computedKeys.contains(Self.split(flag).0) {
                add("\(name) \(flag)", KeyPath(Self.split(flag).0, delimiter: delimiter))
            }
        }
        for flag in computed {
            guard let expression = try? ValueExpression(Self.split(flag).1 ?? "", delimiter: delimiter) else { continue }
            for path in expression.paths { add("--set \(flag)", path) }
        }
        if let filter, let parsed = try? RecordFilter(filter, delimiter: delimiter) {
            for path in parsed.paths { add("--where", path) }
        }
        return result
    }

    /// The keys by which these flags name the computed fields of `document` (the spec they amended): each computed
    /// field's key (its destination: the object form's key, the array form's `"to"`), and the source of a `--field`
    /// that renamed one to its destination.
    package func computedKeys(in document: JSONValue) -> Set<String> {
        var keys = Set(FieldTable(document.objectValue?["fields"]).entries.lazy.filter { $0.field["expr"] != nil }.map(\.source))
        for flag in fields {
            if case let (source, destination?) = Self.split(flag), keys.contains(destination) { keys.insert(source) }
        }
        return keys
    }
}
