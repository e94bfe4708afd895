internal import CYajl

/// Non-generic base so that C trampolines (which cannot capture context) can reach the generic parser.
class YajlCallbackTarget {
    var pendingError: (any Error)?
    func onNull() -> Bool { fatalError("abstract") }
    func onBool(_ b: Bool) -> Bool { fatalError("abstract") }
    func onNumber(_ b: UnsafeRawBufferPointer) -> Bool { fatalError("abstract") }
    func onString(_ b: UnsafeRawBufferPointer) -> Bool { fatalError("abstract") }
    func onStartMap() -> Bool { fatalError("abstract") }
    func onKey(_ b: UnsafeRawBufferPointer) -> Bool { fatalError("abstract") }
    func onEndMap() -> Bool { fatalError("abstract") }
    func onStartArray() -> Bool { fatalError("abstract") }
    func onEndArray() -> Bool { fatalError("abstract") }

    /// Calls `body` on the parser behind yajl's context pointer, without retaining it (the parser outlives the
    /// parse it drives).
    @inline(__always)
    static func with(_ ctx: UnsafeMutableRawPointer?, _ body: (YajlCallbackTarget) -> Bool) -> Int32 {
        Unmanaged<YajlCallbackTarget>.fromOpaque(ctx!)._withUnsafeGuaranteedRef(body) ? 1 : 0
    }
}

/// yajl keeps a pointer to its callback table, so the table lives in stable memory for the whole process.
/// It is written once, here, and only read afterwards.
nonisolated(unsafe) private let yajlCallbackTable: UnsafeMutablePointer<yajl_callbacks> = {
    let p = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
    p.initialize(to: yajl_callbacks())
    p.pointee.yajl_null = { ctx in YajlCallbackTarget.with(ctx) { $0.onNull() } }
    p.pointee.yajl_boolean = { ctx, b in YajlCallbackTarget.with(ctx) { $0.onBool(b != 0) } }
    // yajl_integer and yajl_double stay nil: with yajl_number set, yajl hands over every number's exact lexeme.
    p.pointee.yajl_number = { ctx, s, n in
        YajlCallbackTarget.with(ctx) { $0.onNumber(UnsafeRawBufferPointer(start: s, count: n)) }
    }
    p.pointee.yajl_string = { ctx, s, n in
        YajlCallbackTarget.with(ctx) { $0.onString(UnsafeRawBufferPointer(start: s, count: n)) }
    }
    p.pointee.yajl_start_map = { ctx in YajlCallbackTarget.with(ctx) { $0.onStartMap() } }
    p.pointee.yajl_map_key = { ctx, s, n in
        YajlCallbackTarget.with(ctx) { $0.onKey(UnsafeRawBufferPointer(start: s, count: n)) }
    }
    p.pointee.yajl_end_map = { ctx in YajlCallbackTarget.with(ctx) { $0.onEndMap() } }
    p.pointee.yajl_start_array = { ctx in YajlCallbackTarget.with(ctx) { $0.onStartArray() } }
    p.pointee.yajl_end_array = { ctx in YajlCallbackTarget.with(ctx) { $0.onEndArray() } }
    return p
}()

