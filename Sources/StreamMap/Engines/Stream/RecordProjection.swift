#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CJSONScan

/// Record projection: before yajl sees a record, a C kernel (`cjsonscan_project`) walks it once, validating every
/// byte as the skipper does, and writes only the members the mapping reads — so that yajl parses (and calls the
/// consumers for) a few hundred bytes of a tweet instead of its kilobytes, with no new yajl handle per skipped
/// run. What the mapping reads comes from the compiled consumers themselves (`EventConsumer.projectionNode`):
/// an object is filtered only where its consumer receives its events alone and skips every member not in a key
/// set without changing state on them (the contract of `ParseSkip.filterKeys`), so the projection yields exactly
/// the events the consumers act on, in order, duplicate keys included.
///
/// Whatever the kernel does not vouch for — a syntax error anywhere, a strict-scanner violation, a root that is
/// not an object, an escaped key in a filtered object, nesting past the limits — is parsed whole as before, so
/// errors keep their messages and offsets by construction.
final class RecordProjector {
    /// The kernel's plan (sealed).
    private let plan: OpaquePointer
    /// (Allocated once the plan is made: a projector that is not made must leave nothing allocated.)
    @exclusivity(unchecked) private var text: ByteBuffer
    /// Bytes in and out so far: a mapping that keeps most of its records stops projecting (the pass would cost
    /// more than it saves).
    @exclusivity(unchecked) private var bytesIn = 0
    @exclusivity(unchecked) private var bytesOut = 0
    @exclusivity(unchecked) private(set) var enabled = true
    /// Records projected so far (the tests check that the engine takes this path).
    @exclusivity(unchecked) private(set) var projections = 0
    private static let keptCapacity = 1 << 20
    /// Longer records are parsed whole, skipping inside yajl as before: a projection needs room for the record
    /// again, and the engine's memory for one record stays what it was.
    static let maximumRecordBytes = 4 << 20
    /// After this many input bytes, projecting stops unless it removed at least a quarter of them.
    private static let trialBytes = 1 << 22

    /// The strings lifted out of the record in progress (for the field inputs that take them).
    let lifts = LiftedStrings()

    /// The projector of `roots`' records: each parses the projection with a parser of its own, which holds the
    /// members any of them reads (the union of their plans: a member one reads whole is kept whole). Strings are
    /// lifted out only for the roots marked `lifts` (the others' inputs find every string in the projection). Nil
    /// when one of them reads every member of a record (nothing to drop).
    init?(roots: [(consumer: EventConsumer, lifts: Bool)]) {
        var builder = ProjectionBuilder(lifts: lifts)
        var nodes: [Int32] = []
        for root in roots {
            builder.lifts = root.lifts ? lifts : nil
            guard let node = root.consumer.projectionNode(in: &builder) else { break }
            nodes.append(node)
        }
        guard nodes.count == roots.count, let first = nodes.first, let plan = cjsonscan_projection_new() else {
            builder.withdrawLifts()
            return nil
        }
        let root = nodes.dropFirst().reduce(first) { builder.union($0, $1) }
        var keys: [ProjectionKey] = []
        guard builder.emit(root, into: plan, keys: &keys), cjsonscan_projection_seal(plan) != 0 else {
            cjsonscan_projection_free(plan)
            builder.withdrawLifts()
            return nil
        }
        self.plan = plan
        childOfSlot = keys.map(\.child)
        var slotOfKey: [Int32: [[UInt8]: Int]] = [:]
        for (slot, key) in keys.enumerated() where slotOfKey[key.node]?[key.key] == nil {
            slotOfKey[key.node, default: [:]][key.key] = slot  // (the first of a node's entries for a key stands, as in the kernel)
        }
        self.slotOfKey = slotOfKey
        text = ByteBuffer(capacity: 1 << 12)
    }

    /// Per slot (the plan's keys in the kernel's order), the node its key's object value is projected by (-1: kept
    /// whole); and the slot of each node's keys.
    private let childOfSlot: [Int32]
    private let slotOfKey: [Int32: [[UInt8]: Int]]
    /// Where the values of the plan's keys are in the record last projected (`cjsonscan_slot`, one per key in
    /// the kernel's order), once `recordSlots()` asked for them.
    private(set) var slots: UnsafeMutablePointer<cjsonscan_slot>?

