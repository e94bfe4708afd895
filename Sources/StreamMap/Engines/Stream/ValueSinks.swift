#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What a mapped value turned out to be.
enum ResultKind { case absent, null, value }

/// Maps one value as its events arrive and holds the result: output bytes, errors, kind.
///
/// The base class is exact by construction: scalars and absent values go through `Mapper.map` (the tree
/// engine's semantics), and a container is materialized (only this subtree) and mapped the same way.
/// Subclasses stream containers instead, reproducing the tree semantics rule for rule.
class ValueSink: EventConsumer {
    let mapper: Mapper
    /// The result's canonical text. The sink owns the buffer (a wrapper swaps buffers with its inner sink).
    @exclusivity(unchecked) var output = ByteBuffer(capacity: 64)
    @exclusivity(unchecked) var errors: [MapError] = []
    @exclusivity(unchecked) var kind = ResultKind.absent
    /// Keep the mapped value as a `JSONValue` (fields with several destinations need it).
    var keepsValue = false
    /// Write the mapped value's text (a filter's capture keeps the value alone: `keepsValue` and not this).
    var writesText = true
    @exclusivity(unchecked) var value: JSONValue?

    @exclusivity(unchecked) private var builder = JSONTreeBuilder()
    @exclusivity(unchecked) private var depth = 0
    /// Depth inside a container whose type the sink rejected, while it skips the rest by counting depth.
    @exclusivity(unchecked) private var rejectedDepth = 0

    init(_ mapper: Mapper) { self.mapper = mapper }

    /// Why this sink builds containers whole, when no more precise reason is known than its mapper's kind.
    var materializedBecause: String?

    /// How this sink handles the value it receives (`streammap explain` reads it): the base sink builds a
    /// container whole; subclasses that stream say so.
    var handling: StreamHandling { .materialized(because: materializedBecause ?? MapperExplanation.kindName(mapper)) }

    deinit { output.deallocate() }

    var isFatal: Bool { errors.contains { $0.isFatal } }

    func clear() {
        // Back to a small buffer if one value made it huge.
        output.reset(keeping: 1 << 20)
        if !errors.isEmpty { errors = [] }  // (the array may be a kept result's: dropped, not emptied in place)
        kind = .absent
        if value != nil { value = nil }
    }

    final override func start(_ e: JSONEvent) throws -> Bool {
        clear()
        rejectedDepth = 0
        switch e {
        case .startObject, .startArray:
            return try startContainer(e)
        default:
            try startScalar(e)
            return true
        }
    }

    /// A string lifted out of the projection (`raw`: its text in the record, quotes included): exactly what
    /// `start` does with its event. Returns true (a scalar is complete at once).
    final func startLifted(_ raw: UnsafeRawBufferPointer, _ lifts: LiftedStrings) throws -> Bool {
        clear()
        rejectedDepth = 0
        try startLiftedString(raw, lifts)
        return true
    }

    /// `startScalar` for a lifted string; subclasses that read the string's text as it is take it from `raw`.
    func startLiftedString(_ raw: UnsafeRawBufferPointer, _ lifts: LiftedStrings) throws {
        try startScalar(lifts.event(raw))
    }

    /// A scalar value: mapped by `Mapper.map`. Subclasses take faster routes with the same result.
    func startScalar(_ e: JSONEvent) throws {
        setResult(mapper.map(try e.scalarValue()))
    }

    final override func next(_ e: JSONEvent) throws -> Bool {
        guard rejectedDepth == 0 else {
            switch e {
            case .startObject, .startArray: rejectedDepth += 1
            case .endObject, .endArray: rejectedDepth -= 1
            default: break
            }
            return rejectedDepth == 0
        }
        return try nextInContainer(e)
    }

    /// Skips the rest of a container whose start the sink has just rejected (its type; the result is already
    /// set): inside yajl when the sink receives its events alone, else by counting depth. Returns what
    /// `startContainer` returns.
    final func skipRejectedContainer() -> Bool {
        if let parseSkip {
            parseSkip.skipContainer()
            return true
        }
        rejectedDepth = 1
        return false
    }

    /// The value is absent: map nil.
    func resolveAbsent() {
        clear()
        setResult(absentResult ?? mapper.map(nil))
    }

    /// `mapper.map(nil)`, worked out once when the mapper calls no closure (then it is the same for every record:
    /// a rejected record is mostly required fields that are absent, each an error with its message).
    private lazy var absentResult: MapResult? = mapper.isDeterministic ? mapper.map(nil) : nil

    func setResult(_ r: MapResult) {
        errors = r.errors
        guard !r.isFatal, let v = r.value else {
            kind = .absent
            return
        }
        if writesText { output.write(v) }
        kind = v.isNull ? .null : .value
        if keepsValue { value = v }
    }

