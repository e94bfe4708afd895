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
    @exclusivity(unchecked) private var text = ByteBuffer(capacity: 1 << 12)
    /// Bytes in and out so far: a mapping that keeps most of its records stops projecting (the pass would cost
    /// more than it saves).
    @exclusivity(unchecked) private var bytesIn = 0
    @exclusivity(unchecked) private var bytesOut = 0
    @exclusivity(unchecked) private(set) var enabled = true
    /// Records projected so far (the tests check that the engine takes this path).
    @exclusivity(unchecked) private(set) var projections = 0
    private static let keptCapacity = 1 << 20
    /// After this many input bytes, projecting stops unless it removed at least a quarter of them.
    private static let trialBytes = 1 << 22

    /// The projector of `root`'s records, or nil when `root` reads every member of a record (nothing to drop).
    init?(root: EventConsumer) {
        guard let plan = cjsonscan_projection_new() else { return nil }
        var builder = ProjectionBuilder(plan: plan)
        guard root.projectionNode(in: &builder) == 0, !builder.failed, cjsonscan_projection_seal(plan) != 0 else {
            cjsonscan_projection_free(plan)
            return nil
        }
        self.plan = plan
    }

    deinit {
        cjsonscan_projection_free(plan)
        text.deallocate()
    }

    /// The projection of `record`, valid until the next call; nil when the record is to be parsed whole.
    func project(_ record: UnsafeRawBufferPointer, maximumDepth: Int, portable: Bool = false) -> UnsafeRawBufferPointer? {
        guard enabled, let p = record.baseAddress?.assumingMemoryBound(to: UInt8.self), record.count > 0,
              maximumDepth > 0 else { return nil }
        var strict = StrictJSONScanner()
        guard strict.scan(record) == nil else { return nil }
        text.reset(keeping: Self.keptCapacity)
        text.reserve(record.count + 64)
        let count = portable ? cjsonscan_project_portable(plan, p, record.count, maximumDepth, text.base)
                             : cjsonscan_project(plan, p, record.count, maximumDepth, text.base)
        guard count >= 0 else { return nil }
        projections &+= 1
        bytesIn &+= record.count
        bytesOut &+= count
        if bytesIn > Self.trialBytes && bytesOut > bytesIn / 4 * 3 { enabled = false }
        return UnsafeRawBufferPointer(start: text.base, count: count)
    }
}

/// Builds a `cjsonscan_projection` from the consumers' answers (`EventConsumer.projectionNode`).
struct ProjectionBuilder {
    fileprivate let plan: OpaquePointer
    fileprivate(set) var failed = false

    /// A new node (an object of which only the members of the keys added to it are read).
    mutating func addNode() -> Int32? {
        let node = cjsonscan_projection_add_node(plan)
        if node < 0 { failed = true }
        return node < 0 ? nil : node
    }

    /// The member of `key` in `node`'s objects is read: whole (`child` nil), or, when its value is an object, only
    /// the members `child` keeps.
    mutating func addKey(_ key: [UInt8], to node: Int32, child: Int32?) {
        let added = key.withUnsafeBufferPointer { cjsonscan_projection_add_key(plan, node, $0.baseAddress, $0.count, child ?? -1) }
        if added == 0 { failed = true }
    }
}

/// Holds the record projector (`cjsonscan_project`) to what it shortcuts, for the tests and the fuzz target (not
/// part of the library's API): a record it projects must be one the parser (yajl with the strict scanner in front)
/// accepts whole, and the projection's events must be exactly the record's events with the members the plan drops
/// left out; a record the parser accepts must be projected unless the kernel may decline it (a root that is not an
/// object, a key written with an escape in a filtered object, nesting past 4 096 levels).
@_spi(Fuzzing) public enum RecordProjectionCheck {
    /// Which members of an object are kept: each key's member whole (nil), or, when its value is an object,
    /// projected by the key's own plan.
    public struct Plan: Sendable {
        public var keys: [(key: String, child: Plan?)]
        public init(_ keys: [(key: String, child: Plan?)]) { self.keys = keys }
    }