/// The stream engine's callback table: the same events, delivered straight to `StreamParser`'s final methods
/// (no virtual call, and each event's path is compiled as one piece). Written once, here; `ParseSkip` copies it.
nonisolated(unsafe) private let streamCallbackTable: UnsafeMutablePointer<yajl_callbacks> = {
    let p = UnsafeMutablePointer<yajl_callbacks>.allocate(capacity: 1)
    p.initialize(to: yajl_callbacks())
    p.pointee.yajl_null = { ctx in withStreamParser(ctx) { $0.null() } }
    p.pointee.yajl_boolean = { ctx, b in withStreamParser(ctx) { $0.bool(b != 0) } }
    p.pointee.yajl_number = { ctx, s, n in
        withStreamParser(ctx) { $0.number(UnsafeRawBufferPointer(start: s, count: n)) }
    }
    p.pointee.yajl_string = { ctx, s, n in
        withStreamParser(ctx) { $0.string(UnsafeRawBufferPointer(start: s, count: n)) }
    }
    p.pointee.yajl_start_map = { ctx in withStreamParser(ctx) { $0.startObject() } }
    p.pointee.yajl_map_key = { ctx, s, n in
        withStreamParser(ctx) { $0.key(UnsafeRawBufferPointer(start: s, count: n)) }
    }
    p.pointee.yajl_end_map = { ctx in withStreamParser(ctx) { $0.endObject() } }
    p.pointee.yajl_start_array = { ctx in withStreamParser(ctx) { $0.startArray() } }
    p.pointee.yajl_end_array = { ctx in withStreamParser(ctx) { $0.endArray() } }
    return p
}()

/// Calls `body` on the stream parser behind yajl's context pointer, without retaining it.
@inline(__always)
private func withStreamParser(_ ctx: UnsafeMutableRawPointer?, _ body: (StreamParser) -> Bool) -> Int32 {
    Unmanaged<StreamParser>.fromOpaque(ctx!)._withUnsafeGuaranteedRef(body) ? 1 : 0
}

/// Lets the stream engine skip a value inside yajl. While a value is skipped, the handle's own callback table has
/// no scalar and no key callbacks, so yajl calls no Swift code for them (and does not even decode their escapes);
/// container events only count depth in `StreamParser`. A skipped value never reaches the consumers.
///
/// Only a consumer that receives its events alone may skip (not one of several fed by a `FanOut`): skipping
/// hides the value from everyone.
struct ParseSkip {
    private struct State {
        /// Depth inside a skipped container; 0 when no container is being skipped.
        var depth = 0
        /// The value of the object member whose key was just received is skipped: a scalar passes unseen, a
        /// container is skipped whole.
        var pending = false
        /// The innermost open object whose consumer skips every member not in a key set, and its depth (0: none):
        /// its other keys are matched and skipped here, before any consumer sees them.
        var filter: Unmanaged<KeyFilter>?
        var filterDepth = 0
        /// The filters of the objects around it, outermost first.
        var outerFilters: [(depth: Int, keys: Unmanaged<KeyFilter>)] = []
        /// A filter asked for by the consumer of the object that is starting (installed once its depth is known).
        var requested: Unmanaged<KeyFilter>?
    }

    /// The callback table of the handle that parses the current record: `streamCallbackTable`'s, less what is
    /// silenced while a value is skipped.
    let table: UnsafeMutablePointer<yajl_callbacks>
    /// The full table, restored when a skip ends.
    private let defaults: UnsafePointer<yajl_callbacks>
    private let state: UnsafeMutablePointer<State>

    /// A handle to new skipping state (one per compiled plan, so one per thread); copies share it. The owner
    /// calls `deallocate` when done.
    static func allocate() -> ParseSkip { ParseSkip() }

    private init() {
        defaults = UnsafePointer(streamCallbackTable)
        table = .allocate(capacity: 1)
        table.initialize(to: defaults.pointee)
        state = .allocate(capacity: 1)
        state.initialize(to: State())
    }

    func deallocate() {
        table.deallocate()
        state.deallocate()
    }

    /// Before a record: nothing is skipped.
    func reset() {
        state.pointee.depth = 0
        state.pointee.pending = false
        state.pointee.filter = nil
        state.pointee.filterDepth = 0
        state.pointee.outerFilters.removeAll(keepingCapacity: true)
        state.pointee.requested = nil
        restore()
    }

    /// Called by the consumer of an object as the object starts: the object's members whose key is not in `keys`
    /// are skipped inside yajl, without reaching any consumer. Only for a consumer that would skip exactly those
    /// members itself, and change no state on their keys. `keys` is kept alive by its consumer.
    func filterKeys(_ keys: KeyFilter) { state.pointee.requested = .passUnretained(keys) }