    /// From the next record on, the projection notes where its keys' values are (`slots`).
    func recordSlots() -> UnsafeMutablePointer<cjsonscan_slot> {
        if let slots { return slots }
        let made = UnsafeMutablePointer<cjsonscan_slot>.allocate(capacity: max(childOfSlot.count, 1))
        made.initialize(repeating: cjsonscan_slot(), count: max(childOfSlot.count, 1))
        slots = made
        return made
    }

    /// The slots of a path of keys from the record down: those of the objects on the way (each a key whose object
    /// the plan projects) and the last key's, whose value the plan keeps whole; nil when the plan does not read
    /// the path that way.
    func slots(along path: [[UInt8]]) -> (objects: [Int], value: Int)? {
        var node: Int32 = 0
        var objects: [Int] = []
        for (i, step) in path.enumerated() {
            guard let slot = slotOfKey[node]?[step] else { return nil }
            if i == path.count - 1 { return childOfSlot[slot] < 0 ? (objects, slot) : nil }
            guard childOfSlot[slot] >= 0 else { return nil }
            objects.append(slot)
            node = childOfSlot[slot]
        }
        return nil
    }

    /// The projector of `root`'s records, or nil when `root` reads every member of a record (nothing to drop).
    convenience init?(root: EventConsumer, lifts: Bool = true) { self.init(roots: [(root, lifts)]) }

    deinit {
        cjsonscan_projection_free(plan)
        text.deallocate()
        slots?.deallocate()
    }

    /// The projection of `record`, valid until the next call, with its lifted strings in `lifts` (active until
    /// `lifts.end()`); nil when the record is to be parsed whole.
    /// (With `slots` noted, when `recordSlots()` asked for them.)
    func project(_ record: UnsafeRawBufferPointer, maximumDepth: Int, portable: Bool = false) -> UnsafeRawBufferPointer? {
        guard enabled, let p = record.baseAddress?.assumingMemoryBound(to: UInt8.self), record.count > 0,
              record.count <= Self.maximumRecordBytes, maximumDepth > 0 else { return nil }
        // (No strict scan first: the kernel checks what the strict scanner checks, UTF-8 included.)
        text.reset(keeping: Self.keptCapacity)
        text.reserve(record.count + 64)
        var lifted = 0
        let count = portable
            ? cjsonscan_project_portable(plan, p, record.count, maximumDepth, text.base, lifts.entries, lifts.capacity, &lifted, slots)
            : cjsonscan_project(plan, p, record.count, maximumDepth, text.base, lifts.entries, lifts.capacity, &lifted, slots)
        guard count >= 0 else { return nil }
        lifts.begin(record: UnsafeRawPointer(p), projection: UnsafeRawPointer(text.base), count: lifted)
        projections &+= 1
        bytesIn &+= record.count
        bytesOut &+= count
        if bytesIn > Self.trialBytes && bytesOut > bytesIn / 4 * 3 { enabled = false }
        return UnsafeRawBufferPointer(start: text.base, count: count)
    }
}

/// The strings a record's projection lifted out (`cjsonscan_lift`: each written `""` in the projection, where a
/// field input that takes lifted strings receives it and maps the string from the record instead,
/// `FieldInput.start`). The field inputs share this with the projector; it is active from a projection until the
/// parse of that projection ends.
final class LiftedStrings {
    fileprivate private(set) var entries: UnsafeMutablePointer<cjsonscan_lift>
    fileprivate private(set) var capacity = 64
    @exclusivity(unchecked) private var count = 0
    /// The next entry a placeholder is expected for (they arrive in order).
    @exclusivity(unchecked) private var cursor = 0
    @exclusivity(unchecked) private var record = UnsafeRawPointer(bitPattern: 1)!
    @exclusivity(unchecked) private var projection: UnsafeRawPointer?
    /// Decoded text of a lifted string with escapes (valid during the call that receives it).
    @exclusivity(unchecked) private var decoded = ByteBuffer(capacity: 256)
    /// Lifted strings taken by field inputs so far (the tests check that the engine takes this path).
    @exclusivity(unchecked) private(set) var taken = 0
    /// A record lifts at most this many strings (the others stay in the projection): memory stays bounded.
    static let maximumCapacity = 1 << 16

    init() { entries = .allocate(capacity: capacity) }

    deinit {
        entries.deallocate()
        decoded.deallocate()
    }

