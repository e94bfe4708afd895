internal import CYajl
internal import CJSONScan

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

/// A callback table of another layer's making (the stream engine's `ParseSkip`), which the handle uses instead of
/// `yajlCallbackTable`: its callbacks reach their parser through yajl's context pointer, as `YajlCallbackTarget`'s
/// do. `reset` runs before each parse.
protocol YajlEventTable {
    var table: UnsafeMutablePointer<yajl_callbacks> { get }
    func reset()
}

/// Everything of a yajl parser but its events' destination: feeding, errors, depth and the verbatim test. It is
/// not generic, so that the per-event code of its subclasses (`YajlParserCore`, and the stream engine's parser)
/// can be concrete: a generic class's overrides run unspecialized.
class YajlParserBase: YajlCallbackTarget {
    private var handle: yajl_handle?
    @exclusivity(unchecked) private var consumedBeforeChunk = 0
    /// Bytes that no kernel vouched for were fed (`feed`, not `feedScanned`): only they can end in an unfinished
    /// string after the value (see `rejectUnterminatedTrailingString`).
    @exclusivity(unchecked) private var fedUnscanned = false
    /// Open containers (limited to `maximumDepth`).
    @exclusivity(unchecked) final var depth = 0
    private let maximumDepth: Int
    private let allowMultipleValues: Bool
    private let events: (any YajlEventTable)?
    /// `events`' table, read without the existential.
    private let eventTable: UnsafeMutablePointer<yajl_callbacks>?

    /// Kept alive for as long as the handle that allocates from it.
    private let memory: YajlMemory?

    /// `events`: a callback table of a subclass's own (the stream engine's), whose callbacks reach the subclass
    /// directly; without it, events go through `yajlCallbackTable` to `YajlCallbackTarget`'s virtual methods.
    /// `memory`: where yajl allocates (recycled blocks, for a parser per record); the system allocator without it.
    init(options: JSONParserOptions, events: (any YajlEventTable)?, memory: YajlMemory? = nil) {
        self.maximumDepth = options.maximumDepth
        self.allowMultipleValues = options.allowMultipleValues
        self.events = events
        self.eventTable = events?.table
        self.memory = memory
        super.init()
        openHandle()
    }

    private func openHandle() {
        events?.reset()
        allocateHandle()
    }

    private func allocateHandle() {
        let table = eventTable ?? yajlCallbackTable
        let ctx = Unmanaged.passUnretained(self as YajlCallbackTarget).toOpaque()
        if let memory {
            var functions = memory.functions  // yajl copies them
            handle = withUnsafeMutablePointer(to: &functions) { yajl_alloc(table, $0, ctx) }
        } else {
            handle = yajl_alloc(table, nil, ctx)
        }
        _ = cyajl_config_bool(handle, yajl_allow_multiple_values, allowMultipleValues ? 1 : 0)
        // `StrictJSONScanner` validates all UTF-8 (more strictly than yajl) before yajl sees it.
        _ = cyajl_config_bool(handle, yajl_dont_validate_strings, 1)
    }

    /// Ready for a new input, as if just made: a fresh yajl handle (yajl 2 cannot reset one) and no state left
    /// from the last parse, whether it finished, failed or stopped halfway.
    func restart() {
        exclusively { reopen() }
    }

    private func reopen() {
        yajl_free(handle)
        consumedBeforeChunk = 0
        fedUnscanned = false
        depth = 0
        resumeAt = nil
        strict = StrictJSONScanner()
        copyBarrier = .max
        pendingError = nil
        openHandle()
    }

    /// Whether a parser made with `options` would parse exactly as this one does.
    final func parses(as options: JSONParserOptions) -> Bool {
        options.maximumDepth == maximumDepth && options.allowMultipleValues == allowMultipleValues
    }

    deinit {
        yajl_free(handle)
        objectLevels?.deallocate()
        priming?.deallocate()
        copyBackoff?.deallocate()
    }

