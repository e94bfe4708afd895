/// The stream engine: yajl's events drive a state machine compiled from the mapper, so a record is mapped while
/// it is parsed, without building its tree. Unread values are skipped inside yajl (`ParseSkip`: no callbacks for
/// their scalars and keys, container events only counted), or by counting depth where several consumers share
/// the events (`Skipper`); scalars and the few subtrees a mapper needs whole are evaluated with the tree engine's
/// own `Mapper.map`. The output and the errors
/// are identical to `TreeEngine`'s for every mapper and every record (differential tests guard this).
public struct StreamEngine: RecordEngine {
    /// The mapper every record goes through (compiled into the engine's plan at the first record).
    public let mapper: Mapper
    /// Records this filter drops are not written (`RecordOutcome.filtered`), nor mapped: the values it reads are
    /// captured from a parse of the record that skips the rest (`FilterCapture`); the record's tree is never built.
    public let filter: RecordFilter?
    /// Each mapped record becomes a record per element of this array, found in the output as written
    /// (`RecordExplosion.explodeWritten`).
    public let explode: RecordExplosion?
    /// Working memory of `explode`.
    private var explodeScratch: [UInt8] = []
    /// Limits for parsing each record (nesting depth); `allowMultipleValues` is always off (one value per record).
    public var parserOptions: JSONParserOptions
    /// The compiled sinks hold per-record state, so a copy of the engine compiles its own (copy on write). Compiled
    /// at the first record, by the copy that maps it: an engine made and then handed on (into a pipeline, a feed)
    /// compiles once, not twice (a spec of 16 000 fields takes a good part of a second to compile).
    private var plan: CompiledPlan?
    /// The rules broken on purpose (the mutation tests; nothing in a release build).
    private let mutations: StreamMutations
    private var root: ValueSink { plan!.root }
    /// The record in progress (pieces API).
    private var parser: StreamParser?
    private var failure: (any Error)?
    private var held: [UInt8] = []
    private var scanner = TokenBoundaryScanner()

    /// An engine that maps each record with `mapper` (the records `filter` drops are not mapped). Cheap: the mapper
    /// is compiled at the first record, by the copy of the engine that maps it.
    public init(mapper: Mapper, filter: RecordFilter? = nil, explode: RecordExplosion? = nil, parserOptions: JSONParserOptions = .init()) {
        self.init(mapper: mapper, filter: filter, explode: explode, parserOptions: parserOptions, mutations: StreamMutations())
    }

    #if STREAMMAP_MUTATIONS
    /// A copy of the engine with one rule deliberately broken: lets tests prove the differential harness catches
    /// a divergence. Only in builds for the tests (`STREAMMAP_MUTATIONS`: debug builds, Package.swift).
    init(mapper: Mapper, filter: RecordFilter? = nil, explode: RecordExplosion? = nil, parserOptions: JSONParserOptions = .init(),
         mutation: StreamMutation?) {
        self.init(mapper: mapper, filter: filter, explode: explode, parserOptions: parserOptions, mutations: StreamMutations(mutation))
    }
    #endif

    private init(mapper: Mapper, filter: RecordFilter?, explode: RecordExplosion?, parserOptions: JSONParserOptions,
                 mutations: StreamMutations) {
        self.mapper = mapper
        self.filter = filter
        self.explode = explode
        self.parserOptions = parserOptions
        self.parserOptions.allowMultipleValues = false
        self.mutations = mutations
    }

    /// Records and containers this copy of the engine copied verbatim (`VerbatimCopier`), for the tests.
    var verbatimCopies: Int { plan?.copier.copies ?? 0 }
    /// Records mapped as renamed copies (`RenamedCopy`) so far.
    var renamedCopies: Int { plan?.renamedCopy?.copies ?? 0 }
    /// Records this copy of the engine projected before parsing them (`RecordProjector`), for the tests.
    var projections: Int { plan?.projector?.projections ?? 0 }
    /// Strings the projections lifted out and field inputs took (`LiftedStrings`), for the tests.
    var liftedStrings: Int { plan?.projector?.lifts.taken ?? 0 }
    /// Records the filter read from their projection, for the tests.
    var filterProjections: Int { plan?.filterProjector?.projections ?? 0 }
    /// Records whose projection was replayed to the consumers without yajl (`YajlParserBase.feedScanned`), for the
    /// tests.
    var replayedProjections: Int { plan?.replayedProjections ?? 0 }
    /// Records whose fields were written straight from the projection (`ProjectedFields`).
    var projectedFieldRecords: Int { plan?.projectedFields?.written ?? 0 }
    /// Records rejected on the values the projection found (`ProjectedFields`).
    var projectedFieldRejections: Int { plan?.projectedFields?.rejected ?? 0 }
    /// Records the filter decided on the values the projection found (`ProjectedFilter`).
    var projectedFilterRecords: Int { plan?.projectedFilter?.decided ?? 0 }
    /// Whether the filter and the mapping read one projection of each record, for the tests.
    var filterSharesProjection: Bool { plan?.sharesProjection ?? false }

