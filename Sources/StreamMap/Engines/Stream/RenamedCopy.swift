internal import CJSONScan
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `unmapped: keep` with plain renames, as a verbatim copy: a record whose mapping keeps every member and renames
/// a few top-level ones (`{"fields":{"id_str":"idStr"},"unmapped":"keep"}`) is copied by the C kernels
/// (`VerbatimCopier`: every byte checked, the canonical text written, duplicate keys refused), and its members
/// are then rearranged as the tree writes them: the renamed fields first, in the spec's order, then every other
/// member in input order — runs of kept members copied whole. No yajl event, sink or per-member buffer.
///
/// It takes only what it can write exactly as the tree does, and leaves the rest to the events: a mapping whose
/// fields each read one top-level key and write another with the value unchanged (`identity`, `required`, or
/// identity under `missing`/`null` policies: `"src": "dst"` in a spec, `--field src=dst`), all destinations
/// different, no key style or value mapper on the kept members; and records that are objects, whose copy succeeds
/// (valid, no duplicate key), and in which no kept key has a destination's name (the tree drops it with a
/// warning). An absent or null value takes its field's policy: left out, null, a default — or an error, which
/// rejects the record with the errors the tree's own mapping of the record's outline reports (`rejection`).
final class RenamedCopy {
    /// What the field's mapper makes of an absent or a null value.
    private enum Case {
        /// The field is left out.
        case omit
        /// `null` is written.
        case null
        /// This value is written (a default: its canonical text).
        case value([UInt8])
        /// A fatal error: the record is rejected, with the errors the tree reports.
        case fail

        init(_ action: FieldPolicy.Action, passed: Case) {
            switch action {
            case .passToMapper: self = passed
            case .omit: self = .omit
            case .keepNull: self = .null
            case .useDefault(let value): self = .value(JSONWriter.bytes(value))
            case .fail: self = .fail
            }
        }
    }

    /// What the copy makes of a record.
    enum Outcome {
        /// The mapped record was written.
        case written
        /// The record is rejected with these errors (nothing was written).
        case rejected([MapError])
        /// Nothing was written: the record goes to the events.
        case events
    }

    private struct Rename {
        /// The source key's canonical text (what the copy writes between its quotes).
        let source: [UInt8]
        /// `"destination":`, as the tree writes it.
        let destination: [UInt8]
        let absent: Case
        let null: Case
    }

    private let renames: [Rename]
    /// The destinations' canonical texts: a kept key with one of these names is not a copy.
    private let destinations: [[UInt8]]
    /// Per record: each top-level member's key start (its quote), value start and value end in the copy; and the
    /// member each rename found (-1: none).
    @exclusivity(unchecked) private var members: [(key: Int, value: Int, end: Int)] = []
    /// Per rename: its member (-1: none, or left out), and what is written instead of its value (nil: the value).
    @exclusivity(unchecked) private var found: [Int] = []
    @exclusivity(unchecked) private var replacement: [[UInt8]?] = []
    @exclusivity(unchecked) private var consumed: [Bool] = []
    /// Records written by this copy so far (the tests check that the engine takes this path).
    @exclusivity(unchecked) private(set) var copies = 0

    #if STREAMMAP_MUTATIONS
    /// The mutation tests' broken rule (`StreamMutation.renamedCopyKeepsShadowedKeys`).
    private let keepsShadowedKeys: Bool
    #else
    private var keepsShadowedKeys: Bool { false }
    #endif
    /// For a record rejected: the tree's mapping of its outline (`rejection`).
    private let mapper: Mapper
    private static let null = Array("null".utf8)

    /// The most fields a mapping copied so may have.
    static let fieldLimit = 16

    /// The plan for `mapper`, or nil when it is not such a mapping.
    init?(_ mapper: Mapper, keepsShadowedKeys: Bool = false) {
        #if STREAMMAP_MUTATIONS
        self.keepsShadowedKeys = keepsShadowedKeys
        #endif
        // (Members are matched to the fields by a scan per field: a few fields keep that linear in the record; a
        // spec of more goes to the events, whose key tables are.)
        guard case .object(let mapping) = mapper.kind, case .keep(nil, nil, _) = mapping.unmapped,
              !mapping.fields.isEmpty, mapping.fields.count <= Self.fieldLimit else { return nil }
        var renames: [Rename] = []
        for field in mapping.fields {
            guard field.sources.count == 1, field.destinations.count == 1,
                  field.sources[0].steps.count == 1, field.destinations[0].steps.count == 1 else { return nil }
            // Identity (absent: left out; null: null), `required` (either is an error), or identity under policies.
            let absent: Case, null: Case
            switch field.mapper.kind {
            case .identity: (absent, null) = (.omit, .null)
            case .notNull(let inner):
                guard case .identity = inner.kind else { return nil }
                (absent, null) = (.fail, .fail)
            case .policy(let inner, let policy):
                guard case .identity = inner.kind else { return nil }
                (absent, null) = (Case(policy.missing, passed: .omit), Case(policy.null, passed: .null))
            default: return nil
            }
            let source = Self.keyText(field.sources[0].steps[0])
            let destination = Self.keyText(field.destinations[0].steps[0])
            guard !renames.contains(where: { Array($0.destination.dropFirst().dropLast(2)) == destination }) else { return nil }
            renames.append(Rename(source: source, destination: [0x22] + destination + [0x22, 0x3A], absent: absent, null: null))
        }
        self.renames = renames
        destinations = renames.map { Array($0.destination.dropFirst().dropLast(2)) }
        found = Array(repeating: -1, count: renames.count)
        replacement = Array(repeating: nil, count: renames.count)
        self.mapper = mapper
    }