    /// After an object's start event was delivered at `depth`: installs the filter its consumer asked for.
    @inline(__always)
    func objectStarted(depth: Int) {
        guard let keys = state.pointee.requested else { return }
        state.pointee.requested = nil
        if let outer = state.pointee.filter { state.pointee.outerFilters.append((state.pointee.filterDepth, outer)) }
        state.pointee.filter = keys
        state.pointee.filterDepth = depth
    }

    /// An object at `depth` ends: its filter goes.
    @inline(__always)
    func objectEnded(depth: Int) {
        guard state.pointee.filterDepth == depth else { return }
        if let outer = state.pointee.outerFilters.popLast() {
            state.pointee.filter = outer.keys
            state.pointee.filterDepth = outer.depth
        } else {
            state.pointee.filter = nil
            state.pointee.filterDepth = 0
        }
    }

    /// A key of the object at `depth`: true when the object's filter skips its member (then the value is being
    /// skipped).
    @inline(__always)
    func skipsMember(_ key: UnsafeRawBufferPointer, depth: Int) -> Bool {
        guard state.pointee.filterDepth == depth, let filter = state.pointee.filter,
              filter._withUnsafeGuaranteedRef({ $0.excludes(key) }) else { return false }
        skipNextValue()
        return true
    }

    /// Skips the value that follows the key just received.
    @inline(__always)
    func skipNextValue() {
        state.pointee.pending = true
        silenceScalars()
    }

    /// Skips the rest of the container whose start was just received.
    @inline(__always)
    func skipContainer() {
        state.pointee.depth = 1
        silenceScalars()
        table.pointee.yajl_map_key = nil
    }

    @inline(__always)
    private func silenceScalars() {
        table.pointee.yajl_null = nil
        table.pointee.yajl_boolean = nil
        table.pointee.yajl_number = nil
        table.pointee.yajl_string = nil
    }

    @inline(__always)
    private func restore() { table.pointee = defaults.pointee }

    /// A container starts: true when it is (part of) a skipped value.
    @inline(__always)
    func swallowsStart() -> Bool {
        if state.pointee.depth > 0 {
            state.pointee.depth += 1
            return true
        }
        guard state.pointee.pending else { return false }
        state.pointee.pending = false
        state.pointee.depth = 1
        table.pointee.yajl_map_key = nil
        return true
    }

    /// A container ends: true when it is (part of) a skipped value. A key or the end of the object also ends a
    /// pending skip whose value was a scalar.
    @inline(__always)
    func swallowsEnd() -> Bool {
        if state.pointee.depth > 0 {
            state.pointee.depth -= 1
            if state.pointee.depth == 0 { restore() }
            return true
        }
        endPending()
        return false
    }

    @inline(__always)
    func endPending() {
        guard state.pointee.pending else { return }
        state.pointee.pending = false
        restore()
    }
}

/// Everything of a yajl parser but its events' destination: feeding, errors, depth and the verbatim test. It is
/// not generic, so that the per-event code of its subclasses (`YajlParserCore`, `StreamParser`) can be concrete:
/// a generic class's overrides run unspecialized.
class YajlParserBase: YajlCallbackTarget {
    private var handle: yajl_handle?
    @exclusivity(unchecked) private var consumedBeforeChunk = 0
    /// Open containers (limited to `maximumDepth`).
    @exclusivity(unchecked) final var depth = 0
    private let maximumDepth: Int
    private let allowMultipleValues: Bool
    private let skip: ParseSkip?

    /// Kept alive for as long as the handle that allocates from it.
    private let memory: YajlMemory?

    /// `skip`: the stream engine's skipping state; its table (`streamCallbackTable`'s events, for `StreamParser`)
    /// becomes the handle's callback table. Without it, events go through `yajlCallbackTable`'s virtual methods.
    /// `memory`: where yajl allocates (recycled blocks, for a parser per record); the system allocator without it.
    init(options: JSONParserOptions, skip: ParseSkip?, memory: YajlMemory? = nil) {
        self.maximumDepth = options.maximumDepth
        self.allowMultipleValues = options.allowMultipleValues
        self.skip = skip
        self.memory = memory
        super.init()
        openHandle()
    }