    /// Gives this copy of the engine sinks of its own before it uses them.
    private mutating func ensureUniquePlan() {
        if !isKnownUniquelyReferenced(&plan) { plan = CompiledPlan(mapper, filter: filter, mutations: mutations) }
    }

    public mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        ensureUniquePlan()
        let mark = writer.bytes.count
        return exploded(mapWhole(record, into: &writer), from: mark, in: &writer)
    }

    /// The outcome of a record written from `mark` on, exploded when so made.
    private mutating func exploded(_ outcome: RecordOutcome, from mark: Int, in writer: inout JSONWriter) -> RecordOutcome {
        guard let explode, case .mapped(let warnings, _) = outcome else { return outcome }
        switch explode.explodeWritten(in: &writer, from: mark, scratch: &explodeScratch) {
        case .failure(let error): return .rejected(.mapping(warnings + [error]))
        case .success(let records): return .mapped(warnings: warnings, records: records)
        }
    }

    /// A whole record: the filter first, from a parse of its own that reads only what the filter reads (a record
    /// it drops is not mapped at all); then the mapping — a verbatim copy when the mapping copies the record as it
    /// is, else a parse that reads only what the mapping reads. Each parse is the projection of the record when
    /// the projector vouches for the whole record (`RecordProjector`), else the record itself with yajl skipping,
    /// so both give yajl's verdict on the whole record and a syntax error is reported by the first exactly as by
    /// one shared parse.
    private func mapWhole(_ record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        let plan = plan.unsafelyUnwrapped
        /// The projection the filter read, when the mapping reads the same one.
        var shared: UnsafeRawBufferPointer?
        if let capture = plan.capture {
            let projected = plan.filterProjector?.project(record, maximumDepth: parserOptions.maximumDepth)
            if projected != nil, let kept = plan.projectedFilter?.keeps(record) {
                // (Decided on the values the projection found.)
                if !kept {
                    plan.filterProjector?.lifts.end()
                    return .filtered
                }
            } else {
                let filterReads = projected.map { plan.filterReprojector?.project($0, maximumDepth: parserOptions.maximumDepth) ?? $0 }
                if let dropped = filterDrops(record, projected: filterReads, plan: plan, capture: capture) {
                    plan.filterProjector?.lifts.end()
                    return dropped
                }
            }
            if plan.sharesProjection {
                shared = projected  // (the filter took no string lifted out of it: they are all the mapping's)
            } else {
                plan.filterProjector?.lifts.end()
            }
        }
        if let types = plan.verbatimTypes,
           let text = plan.copier.copy(record, maximumDepth: parserOptions.maximumDepth, allowed: types) {
            writer.writeReleasing(text)  // (the copier's buffer, read no more)
            if shared != nil { plan.projector?.lifts.end() }  // (never so today: a verbatim copy reads no projection)
            return .mapped(warnings: [])
        }
        if plan.renamedCopy != nil,
           let text = plan.copier.copy(record, maximumDepth: parserOptions.maximumDepth, allowed: .object) {
            // (`shared` is never set here: `unmapped: keep` reads every member, so the filter projects alone.)
            // (Lent unretained, as the projector below.)
            let renamed = Unmanaged.passUnretained(plan.renamedCopy.unsafelyUnwrapped)
            switch renamed._withUnsafeGuaranteedRef({ $0.write(text, copier: plan.copier, into: &writer) }) {
            case .written:
                if shared != nil { plan.projector?.lifts.end() }
                return .mapped(warnings: [])
            case .rejected(let errors):
                if shared != nil { plan.projector?.lifts.end() }
                return .rejected(.mapping(errors))
            case .events:
                break
            }
        }
        // (The projector and the fields are lent to their calls as guaranteed references — `plan`, which this engine
        // holds, keeps them — not bound to names of their own: a binding was a strong reference, retained and
        // released around each call, two pairs of atomic operations a record.)
        if plan.projector != nil {
            let projector = Unmanaged.passUnretained(plan.projector.unsafelyUnwrapped)
            if let projected = shared ?? (plan.sharesProjection ? nil : projector._withUnsafeGuaranteedRef {
                $0.project(record, maximumDepth: parserOptions.maximumDepth)
            }) {
                defer { projector._withUnsafeGuaranteedRef { $0.lifts.end() } }
                // The fields written straight from where the projector found their values, when it can be done so.
                if plan.projectedFields != nil {
                    let fields = Unmanaged.passUnretained(plan.projectedFields.unsafelyUnwrapped)
                    switch fields._withUnsafeGuaranteedRef({ $0.write(record, into: &writer) }) {
                    case .written: return .mapped(warnings: [])
                    case .rejected(let errors): return .rejected(.mapping(errors))
                    case .declined: break
                    }
                }
                // Valid JSON, and exactly the events the consumers act on: yajl parses the projection alone.
                let parser = plan.wholeRecordParser(options: parserOptions)
                do {
                    try parser.feedScanned(projected)
                    try parser.finish()
                    return Self.outcome(parser, root: plan.root, capture: nil, recordLength: record.count, into: &writer)
                } catch {
                    // (A consumer's own error: the record is parsed whole below, which reports it as it always did.)
                }
            }
        }
        let parser = plan.wholeRecordParser(options: parserOptions)
        do {
            try parser.feed(record)
            try parser.finish()
        } catch {
            return .rejected(.syntax(Self.syntaxError(error)))
        }
        return Self.outcome(parser, root: plan.root, capture: nil, recordLength: record.count, into: &writer)
    }

    /// The filter's verdict on a whole record: nil when it keeps it, else the record's outcome (filtered, or the
    /// syntax error that the filter's parse found).
    /// `projected`: what the filter reads of the record's projection by `plan.filterProjector`, if it made one.
    private func filterDrops(
        _ record: UnsafeRawBufferPointer, projected: UnsafeRawBufferPointer?, plan: CompiledPlan, capture: FilterCapture
    ) -> RecordOutcome? {
        let parser = plan.filterParser(options: parserOptions)
        capture.reset()
        if let projected {
            // Valid JSON, and the events the capture acts on (and, where its own pass over a shared projection
            // declined, the mapping's members, which it skips): yajl parses the projection alone.
            do {
                try parser.feedScanned(projected)
                try parser.finish()
                if parser.completed { return capture.keeps() ? nil : .filtered }
            } catch {
                // (Not expected of a projection the kernel vouched for: the record is parsed whole below.)
            }
            parser.restart()
            capture.reset()
        }
        do {
            try parser.feed(record)
            try parser.finish()
        } catch {
            return .rejected(.syntax(Self.syntaxError(error)))
        }
        guard parser.completed else { return Self.noValue(record.count) }
        return capture.keeps() ? nil : .filtered
    }

    public mutating func beginRecord() {
        ensureUniquePlan()
        parser = nil
        recordOpen = true
        failure = nil
        held.removeAll(keepingCapacity: true)
        scanner = TokenBoundaryScanner()
        fed = 0
        incremental = false
    }

    private var recordOpen = false
    private var fed = 0
    /// Pieces are collected until the record ends (then it is mapped whole, as by `map(record:into:)`) or grows
    /// past `Self.collectLimit`; from then on they are fed to a parser as they come, cut at token boundaries —
    /// with a filter, one parse shared by the mapping and the filter, which then skip nothing inside yajl.
    private var incremental = false
    static let collectLimit = 1 << 18

    public mutating func continueRecord(_ part: UnsafeRawBufferPointer) {
        guard failure == nil, recordOpen else { return }
        fed += part.count
        if !incremental {
            held.append(contentsOf: part)
            guard held.count > Self.collectLimit else { return }
            incremental = true
            let parser = plan!.incrementalParser(options: parserOptions)
            self.parser = parser
            let pending = held
            held.removeAll(keepingCapacity: true)
            pending.withUnsafeBytes { feedAtTokenBoundary($0, parser) }
            return
        }
        feedAtTokenBoundary(part, parser!)
    }

    private mutating func feedAtTokenBoundary(_ part: UnsafeRawBufferPointer, _ parser: StreamParser) {
        let cut = scanner.lastBoundary(in: part)
        do {
            if cut > 0 {
                if held.isEmpty {
                    try parser.feed(UnsafeRawBufferPointer(rebasing: part[..<cut]))
                } else {
                    held.append(contentsOf: part[..<cut])
                    try held.withUnsafeBytes { try parser.feed($0) }
                    held.removeAll(keepingCapacity: held.count <= 1 << 20)
                }
            }
            held.append(contentsOf: part[cut...])
        } catch {
            failure = error
        }
    }

    public mutating func endRecord(into writer: inout JSONWriter) -> RecordOutcome {
        let mark = writer.bytes.count
        let outcome = endPieces(into: &writer)
        return exploded(outcome, from: mark, in: &writer)
    }

    private mutating func endPieces(into writer: inout JSONWriter) -> RecordOutcome {
        defer {
            parser = nil
            recordOpen = false
            held.removeAll(keepingCapacity: held.count <= 1 << 20)
        }
        guard recordOpen else { return .rejected(.noOutput(warnings: [])) }
        guard let parser else {
            // The whole record was collected.
            return held.withUnsafeBytes { mapWhole($0, into: &writer) }
        }
        if failure == nil {
            do {
                if !held.isEmpty { try held.withUnsafeBytes { try parser.feed($0) } }
                try parser.finish()
            } catch {
                failure = error
            }
        }
        if let failure { return .rejected(.syntax(Self.syntaxError(failure))) }
        let (root, capture) = plan!.incrementalConsumers
        return Self.outcome(parser, root: root, capture: capture, recordLength: fed, into: &writer)
    }

    private static func syntaxError(_ error: any Error) -> JSONSyntaxError {
        error as? JSONSyntaxError ?? JSONSyntaxError(byteOffset: 0, message: "\(error)")
    }

    private static func noValue(_ recordLength: Int) -> RecordOutcome {
        .rejected(.syntax(JSONSyntaxError(byteOffset: recordLength, message: "no JSON value")))
    }

    private static func outcome(
        _ parser: StreamParser, root: ValueSink, capture: FilterCapture?, recordLength: Int, into writer: inout JSONWriter
    ) -> RecordOutcome {
        guard parser.completed else { return noValue(recordLength) }
        if let capture, !capture.keeps() { return .filtered }
        if root.isFatal { return .rejected(.mapping(root.errors)) }
        guard root.kind != .absent else { return .rejected(.noOutput(warnings: root.errors)) }
        writer.writeReleasing(root.output.bytes)  // (read no more: the next record clears it)
        return .mapped(warnings: root.errors)
    }
}