    @exclusivity(unchecked) private var strict = StrictJSONScanner()
    /// The bytes yajl is parsing now. A string or key that points into them was lexed in place, which yajl does
    /// only when it has no escapes (decoded text and tokens cut by a chunk's end are in yajl's own buffers).
    @exclusivity(unchecked) private var chunkStart = UnsafeRawPointer(bitPattern: 1)!
    @exclusivity(unchecked) private var chunkEnd = UnsafeRawPointer(bitPattern: 1)!

    /// yajl parses `bytes`; where the stream parser skipped a value ahead of it (`skipsAhead`), it goes on after
    /// that value with a new handle. `consumedBeforeChunk` moves to the start of the part yajl parses last.
    private func parse(_ bytes: UnsafePointer<UInt8>, count: Int) -> yajl_status {
        let end = UnsafeRawPointer(bytes) + count
        var start = UnsafeRawPointer(bytes)
        defer { chunkEnd = chunkStart }
        while true {
            chunkStart = start
            chunkEnd = end
            let status = yajl_parse(handle, start.assumingMemoryBound(to: UInt8.self), end - start)
            guard status == yajl_status_client_canceled, let resume = resumeAt else { return status }
            resumeAt = nil
            consumedBeforeChunk += resume - start
            start = resume
            resumeAfterSkippedValue()
        }
    }

    @inline(__always)
    final func isVerbatim(_ b: UnsafeRawBufferPointer) -> Bool {
        guard let p = b.baseAddress else { return false }
        return p >= chunkStart && p < chunkEnd
    }

    #if DEBUG
    /// Debug builds check what exclusivity checking would: the `@exclusivity(unchecked)` state above is accessed by
    /// one parse at a time — a handler that fed, finished or restarted its own parser from inside an event would
    /// overlap `strict`'s or the handle's mutation. (Release builds trust this: no dynamic check per event.)
    private var inParse = false
    #endif

    /// Runs `body` as the one parse in progress (asserted in debug builds).
    @inline(__always)
    private func exclusively<T>(_ body: () throws -> T) rethrows -> T {
        #if DEBUG
        assert(!inParse, "a YajlParser was fed, finished or restarted from inside one of its own events")
        inParse = true
        defer { inParse = false }
        #endif
        return try body()
    }

    final func feed(_ chunk: UnsafeRawBufferPointer) throws {
        try exclusively { try feedChunk(chunk, scanned: false) }
    }

    /// `feed` for bytes already held to the strict scanner's rules (a record's projection, which the projector's
    /// kernel checked as it wrote it, `RecordProjector`): yajl alone parses them.
    final func feedScanned(_ chunk: UnsafeRawBufferPointer) throws {
        try exclusively { try feedChunk(chunk, scanned: true) }
    }

    private func feedChunk(_ chunk: UnsafeRawBufferPointer, scanned: Bool) throws {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        copyBarrier = .max
        let bytes = base.assumingMemoryBound(to: UInt8.self)
        let consumedBefore = consumedBeforeChunk
        defer { consumedBeforeChunk = consumedBefore + chunk.count }
        if !scanned { fedUnscanned = true }
        if !scanned, let violation = strict.scan(chunk) {
            // yajl sees what comes before the violation first: if it finds an earlier error, that one is reported,
            // so the verdict is the same however the input is split.
            let before = violation.offset - consumedBeforeChunk
            if before > 0 {
                try check(parse(bytes, count: before), chunk: bytes, count: before)
            }
            throw JSONSyntaxError(byteOffset: violation.offset, message: violation.message)
        }
        try check(parse(bytes, count: chunk.count), chunk: bytes, count: chunk.count)
    }

    final func finish() throws {
        try exclusively {
            try check(yajl_complete_parse(handle), chunk: nil, count: 0)
            if fedUnscanned && !allowMultipleValues { try rejectUnterminatedTrailingString() }
        }
    }

