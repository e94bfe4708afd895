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
    @exclusivity(unchecked) var output = JSONWriter()
    @exclusivity(unchecked) var errors: [MapError] = []
    @exclusivity(unchecked) var kind = ResultKind.absent
    /// Keep the mapped value as a `JSONValue` (fields with several destinations need it).
    var keepsValue = false
    @exclusivity(unchecked) fileprivate(set) var value: JSONValue?

    @exclusivity(unchecked) private var builder = JSONTreeBuilder()
    @exclusivity(unchecked) private var depth = 0
    /// Depth inside a container whose type the sink rejected, while it skips the rest by counting depth.
    @exclusivity(unchecked) private var rejectedDepth = 0

    init(_ mapper: Mapper) { self.mapper = mapper }

    var isFatal: Bool { errors.contains { $0.isFatal } }

    func clear() {
        // A wrapper takes its inner sink's bytes by swapping buffers (`adopt`), so the inner one is often empty.
        if !output.bytes.isEmpty { output.removeAll() }
        if !errors.isEmpty { errors.removeAll(keepingCapacity: true) }
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
        setResult(mapper.map(nil))
    }

    func setResult(_ r: MapResult) {
        errors = r.errors
        guard !r.isFatal, let v = r.value else {
            kind = .absent
            return
        }
        output.write(v)
        kind = v.isNull ? .null : .value
        if keepsValue { value = v }
    }

    /// Takes another sink's result (wrappers pass their inner result on without copying bytes).
    func adopt(_ inner: ValueSink) {
        swap(&output, &inner.output)
        errors = inner.errors
        kind = inner.kind
        value = inner.value
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

/// Copies a container through unchanged (`identity`, and type checks that pass), writing the canonical form as
/// events arrive. Duplicate keys are detected per object; then (rarely) the copy is re-parsed so that the last
/// value wins at the first position, exactly as in the tree.
final class CopySink: ValueSink {
    private let allowed: JSONTypeSet?
    /// The innermost open container (kept out of `enclosing`, so that the per-event work touches no array):
    /// whether it is an object, how many members or elements it has so far, and where its keys start in `keys`
    /// and in `longKeys`.
    @exclusivity(unchecked) private var top = Container(isObject: false, count: 0, firstKey: 0, firstLongKeyByte: 0)
    /// The containers around it, outermost first; `depth` counts all open ones.
    @exclusivity(unchecked) private var enclosing: [Container] = []

    private struct Container {
        var isObject: Bool
        var count: Int
        var firstKey: Int
        var firstLongKeyByte: Int
    }
    @exclusivity(unchecked) private var depth = 0
    /// The keys of the open objects: decoded length and first 8 bytes (`KeyTable.prefix`), which tell most keys
    /// apart without comparing bytes, and for longer keys where the rest is in `longKeys`.
    @exclusivity(unchecked) private var keys: [(length: Int, prefix: UInt64, rest: Int)] = []
    @exclusivity(unchecked) private var longKeys = ByteBuffer(capacity: 256)
    @exclusivity(unchecked) private var sawDuplicate = false

    private let keepFirstDuplicate: Bool
    /// Canonical text on its way to `output`, gathered in up to `scratchLimit` bytes (appending to a plain byte
    /// buffer is much cheaper than to `output`'s array, which checks for sharing on every append).
    @exclusivity(unchecked) private var scratch = ByteBuffer()
    private static let scratchLimit = 1 << 16

    deinit {
        scratch.deallocate()
        longKeys.deallocate()
        table.deallocate()
    }

    @inline(__always)
    private func flushScratch() {
        output.writeRaw(scratch.bytes)
        scratch.removeAll()
    }

    init(_ mapper: Mapper, allowed: JSONTypeSet?, keepFirstDuplicate: Bool = false) {
        self.allowed = allowed
        self.keepFirstDuplicate = keepFirstDuplicate
        super.init(mapper)
    }

    override func startContainer(_ e: JSONEvent) throws -> Bool {
        let isObject: Bool
        if case .startObject = e { isObject = true } else { isObject = false }
        if let allowed, !allowed.contains(isObject ? .object : .array) {
            errors = [.typeMismatch(expected: allowed.description, found: isObject ? .object(JSONObject()) : .array([]))]
            return skipRejectedContainer()
        }
        sawDuplicate = false
        scratch.reset(keeping: 1 << 18)
        longKeys.reset(keeping: 1 << 16)
        enclosing.removeAll(keepingCapacity: true)
        depth = 0
        keys.removeAll(keepingCapacity: true)
        open(isObject)
        return false
    }

    /// A scalar that passes the check is written from the event's bytes, as `Mapper.map` then `JSONWriter.write`
    /// would write it; one that fails takes the exact route (its error describes the value).
    override func startScalar(_ e: JSONEvent) throws {
        guard !keepsValue else { return try super.startScalar(e) }
        let type: JSONType
        switch e {
        case .null: type = .null
        case .bool: type = .boolean
        case .number(let text): type = JSONNumber.isIntegerLexeme(text) ? .integer : .number
        default: type = .string
        }
        if let allowed, !allowed.contains(JSONTypeSet(type)) { return try super.startScalar(e) }
        switch e {
        case .null:
            output.writeNull()
            kind = .null
            return
        case .bool(let b): output.writeBool(b)
        case .number(let text): output.writeRaw(text)
        case .string(let utf8, let verbatim): output.writeString(utf8: utf8, verbatim: verbatim)
        default: break
        }
        kind = .value
    }

    private func open(_ isObject: Bool) {
        scratch.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        if depth > 0 { enclosing.append(top) }
        top = Container(isObject: isObject, count: 0, firstKey: keys.count, firstLongKeyByte: longKeys.count)
        depth += 1
    }

    private func close() {
        depth -= 1
        if depth > 0 { top = enclosing.removeLast() }
    }

    /// Separator before a value in an array (object values follow their key).
    private func beforeValue() {
        guard !top.isObject else { return }
        if top.count > 0 { scratch.append(UInt8(ascii: ",")) }
        top.count += 1
    }

    override func nextInContainer(_ e: JSONEvent) throws -> Bool {
        switch e {
        case .null: beforeValue(); scratch.appendNull()
        case .bool(let b): beforeValue(); scratch.appendBool(b)
        case .number(let t): beforeValue(); scratch.append(t)
        case .string(let s, let verbatim):
            beforeValue()
            if s.count > Self.scratchLimit {
                // A big string goes straight to the output instead of growing the scratch buffer.
                flushScratch()
                output.writeString(utf8: s, verbatim: verbatim)
            } else {
                JSONEscaping.writeString(s, verbatim: verbatim, to: &scratch)
            }
        case .startObject: beforeValue(); open(true)
        case .startArray: beforeValue(); open(false)
        case .key(let k, let verbatim):
            if top.count > 0 { scratch.append(UInt8(ascii: ",")) }
            top.count += 1
            var rest = 0
            if k.count > 8 {
                rest = longKeys.count
                longKeys.append(UnsafeRawBufferPointer(rebasing: k[8...]))
            }
            keys.append((k.count, KeyTable.prefix(k), rest))
            if k.count > Self.scratchLimit {
                flushScratch()
                output.writeString(utf8: k, verbatim: verbatim)
            } else {
                JSONEscaping.writeString(k, verbatim: verbatim, to: &scratch)
            }
            scratch.append(UInt8(ascii: ":"))
        case .endObject:
            scratch.append(UInt8(ascii: "}"))
            if !sawDuplicate && !keepFirstDuplicate && hasDuplicate(from: top.firstKey) { sawDuplicate = true }
            longKeys.removeLast(longKeys.count - top.firstLongKeyByte)
            keys.removeLast(keys.count - top.firstKey)
            close()
        case .endArray:
            scratch.append(UInt8(ascii: "]"))
            close()
        }
        guard depth == 0 else {
            if scratch.count >= Self.scratchLimit { flushScratch() }
            return false
        }
        flushScratch()
        if sawDuplicate {
            // Canonical text re-parsed: duplicate keys collapse exactly as when the tree builder saw them.
            let v = try JSONParser.parse(output.bytes)
            output.removeAll()
            output.write(v)
            if keepsValue { value = v }
        } else if keepsValue {
            value = try JSONParser.parse(output.bytes)
        }
        kind = .value
        return true
    }

    /// A reusable open-addressing table of key indexes, for the duplicate check of large objects. A slot is in use
    /// only if it carries the current check's stamp, so the table is never cleared.
    @exclusivity(unchecked) private var table = UnsafeMutableBufferPointer<(stamp: UInt32, key: Int32)>(start: nil, count: 0)
    @exclusivity(unchecked) private var stamp: UInt32 = 0

    /// Whether two keys of the object whose keys start at `first` are equal.
    private func hasDuplicate(from first: Int) -> Bool {
        let n = keys.count - first
        guard n > 1 else { return false }
        if n <= 8 {
            for i in first..<keys.count {
                for j in (i + 1)..<keys.count where sameKey(i, j) { return true }
            }
            return false
        }
        return hasDuplicateHashed(from: first)
    }

    @inline(__always)
    private func sameKey(_ i: Int, _ j: Int) -> Bool {
        let a = keys[i], b = keys[j]
        guard a.length == b.length && a.prefix == b.prefix else { return false }
        guard a.length > 8 else { return true }
        return memcmp(longKeys.base + a.rest, longKeys.base + b.rest, a.length - 8) == 0
    }

    private func hasDuplicateHashed(from first: Int) -> Bool {
        let n = keys.count - first
        var size = 16
        while size < n * 2 { size <<= 1 }
        if table.count < size || stamp == .max {
            table.deallocate()
            table = .allocate(capacity: Swift.max(size, table.count))
            table.initialize(repeating: (0, 0))
            stamp = 0
        }
        stamp += 1
        let mask = size - 1
        var probes = 0
        for i in first..<keys.count {
            let h = (keys[i].prefix ^ UInt64(truncatingIfNeeded: keys[i].length)) &* 0x9E37_79B9_7F4A_7C15
            var slot = Int(truncatingIfNeeded: h >> 32) & mask
            while table[slot].stamp == stamp {
                if sameKey(Int(table[slot].key), i) { return true }
                slot = (slot + 1) & mask
                probes += 1
            }
            // The hash reads only a key's length and first 8 bytes: keys made to share them would make this
            // quadratic (200 000 such keys took a minute). Past a few probes per key, sort instead.
            if probes > 4 * n { return hasDuplicateSorted(from: first) }
            table[slot] = (stamp, Int32(i))
        }
        return false
    }

    /// The duplicate check by sorting the keys: O(n log n) whatever they are.
    private func hasDuplicateSorted(from first: Int) -> Bool {
        let order = (first..<keys.count).sorted { a, b in
            let x = keys[a], y = keys[b]
            if x.length != y.length { return x.length < y.length }
            if x.prefix != y.prefix { return x.prefix < y.prefix }
            guard x.length > 8 else { return false }
            return memcmp(longKeys.base + x.rest, longKeys.base + y.rest, x.length - 8) < 0
        }
        for (a, b) in zip(order, order.dropFirst()) where sameKey(a, b) { return true }
        return false
    }
}

/// `thread(stringToDate, dateToNumber)`: a string's epoch number written from the event's bytes, through the
/// routine `Mapper.map` takes too (`Mapper.epochNumberText`), without building the string, the date or the
/// number as values; anything else takes the exact route.
final class DateNumberSink: ValueSink {
    private let formats: [DateSyntax]
    private let unit: EpochUnit

    init(_ mapper: Mapper, formats: [DateSyntax], unit: EpochUnit) {
        self.formats = formats
        self.unit = unit
        super.init(mapper)
    }

    override func startScalar(_ e: JSONEvent) throws {
        guard !keepsValue, case .string(let utf8, _) = e,
              var number = Mapper.epochNumberText(formats, unit, utf8: utf8.assumingMemoryBound(to: UInt8.self))
        else { return try super.startScalar(e) }
        number.withUTF8 { output.writeRaw(UnsafeRawBufferPointer($0)) }
        kind = .value
    }
}

/// `notNull(inner)`: the inner result, unless it has no error and is absent or null.
final class NotNullSink: ValueSink {
    let inner: ValueSink
    init(_ mapper: Mapper, inner: ValueSink) {
        self.inner = inner
        super.init(mapper)
    }
    override func startContainer(_ e: JSONEvent) throws -> Bool { try inner.start(e) ? finish() : false }
    override func nextInContainer(_ e: JSONEvent) throws -> Bool { try inner.next(e) ? finish() : false }
    override func startScalar(_ e: JSONEvent) throws { _ = try inner.start(e) ? finish() : false }
    private func finish() -> Bool {
        if inner.errors.isEmpty && inner.kind != .value {
            setResult(.failure(MapError(.required, "value is required, found \(inner.kind == .null ? "null" : "absent")")))
        } else {
            adopt(inner)
        }
        return true
    }
}

/// `nonFatal(inner, fallback)`: a fatal inner result becomes the fallback plus the errors as warnings.
final class NonFatalSink: ValueSink {
    let inner: ValueSink
    let fallback: Fallback?
    init(_ mapper: Mapper, inner: ValueSink, fallback: Fallback?) {
        self.inner = inner
        self.fallback = fallback
        super.init(mapper)
    }
    override func startContainer(_ e: JSONEvent) throws -> Bool { try inner.start(e) ? finish() : false }
    override func nextInContainer(_ e: JSONEvent) throws -> Bool { try inner.next(e) ? finish() : false }
    override func startScalar(_ e: JSONEvent) throws { _ = try inner.start(e) ? finish() : false }
    private func finish() -> Bool {
        if inner.isFatal {
            setResult(.success(fallback?.make(), warnings: inner.errors))
        } else {
            adopt(inner)
        }
        return true
    }
}

/// `policy(inner, p)` on a container (never absent or null): the inner result, or the `invalid` action.
final class PolicySink: ValueSink {
    let inner: ValueSink
    let policy: FieldPolicy
    init(_ mapper: Mapper, inner: ValueSink, policy: FieldPolicy) {
        self.inner = inner
        self.policy = policy
        super.init(mapper)
    }
    override func startContainer(_ e: JSONEvent) throws -> Bool { try inner.start(e) ? finish() : false }
    override func nextInContainer(_ e: JSONEvent) throws -> Bool { try inner.next(e) ? finish() : false }
    /// A non-null scalar goes to the inner sink (the policy only decides absent and null values, and what a fatal
    /// inner result becomes); a null the policy handles itself takes the exact route.
    override func startScalar(_ e: JSONEvent) throws {
        if case .null = e, policy.null != .passToMapper { return try super.startScalar(e) }
        _ = try inner.start(e) ? finish() : false
    }
    private func finish() -> Bool {
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
    @exclusivity(unchecked) private var index = 0
    @exclusivity(unchecked) private var written = 0
    @exclusivity(unchecked) private var inElement = false
    @exclusivity(unchecked) private var fatal = false
    /// Test-only mutation (see `StreamMutation.fatalElementsDropped`).
    var fatalElementsDropped = false

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
        if item.kind == .absent { output.writeNull() } else { output.writeRaw(item.output.bytes) }
    }
}