    fileprivate func begin(record: UnsafeRawPointer, projection: UnsafeRawPointer, count: Int) {
        self.record = record
        self.projection = count > 0 ? projection : nil
        self.count = count
        cursor = 0
        if count == capacity && capacity < Self.maximumCapacity {
            // Full (the strings past the capacity stayed in the projection): the next records may lift more.
            let grown = UnsafeMutablePointer<cjsonscan_lift>.allocate(capacity: capacity * 2)
            grown.update(from: entries, count: count)
            entries.deallocate()
            entries = grown
            capacity *= 2
        }
    }

    /// The parse of the projection is over (however it ended).
    func end() { projection = nil }

    /// When `value` (the bytes of a string event, or of a number's) is the placeholder of a lifted value, the value
    /// as it is in the record (a string's quotes included); else nil.
    @inline(__always)
    func take(_ value: UnsafeRawBufferPointer, string: Bool) -> UnsafeRawBufferPointer? {
        guard let projection, value.count == (string ? 0 : 1), let address = value.baseAddress else { return nil }
        return lifted(at: address - projection - (string ? 1 : 0))
    }

    @inline(never)
    private func lifted(at placeholder: Int) -> UnsafeRawBufferPointer? {
        while cursor < count && entries[cursor].placeholder < placeholder { cursor += 1 }
        guard cursor < count, entries[cursor].placeholder == placeholder else { return nil }
        let entry = entries[cursor]
        cursor += 1
        taken &+= 1
        return UnsafeRawBufferPointer(start: record + entry.start, count: entry.length)
    }

    /// The event of a lifted value: a number's lexeme; a string's (`raw`, quotes included) bytes as they are when
    /// it has no escapes, else decoded as yajl decodes them.
    func event(_ raw: UnsafeRawBufferPointer) -> JSONEvent { Self.event(raw, decodingInto: &decoded) }

    /// The event of a validated scalar's text `raw` other than a literal: a number's lexeme; a string's bytes as
    /// they are when it has no escapes, else decoded into `decoded` as yajl decodes them (valid until its next use).
    static func event(_ raw: UnsafeRawBufferPointer, decodingInto decoded: inout ByteBuffer) -> JSONEvent {
        guard raw.first == 0x22 else { return .number(raw) }
        let body = UnsafeRawBufferPointer(rebasing: raw[1..<raw.count - 1])
        guard let p = body.baseAddress, memchr(p, 0x5C, body.count) != nil else { return .string(body, verbatim: true) }
        decoded.reset(keeping: 1 << 20)
        decoded.reserve(body.count)
        let n = cjsonscan_decode_string(p.assumingMemoryBound(to: UInt8.self), body.count, decoded.base)
        return .string(UnsafeRawBufferPointer(start: decoded.base, count: n), verbatim: false)
    }
}

/// A key of a kernel's plan: its node, its bytes, and the node its object value is projected by (-1: kept whole).
struct ProjectionKey {
    let node: Int32
    let key: [UInt8]
    let child: Int32
}

/// Collects the consumers' answers (`EventConsumer.projectionNode`) as a tree of nodes, which `RecordProjector`
/// writes into a `cjsonscan_projection` (node 0 the record), after merging the trees of several consumers.
struct ProjectionBuilder {
    /// A member a node keeps: whole (`child` nil, its non-empty string lifted out when `lifted`), or, when its value
    /// is an object, the members of node `child`.
    fileprivate struct Member {
        var key: [UInt8]
        var child: Int32?
        var lifted: Bool
    }
    fileprivate private(set) var nodes: [[Member]] = []
    /// Given to the field inputs that take lifted strings (nil: no string is lifted).
    var lifts: LiftedStrings?
    /// The consumers given `lifts` (given nil again when no projector is made: they must not keep a dangling one).
    private var liftedConsumers: [EventConsumer] = []

    fileprivate init(lifts: LiftedStrings?) {
        self.lifts = lifts
    }

    /// The member of `key` in `node`'s objects goes to `consumer`: what it keeps of the member's value (and whether
    /// it takes the value's string lifted out of the projection).
    mutating func addMember(_ key: [UInt8], to node: Int32, consumer: EventConsumer) {
        let child = consumer.projectionNode(in: &self)
        var lifted = false
        if child == nil && consumer.takesLiftedStrings(from: lifts) {
            lifted = true
            liftedConsumers.append(consumer)
        }
        addKey(key, to: node, child: child, lifted: lifted)
    }

