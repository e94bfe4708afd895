#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One parse event, with byte buffers borrowed from the parser (valid only during the call).
enum JSONEvent {
    case null
    case bool(Bool)
    case number(UnsafeRawBufferPointer)
    /// `verbatim`: the bytes are the input's own (no escapes), so they are written back without escaping.
    case string(UnsafeRawBufferPointer, verbatim: Bool)
    case startObject
    case key(UnsafeRawBufferPointer, verbatim: Bool)
    case endObject
    case startArray
    case endArray

    /// The event as a scalar value (strings validated strictly, exactly as the tree builder does), or nil for
    /// container events.
    func scalarValue() throws -> JSONValue? {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let text): return .number(JSONNumber(unchecked: String(decoding: text, as: UTF8.self)))
        case .string(let utf8, _): return .string(try JSONTreeBuilder.makeString(utf8))
        default: return nil
        }
    }

    /// Feeds the event to a tree builder.
    func feed(_ builder: inout JSONTreeBuilder) throws {
        switch self {
        case .null: builder.null()
        case .bool(let b): builder.bool(b)
        case .number(let t): builder.number(t)
        case .string(let s, _): try builder.string(s)
        case .startObject: builder.startObject()
        case .key(let k, _): try builder.key(k)
        case .endObject: builder.endObject()
        case .startArray: builder.startArray()
        case .endArray: builder.endArray()
        }
    }
}

/// Consumes the events of one JSON value. `start` gets the value's first event; `next` the following ones
/// (containers only). Both return true when the value is complete.
class EventConsumer {
    /// Set when this consumer receives its events alone: it may then skip values inside yajl (`ParseSkip`), which
    /// is far cheaper than receiving their events. Owned by the compiled plan.
    var parseSkip: ParseSkip?

    func start(_ e: JSONEvent) throws -> Bool { fatalError("abstract") }
    func next(_ e: JSONEvent) throws -> Bool { fatalError("abstract") }
    /// Forget any value seen so far: what this consumer reads is absent again (a later duplicate key).
    func resetFound() {}

    /// What a record projection (`RecordProjector`) must keep of this consumer's value: nil — all of it (the
    /// default); else a node added to `builder` whose keys name the only members of an object value this consumer
    /// acts on. Only a consumer that receives its events alone (`parseSkip` set) and skips the other members
    /// without changing any state on them may answer a node — what `ParseSkip.filterKeys` asks of it too.
    func projectionNode(in builder: inout ProjectionBuilder) -> Int32? { nil }

    /// Whether this consumer, as the whole consumer of a member of a projected object, takes the member's string
    /// lifted out of the projection (`LiftedStrings`, given here); false by default.
    func takesLiftedStrings(from lifts: LiftedStrings?) -> Bool { false }
}

/// An unretained reference to a consumer that the compiled plan keeps alive: following it per event costs no
/// reference counting.
struct ConsumerRef {
    private let ref: Unmanaged<EventConsumer>
    init(_ consumer: EventConsumer) { ref = .passUnretained(consumer) }
    @inline(__always) func start(_ e: JSONEvent) throws -> Bool { try ref._withUnsafeGuaranteedRef { try $0.start(e) } }
    @inline(__always) func next(_ e: JSONEvent) throws -> Bool { try ref._withUnsafeGuaranteedRef { try $0.next(e) } }
    @inline(__always) func resetFound() { ref._withUnsafeGuaranteedRef { $0.resetFound() } }
}

/// Skips a value without allocating, by counting depth: for consumers that share their events with others
/// (behind a `FanOut`), which may not skip inside yajl. (Every string's UTF-8 was validated before yajl saw it,
/// by `StrictJSONScanner`, so a record with invalid UTF-8 is rejected whether or not the bad string is mapped.)
final class Skipper: EventConsumer {
    @exclusivity(unchecked) private var depth = 0

    override func start(_ e: JSONEvent) throws -> Bool {
        switch e {
        case .startObject, .startArray:
            depth = 1
            return false
        default:
            return true
        }
    }

    override func next(_ e: JSONEvent) throws -> Bool {
        switch e {
        case .startObject, .startArray: depth += 1
        case .endObject, .endArray: depth -= 1
        default: break
        }
        return depth == 0
    }
}

/// Gives the same value to several consumers (several fields reading one key).
final class FanOut: EventConsumer {
    let consumers: [EventConsumer]
    private let refs: [ConsumerRef]
    @exclusivity(unchecked) private var active: [Bool]