/// The compiled sinks of one engine value, the skipping state they share with the parser, and the memory the
/// parser's yajl handles recycle.
final class CompiledPlan {
    let skip: ParseSkip
    /// The mapping's sink, alone with its events (it skips inside yajl what it does not read).
    let root: ValueSink
    /// The filter's capture, alone with the events of a parse of its own (`StreamEngine.mapWhole`).
    let capture: FilterCapture?
    let yajlMemory = YajlMemory()
    /// Copies records and containers verbatim: each record, when the mapping copies it whole and as it is
    /// (`identity` at the root, or a type check: `verbatimTypes`), and the containers of the copies that ask
    /// (`ParseSkip.requestCopy`).
    let copier = VerbatimCopier()
    /// Set when the mapping copies each record whole and as it is: the types it must have (nil: any).
    let verbatimTypes: JSONTypeSet??
    /// Set when the mapping keeps every member and renames some top-level ones: records copied verbatim, then
    /// their members rearranged (`RenamedCopy`).
    let renamedCopy: RenamedCopy?
    /// Set when the mapping reads only some members of a record's objects: what yajl parses of each record.
    let projector: RecordProjector?
    /// The same for the filter's parse of its own (`capture`): what yajl parses of each record for the filter.
    let filterProjector: RecordProjector?
    /// Set when the mapping's fields are written straight from the values the projector found (`ProjectedFields`).
    let projectedFields: ProjectedFields?
    /// Set when the filter is evaluated on the values its projector found (`ProjectedFilter`).
    let projectedFilter: ProjectedFilter?
    /// The filter and the mapping read the same projection (`projector` is `filterProjector`, which keeps what
    /// either reads, strings lifted out for the mapping only): one pass over the record for both.
    let sharesProjection: Bool
    /// With a shared projection: the filter's members of it (a pass over the projection, a few hundred bytes of a
    /// tweet), which yajl parses for the filter, instead of the projection with the mapping's members skipped.
    let filterReprojector: RecordProjector?
    /// The parsers of whole records, restarted for each: a record costs no parser object.
    private var reusableParser: StreamParser?
    private var reusableFilterParser: StreamParser?
    private let mapper: Mapper
    private let filter: RecordFilter?
    private let mutations: StreamMutations
    /// For records fed as they come with a filter: the mapping and the filter sharing one parse (compiled at the
    /// first such record).
    private var shared: (root: ValueSink, capture: FilterCapture, events: FanOut)?