    private func openHandle() {
        skip?.reset()
        let ctx = Unmanaged.passUnretained(self as YajlCallbackTarget).toOpaque()
        if let memory {
            var functions = memory.functions  // yajl copies them
            handle = withUnsafeMutablePointer(to: &functions) { yajl_alloc(skip?.table ?? yajlCallbackTable, $0, ctx) }
        } else {
            handle = yajl_alloc(skip?.table ?? yajlCallbackTable, nil, ctx)
        }
        _ = cyajl_config_bool(handle, yajl_allow_multiple_values, allowMultipleValues ? 1 : 0)
        // `StrictJSONScanner` validates all UTF-8 (more strictly than yajl) before yajl sees it.
        _ = cyajl_config_bool(handle, yajl_dont_validate_strings, 1)
    }

    /// Ready for a new input, as if just made: a fresh yajl handle (yajl 2 cannot reset one) and no state left
    /// from the last parse, whether it finished, failed or stopped halfway.
    func restart() {
        yajl_free(handle)
        consumedBeforeChunk = 0
        depth = 0
        strict = StrictJSONScanner()
        pendingError = nil
        openHandle()
    }

    /// Whether a parser made with `options` would parse exactly as this one does.
    final func parses(as options: JSONParserOptions) -> Bool {
        options.maximumDepth == maximumDepth && options.allowMultipleValues == allowMultipleValues
    }

    deinit { yajl_free(handle) }

    @exclusivity(unchecked) private var strict = StrictJSONScanner()
    /// The bytes yajl is parsing now. A string or key that points into them was lexed in place, which yajl does
    /// only when it has no escapes (decoded text and tokens cut by a chunk's end are in yajl's own buffers).
    @exclusivity(unchecked) private var chunkStart = UnsafeRawPointer(bitPattern: 1)!
    @exclusivity(unchecked) private var chunkEnd = UnsafeRawPointer(bitPattern: 1)!

    private func parse(_ bytes: UnsafePointer<UInt8>, count: Int) -> yajl_status {
        chunkStart = UnsafeRawPointer(bytes)
        chunkEnd = chunkStart + count
        defer { chunkEnd = chunkStart }
        return yajl_parse(handle, bytes, count)
    }

    @inline(__always)
    final func isVerbatim(_ b: UnsafeRawBufferPointer) -> Bool {
        guard let p = b.baseAddress else { return false }
        return p >= chunkStart && p < chunkEnd
    }

    final func feed(_ chunk: UnsafeRawBufferPointer) throws {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        if let violation = strict.scan(chunk) {
            // yajl sees what comes before the violation first: if it finds an earlier error, that one is reported,
            // so the verdict is the same however the input is split.
            let before = violation.offset - consumedBeforeChunk
            if before > 0 {
                try check(parse(bytes, count: before), chunk: bytes, count: before)
            }
            throw JSONSyntaxError(byteOffset: violation.offset, message: violation.message)
        }
        try check(parse(bytes, count: chunk.count), chunk: bytes, count: chunk.count)
        consumedBeforeChunk += chunk.count
    }

    final func finish() throws { try check(yajl_complete_parse(handle), chunk: nil, count: 0) }

    private func check(_ status: yajl_status, chunk: UnsafePointer<UInt8>?, count: Int) throws {
        switch status {
        case yajl_status_ok:
            return
        case yajl_status_client_canceled:
            let error = pendingError ?? JSONSyntaxError(byteOffset: consumedBeforeChunk, message: "parse cancelled")
            pendingError = nil
            throw error
        default:
            let offset = consumedBeforeChunk + (chunk == nil ? 0 : yajl_get_bytes_consumed(handle))
            var message = "invalid JSON"
            if let raw = yajl_get_error(handle, 0, chunk, count) {
                message = String(cString: raw)
                yajl_free_error(handle, raw)
            }
            throw JSONSyntaxError(byteOffset: offset, message: Self.tidy(message))
        }
    }