    init(_ consumers: [EventConsumer]) {
        self.consumers = consumers
        self.refs = consumers.map(ConsumerRef.init)
        self.active = Array(repeating: false, count: consumers.count)
    }

    override func start(_ e: JSONEvent) throws -> Bool {
        var done = true
        for i in refs.indices {
            active[i] = !(try refs[i].start(e))
            if active[i] { done = false }
        }
        return done
    }

    override func next(_ e: JSONEvent) throws -> Bool {
        var done = true
        for i in refs.indices where active[i] {
            active[i] = !(try refs[i].next(e))
            if active[i] { done = false }
        }
        return done
    }

    override func resetFound() { for r in refs { r.resetFound() } }
}

/// Matches keys, as raw bytes, against a fixed set. A key is first compared by its length and its first 8 bytes
/// as one word (so most keys are told apart with two compares): a linear scan for a few keys, an open-addressing
/// table on that word for more. Never allocates.
struct KeyTable {
    let keys: [[UInt8]]
    private let lengths: [Int]
    private let prefixes: [UInt64]
    private let slots: [Int32]
    private let mask: Int
    private static let linearLimit = 8

    init(_ keys: [[UInt8]]) {
        self.keys = keys
        lengths = keys.map(\.count)
        prefixes = keys.map { key in key.withUnsafeBytes { Self.prefix($0) } }
        guard keys.count > Self.linearLimit else {
            slots = []
            mask = 0
            return
        }
        var size = 16
        while size < keys.count * 2 { size <<= 1 }
        var slots = [Int32](repeating: -1, count: size)
        for i in keys.indices {
            var slot = Self.slot(prefixes[i], lengths[i], mask: size - 1)
            while slots[slot] >= 0 { slot = (slot + 1) & (size - 1) }
            slots[slot] = Int32(i)
        }
        self.slots = slots
        self.mask = size - 1
    }

    /// The first 8 bytes of a key as a word (zero-padded).
    @inline(__always)
    static func prefix(_ key: UnsafeRawBufferPointer) -> UInt64 {
        let n = key.count
        if n >= 8 { return key.loadUnaligned(as: UInt64.self) }
        if n >= 4 {
            // Two overlapping 4-byte loads: bytes 0–3 and n-4 … n-1.
            let low = UInt64(key.loadUnaligned(as: UInt32.self))
            let high = UInt64(key.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
            return low | high << UInt64(8 * (n - 4))
        }
        guard n > 0 else { return 0 }
        // Bytes 0, n/2 and n-1 cover every byte of a 1–3-byte key.
        let mid = n >> 1
        return UInt64(key[0]) | UInt64(key[mid]) << UInt64(8 * mid) | UInt64(key[n - 1]) << UInt64(8 * (n - 1))
    }

    @inline(__always)
    private static func slot(_ prefix: UInt64, _ length: Int, mask: Int) -> Int {
        Int(truncatingIfNeeded: hash(prefix, length) >> 32) & mask
    }

    /// A key's length and first 8 bytes (`prefix`) mixed into one word: its high bits pick a slot or a bit.
    @inline(__always)
    static func hash(_ prefix: UInt64, _ length: Int) -> UInt64 {
        (prefix ^ UInt64(truncatingIfNeeded: length)) &* 0x9E37_79B9_7F4A_7C15
    }

    @inline(__always)
    private func matches(_ i: Int, _ key: UnsafeRawBufferPointer, _ prefix: UInt64) -> Bool {
        guard lengths[i] == key.count && prefixes[i] == prefix else { return false }
        guard key.count > 8 else { return true }
        return keys[i].withUnsafeBytes { memcmp($0.baseAddress! + 8, key.baseAddress! + 8, key.count - 8) == 0 }
    }

    /// The index of `key` in `keys`, if it is one of them.
    @inline(__always)
    func index(of key: UnsafeRawBufferPointer) -> Int? {
        let prefix = Self.prefix(key)
        if slots.isEmpty {
            for i in 0..<lengths.count where matches(i, key, prefix) { return i }
            return nil
        }
        var slot = Self.slot(prefix, key.count, mask: mask)
        while true {
            let i = Int(slots[slot])
            if i < 0 { return nil }
            if matches(i, key, prefix) { return i }
            slot = (slot + 1) & mask
        }
    }
}

/// A key set that a consumer hands to `ParseSkip.filterKeys`: a class, so that the parser can hold it unretained.
/// Most keys it does not hold are told apart by one bit of a 128-bit signature of the set's keys (a hash of a
/// key's length and first 8 bytes), before any table is read.
final class KeyFilter {
    let table: KeyTable
    private let low: UInt64
    private let high: UInt64