    init(_ mapper: Mapper, filter: RecordFilter? = nil, mutations: StreamMutations = StreamMutations()) {
        let skip = ParseSkip.allocate()
        self.skip = skip
        self.mapper = mapper
        self.filter = filter
        self.mutations = mutations
        let root = StreamCompiler(mutations: mutations, skip: skip).compile(mapper, exclusive: true)
        self.root = root
        capture = filter.map { FilterCapture($0, skip: skip, alone: true, nullIsAbsent: mutations.filterTakesNullForAbsent) }
        if mutations.none, let copy = root as? CopySink, let types = copy.verbatimCopyTypes {
            verbatimTypes = .some(types)
        } else {
            verbatimTypes = nil
        }
        renamedCopy = mutations.none || mutations.renamedCopyKeepsShadowedKeys
            ? RenamedCopy(mapper, keepsShadowedKeys: mutations.renamedCopyKeepsShadowedKeys) : nil
        if let capture, let both = RecordProjector(roots: [(root, true), (capture.consumer, false)]) {
            (projector, filterProjector, sharesProjection) = (both, both, true)
            filterReprojector = RecordProjector(root: capture.consumer, lifts: false)
        } else {
            projector = RecordProjector(root: root)
            // (A filter that reads every member leaves the mapping its projector; else the filter has one alone.)
            filterProjector = projector == nil ? capture.flatMap { RecordProjector(root: $0.consumer) } : nil
            (sharesProjection, filterReprojector) = (false, nil)
        }
        projectedFields = mutations.none && root is ObjectSink ? projector.flatMap { ProjectedFields(mapper, projector: $0) } : nil
        if mutations.none, let filter, let filterProjector {
            projectedFilter = ProjectedFilter(filter, projector: filterProjector)
        } else {
            projectedFilter = nil
        }
    }