    /// yajl 2.1 takes a complete value followed by the start of a string that never ends (`{"id":1}"x`) for the
    /// value alone: the string is still in its lexer when the input ends, and `yajl_complete_parse` asks nothing of
    /// the lexer once the value is complete. One more quote closes such a string, which yajl then reports as
    /// trailing garbage (before any event); with no string pending, the quote only opens one, which yajl waits for.
    /// A record's projection (`feedScanned`) needs no such check: the projector vouches that only whitespace
    /// follows the record's value, and declines the record otherwise (it is then parsed whole, with the check).
    private func rejectUnterminatedTrailingString() throws {
        var quote = UInt8(ascii: "\"")
        guard yajl_parse(handle, &quote, 1) != yajl_status_ok else { return }
        throw JSONSyntaxError(byteOffset: consumedBeforeChunk, message: "trailing garbage")
    }

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

    /// `enter` for a parser that skips ahead: it also notes whether the container is an object, which
    /// `resumeAfterSkippedValue` needs to rebuild yajl's state.
    @inline(__always)
    final func enter(object: Bool) -> Bool {
        guard enter() else { return false }
        if depth >= objectLevelCapacity { growObjectLevels() }
        objectLevels.unsafelyUnwrapped[depth] = object
        return true
    }

    // MARK: Skipping ahead of yajl

    /// Whether each open container is an object, by depth (index 0 unused).
    /// Allocated at the first `enter(object:)`: a parser that never skips ahead (the tree engine's) has none.
    @exclusivity(unchecked) private var objectLevels: UnsafeMutablePointer<Bool>?
    @exclusivity(unchecked) private var objectLevelCapacity = 0
    /// Where yajl goes on after the value `skipsAhead` skipped (set while yajl stops).
    @exclusivity(unchecked) private var resumeAt: UnsafeRawPointer?
    /// What yajl parses to stand where a skipped value's object was (`resumeAfterSkippedValue`): room for
    /// `{"":` per open container and `null`.
    @exclusivity(unchecked) private var priming: UnsafeMutablePointer<UInt8>?

    /// Runs of skipped members shorter than this (or than 8 bytes a level of nesting) are left to yajl: skipping
    /// ahead costs a new handle and a few bytes of priming a level.
    static let skipAheadMinimum = 48
    /// Containers shorter than this are left to yajl's events by `copiesAhead` (copying ahead costs what skipping
    /// ahead costs, and a short container's events are cheap).
    static let copyAheadMinimum = 96

    @inline(never)
    private func growObjectLevels() {
        let capacity = max(64, objectLevelCapacity * 2)
        let grown = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
        if let objectLevels {
            grown.update(from: objectLevels, count: objectLevelCapacity)
            objectLevels.deallocate()
        }
        objectLevels = grown
        objectLevelCapacity = capacity
        priming?.deallocate()
        priming = .allocate(capacity: 4 * capacity + 4)
    }

    /// Called from the key callback when the member of `key` is read by no one (its events are silenced), with
    /// `skips`, which tells whether the member of a later key of the same object is read by no one either (and
    /// then silences it too). When the key was lexed in place and `cjsonscan_skip_member_value` vouches for the
    /// colon and value after it — and for the members after it whose keys `skips` takes — and they make at least
    /// `skipAheadMinimum` bytes, notes where the last value ends and returns true: the callback then stops yajl,
    /// and `parse` goes on after that value. Else false, and yajl parses the value (silenced) as before: an
    /// invalid value is reported by yajl and the strict scanner exactly as without this. Only for a parser made
    /// with an event table (the stream engine's), whose containers go through `enter(object:)`.
    @inline(__always)
    final func skipsAhead(after key: UnsafeRawBufferPointer, _ skips: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        guard let keyStart = key.baseAddress, keyStart >= chunkStart, keyStart < chunkEnd,
              chunkEnd - keyStart >= Self.skipAheadMinimum else { return false }
        return skipsAhead(from: keyStart + key.count + 1, skips)  // past the closing quote
    }

