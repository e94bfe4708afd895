#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
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

/// A callback table of another layer's making, which the handle uses instead of `yajlCallbackTable`: its callbacks reach their parser through yajl's context pointer, as `YajlCallbackTarget`'s
/// do. `reset` runs before each parse.
protocol YajlEventTable {
    var table: UnsafeMutablePointer<yajl_callbacks> { get }
    func reset()
}

/// Everything of a yajl parser but its events' destination: feeding, errors, depth and the verbatim test. It is
/// not generic, so that the per-event code of its subclasses (`YajlParserCore`, and any parser with an event table
/// of its own) can be concrete: a generic class's overrides run unspecialized. A subclass may stop yajl from a
/// callback and have it go on at a later byte of the chunk (`resume(at:)`): what lies between is not parsed.
class YajlParserBase: YajlCallbackTarget {
    private var handle: yajl_handle?
    @exclusivity(unchecked) private var consumedBeforeChunk = 0
    /// Bytes that no kernel vouched for were fed (`feed`, not `feedScanned`): only they can end in an unfinished
    /// string after the value (see `rejectUnterminatedTrailingString`).
    @exclusivity(unchecked) private var fedUnscanned = false
    /// yajl has been given bytes since its handle was opened (a handle nothing was fed to is kept by `restart`).
    @exclusivity(unchecked) private var handleFed = false
    /// While `replay` delivers a chunk's events: the end of the token whose event is being delivered, in the chunk
    /// (what `consumedInChunk` answers, yajl having seen none of it); -1 otherwise.
    @exclusivity(unchecked) private var replayed = -1
    /// A chunk was replayed whole (`feedScanned`): `finish` has nothing to ask yajl.
    @exclusivity(unchecked) private var replayedWhole = false
    /// Values replayed whole (what the tests check the stream engine's projections take).
    @exclusivity(unchecked) private(set) final var replays = 0
    /// The replay's open containers (1: object), allocated at the first replay.
    @exclusivity(unchecked) private var replayLevels: UnsafeMutablePointer<UInt8>?
    /// Open containers (limited to `maximumDepth`).
    @exclusivity(unchecked) final var depth = 0
    final let maximumDepth: Int
    private let allowMultipleValues: Bool
    private let events: (any YajlEventTable)?
    /// `events`' table, read without the existential.
    private let eventTable: UnsafeMutablePointer<yajl_callbacks>?

    /// Kept alive for as long as the handle that allocates from it.
    private let memory: YajlMemory?