    /// Records the whole-record parser replayed (`YajlParserBase.replays`), both parsers counted.
    var replayedProjections: Int { (reusableParser?.replays ?? 0) + (reusableFilterParser?.replays ?? 0) }

    func wholeRecordParser(options: JSONParserOptions) -> StreamParser {
        Self.reuse(&reusableParser, options) { StreamParser(root: root, options: options, skip: skip, memory: yajlMemory, copier: copier) }
    }

    func filterParser(options: JSONParserOptions) -> StreamParser {
        Self.reuse(&reusableFilterParser, options) {
            StreamParser(root: capture!.consumer, options: options, skip: skip, memory: yajlMemory, copier: copier)
        }
    }

    private static func reuse(_ parser: inout StreamParser?, _ options: JSONParserOptions, make: () -> StreamParser) -> StreamParser {
        if let parser, parser.parses(as: options) {
            parser.restart()
            return parser
        }
        let made = make()
        parser = made
        return made
    }

    /// The consumers of a record fed as it comes: the mapping alone, or with a filter the mapping and the capture
    /// sharing the events (neither may skip inside yajl what the other reads).
    var incrementalConsumers: (root: ValueSink, capture: FilterCapture?) {
        guard filter != nil else { return (root, nil) }
        let shared = sharedConsumers()
        return (shared.root, shared.capture)
    }

    /// A new parser for a record fed as it comes (its consumers' values reset).
    func incrementalParser(options: JSONParserOptions) -> StreamParser {
        let events: EventConsumer
        if filter != nil {
            let shared = sharedConsumers()
            shared.capture.reset()
            events = shared.events
        } else {
            events = root
        }
        return StreamParser(root: events, options: options, skip: skip, memory: yajlMemory, copier: copier)
    }