    /// Takes another sink's result (wrappers pass their inner result on without copying bytes).
    func adopt(_ inner: ValueSink) {
        swap(&output, &inner.output)
        // Most results have no errors and keep no value: nothing to count references of then.
        if !(errors.isEmpty && inner.errors.isEmpty) { errors = inner.errors }
        kind = inner.kind
        if !(value == nil && inner.value == nil) { value = inner.value }
    }

    // MARK: Containers: materialize this subtree (subclasses stream instead)

    func startContainer(_ e: JSONEvent) throws -> Bool {
        builder = JSONTreeBuilder()
        depth = 1
        try e.feed(&builder)
        return false
    }

    func nextInContainer(_ e: JSONEvent) throws -> Bool {
        switch e {
        case .startObject, .startArray: depth += 1
        case .endObject, .endArray: depth -= 1
        default: break
        }
        try e.feed(&builder)
        guard depth == 0 else { return false }
        let v = builder.values[0]
        let deep = builder.maximumDepth > JSONValue.iterativeReleaseDepth
        builder = JSONTreeBuilder()
        setResult(mapper.map(v))
        if deep { JSONValue.release(consume v) }
        return true
    }
}

/// `thread(stringToDate, dateToNumber)`: a string's epoch number written from the event's bytes, through the
/// routine `Mapper.map` takes too (`Mapper.epochNumberText`), without building the string, the date or the
/// number as values; anything else takes the exact route.
final class DateNumberSink: ValueSink {
    override var handling: StreamHandling { .streamed }
    private let formats: [DateSyntax]
    private let unit: EpochUnit

    init(_ mapper: Mapper, formats: [DateSyntax], unit: EpochUnit) {
        self.formats = formats
        self.unit = unit
        super.init(mapper)
    }

    override func startScalar(_ e: JSONEvent) throws {
        guard !keepsValue, case .string(let utf8, _) = e,
              let t = Mapper.epochInstant(formats, utf8: utf8.assumingMemoryBound(to: UInt8.self))
        else { return try super.startScalar(e) }
        // `Timestamp.exactEpochNumber`'s text: its usual case (a whole number far from Int64's limits) written
        // as digits straight away, the rest as its text.
        if let whole = TimestampSupport.wholeEpochValue(t, unit: unit) {
            output.appendDecimal(whole)
        } else if var number = t.exactEpochNumber(unit: unit) {
            number.withUTF8 { output.writeRaw(UnsafeRawBufferPointer($0)) }
        } else {
            return try super.startScalar(e)
        }
        kind = .value
    }
}

/// A mapper around one inner mapper (`notNull`, `nonFatal`, `policy`, a result check): the value streams through
/// the inner sink, and `finish()` makes this sink's result from the inner one's once it is complete.
class WrapperSink: ValueSink {
    let inner: ValueSink
    override var handling: StreamHandling { inner.handling }
    /// A container goes to the inner sink whole.
    override func projectionNode(in builder: inout ProjectionBuilder) -> Int32? { inner.projectionNode(in: &builder) }
    init(_ mapper: Mapper, inner: ValueSink) {
        self.inner = inner
        super.init(mapper)
    }
    override func startContainer(_ e: JSONEvent) throws -> Bool { try inner.start(e) ? finish() : false }
    override func nextInContainer(_ e: JSONEvent) throws -> Bool { try inner.next(e) ? finish() : false }
    override func startScalar(_ e: JSONEvent) throws { _ = try inner.start(e) ? finish() : false }
    override func startLiftedString(_ raw: UnsafeRawBufferPointer, _ lifts: LiftedStrings) throws {
        _ = try inner.startLifted(raw, lifts) ? finish() : false
    }
    /// This sink's result from the inner sink's complete one; returns true.
    func finish() -> Bool {
        adopt(inner)
        return true
    }
}

/// `notNull(inner)`: the inner result, unless it has no error and is absent or null.
final class NotNullSink: WrapperSink {
    override func finish() -> Bool {
        if inner.errors.isEmpty && inner.kind != .value {
            setResult(.failure(MapError(.required, inner.kind == .null ? "value is required, found null" : "value is required, found absent")))
        } else {
            adopt(inner)
        }
        return true
    }
}