    /// yajl's message is "parse error: <why>\n"; keep only the reason, on one line.
    private static func tidy(_ message: String) -> String {
        var m = Substring(message)
        if m.hasPrefix("parse error: ") { m = m.dropFirst(13) }
        while let last = m.last, last.isWhitespace { m = m.dropLast() }
        return String(m)
    }

    /// Runs an event's handling; a thrown error stops the parse (see `fail`).
    @inline(__always)
    final func call(_ body: () throws -> Void) -> Bool {
        do {
            try body()
            return true
        } catch {
            return fail(error)
        }
    }

    /// Keeps the error for `check` to throw, and stops the parse.
    @inline(never)
    final func fail(_ error: any Error) -> Bool {
        if var error = error as? JSONSyntaxError {
            // Handlers do not know where they are in the stream; the parser does.
            error.byteOffset = consumedBeforeChunk + Int(yajl_get_bytes_consumed(handle))
            pendingError = error
        } else {
            pendingError = error
        }
        return false
    }

    /// A container starts: false (and the parse stops) past `maximumDepth`.
    @inline(__always)
    final func enter() -> Bool {
        depth += 1
        return depth <= maximumDepth || tooDeep()
    }

    @inline(never)
    private func tooDeep() -> Bool {
        pendingError = JSONSyntaxError(
            byteOffset: consumedBeforeChunk + Int(yajl_get_bytes_consumed(handle)),
            message: "nesting deeper than \(maximumDepth) levels")
        return false
    }
}

final class YajlParserCore<Handler: JSONEventHandler>: YajlParserBase {
    @exclusivity(unchecked) var handler: Handler

    init(handler: Handler, options: JSONParserOptions) {
        self.handler = handler
        super.init(options: options, skip: nil)
    }

    override func onNull() -> Bool { call { try handler.null() } }
    override func onBool(_ b: Bool) -> Bool { call { try handler.bool(b) } }
    override func onNumber(_ b: UnsafeRawBufferPointer) -> Bool { call { try handler.number(b) } }
    override func onString(_ b: UnsafeRawBufferPointer) -> Bool {
        let verbatim = isVerbatim(b)
        return call { try handler.string(b, verbatim: verbatim) }
    }
    override func onStartMap() -> Bool {
        guard enter() else { return false }
        return call { try handler.startObject() }
    }
    override func onKey(_ b: UnsafeRawBufferPointer) -> Bool {
        let verbatim = isVerbatim(b)
        return call { try handler.key(b, verbatim: verbatim) }
    }
    override func onEndMap() -> Bool {
        depth -= 1
        return call { try handler.endObject() }
    }
    override func onStartArray() -> Bool {
        guard enter() else { return false }
        return call { try handler.startArray() }
    }
    override func onEndArray() -> Bool {
        depth -= 1
        return call { try handler.endArray() }
    }
}

/// Drives yajl's push parser: feed bytes as they arrive, events go to `handler` as they are parsed.
/// Not thread-safe; one parser per stream.
public final class JSONPushParser<Handler: JSONEventHandler> {
    private let core: YajlParserCore<Handler>
    private var finished = false

    public init(handler: Handler, options: JSONParserOptions = .init()) {
        core = YajlParserCore(handler: handler, options: options)
    }

    public var handler: Handler {
        get { core.handler }
        _modify { yield &core.handler }
    }

    public func feed(_ chunk: UnsafeRawBufferPointer) throws {
        precondition(!finished, "feed after finish")
        try core.feed(chunk)
    }

    public func feed(_ chunk: some Sequence<UInt8>) throws {
        let array = Array(chunk)
        try array.withUnsafeBytes { try feed($0) }
    }

    public func finish() throws {
        precondition(!finished, "finish called twice")
        finished = true
        try core.finish()
    }
}