    /// `events`: a callback table of a subclass's own, whose callbacks reach the subclass
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
        consumedBeforeChunk = 0
        fedUnscanned = false
        depth = 0
        resumeAt = nil
        replayedWhole = false
        strict = StrictJSONScanner()
        pendingError = nil
        if handleFed {
            yajl_free(handle)
            handleFed = false
            openHandle()
        } else {
            events?.reset()  // (the handle is as it was made: a record replayed whole never reached it)
        }
    }

    /// Whether a parser made with `options` would parse exactly as this one does.
    final func parses(as options: JSONParserOptions) -> Bool {
        options.maximumDepth == maximumDepth && options.allowMultipleValues == allowMultipleValues
    }

    deinit {
        yajl_free(handle)
        objectLevels?.deallocate()
        priming?.deallocate()
        replayLevels?.deallocate()
    }

    @exclusivity(unchecked) private var strict = StrictJSONScanner()
    /// The bytes yajl is parsing now. A string or key that points into them was lexed in place, which yajl does
    /// only when it has no escapes (decoded text and tokens cut by a chunk's end are in yajl's own buffers).
    @exclusivity(unchecked) private(set) final var chunkStart = UnsafeRawPointer(bitPattern: 1)!
    @exclusivity(unchecked) private(set) final var chunkEnd = UnsafeRawPointer(bitPattern: 1)!

    /// yajl parses `bytes`; where a callback stopped it to go on at a later byte (`resume(at:)`), it goes on there
    /// with a new handle. `consumedBeforeChunk` moves to the start of the part yajl parses last.
    private func parse(_ bytes: UnsafePointer<UInt8>, count: Int) -> yajl_status {
        let end = UnsafeRawPointer(bytes) + count
        var start = UnsafeRawPointer(bytes)
        defer { chunkEnd = chunkStart }
        handleFed = true
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

    /// `feed` for one whole JSON value already held to yajl's grammar and the strict scanner's rules (a record's
    /// projection, which the projector's kernel checked as it wrote it), followed by `finish` and nothing else.
    /// Its events are delivered without yajl when it has no backslash and starts the parse (`replay`); else yajl
    /// alone parses it.
    final func feedScanned(_ chunk: UnsafeRawBufferPointer) throws {
        try exclusively {
            guard let base = chunk.baseAddress, chunk.count > 0, !handleFed, consumedBeforeChunk == 0,
                  memchr(base, 0x5C, chunk.count) == nil else {
                try feedChunk(chunk, scanned: true)
                return
            }
            willParseChunk()
            let status = replay(base.assumingMemoryBound(to: UInt8.self), count: chunk.count)
            replayedWhole = true
            if status == yajl_status_ok { replays &+= 1 }
            if status == yajl_status_error {
                // (Not one whole value after all: no kernel vouches for what it declines, so never expected.)
                throw JSONSyntaxError(byteOffset: 0, message: "a validated value could not be replayed")
            }
            try check(status, chunk: nil, count: 0)
            consumedBeforeChunk = chunk.count
        }
    }

    private func feedChunk(_ chunk: UnsafeRawBufferPointer, scanned: Bool) throws {
        guard let base = chunk.baseAddress, chunk.count > 0 else { return }
        willParseChunk()
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
        if replayedWhole { return }  // (a whole value: what yajl_complete_parse would find complete)
        try exclusively {
            handleFed = true
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
        handleFed = true
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
    /// (On its UTF-8: yajl's messages are ASCII, and going by characters cost ~10 k instructions an invalid record.)
    private static func tidy(_ message: String) -> String {
        let text = message.utf8
        var start = text.startIndex, end = text.endIndex
        if text.starts(with: "parse error: ".utf8) { start = text.index(start, offsetBy: 13) }
        while end > start {
            let before = text.index(before: end)
            // ASCII whitespace: tab, LF, VT, FF, CR, space.
            guard text[before] == 0x20 || (0x09...0x0D).contains(text[before]) else { break }
            end = before
        }
        return String(Substring(text[start..<end]))
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
            error.byteOffset = consumedBeforeChunk + consumedInChunk
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

    /// `enter` for a parser that resumes at later bytes (`resume(at:)`): it also notes whether the container is an
    /// object, which `resumeAfterSkippedValue` needs to rebuild yajl's state.
    @inline(__always)
    final func enter(object: Bool) -> Bool {
        guard enter() else { return false }
        if depth >= objectLevelCapacity { growObjectLevels() }
        objectLevels.unsafelyUnwrapped[depth] = object
        return true
    }

    // MARK: Going on at a later byte

    /// Called before each chunk is parsed (by default: nothing).
    func willParseChunk() {}

    /// Bytes of the current chunk yajl has consumed.
    @inline(__always)
    final var consumedInChunk: Int { replayed >= 0 ? replayed : Int(yajl_get_bytes_consumed(handle)) }

    /// Whether the open container at `level` (1 ... `depth`) is an object (after `enter(object:)`).
    @inline(__always)
    final func isObject(atLevel level: Int) -> Bool { objectLevels.unsafelyUnwrapped[level] }

    /// From a callback that then returns false: yajl stops, and goes on at `position` (a later byte of the current
    /// chunk, where the open containers are those it is in now, and an object's member has had its value) as if it
    /// had parsed what lies between with its callbacks silenced.
    @inline(__always)
    final func resume(at position: UnsafeRawPointer) { resumeAt = position }

    /// Whether each open container is an object, by depth (index 0 unused).
    /// Allocated at the first `enter(object:)`: a parser that never resumes ahead has none.
    @exclusivity(unchecked) private var objectLevels: UnsafeMutablePointer<Bool>?
    @exclusivity(unchecked) private var objectLevelCapacity = 0
    /// Where yajl goes on (`resume(at:)`; set while yajl stops).
    @exclusivity(unchecked) private var resumeAt: UnsafeRawPointer?
    /// What yajl parses to stand where a skipped value's object was (`resumeAfterSkippedValue`): room for
    /// `{"":` per open container and `null`.
    @exclusivity(unchecked) private var priming: UnsafeMutablePointer<UInt8>?


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



    /// A new handle in the state yajl would be in at `resumeAt`: the open containers rebuilt from `objectLevels`
    /// (`{"":` for an object, `[` for an array) and the innermost object's member given a placeholder value
    /// (`null`), parsed with every callback off. The subclass's own state (depth, what it does with that member) is
    /// as its callback left it, so the rest goes on as if yajl had parsed the bytes in between (silenced) itself. Error offsets stay right: `parse` moved `consumedBeforeChunk`.
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
        handleFed = true
        let status = yajl_parse(handle, priming, count + 4)
        precondition(status == yajl_status_ok, "yajl refused the state of a skipped value")
        table.pointee = callbacks
    }

    @inline(never)
    private func tooDeep() -> Bool {
        pendingError = JSONSyntaxError(
            byteOffset: consumedBeforeChunk + consumedInChunk,
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

// MARK: Replaying validated text

extension YajlParserBase {
    /// Delivers the events of `bytes` — one whole JSON value that a kernel validated, with no backslash in it — to
    /// the handle's callback table as yajl would: the same callbacks with the same arguments (keys and strings
    /// pointing into `bytes`, numbers as their text), each read from the table as its event comes (a skip silences
    /// some), `consumedInChunk` past the token as yajl's count would be, a callback that returns false stopping
    /// the replay there and one that asked to go on at a later byte (`resume(at:)`) going on there. yajl's lexer
    /// has nothing to find in such text: this is what a projected record costs instead of a parse.
    fileprivate func replay(_ p: UnsafePointer<UInt8>, count n: Int) -> yajl_status {
        let table = UnsafePointer(eventTable ?? yajlCallbackTable)
        let ctx = Unmanaged.passUnretained(self as YajlCallbackTarget).toOpaque()
        chunkStart = UnsafeRawPointer(p)
        chunkEnd = chunkStart + n
        defer {
            chunkEnd = chunkStart
            replayed = -1
        }
        let capacity = min(maximumDepth, Self.replayDepthLimit) + 2
        let levels = replayLevels ?? {
            let l = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity)
            replayLevels = l
            return l
        }()
        var level = 0  // open containers; levels[level] is the innermost
        var i = 0
        @inline(__always) func skipSpace() {
            while i < n, p[i] == 0x20 || p[i] == 0x0A || p[i] == 0x0D || p[i] == 0x09 { i += 1 }
        }
        /// The end of the string whose opening quote is at `i` (its closing quote).
        @inline(__always) func closingQuote() -> Int {
            let body = UnsafeRawPointer(p + i + 1)
            guard let q = memchr(body, 0x22, n - i - 1) else { return n }
            return UnsafeRawPointer(q) - UnsafeRawPointer(p)
        }
        /// A callback returned false: going on where it asked (after a value, in the containers open now), or not.
        @inline(__always) func goesOn() -> Bool {
            guard let resume = resumeAt else { return false }
            resumeAt = nil
            i = resume - chunkStart
            return true
        }
        var afterValue = false
        var atKey = false  // (a member's key comes next: after `{` or a comma in an object)
        while true {
            skipSpace()
            guard i < n else { return level == 0 && afterValue ? yajl_status_ok : yajl_status_error }
            if atKey {
                // A member's key, then its colon.
                atKey = false
                guard p[i] == 0x22 else { return yajl_status_error }
                let close = closingQuote()
                guard close < n else { return yajl_status_error }
                let key = p + i + 1, length = close - i - 1
                i = close + 1
                replayed = i
                if let f = table.pointee.yajl_map_key, f(ctx, key, length) == 0 {
                    if goesOn() { afterValue = true; continue }
                    return yajl_status_client_canceled
                }
                skipSpace()
                guard i < n, p[i] == 0x3A else { return yajl_status_error }
                i += 1
                continue
            }
            if afterValue {
                if level == 0 { return yajl_status_error }  // (more than one value)
                let c = p[i]
                i += 1
                replayed = i
                if c == 0x2C {  // ,
                    afterValue = false
                    atKey = levels[level] == 1
                    continue
                }
                level -= 1
                if c == 0x7D {  // }
                    if let f = table.pointee.yajl_end_map, f(ctx) == 0 {
                        if goesOn() { continue }
                        return yajl_status_client_canceled
                    }
                } else if c == 0x5D {  // ]
                    if let f = table.pointee.yajl_end_array, f(ctx) == 0 {
                        if goesOn() { continue }
                        return yajl_status_client_canceled
                    }
                } else {
                    return yajl_status_error
                }
                continue
            }
            // A value.
            afterValue = true
            switch p[i] {
            case 0x7B, 0x5B:  // { [
                let object = p[i] == 0x7B
                guard level + 1 < capacity else { return yajl_status_error }
                level += 1
                levels[level] = object ? 1 : 0
                i += 1
                replayed = i
                let f = object ? table.pointee.yajl_start_map : table.pointee.yajl_start_array
                if let f, f(ctx) == 0 {
                    if goesOn() { continue }
                    return yajl_status_client_canceled
                }
                skipSpace()
                guard i < n else { return yajl_status_error }
                if p[i] == (object ? 0x7D : 0x5D) {
                    continue  // (the close, as after a value)
                }
                afterValue = false
                atKey = object
            case 0x22:  // "
                let close = closingQuote()
                guard close < n else { return yajl_status_error }
                let string = p + i + 1
                let length = close - i - 1
                i = close + 1
                replayed = i
                if let f = table.pointee.yajl_string, f(ctx, string, length) == 0 {
                    if goesOn() { continue }
                    return yajl_status_client_canceled
                }
            case 0x74, 0x66:  // t f
                let value: Int32 = p[i] == 0x74 ? 1 : 0
                i += value == 1 ? 4 : 5
                replayed = i
                if let f = table.pointee.yajl_boolean, f(ctx, value) == 0 {
                    if goesOn() { continue }
                    return yajl_status_client_canceled
                }
            case 0x6E:  // n
                i += 4
                replayed = i
                if let f = table.pointee.yajl_null, f(ctx) == 0 {
                    if goesOn() { continue }
                    return yajl_status_client_canceled
                }
            default:  // a number
                let start = i
                while i < n, Self.isNumberByte(p[i]) { i += 1 }
                guard i > start else { return yajl_status_error }
                replayed = i
                if let f = table.pointee.yajl_number {
                    let text = UnsafeRawPointer(p + start).assumingMemoryBound(to: CChar.self)
                    if f(ctx, text, i - start) == 0 {
                        if goesOn() { continue }
                        return yajl_status_client_canceled
                    }
                }
            }
        }
    }

    /// The deepest text `replay` takes (the projector declines deeper records).
    static let replayDepthLimit = 1 << 12

    /// Whether `b` is one of the bytes a number is made of (digits, sign, point, exponent).
    @inline(__always)
    private static func isNumberByte(_ b: UInt8) -> Bool {
        b &- 0x30 < 10 || b == 0x2D || b == 0x2B || b == 0x2E || b | 0x20 == 0x65
    }
}