    private func sharedConsumers() -> (root: ValueSink, capture: FilterCapture, events: FanOut) {
        if let shared { return shared }
        let root = StreamCompiler(mutations: mutations, skip: skip).compile(mapper, exclusive: false)
        let capture = FilterCapture(filter!, skip: skip, alone: false, nullIsAbsent: mutations.filterTakesNullForAbsent)
        let made = (root, capture, FanOut([root, capture.consumer]))
        shared = made
        return made
    }

    deinit { skip.deallocate() }
}

/// Its compiled plan is shared by copies until one of them maps (then that copy compiles its own): two threads
/// must not map with copies of one engine. Make an engine per thread from the same `Mapper` (which is `Sendable`).
@available(*, unavailable, message: "make a StreamEngine per thread from the same Mapper")
extension StreamEngine: Sendable {}

/// Forwards yajl's events to the compiled root consumer, skipping what `ParseSkip` hides. yajl reaches its final
/// methods without a virtual call (`streamCallbackTable`), so each event's path is compiled as one piece. A root
/// that copies its value whole (`CopySink`: `identity`, type checks) receives its events after the first one
/// directly, one method per event, with no event value built or switched on.
final class StreamParser: YajlParserBase {
    /// The plan keeps the root alive for longer than any parse it drives: no reference counting per event.
    private let root: ConsumerRef
    private let skip: ParseSkip
    /// The root, when its `next` is exactly `CopySink`'s per-event methods (it skips rejected containers inside
    /// yajl, so it never counts depth). Set once the value's first event went through `start`.
    private let copyRoot: Unmanaged<CopySink>?
    @exclusivity(unchecked) private var direct: Unmanaged<CopySink>?
    @exclusivity(unchecked) private var started = false
    /// Copies containers verbatim for the copies that ask (the plan's).
    private let copier: VerbatimCopier
    @exclusivity(unchecked) private(set) var completed = false
    /// Per depth (modulo `backoffSlots`), for array elements: container starts `copiesAhead` lets pass before it
    /// tries again, and how many it let pass last time (doubled at each element found too short, 0 after a copy).
    /// (Allocated at the first try: most parsers never copy.)
    @exclusivity(unchecked) var copyBackoff: UnsafeMutablePointer<(wait: UInt8, span: UInt8)>?
    /// The depth of the innermost container that could not be copied (`copiesAhead`); `Int.max`: none.
    @exclusivity(unchecked) var copyBarrier = Int.max

    init(root: EventConsumer, options: JSONParserOptions, skip: ParseSkip, memory: YajlMemory, copier: VerbatimCopier) {
        self.root = ConsumerRef(root)
        self.skip = skip
        self.copier = copier
        if let copy = root as? CopySink, copy.parseSkip != nil {
            copyRoot = .passUnretained(copy)
        } else {
            copyRoot = nil
        }
        super.init(options: options, events: skip, memory: memory)
    }

    deinit { copyBackoff?.deallocate() }

    override func willParseChunk() { copyBarrier = .max }

    override func restart() {
        super.restart()
        copyBarrier = .max
        direct = nil
        started = false
        completed = false
    }

    @inline(__always)
    private func dispatch(_ e: JSONEvent) throws {
        if started {
            completed = try root.next(e)
        } else {
            started = true
            completed = try root.start(e)
            direct = copyRoot
        }
    }

    @inline(__always)
    func null() -> Bool {
        if let direct {
            completed = direct._withUnsafeGuaranteedRef { $0.copyLiteral(0x6C6C_756E, count: 4) }
            return true
        }
        return call { try dispatch(.null) }
    }

    @inline(__always)
    func bool(_ b: Bool) -> Bool {
        if let direct {
            completed = direct._withUnsafeGuaranteedRef {
                b ? $0.copyLiteral(0x6575_7274, count: 4) : $0.copyLiteral(0x65_736C_6166, count: 5)
            }
            return true
        }
        return call { try dispatch(.bool(b)) }
    }

    @inline(__always)
    func number(_ text: UnsafeRawBufferPointer) -> Bool {
        if let direct {
            completed = direct._withUnsafeGuaranteedRef { $0.copyNumber(text) }
            return true
        }
        return call { try dispatch(.number(text)) }
    }