    @inline(never)
    private func skipsAhead(from start: UnsafeRawPointer, _ skips: (UnsafeRawBufferPointer) -> Bool) -> Bool {
        let budget = maximumDepth - depth
        var from = start
        var end: UnsafeRawPointer?
        while true {
            let length = cjsonscan_skip_member_value(from.assumingMemoryBound(to: UInt8.self), chunkEnd - from, budget)
            guard length > 0 else { break }
            let valueEnd = from + length
            end = valueEnd
            var keyLength = 0
            let keyOffset = cjsonscan_next_key(valueEnd.assumingMemoryBound(to: UInt8.self), chunkEnd - valueEnd, &keyLength)
            guard keyOffset > 0 else { break }
            let next = UnsafeRawBufferPointer(start: valueEnd + keyOffset, count: keyLength)
            guard skips(next) else { break }
            from = valueEnd + keyOffset + keyLength + 1
        }
        // At least as long as twice the priming (`resumeAfterSkippedValue`: up to 4 bytes a level), so that deep
        // records stay linear.
        guard let end, end - start >= max(Self.skipAheadMinimum, 8 &* depth) else { return false }
        resumeAt = end
        return true
    }

    /// Called from a container's start callback (after `enter(object:)`) when its consumer copies it as it is:
    /// when the container's bracket was lexed from the bytes in hand, the skipper vouches for the whole container
    /// and `copier` finds no duplicate key in it, and it makes at least `copyAheadMinimum` bytes (and 8 a level
    /// of nesting), returns the canonical text of its inside and stops yajl there: the callback returns false,
    /// and `parse` goes on at the container's closing bracket (with yajl's state rebuilt as after a skipped
    /// member), whose event then ends the copy. Else nil, and yajl goes on inside the container as before.
    ///
    /// A container that could not be copied is not tried again from inside it (until it ends, or the next chunk):
    /// no byte is read by more than one failed try per chunk, so deep records stay linear.
    final func copiesAhead(with copier: VerbatimCopier) -> UnsafeRawBufferPointer? {
        guard depth <= copyBarrier else { return nil }
        let open = chunkStart + Int(yajl_get_bytes_consumed(handle)) - 1
        let minimum = max(Self.copyAheadMinimum, 8 &* depth)
        guard open >= chunkStart, chunkEnd - open >= minimum else { return nil }
        let bracket = open.load(as: UInt8.self)
        guard bracket == (objectLevels.unsafelyUnwrapped[depth] ? UInt8(ascii: "{") : UInt8(ascii: "[")) else { return nil }
        // Elements of an array are alike: after a short one, the next few are not tried (object members differ).
        let inArray = depth > 1 && !objectLevels.unsafelyUnwrapped[depth - 1]
        let slot = depth & (Self.backoffSlots - 1)
        let copyBackoff = self.copyBackoff ?? allocateCopyBackoff()
        if inArray && copyBackoff[slot].wait > 0 {
            copyBackoff[slot].wait -= 1
            copyBarrier = depth  // (nor what is inside it)
            return nil
        }
        let p = open.assumingMemoryBound(to: UInt8.self)
        let length = cjsonscan_skip_value(p, chunkEnd - open, maximumDepth - depth + 1)
        if inArray && length > 0 && length < minimum {
            // Too short to gain: the next elements are likely short too (an array of small objects), so the next
            // 1, 2, 4 … 64 of them are left to yajl without reading them first.
            let next = min(max(copyBackoff[slot].span * 2, 1), 64)
            copyBackoff[slot] = (next, next)
        }
        guard length >= minimum, let text = copier.canonicalText(of: UnsafeRawBufferPointer(start: open, count: length)) else {
            copyBarrier = depth
            return nil
        }
        if inArray { copyBackoff[slot] = (0, 0) }
        resumeAt = open + length - 1  // the closing bracket
        return UnsafeRawBufferPointer(rebasing: text[1..<text.count - 1])
    }

    /// Per depth (modulo `backoffSlots`), for array elements: container starts `copiesAhead` lets pass before it
    /// tries again, and how many it let pass last time (doubled at each element found too short, 0 after a copy).
    /// (Allocated at the first try: most parsers never copy.)
    @exclusivity(unchecked) private var copyBackoff: UnsafeMutablePointer<(wait: UInt8, span: UInt8)>?
    private static let backoffSlots = 64