    /// A new node (an object of which only the members of the keys added to it are read).
    mutating func addNode() -> Int32? {
        guard nodes.count < Int32.max else { return nil }
        nodes.append([])
        return Int32(nodes.count - 1)
    }

    /// The member of `key` in `node`'s objects is read: whole (`child` nil), or, when its value is an object, only
    /// the members `child` keeps.
    mutating func addKey(_ key: [UInt8], to node: Int32, child: Int32?, lifted: Bool = false) {
        nodes[Int(node)].append(Member(key: key, child: child, lifted: child == nil && lifted))
    }

    /// A node that keeps what `a` or `b` keeps: a key's member whole when either keeps it whole, else the union of
    /// their nodes; lifted only when every node that keeps it lifts it (a consumer that does not take lifted strings
    /// must find the string in the projection). (A work list, not recursion: a spec's paths may be deep.)
    fileprivate mutating func union(_ a: Int32, _ b: Int32) -> Int32 {
        nodes.append([])
        let merged = Int32(nodes.count - 1)
        var work = [(into: merged, a: a, b: b)]
        while let (into, a, b) = work.popLast() {
            var members: [Member] = []
            var at: [[UInt8]: Int] = [:]
            for member in nodes[Int(a)] + nodes[Int(b)] {
                guard let i = at[member.key] else {
                    at[member.key] = members.count
                    members.append(member)
                    continue
                }
                let kept = members[i]
                if let x = kept.child, let y = member.child {
                    nodes.append([])
                    members[i].child = Int32(nodes.count - 1)
                    work.append((Int32(nodes.count - 1), x, y))
                } else {
                    members[i].child = nil
                }
                members[i].lifted = members[i].child == nil && kept.lifted && member.lifted
            }
            nodes[Int(into)] = members
        }
        return merged
    }

    /// Writes `node` and the nodes under it into `plan`, `node` first (the kernel starts at node 0); false when the
    /// plan is full. (A work list, not recursion: a spec's paths may be deep.)
    fileprivate func emit(_ node: Int32, into plan: OpaquePointer) -> Bool {
        var keys: [ProjectionKey] = []
        return emit(node, into: plan, keys: &keys)
    }

    /// `emit`, listing the keys as the kernel numbers them.
    fileprivate func emit(_ node: Int32, into plan: OpaquePointer, keys: inout [ProjectionKey]) -> Bool {
        let first = cjsonscan_projection_add_node(plan)
        guard first >= 0 else { return false }
        var work = [(node: node, id: first)]
        var next = 0
        while next < work.count {
            let (node, id) = work[next]
            next += 1
            for member in nodes[Int(node)] {
                var child: Int32 = -1
                if let c = member.child {
                    child = cjsonscan_projection_add_node(plan)
                    guard child >= 0 else { return false }
                    work.append((c, child))
                }
                let added = member.key.withUnsafeBufferPointer {
                    cjsonscan_projection_add_key(plan, id, $0.baseAddress, $0.count, child, member.lifted ? 1 : 0)
                }
                guard added != 0 else { return false }
                keys.append(ProjectionKey(node: id, key: member.key, child: child))
            }
        }
        return true
    }

    /// The consumers given `lifts` forget them.
    fileprivate func withdrawLifts() {
        for consumer in liftedConsumers { _ = consumer.takesLiftedStrings(from: nil) }
    }
}

/// Holds the record projector (`cjsonscan_project`) to what it shortcuts, for the tests and the fuzz target (not
/// part of the library's API): a record it projects must be one the parser (yajl with the strict scanner in front)
/// accepts whole, and the projection's events must be exactly the record's events with the members the plan drops
/// left out; a record the parser accepts must be projected unless the kernel may decline it (a root that is not an
/// object, a key written with an escape in a filtered object, nesting past 4 096 levels).
@_spi(Fuzzing) public enum RecordProjectionCheck {
    /// Which members of an object are kept: each key's member whole (nil), or, when its value is an object,
    /// projected by the key's own plan; the non-empty string values of the `lifted` keys (kept whole) are lifted
    /// out of the projection.
    public struct Plan: Sendable, CustomStringConvertible {
        public var keys: [(key: String, child: Plan?)]
        public var lifted: Set<String>
        public init(_ keys: [(key: String, child: Plan?)], lifted: Set<String> = []) {
            self.keys = keys
            self.lifted = lifted
        }