/// `postProcess(inner, post)` whose post-processor reads only the result and tests its text
/// (`PostProcessor.unchangedWhen`: the Arrow output's checks that a value fits its column): the inner mapper
/// streams as it would alone, and its result is kept when the test passes; otherwise the result is built as a
/// value from its text and goes through `post.forward`, as in the tree engine.
final class ResultCheckSink: WrapperSink {
    let post: PostProcessor
    init(_ mapper: Mapper, inner: ValueSink, post: PostProcessor) {
        self.post = post
        super.init(mapper, inner: inner)
    }
    override func finish() -> Bool {
        if inner.isFatal || inner.kind == .absent {
            // (`forward` is given a fatal or absent result as it is.)
            setResult(post.forward(nil, inner.isFatal ? .failure(inner.errors) : .success(nil, warnings: inner.errors)))
            return true
        }
        let text = UnsafeRawBufferPointer(start: inner.output.base, count: inner.output.count)
        if !keepsValue && post.unchangedWhen!(text) {
            adopt(inner)
            return true
        }
        let value: JSONValue
        do {
            value = try JSONParser.parse(text, options: JSONParserOptions(maximumDepth: Int.max))
        } catch {
            setResult(.failure(MapError(.value, "the mapped value could not be read back: \(error)")))
            return true
        }
        setResult(post.forward(nil, .success(value, warnings: inner.errors)))
        return true
    }
}

/// `nonFatal(inner, fallback)`: a fatal inner result becomes the fallback plus the errors as warnings.
final class NonFatalSink: WrapperSink {
    let fallback: Fallback?
    init(_ mapper: Mapper, inner: ValueSink, fallback: Fallback?) {
        self.fallback = fallback
        super.init(mapper, inner: inner)
    }
    override func finish() -> Bool {
        if inner.isFatal {
            setResult(.success(fallback?.make(), warnings: inner.errors))
        } else {
            adopt(inner)
        }
        return true
    }
}

/// `policy(inner, p)` on a container (never absent or null): the inner result, or the `invalid` action.
final class PolicySink: WrapperSink {
    let policy: FieldPolicy
    init(_ mapper: Mapper, inner: ValueSink, policy: FieldPolicy) {
        self.policy = policy
        super.init(mapper, inner: inner)
    }
    /// A non-null scalar goes to the inner sink (the policy only decides absent and null values, and what a fatal
    /// inner result becomes); a null the policy handles itself takes the exact route.
    override func startScalar(_ e: JSONEvent) throws {
        if case .null = e, policy.null != .passToMapper {
            setResult(mapper.map(try e.scalarValue()))
            return
        }
        try super.startScalar(e)
    }
    override func finish() -> Bool {
        if inner.isFatal {
            setResult(Mapper.apply(policy.invalid, errors: inner.errors))
        } else {
            adopt(inner)
        }
        return true
    }
}

/// `arrayOf(item)`, element by element.
final class ArraySink: ValueSink {
    let item: ValueSink
    override var handling: StreamHandling { .streamed }
    @exclusivity(unchecked) private var index = 0
    @exclusivity(unchecked) private var written = 0
    @exclusivity(unchecked) private var inElement = false
    @exclusivity(unchecked) private var fatal = false
    #if STREAMMAP_MUTATIONS
    /// Test-only mutation (see `StreamMutation.fatalElementsDropped`).
    var fatalElementsDropped = false
    #else
    var fatalElementsDropped: Bool { false }
    #endif

    init(_ mapper: Mapper, item: ValueSink) {
        self.item = item
        super.init(mapper)
    }

    override func startContainer(_ e: JSONEvent) throws -> Bool {
        if case .startObject = e {
            setResult(.failure(.typeMismatch(expected: "array", found: .object(JSONObject()))))
            return skipRejectedContainer()
        }
        index = 0
        written = 0
        inElement = false
        fatal = false
        output.writeRaw(UInt8(ascii: "["))
        return false
    }

    override func nextInContainer(_ e: JSONEvent) throws -> Bool {
        if inElement {
            if try item.next(e) { collect() }
            return false
        }
        if case .endArray = e {
            if fatal {
                output.removeAll()
                kind = .absent
            } else {
                output.writeRaw(UInt8(ascii: "]"))
                kind = .value
            }
            return true
        }
        if try item.start(e) { collect() } else { inElement = true }
        return false
    }

    private func collect() {
        inElement = false
        defer { index += 1 }
        if !item.errors.isEmpty {
            for var error in item.errors {
                error.sourcePath = error.sourcePath.prepending(.index(index))
                error.destinationPath = error.destinationPath.prepending(.index(index))
                if fatalElementsDropped { error.isFatal = false }
                if error.isFatal { fatal = true }
                errors.append(error)
            }
            if item.isFatal || item.kind == .absent { return }
        }
        if fatal { return }
        if written > 0 { output.writeRaw(UInt8(ascii: ",")) }
        written += 1
        if item.kind == .absent { output.writeNull() } else { output.appendReleasing(item.output.bytes) }  // (cleared by the next element)
    }
}
