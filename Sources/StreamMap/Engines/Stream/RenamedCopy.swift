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

    /// A rename as plain values: its texts are ranges of `texts` — the source key (canonical, without quotes), the
    /// destination's `"key":`, and what stands in for an absent or a null value (`omit`, `fail`, or a range of
    /// text: `null` or the default). Records are read and written from these, so that no array is lent out for
    /// each record (lending the renames' arrays retained and released nine of them a record).
    private struct Plain {
        var source: Range<Int>
        var destination: Range<Int>
        var absent: PlainCase
        var null: PlainCase
        /// The destination key alone, within `"key":` (a kept key with that name is not a copy).
        var destinationKey: Range<Int> { (destination.lowerBound + 1)..<(destination.upperBound - 2) }
    }

    private enum PlainCase {
        case omit, fail
        case text(Range<Int>)
    }

    private let renames: UnsafeMutableBufferPointer<Plain>
    private let renameCount: Int
    private let texts: UnsafeMutableRawBufferPointer
    /// Per record: each top-level member's key start (its quote), value start and value end in the copy; and the
    /// member each rename found (-1: none).
    @exclusivity(unchecked) private var members: [(key: Int, value: Int, end: Int)] = []
    /// Per rename: its member (-1: none, or left out), and what is written instead of its value (a range of
    /// `texts`; `-1..<-1`: the value).
    @exclusivity(unchecked) private var found: [Int] = []
    @exclusivity(unchecked) private var replacement: [Range<Int>] = []
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
        var bytes: [UInt8] = []
        func add(_ b: [UInt8]) -> Range<Int> {
            bytes += b
            return (bytes.count - b.count)..<bytes.count
        }
        let null = add(Self.null)
        func plain(_ c: Case) -> PlainCase {
            switch c {
            case .omit: return .omit
            case .fail: return .fail
            case .null: return .text(null)
            case .value(let v): return .text(add(v))
            }
        }
        let plain = renames.map { r in
            Plain(source: add(r.source), destination: add(r.destination), absent: plain(r.absent), null: plain(r.null))
        }
        self.renames = .allocate(capacity: max(plain.count, 1))
        renameCount = plain.count
        _ = self.renames.initialize(from: plain)
        let texts = UnsafeMutableRawBufferPointer.allocate(byteCount: max(bytes.count, 1), alignment: 1)
        bytes.withUnsafeBytes { texts.copyMemory(from: $0) }
        self.texts = texts
        found = Array(repeating: -1, count: plain.count)
        replacement = Array(repeating: -1..<(-1), count: plain.count)
        self.mapper = mapper
    }

    deinit {
        renames.deallocate()
        texts.deallocate()
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
        let names = UnsafeRawPointer(texts.baseAddress!)
        for r in 0..<renameCount {
            let rename = renames[r]
            found[r] = -1
            for i in 0..<members.count
            where Self.key(members[i], in: text, is: names + rename.source.lowerBound, count: rename.source.count) {
                found[r] = i
                consumed[i] = true
                break
            }
            replacement[r] = -1..<(-1)
            let what: PlainCase
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
            case .text(let range): replacement[r] = range
            }
        }
        if failed { return rejection(copy) }
        for i in 0..<members.count where !consumed[i] && !keepsShadowedKeys {
            for r in 0..<renameCount
            where Self.key(members[i], in: text, is: names + renames[r].destinationKey.lowerBound, count: renames[r].destinationKey.count) {
                return .events
            }
        }
        // `{`, the fields in the spec's order, then the kept members in input order (runs of them at once), `}`.
        writer.writeRaw(UInt8(ascii: "{"))
        var written = false
        for r in 0..<renameCount where found[r] >= 0 || replacement[r].lowerBound >= 0 {
            if written { writer.writeRaw(UInt8(ascii: ",")) }
            writer.writeRaw(UnsafeRawBufferPointer(rebasing: texts[renames[r].destination]))
            if replacement[r].lowerBound >= 0 {
                writer.writeRaw(UnsafeRawBufferPointer(rebasing: texts[replacement[r]]))
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
    private static func key(_ m: (key: Int, value: Int, end: Int), in text: UnsafeRawPointer, is name: UnsafeRawPointer,
                            count: Int) -> Bool {
        m.value - m.key - 3 == count && (count == 0 || memcmp(text + m.key + 1, name, count) == 0)
    }

    private static func equal(_ p: UnsafeRawPointer, _ word: StaticString) -> Bool {
        memcmp(p, word.utf8Start, word.utf8CodeUnitCount) == 0
    }
}