        /// `{key, key: {…}, key (lifted)}`: for reports.
        public var description: String {
            "{" + keys.map { key, child in
                key.debugDescription + (child.map { ": \($0)" } ?? "") + (lifted.contains(key) && child == nil ? " (lifted)" : "")
            }.joined(separator: ", ") + "}"
        }
    }

    /// A projection and the strings lifted out of it: where its `""` stands, and the string's place in the record.
    public struct Projection: Equatable {
        public var bytes: [UInt8]
        public var lifts: [Lift]
        /// Where each key's value is in the record (`cjsonscan_slot`), by the order the plan's keys were added.
        public var slots: [Slot]
        public struct Lift: Equatable {
            public var placeholder: Int, start: Int, length: Int
        }
        public struct Slot: Equatable {
            public var start: Int, length: Int, count: Int
        }
    }

    /// The kernel's projection of `record` by `plan` (nil: declined), from its SIMD or its portable code, lifting
    /// at most `liftCapacity` strings.
    public static func project(
        _ record: UnsafeRawBufferPointer, plan: Plan, maximumDepth: Int, portable: Bool, liftCapacity: Int = 0
    ) -> Projection? {
        guard let kernel = cjsonscan_projection_new() else { return nil }
        defer { cjsonscan_projection_free(kernel) }
        var builder = ProjectionBuilder(lifts: nil)
        func add(_ plan: Plan) -> Int32? {
            guard let node = builder.addNode() else { return nil }
            for (key, child) in plan.keys {
                let childNode = child.flatMap(add)
                builder.addKey(Array(key.utf8), to: node, child: childNode, lifted: plan.lifted.contains(key))
            }
            return node
        }
        guard add(plan) == 0, builder.emit(0, into: kernel), cjsonscan_projection_seal(kernel) != 0,
              let p = record.baseAddress?.assumingMemoryBound(to: UInt8.self), record.count > 0 else { return nil }
        var out = [UInt8](repeating: 0, count: record.count + 64)
        var lifts = [cjsonscan_lift](repeating: cjsonscan_lift(), count: max(liftCapacity, 1))
        var slots = [cjsonscan_slot](repeating: cjsonscan_slot(), count: max(cjsonscan_projection_key_count(kernel), 1))
        var lifted = 0
        let count = out.withUnsafeMutableBufferPointer { o in
            lifts.withUnsafeMutableBufferPointer { l in
                slots.withUnsafeMutableBufferPointer { s in
                    portable
                        ? cjsonscan_project_portable(kernel, p, record.count, maximumDepth, o.baseAddress, l.baseAddress, liftCapacity, &lifted, s.baseAddress)
                        : cjsonscan_project(kernel, p, record.count, maximumDepth, o.baseAddress, l.baseAddress, liftCapacity, &lifted, s.baseAddress)
                }
            }
        }
        guard count >= 0 else { return nil }
        return Projection(bytes: Array(out[..<count]),
                          lifts: lifts[..<lifted].map { .init(placeholder: $0.placeholder, start: $0.start, length: $0.length) },
                          slots: slots.prefix(cjsonscan_projection_key_count(kernel)).map { .init(start: $0.start, length: $0.length, count: $0.count) })
    }