    @inline(__always)
    func string(_ utf8: UnsafeRawBufferPointer) -> Bool {
        let verbatim = isVerbatim(utf8)
        if let direct {
            completed = direct._withUnsafeGuaranteedRef { $0.copyString(utf8, verbatim: verbatim) }
            return true
        }
        return call { try dispatch(.string(utf8, verbatim: verbatim)) }
    }

    @inline(__always)
    func key(_ utf8: UnsafeRawBufferPointer) -> Bool {
        skip.endPending()
        if let direct {
            let verbatim = isVerbatim(utf8)
            completed = direct._withUnsafeGuaranteedRef { $0.copyKey(utf8, verbatim: verbatim) }
            return true
        }
        // A member nobody reads: skipped ahead of yajl, with the unread members after it, when the skipper vouches
        // for them (yajl stops, then goes on after them), else inside yajl.
        if skip.skipsMember(utf8, depth: depth) {
            let depth = depth
            return !skipsAhead(after: utf8) { skip.skipsMember($0, depth: depth) }
        }
        let verbatim = isVerbatim(utf8)
        return call { try dispatch(.key(utf8, verbatim: verbatim)) }
    }

    @inline(__always)
    func startObject() -> Bool {
        guard enter(object: true) else { return false }
        if skip.swallowsStart() { return true }
        if let direct {
            completed = direct._withUnsafeGuaranteedRef { $0.copyStartObject() }
            return copyAheadIfAsked()
        }
        let delivered = call { try dispatch(.startObject) }
        skip.objectStarted(depth: depth)
        return delivered && copyAheadIfAsked()
    }

    @inline(__always)
    func startArray() -> Bool {
        guard enter(object: false) else { return false }
        if skip.swallowsStart() { return true }
        if let direct {
            completed = direct._withUnsafeGuaranteedRef { $0.copyStartArray() }
            return copyAheadIfAsked()
        }
        return call { try dispatch(.startArray) } && copyAheadIfAsked()
    }

    /// After a container's start event: when a copy asked for it (`ParseSkip.requestCopy`), copies the container
    /// verbatim ahead of yajl if it can (false: yajl stops, and goes on at the closing bracket).
    @inline(__always)
    private func copyAheadIfAsked() -> Bool {
        guard let sink = skip.takeCopyRequest() else { return true }
        return !copyAhead(sink)
    }

    @inline(never)
    private func copyAhead(_ sink: Unmanaged<CopySink>) -> Bool {
        guard let interior = copiesAhead(with: copier) else { return false }
        sink._withUnsafeGuaranteedRef { $0.copyInterior(interior) }
        return true
    }

    @inline(__always)
    func endObject() -> Bool {
        depth -= 1
        containerEnded()
        if skip.swallowsEnd() { return true }
        if let direct {
            return call { completed = try direct._withUnsafeGuaranteedRef { try $0.copyEndObject() } }
        }
        skip.objectEnded(depth: depth + 1)
        return call { try dispatch(.endObject) }
    }

    @inline(__always)
    func endArray() -> Bool {
        depth -= 1
        containerEnded()
        if skip.swallowsEnd() { return true }
        if let direct {
            return call { completed = try direct._withUnsafeGuaranteedRef { try $0.copyEndArray() } }
        }
        return call { try dispatch(.endArray) }
    }
}

#if STREAMMAP_MUTATIONS
/// Rules a test can break on purpose (see `StreamEngine.init(mapper:parserOptions:mutation:)`).
enum StreamMutation: CaseIterable {
    /// `nonFatal`/`optional` on a container drops its default value.
    case fallbackDropped
    /// `arrayOf` lets a fatal element pass as a dropped one (the array does not fail).
    case fatalElementsDropped
    /// Copied objects keep the first of duplicate keys instead of the last.
    case duplicateKeysFirstWins
    /// The `where` filter takes a null value for an absent one.
    case filterTakesNullForAbsent
    /// `unmapped: keep` copied with renames keeps a member whose key a destination has (the tree drops it).
    case renamedCopyKeepsShadowedKeys
}
#endif