    @inline(never)
    private func allocateCopyBackoff() -> UnsafeMutablePointer<(wait: UInt8, span: UInt8)> {
        let slots = UnsafeMutablePointer<(wait: UInt8, span: UInt8)>.allocate(capacity: Self.backoffSlots)
        slots.initialize(repeating: (0, 0), count: Self.backoffSlots)
        copyBackoff = slots
        return slots
    }

    /// The depth of the innermost container that could not be copied (`copiesAhead`); `Int.max`: none.
    @exclusivity(unchecked) private var copyBarrier = Int.max

    /// A container ends at `depth` (the depth outside it): a copy barrier it set goes.
    @inline(__always)
    final func containerEnded() {
        if depth < copyBarrier { copyBarrier = .max }
    }

    /// A new handle in the state yajl would be in just after the (last) skipped value: the open containers rebuilt from
    /// `objectLevels` (`{"":` for an object, `[` for an array) and the innermost object's member given a
    /// placeholder value (`null`), parsed with every callback off. The stream parser's own state (depth, the
    /// pending skip of that member) is as the key callback left it, so the rest of the record goes on as if yajl
    /// had parsed the value (silenced) itself. Error offsets stay right: `parse` moved `consumedBeforeChunk`.
    @inline(never)
    private func resumeAfterSkippedValue() {
        yajl_free(handle)
        let table = eventTable!
        let callbacks = table.pointee
        table.pointee = yajl_callbacks()
        allocateHandle()
        let openObject: UInt32 = 0x3A22_227B  // {"":  (little-endian)
        let objectLevels = objectLevels.unsafelyUnwrapped, priming = priming.unsafelyUnwrapped
        var count = 0
        for level in 1...depth {
            if objectLevels[level] {
                UnsafeMutableRawPointer(priming + count).storeBytes(of: openObject.littleEndian, as: UInt32.self)
                count += 4
            } else {
                priming[count] = 0x5B  // [
                count += 1
            }
        }
        UnsafeMutableRawPointer(priming + count).storeBytes(of: UInt32(0x6C6C_756E).littleEndian, as: UInt32.self)  // null
        let status = yajl_parse(handle, priming, count + 4)
        precondition(status == yajl_status_ok, "yajl refused the state of a skipped value")
        table.pointee = callbacks
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
        super.init(options: options, events: nil)
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

    /// A parser that sends the events of the bytes fed to `handler`, within `options`' limits.
    public init(handler: Handler, options: JSONParserOptions = .init()) {
        core = YajlParserCore(handler: handler, options: options)
    }

    /// The handler, with whatever it gathered from the events so far (modifiable in place).
    public var handler: Handler {
        get { core.handler }
        _modify { yield &core.handler }
    }

    /// Parses the next bytes of the input; a chunk may end anywhere, even inside a token. The events of what
    /// could be parsed reach the handler before this returns.
    ///
    /// - Throws: ``JSONSyntaxError`` (with the offset from the first byte fed) for malformed input or a value too
    ///   deep, or the error a handler callback threw. Feeding after ``finish()`` is a programming error (it traps).
    public func feed(_ chunk: UnsafeRawBufferPointer) throws {
        precondition(!finished, "feed after finish")
        try core.feed(chunk)
    }

    /// Parses the next bytes of the input, as the buffer pointer `feed(_:)` does.
    public func feed(_ chunk: some Sequence<UInt8>) throws {
        let array = Array(chunk)
        try array.withUnsafeBytes { try feed($0) }
    }

    /// Ends the input: delivers the last events (a number at the very end) and checks that the text is complete.
    ///
    /// - Throws: ``JSONSyntaxError`` for an incomplete value, or the error a handler callback threw. Call it once.
    public func finish() throws {
        precondition(!finished, "finish called twice")
        finished = true
        try core.finish()
    }
}