    /// The canonical text of a key, without its quotes.
    private static func keyText(_ key: String) -> [UInt8] { Array(JSONWriter.bytes(.string(key)).dropFirst().dropLast()) }

    /// Writes the mapped record from `copy`, the canonical text of the record (`copier`'s last copy); or says that
    /// the record is rejected, and why, as the tree would say it; or writes nothing and leaves the record to the
    /// events when it is not one this copy maps as the tree does.
    func write(_ copy: UnsafeRawBufferPointer, copier: VerbatimCopier, into writer: inout JSONWriter) -> Outcome {
        let copier = copier.kernel
        guard let text = copy.baseAddress, copy.count >= 2, copy[0] == UInt8(ascii: "{") else { return .events }
        // The members, from the keys the copy noted.
        members.removeAll(keepingCapacity: true)
        var offset = 0, length = 0
        let count = cjsonscan_copier_top_keys(copier, 0, &offset, &length)
        for i in 0..<count {
            _ = cjsonscan_copier_top_keys(copier, i, &offset, &length)
            if i > 0 { members[i - 1].end = offset - 2 }  // (before `,"`)
            members.append((offset - 1, offset + length + 2, copy.count - 1))
        }
        guard members.count == count else { return .events }
        // The renamed fields' members, and the kept members' names.
        var failed = false
        if consumed.count < count { consumed = Array(repeating: false, count: count) }
        for i in 0..<count { consumed[i] = false }
        for (r, rename) in renames.enumerated() {
            found[r] = -1
            for (i, m) in members.enumerated() where Self.key(m, in: text, is: rename.source) {
                found[r] = i
                consumed[i] = true
                break
            }
            replacement[r] = nil
            let what: Case
            if found[r] < 0 {
                what = rename.absent
            } else if members[found[r]].end - members[found[r]].value == 4 && Self.equal(text + members[found[r]].value, "null") {
                what = rename.null
            } else {
                continue
            }
            switch what {
            case .fail: failed = true
            case .omit: found[r] = -1
            case .null: replacement[r] = Self.null
            case .value(let v): replacement[r] = v
            }
        }
        if failed { return rejection(copy) }
        for (i, m) in members.enumerated() where !consumed[i] && !keepsShadowedKeys {
            for d in destinations where Self.key(m, in: text, is: d) { return .events }
        }
        // `{`, the fields in the spec's order, then the kept members in input order (runs of them at once), `}`.
        writer.writeRaw(UInt8(ascii: "{"))
        var written = false
        for (r, rename) in renames.enumerated() where found[r] >= 0 || replacement[r] != nil {
            if written { writer.writeRaw(UInt8(ascii: ",")) }
            rename.destination.withUnsafeBytes { writer.writeRaw($0) }
            if let value = replacement[r] {
                value.withUnsafeBytes { writer.writeRaw($0) }
            } else {
                let m = members[found[r]]
                writer.writeRaw(UnsafeRawBufferPointer(start: text + m.value, count: m.end - m.value))
            }
            written = true
        }
        var i = 0
        while i < count {
            guard !consumed[i] else { i += 1; continue }
            var j = i
            while j + 1 < count && !consumed[j + 1] { j += 1 }
            if written { writer.writeRaw(UInt8(ascii: ",")) }
            writer.writeRaw(UnsafeRawBufferPointer(start: text + members[i].key, count: members[j].end - members[i].key))
            written = true
            i = j + 1
        }
        writer.writeRaw(UInt8(ascii: "}"))
        copies &+= 1
        return .written
    }

    /// A record that a field's absent or null value rejects: the tree's errors, from the tree's own mapping of the
    /// record's outline — its top-level keys in input order, null where the record has null, `true` for every
    /// other value. The fields read a value unchanged and the kept members are not mapped, so no error depends on
    /// a value beyond its being absent or null: the outline's errors are the record's (the missing or null fields',
    /// in field order, then a kept key's that a destination shadows). `.events` if that is somehow not fatal.
    private func rejection(_ copy: UnsafeRawBufferPointer) -> Outcome {
        var outline: [(String, JSONValue)] = []
        outline.reserveCapacity(members.count)
        for m in members {
            let key = UnsafeRawBufferPointer(rebasing: copy[m.key..<(m.value - 1)])  // `"key"` (canonical text)
            guard case .string(let name)? = try? JSONParser.parse(key) else { return .events }
            let isNull = m.end - m.value == 4 && Self.equal(copy.baseAddress! + m.value, "null")
            outline.append((name, isNull ? .null : .bool(true)))
        }
        let result = mapper.map(.object(JSONObject(outline)))
        guard result.isFatal else { return .events }
        copies &+= 1
        return .rejected(result.errors)
    }

    /// Whether member `m`'s key in `text` is `name` (canonical texts, so equal bytes are equal keys).
    @inline(__always)
    private static func key(_ m: (key: Int, value: Int, end: Int), in text: UnsafeRawPointer, is name: [UInt8]) -> Bool {
        m.value - m.key - 3 == name.count
            && (name.isEmpty || name.withUnsafeBytes { memcmp(text + m.key + 1, $0.baseAddress!, $0.count) == 0 })
    }

    private static func equal(_ p: UnsafeRawPointer, _ word: StaticString) -> Bool {
        memcmp(p, word.utf8Start, word.utf8CodeUnitCount) == 0
    }
}