/// Which rule of the stream engine is broken on purpose, for the mutation tests (`StreamMutationTests`): none in a
/// release build, where the rule can't be named (`StreamMutation` exists only with `STREAMMAP_MUTATIONS`, defined for
/// debug builds in Package.swift) and every question below is a constant false the compiler folds away — the engine
/// that ships carries no test hook.
struct StreamMutations {
    #if STREAMMAP_MUTATIONS
    private var broken: StreamMutation?
    init(_ broken: StreamMutation? = nil) { self.broken = broken }
    var none: Bool { broken == nil }
    var fallbackDropped: Bool { broken == .fallbackDropped }
    var fatalElementsDropped: Bool { broken == .fatalElementsDropped }
    var duplicateKeysFirstWins: Bool { broken == .duplicateKeysFirstWins }
    var filterTakesNullForAbsent: Bool { broken == .filterTakesNullForAbsent }
    var renamedCopyKeepsShadowedKeys: Bool { broken == .renamedCopyKeepsShadowedKeys }
    #else
    init() {}
    var none: Bool { true }
    var fallbackDropped: Bool { false }
    var fatalElementsDropped: Bool { false }
    var duplicateKeysFirstWins: Bool { false }
    var filterTakesNullForAbsent: Bool { false }
    var renamedCopyKeepsShadowedKeys: Bool { false }
    #endif
}

/// Compiles a mapper into sinks: streaming ones where the container logic is reproduced, the exact
/// materializing base sink everywhere else.
struct StreamCompiler {
    var mutations = StreamMutations()
    /// The plan's skipping state, given to the consumers that receive their events alone.
    let skip: ParseSkip

    /// `exclusive`: the sink receives its events alone (not through a `FanOut`), so it may skip inside yajl.
    func compile(_ mapper: Mapper, exclusive: Bool) -> ValueSink {
        let sink = compileSink(mapper, exclusive: exclusive)
        if exclusive { sink.parseSkip = skip }
        return sink
    }

    private func compileSink(_ mapper: Mapper, exclusive: Bool) -> ValueSink {
        let compile = { (m: Mapper) in self.compile(m, exclusive: exclusive) }
        switch mapper.kind {
        case .identity:
            return CopySink(mapper, allowed: nil, keepFirstDuplicate: mutations.duplicateKeysFirstWins)
        case .check(let types):
            return CopySink(mapper, allowed: types, keepFirstDuplicate: mutations.duplicateKeysFirstWins)
        case .notNull(let inner):
            return NotNullSink(mapper, inner: compile(inner))
        case .nonFatal(let inner, let fallback, _):
            return NonFatalSink(mapper, inner: compile(inner), fallback: mutations.fallbackDropped ? nil : fallback)
        case .policy(let inner, let policy):
            return PolicySink(mapper, inner: compile(inner), policy: policy)
        case .arrayOf(let item):
            let sink = ArraySink(mapper, item: compile(item))
            #if STREAMMAP_MUTATIONS
            sink.fatalElementsDropped = mutations.fatalElementsDropped
            #endif
            return sink
        case .object(let mapping):
            if case .inPlace = mapping.unmapped,
               let sink = InPlaceSink(mapper, mapping: mapping, compiler: self, keepFirstDuplicate: mutations.duplicateKeysFirstWins) {
                return sink
            }
            if let sink = ObjectSink(mapper, mapping: mapping, exclusive: exclusive, compiler: self) { return sink }
            let whole = ValueSink(mapper)
            if case .inPlace = mapping.unmapped {
                whole.materializedBecause = "the object is kept in place (\"unmapped\": \"inPlace\")"
            } else if mapping.fields.contains(where: { $0.computed == nil && $0.sources.contains { $0.steps.isEmpty } }) {
                whole.materializedBecause = "a field reads the whole object"
            } else {
                whole.materializedBecause = "destinations nest in each other"
            }
            return whole
        case .postProcess(let inner, let post) where post.unchangedWhen != nil:
            return ResultCheckSink(mapper, inner: compile(inner), post: post)
        case .split(let forward, _):
            return compile(forward)
        case .convert(.keys(let style, let deep, _)):
            return CopySink(mapper, allowed: nil, renamer: KeyRenamer(style: style), renamesDeep: deep,
                            keepFirstDuplicate: mutations.duplicateKeysFirstWins)
        case .thread(let stages):
            guard let (formats, unit) = Mapper.dateToNumberStages(stages) else { return ValueSink(mapper) }
            return DateNumberSink(mapper, formats: formats, unit: unit)
        default:
            return ValueSink(mapper)
        }
    }
}