    /// nil when both code paths of the kernel agree with the parser on `record`, else what differs.
    public static func divergence(_ record: UnsafeRawBufferPointer, plan: Plan, maximumDepth: Int, liftCapacity: Int = 0) -> String? {
        let projected = project(record, plan: plan, maximumDepth: maximumDepth, portable: false, liftCapacity: liftCapacity)
        let portable = project(record, plan: plan, maximumDepth: maximumDepth, portable: true, liftCapacity: liftCapacity)
        if projected != portable {
            return "the projector writes \(projected.map { printable($0.bytes) } ?? "nothing"), its portable code \(portable.map { printable($0.bytes) } ?? "nothing")"
        }
        let events = Events.of(record, maximumDepth: maximumDepth)
        guard let projected else {
            guard case .accepted(let all) = events, case .startObject = all.first, !all.isEmpty else { return nil }
            if nesting(all) > 4096 || hasEscapedKey(all, plan: plan) { return nil }
            // yajl 2.1 also accepts a record followed by the start of a string it never sees the end of
            // (`{"a":1}"x`: the unfinished token is dropped at the end of the input); the projector, stricter,
            // declines it, and the engine's parse of the whole record then says what yajl says.
            if case .ends(let at) = ValueSkipperCheck.parserVerdict(record, maximumDepth: maximumDepth),
               !record[at...].allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return nil }
            return "the parser accepts the record; the projector declines it"
        }
        guard case .accepted(let all) = events else { return "the projector writes \(printable(projected.bytes)); the parser: \(events)" }
        var expectedLifts: [Event] = []
        let expected = filter(all, plan: plan, liftCapacity: liftCapacity, lifted: &expectedLifts)
        guard case .accepted(let got) = projected.bytes.withUnsafeBytes({ Events.of($0, maximumDepth: maximumDepth) }) else {
            return "the projection \(printable(projected.bytes)) does not parse"
        }
        if got != expected { return "the projection \(printable(projected.bytes)) has events \(got), expected \(expected)" }
        // Each key's slot, where a value was noted, holds one whole value of the record.
        for (k, slot) in projected.slots.enumerated() where slot.count > 0 && slot.length > 0 {
            guard slot.start + slot.length <= record.count,
                  case .accepted(let value) = Events.of(UnsafeRawBufferPointer(rebasing: record[slot.start..<(slot.start + slot.length)]),
                                                        maximumDepth: maximumDepth),
                  !value.isEmpty
            else { return "slot \(k) (\(slot.start), \(slot.length)) of \(printable(Array(record))) is not one value" }
        }
        if projected.lifts.count != expectedLifts.count {
            return "\(projected.lifts.count) strings lifted out of \(printable(projected.bytes)), expected \(expectedLifts.count)"
        }
        for (lift, expected) in zip(projected.lifts, expectedLifts) {
            let raw = UnsafeRawBufferPointer(rebasing: record[lift.start..<(lift.start + lift.length)])
            guard case .accepted([expected]) = Events.of(raw, maximumDepth: maximumDepth) else {
                return "the lifted value \(printable(Array(raw))) is not the member's value \(expected)"
            }
            if raw.first != 0x22 {
                guard lift.placeholder < projected.bytes.count, projected.bytes[lift.placeholder] == UInt8(ascii: "0") else {
                    return "no 0 at \(lift.placeholder) of \(printable(projected.bytes))"
                }
                continue
            }
            guard lift.placeholder + 1 < projected.bytes.count, projected.bytes[lift.placeholder] == 0x22,
                  projected.bytes[lift.placeholder + 1] == 0x22 else { return "no \"\" at \(lift.placeholder) of \(printable(projected.bytes))" }
            var decoded = [UInt8](repeating: 0, count: raw.count)
            let n = decoded.withUnsafeMutableBufferPointer {
                cjsonscan_decode_string(raw.baseAddress!.assumingMemoryBound(to: UInt8.self) + 1, raw.count - 2, $0.baseAddress)
            }
            let text = Event.string(Array(decoded[..<n]))
            if text != expected { return "the lifted string \(printable(Array(raw))) decodes to \(text), yajl says \(expected)" }
        }
        return nil
    }

    private static func printable(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self).debugDescription }

    /// One parse event, with its bytes (compared as bytes, as the engines compare keys: `"é"` and `"e\u{301}"` are
    /// two keys); keys also say whether they were written without escapes.
    enum Event: Equatable, CustomStringConvertible {
        case literal(String)
        case number([UInt8])
        case string([UInt8])
        case key([UInt8], plain: Bool)
        case startObject, endObject, startArray, endArray

        var description: String {
            switch self {
            case .literal(let s): s
            case .number(let n): String(decoding: n, as: UTF8.self)
            case .string(let s): String(decoding: s, as: UTF8.self).debugDescription
            case .key(let k, let plain):
                plain ? "\(String(decoding: k, as: UTF8.self).debugDescription):" : "\(String(decoding: k, as: UTF8.self).debugDescription)(escaped):"
            case .startObject: "{"
            case .endObject: "}"
            case .startArray: "["
            case .endArray: "]"
            }
        }
    }

    enum Events: CustomStringConvertible {
        case accepted([Event])
        case rejected(String)

        var description: String {
            switch self {
            case .accepted(let e): "accepted \(e)"
            case .rejected(let why): "rejected (\(why))"
            }
        }

        /// The events of the whole of `bytes` (one value), as the record parser delivers them.
        static func of(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int) -> Events {
            let parser = JSONPushParser(handler: Recorder(), options: .init(maximumDepth: maximumDepth))
            do {
                try parser.feed(bytes)
                try parser.finish()
            } catch {
                return .rejected("\(error)")
            }
            return parser.handler.events.isEmpty ? .rejected("no value") : .accepted(parser.handler.events)
        }
    }

    private struct Recorder: JSONEventHandler {
        var events: [Event] = []
        mutating func null() throws { events.append(.literal("null")) }
        mutating func bool(_ value: Bool) throws { events.append(.literal("\(value)")) }
        mutating func number(_ text: UnsafeRawBufferPointer) throws { events.append(.number(Array(text))) }
        mutating func string(_ utf8: UnsafeRawBufferPointer) throws { events.append(.string(Array(utf8))) }
        mutating func string(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) throws { try string(utf8) }
        mutating func startObject() throws { events.append(.startObject) }
        mutating func key(_ utf8: UnsafeRawBufferPointer) throws { events.append(.key(Array(utf8), plain: false)) }
        mutating func key(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) throws { events.append(.key(Array(utf8), plain: verbatim)) }
        mutating func endObject() throws { events.append(.endObject) }
        mutating func startArray() throws { events.append(.startArray) }
        mutating func endArray() throws { events.append(.endArray) }
    }

    /// The index just past the value whose first event is at `i`.
    private static func valueEnd(_ events: [Event], _ i: Int) -> Int {
        var depth = 0, j = i
        repeat {
            switch events[j] {
            case .startObject, .startArray: depth += 1
            case .endObject, .endArray: depth -= 1
            default: break
            }
            j += 1
        } while depth > 0
        return j
    }

    /// The events of the object starting at `i` with only the members `plan` keeps (what the projection must
    /// yield), the non-empty strings of lifted keys (up to `liftCapacity`) as `""`, gathered in `lifted`.
    static func filter(_ events: [Event], plan: Plan, liftCapacity: Int, lifted: inout [Event]) -> [Event] {
        var out: [Event] = []
        filterObject(events, 0, plan, liftCapacity, &lifted, &out)
        return out
    }

    @discardableResult
    private static func filterObject(
        _ events: [Event], _ start: Int, _ plan: Plan, _ liftCapacity: Int, _ lifted: inout [Event], _ out: inout [Event]
    ) -> Int {
        out.append(.startObject)
        var i = start + 1
        while case .key(let k, _) = events[i] {
            let end = valueEnd(events, i + 1)
            // (The first of a key's entries stands, as in the kernel; lifted as the plan's builder asks.)
            if let entry = plan.keys.first(where: { Array($0.key.utf8) == k }) {
                out.append(events[i])
                let liftable: Event?
                switch events[i + 1] {
                case .string(let s) where !s.isEmpty: liftable = .string([])
                case .number: liftable = .number(Array("0".utf8))
                default: liftable = nil
                }
                if let child = entry.child, case .startObject = events[i + 1] {
                    filterObject(events, i + 1, child, liftCapacity, &lifted, &out)
                } else if entry.child == nil, plan.lifted.contains(entry.key), let placeholder = liftable,
                          lifted.count < liftCapacity {
                    lifted.append(events[i + 1])
                    out.append(placeholder)
                } else {
                    out.append(contentsOf: events[(i + 1)..<end])
                }
            }
            i = end
        }
        out.append(.endObject)
        return i + 1
    }

    /// Whether a filtered object of the record holds a key written with an escape (the kernel then declines).
    private static func hasEscapedKey(_ events: [Event], plan: Plan) -> Bool {
        func object(_ start: Int, _ plan: Plan) -> Bool {
            var i = start + 1
            while case .key(let k, let plain) = events[i] {
                if !plain { return true }
                let end = valueEnd(events, i + 1)
                if let child = plan.keys.first(where: { Array($0.key.utf8) == k })?.child, case .startObject = events[i + 1],
                   object(i + 1, child) { return true }
                i = end
            }
            return false
        }
        return object(0, plan)
    }

    private static func nesting(_ events: [Event]) -> Int {
        var depth = 0, deepest = 0
        for e in events {
            switch e {
            case .startObject, .startArray:
                depth += 1
                deepest = max(deepest, depth)
            case .endObject, .endArray: depth -= 1
            default: break
            }
        }
        return deepest
    }
}