    /// The kernel's projection of `record` by `plan` (nil: declined), from its SIMD or its portable code.
    public static func project(_ record: UnsafeRawBufferPointer, plan: Plan, maximumDepth: Int, portable: Bool) -> [UInt8]? {
        guard let kernel = cjsonscan_projection_new() else { return nil }
        defer { cjsonscan_projection_free(kernel) }
        var builder = ProjectionBuilder(plan: kernel)
        func add(_ plan: Plan) -> Int32? {
            guard let node = builder.addNode() else { return nil }
            for (key, child) in plan.keys { builder.addKey(Array(key.utf8), to: node, child: child.flatMap(add)) }
            return node
        }
        guard add(plan) == 0, !builder.failed, cjsonscan_projection_seal(kernel) != 0,
              let p = record.baseAddress?.assumingMemoryBound(to: UInt8.self), record.count > 0 else { return nil }
        var strict = StrictJSONScanner()
        guard strict.scan(record) == nil else { return nil }
        var out = [UInt8](repeating: 0, count: record.count + 64)
        let count = out.withUnsafeMutableBufferPointer { o in
            portable ? cjsonscan_project_portable(kernel, p, record.count, maximumDepth, o.baseAddress)
                     : cjsonscan_project(kernel, p, record.count, maximumDepth, o.baseAddress)
        }
        guard count >= 0 else { return nil }
        return Array(out[..<count])
    }

    /// nil when both code paths of the kernel agree with the parser on `record`, else what differs.
    public static func divergence(_ record: UnsafeRawBufferPointer, plan: Plan, maximumDepth: Int) -> String? {
        let projected = project(record, plan: plan, maximumDepth: maximumDepth, portable: false)
        let portable = project(record, plan: plan, maximumDepth: maximumDepth, portable: true)
        if projected != portable {
            return "the projector writes \(projected.map(printable) ?? "nothing"), its portable code \(portable.map(printable) ?? "nothing")"
        }
        let events = Events.of(record, maximumDepth: maximumDepth)
        guard let projected else {
            guard case .accepted(let all) = events, case .startObject = all.first, !all.isEmpty else { return nil }
            if nesting(all) > 4096 || hasEscapedKey(all, plan: plan) { return nil }
            return "the parser accepts the record; the projector declines it"
        }
        guard case .accepted(let all) = events else { return "the projector writes \(printable(projected)); the parser: \(events)" }
        let expected = filter(all, plan: plan)
        guard case .accepted(let got) = projected.withUnsafeBytes({ Events.of($0, maximumDepth: maximumDepth) }) else {
            return "the projection \(printable(projected)) does not parse"
        }
        return got == expected ? nil : "the projection \(printable(projected)) has events \(got), expected \(expected)"
    }

    private static func printable(_ bytes: [UInt8]) -> String { String(decoding: bytes, as: UTF8.self).debugDescription }

    /// One parse event, with its text (keys also say whether they were written without escapes).
    enum Event: Equatable, CustomStringConvertible {
        case scalar(String)
        case key(String, plain: Bool)
        case startObject, endObject, startArray, endArray

        var description: String {
            switch self {
            case .scalar(let s): s
            case .key(let k, let plain): plain ? "\(k.debugDescription):" : "\(k.debugDescription)(escaped):"
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
        mutating func null() throws { events.append(.scalar("null")) }
        mutating func bool(_ value: Bool) throws { events.append(.scalar("\(value)")) }
        mutating func number(_ text: UnsafeRawBufferPointer) throws { events.append(.scalar(String(decoding: text, as: UTF8.self))) }
        mutating func string(_ utf8: UnsafeRawBufferPointer) throws {
            events.append(.scalar(String(decoding: utf8, as: UTF8.self).debugDescription))
        }
        mutating func string(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) throws { try string(utf8) }
        mutating func startObject() throws { events.append(.startObject) }
        mutating func key(_ utf8: UnsafeRawBufferPointer) throws { events.append(.key(String(decoding: utf8, as: UTF8.self), plain: false)) }
        mutating func key(_ utf8: UnsafeRawBufferPointer, verbatim: Bool) throws {
            events.append(.key(String(decoding: utf8, as: UTF8.self), plain: verbatim))
        }
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

    /// The events of the object starting at `i` with only the members `plan` keeps (what the projection must yield).
    static func filter(_ events: [Event], plan: Plan) -> [Event] {
        var out: [Event] = []
        filterObject(events, 0, plan, &out)
        return out
    }

    @discardableResult
    private static func filterObject(_ events: [Event], _ start: Int, _ plan: Plan, _ out: inout [Event]) -> Int {
        out.append(.startObject)
        var i = start + 1
        while case .key(let k, _) = events[i] {
            let end = valueEnd(events, i + 1)
            if let entry = plan.keys.first(where: { $0.key == k }) {
                out.append(events[i])
                if let child = entry.child, case .startObject = events[i + 1] {
                    filterObject(events, i + 1, child, &out)
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
                if let child = plan.keys.first(where: { $0.key == k })?.child, case .startObject = events[i + 1],
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