    init(_ table: KeyTable) {
        self.table = table
        var low: UInt64 = 0, high: UInt64 = 0
        for key in table.keys {
            let bit = key.withUnsafeBytes { Self.bit($0) }
            if bit < 64 { low |= 1 << bit } else { high |= 1 << (bit - 64) }
        }
        self.low = low
        self.high = high
    }

    @inline(__always)
    private static func bit(_ key: UnsafeRawBufferPointer) -> UInt64 {
        KeyTable.hash(KeyTable.prefix(key), key.count) >> 57
    }

    /// The key `excludes` last found in the table — where its bytes are, its length and its index — kept for the
    /// consumer that receives that very key next (`index(of:)`): one table lookup per mapped key, not two.
    @exclusivity(unchecked) private var found: (address: UnsafeRawPointer?, count: Int, index: Int) = (nil, 0, 0)

    /// Whether `key` is not one of the set's keys.
    @inline(__always)
    func excludes(_ key: UnsafeRawBufferPointer) -> Bool {
        found.address = nil
        let bit = Self.bit(key)
        let word = bit < 64 ? low : high
        guard word & (1 << (bit & 63)) != 0, let i = table.index(of: key) else { return true }
        found = (key.baseAddress, key.count, i)
        return false
    }

    /// `table.index(of: key)`, taken from `excludes` when it has just looked up this key (the same bytes: yajl
    /// hands the parser and the consumer one buffer per key event). Each lookup kept is used once.
    @inline(__always)
    func index(of key: UnsafeRawBufferPointer) -> Int? {
        if let address = found.address, address == UnsafeRawPointer(key.baseAddress), found.count == key.count {
            found.address = nil
            return found.index
        }
        return table.index(of: key)
    }
}

/// The value at a prefix of source paths that continue below it (`user` for `user.id` and `user.screen_name`):
/// in an object, the value of each key read below goes to that key's consumer (last duplicate wins); in an array,
/// the element at each index read below. Everything else is skipped. Paths with a common prefix share its nodes,
/// so a value is walked once however many fields read inside it.
final class RouteNode: EventConsumer {
    let children: [EventConsumer]
    let keys: KeyTable
    /// `keys`, for skipping the other members of an object inside yajl.
    private let filter: KeyFilter
    /// The children whose key is an array index, by that index.
    private let childOfIndex: [Int: Int]
    /// Per child: whether the walk last reached it through an array (the error path then says `/3`, not `/"3"`).
    @exclusivity(unchecked) private(set) var viaArray: [Bool]
    private let skipper = Skipper()
    @exclusivity(unchecked) private var inObject = false
    @exclusivity(unchecked) private var position = 0
    private let childRefs: [ConsumerRef]
    private let skipperRef: ConsumerRef
    @exclusivity(unchecked) private var current: ConsumerRef?
    /// The consumer of the member whose key just arrived.
    @exclusivity(unchecked) private var pending: ConsumerRef?

    init(keys: [[UInt8]], children: [EventConsumer]) {
        self.keys = KeyTable(keys)
        self.filter = KeyFilter(self.keys)
        self.children = children
        self.childRefs = children.map(ConsumerRef.init)
        self.skipperRef = ConsumerRef(skipper)
        var childOfIndex: [Int: Int] = [:]
        for (i, key) in keys.enumerated() {
            if let index = KeyPath.arrayIndex(String(decoding: key, as: UTF8.self)) { childOfIndex[index] = i }
        }
        self.childOfIndex = childOfIndex
        self.viaArray = Array(repeating: false, count: children.count)
    }

    override func resetFound() { for r in childRefs { r.resetFound() } }

    /// An object's members are filtered by `keys` (an array is walked by index: kept whole).
    override func projectionNode(in builder: inout ProjectionBuilder) -> Int32? {
        guard parseSkip != nil, let node = builder.addNode() else { return nil }
        for (i, key) in keys.keys.enumerated() { builder.addMember(key, to: node, consumer: children[i]) }
        return node
    }

    override func start(_ e: JSONEvent) throws -> Bool {
        current = nil
        pending = nil
        position = 0
        switch e {
        case .startObject:
            inObject = true
            parseSkip?.filterKeys(filter)
            return false
        case .startArray:
            inObject = false
            return false
        default:
            return true
        }
    }

