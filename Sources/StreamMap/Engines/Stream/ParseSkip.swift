internal import CYajl

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
struct ParseSkip: YajlEventTable {
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
        /// The copy that asked, on the container that is starting, to have it copied verbatim
        /// (`YajlParserBase.copiesAhead`).
        var copyRequest: Unmanaged<CopySink>?
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
        state.deinitialize(count: 1)  // (its list of outer filters)
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
        state.pointee.copyRequest = nil
        restore()
    }

    /// Called by a copy as a container of its value starts (its bracket written): the container may be copied
    /// verbatim ahead of yajl, its inside handed to `sink.copyInterior`. Only for a copy that receives its events
    /// alone and writes them as they are.
    @inline(__always)
    func requestCopy(_ sink: CopySink) { state.pointee.copyRequest = .passUnretained(sink) }

    /// After a container's start event was delivered: the copy that asked for it, if one did.
    @inline(__always)
    func takeCopyRequest() -> Unmanaged<CopySink>? {
        guard let sink = state.pointee.copyRequest else { return nil }
        state.pointee.copyRequest = nil
        return sink
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