    override func next(_ e: JSONEvent) throws -> Bool {
        if let c = current {
            if try c.next(e) {
                current = nil
                if !inObject { position += 1 }
            }
            return false
        }
        if inObject {
            if let c = pending {
                pending = nil
                if !(try c.start(e)) { current = c }
                return false
            }
            guard case .key(let k, _) = e else { return true }  // endObject
            if let i = filter.index(of: k) {
                let child = childRefs[i]
                child.resetFound()
                viaArray[i] = false
                pending = child
            } else if let parseSkip {
                parseSkip.skipNextValue()
            } else {
                pending = skipperRef
            }
            return false
        }
        if case .endArray = e { return true }
        var consumer: ConsumerRef? = nil
        if !childOfIndex.isEmpty, let child = childOfIndex[position] {
            consumer = childRefs[child]
            consumer!.resetFound()
            viaArray[child] = true
        }
        if consumer == nil, let parseSkip {
            switch e {
            case .startObject, .startArray: parseSkip.skipContainer()
            default: break
            }
            position += 1
            return false
        }
        let c = consumer ?? skipperRef
        if try c.start(e) { position += 1 } else { current = c }
        return false
    }
}

/// A run of object keys that one path walks with nothing read in between (`a.b.c.…`): what a chain of one-key
/// `RouteNode`s does, with each event handled here once. Through a chain of nodes an event passes every node
/// above it, so a path thousands of steps long over input nested as deep was quadratic. At each step of the run
/// an object is walked into by its key (the last duplicate wins, as everywhere); anything else there is skipped.
final class KeyChain: EventConsumer {
    /// One key per step.
    private let filters: [KeyFilter]
    /// The consumer of the value at the end of the run.
    private let end: ConsumerRef
    private let endConsumer: EventConsumer
    private let skipper = Skipper()
    private let skipperRef: ConsumerRef
    /// Objects of the run open (0 before the first).
    @exclusivity(unchecked) private var level = 0
    /// The consumer of the value in progress (the end's, or the skipper's).
    @exclusivity(unchecked) private var current: ConsumerRef?
    /// The consumer of the member whose key just arrived.
    @exclusivity(unchecked) private var pending: ConsumerRef?
    /// The member whose key just arrived is the next step of the run.
    @exclusivity(unchecked) private var descends = false

    /// Runs shorter than this stay `RouteNode`s (as fast, and what most specs have).
    static let minimumSteps = 4

    init(keys: [[UInt8]], end: EventConsumer) {
        filters = keys.map { KeyFilter(KeyTable([$0])) }
        endConsumer = end
        self.end = ConsumerRef(end)
        skipperRef = ConsumerRef(skipper)
    }

    override func resetFound() { end.resetFound() }

    /// One node per step, each with its one key; the last key's member is what the end consumer keeps of it.
    override func projectionNode(in builder: inout ProjectionBuilder) -> Int32? {
        guard parseSkip != nil else { return nil }
        var nodes: [Int32] = []
        for _ in filters {
            guard let node = builder.addNode() else { return nil }
            nodes.append(node)
        }
        for (step, filter) in filters.enumerated() {
            if step + 1 < nodes.count {
                builder.addKey(filter.table.keys[0], to: nodes[step], child: nodes[step + 1])
            } else {
                builder.addMember(filter.table.keys[0], to: nodes[step], consumer: endConsumer)
            }
        }
        return nodes.first
    }

    override func start(_ e: JSONEvent) throws -> Bool {
        current = nil
        pending = nil
        descends = false
        level = 0
        return try enter(e)
    }

    /// The first event of a value on the run, at `level` (0: the chain's own value): an object is walked into,
    /// anything else skipped. Returns whether the chain's value is complete.
    private func enter(_ e: JSONEvent) throws -> Bool {
        switch e {
        case .startObject:
            level += 1
            parseSkip?.filterKeys(filters[level - 1])
            return false
        case .startArray:
            if let parseSkip {
                parseSkip.skipContainer()
                return level == 0
            }
            _ = try skipperRef.start(e)
            current = skipperRef
            return false
        default:
            return level == 0
        }
    }

    override func next(_ e: JSONEvent) throws -> Bool {
        if let c = current {
            if try c.next(e) {
                current = nil
                return level == 0
            }
            return false
        }
        if let c = pending {
            pending = nil
            if !(try c.start(e)) { current = c }
            return false
        }
        if descends {
            descends = false
            return try enter(e)
        }
        guard case .key(let k, _) = e else {  // the end of the object at `level`
            level -= 1
            return level == 0
        }
        if filters[level - 1].index(of: k) != nil {
            end.resetFound()
            if level == filters.count { pending = end } else { descends = true }
        } else if let parseSkip {
            parseSkip.skipNextValue()
        } else {
            pending = skipperRef
        }
        return false
    }
}
