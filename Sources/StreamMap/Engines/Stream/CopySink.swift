#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CJSONScan

/// Copies a container through unchanged (`identity`, and type checks that pass), writing the canonical form as
/// events arrive. Duplicate keys are detected per object; then (rarely) the copy is re-parsed so that the last
/// value wins at the first position, exactly as in the tree.
///
/// The per-event work is straight-line: one check for room, a `,` written always and counted only when one is
/// due, the token; no arrays with copy-on-write checks (the key log and the object stack are raw buffers).
///
/// With a `renamer` it is `keys(style)` streamed: keys are written under the style's names as they arrive (of the
/// outer object only unless `renamesDeep`). The input key of every renamed one is logged; when an object's
/// output keys repeat (a duplicate in the input, or two keys the style gives one name), the input's text is put
/// back together from the output and the log and mapped by the tree's `Mapper.map`, errors and all.
final class CopySink: ValueSink {
    override var handling: StreamHandling { .streamed }
    private let allowed: JSONTypeSet?
    /// False only for the test mutation that keeps the first of duplicate keys (then nothing is checked).
    private let checksDuplicates: Bool
    private let renamer: KeyRenamer?
    private let renamesDeep: Bool
    /// Per renamed key of the value: where its output text starts in the value's text (after the quote), and where
    /// its input's canonical text (quoted) ends in `inputKeys`, which holds them one after another. (Two words a
    /// key: the log of a 100 MB record of small objects is most of what renaming adds to its memory.)
    @exclusivity(unchecked) private var renamed: [(start: Int, inputEnd: Int)] = []
    @exclusivity(unchecked) private var inputKeys = ByteBuffer(capacity: 16)

    /// Open containers (0: the value is complete).
    @exclusivity(unchecked) private var depth = 0
    /// 1 when the next member or element of the innermost container needs a `,` before it, else 0.
    @exclusivity(unchecked) private var comma = 0
    /// Canonical text on its way to `output`, gathered in up to `scratchLimit` bytes and moved there in blocks.
    /// (It was cheaper than appending to `output` when that was an array; now that `output` is a byte buffer too,
    /// the events could be written there directly, saving the move.)
    @exclusivity(unchecked) private var scratch = ByteBuffer(capacity: 256)  // (buffers start small and grow: a spec
    // may compile thousands of sinks, and most copy small values)
    private static let scratchLimit = 1 << 16

    // MARK: Duplicate keys

    /// A key of an open object: where its canonical text (between the quotes) is in the value's text so far, and
    /// a hash of the decoded key. The canonical escaping is one-to-one, so two keys are equal exactly when their
    /// canonical texts are, and the text is already written: nothing is copied for the check.
    private struct KeyEntry {
        /// Offset in the value's text: `output` then `scratch` (see `text(_:in:)`).
        var offset: Int
        var length: Int
        var hash: UInt64
    }
    /// The keys of the open objects, innermost last.
    @exclusivity(unchecked) private var keys = RawStack<KeyEntry>(capacity: 16)
    /// Where the keys of the enclosing open objects start (the innermost one's start is `firstKey`).
    @exclusivity(unchecked) private var frames = RawStack<Int>(capacity: 4)
    @exclusivity(unchecked) private var firstKey = 0
    /// The value's text already sent from `scratch` to `output`.
    @exclusivity(unchecked) private var flushed = 0
    /// Per open object, a 1024-bit filter of the hashes of its first `filteredKeys` keys: a key whose bit is
    /// clear is new, so only the (rare) keys whose bit is set are compared with the object's earlier keys.
    /// Past `filteredKeys` keys the object is checked whole when it ends (hashed, or sorted if made to collide),
    /// so a key never costs more than `filteredKeys` comparisons.
    @exclusivity(unchecked) private var filters = UnsafeMutablePointer<UInt64>.allocate(capacity: 2 * 16)
    @exclusivity(unchecked) private var filterCapacity = 2
    @exclusivity(unchecked) private var openObjects = 0
    @exclusivity(unchecked) private var filter = UnsafeMutablePointer<UInt64>(bitPattern: 8)!
    private static let filterWords = 16
    private static let filteredKeys = 64
    @exclusivity(unchecked) private var sawDuplicate = false

    deinit {
        scratch.deallocate()
        inputKeys.deallocate()
        keys.deallocate()
        frames.deallocate()
        filters.deallocate()
        table.deallocate()
    }

    @inline(__always)
    private func flushScratch() {
        output.writeRaw(scratch.bytes)
        flushed = output.count
        scratch.removeAll()
    }

    /// Writes values as they are (no key style, duplicate keys checked): its containers may be copied verbatim.
    private let copiesVerbatim: Bool

    /// The types a value it copies must have (nil: any) when it copies values as they are — no key style, duplicate
    /// keys checked — so that `VerbatimCopier` may copy them instead; nil when it does not.
    var verbatimCopyTypes: JSONTypeSet?? {
        copiesVerbatim ? .some(allowed) : nil
    }

    init(_ mapper: Mapper, allowed: JSONTypeSet?, renamer: KeyRenamer? = nil, renamesDeep: Bool = false, keepFirstDuplicate: Bool = false) {
        self.allowed = allowed
        self.checksDuplicates = !keepFirstDuplicate || renamer != nil
        self.renamer = renamer
        self.renamesDeep = renamesDeep
        self.copiesVerbatim = renamer == nil && !keepFirstDuplicate
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
        if renamer != nil {
            renamed.removeAll(keepingCapacity: renamed.count < 1 << 16)
            inputKeys.reset(keeping: 1 << 16)
        }
        scratch.reset(keeping: 1 << 18)
        flushed = output.count
        keys.removeAll()
        frames.removeAll()
        openObjects = 0
        firstKey = 0
        depth = 0
        comma = 0
        scratch.append(isObject ? UInt8(ascii: "{") : UInt8(ascii: "["))
        if isObject { openObject() } else { openArray() }
        requestVerbatimCopy()
        return false
    }

    /// Asks the parser to copy the container whose bracket was just written verbatim (`ParseSkip.requestCopy`),
    /// when this copy writes values as they are and receives its events alone.
    @inline(__always)
    private func requestVerbatimCopy() {
        if copiesVerbatim, let parseSkip { parseSkip.requestCopy(self) }
    }

    /// The inside of the container just opened, between its brackets: canonical text whose objects hold no
    /// duplicate keys (`VerbatimCopier`), written as its events would have written it. The container's closing
    /// event follows.
    func copyInterior(_ text: UnsafeRawBufferPointer) {
        if text.count > Self.scratchLimit {
            flushScratch()
            output.writeRaw(text)
            flushed = output.count
        } else {
            scratch.append(text)
        }
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

    /// A lifted string that passes the check is written as its canonical text: as it is in the record when it
    /// has no escapes, else by the verbatim copy's kernel (what the event's decoded text is written as).
    override func startLiftedString(_ raw: UnsafeRawBufferPointer, _ lifts: LiftedStrings) throws {
        guard !keepsValue, allowed?.contains(.string) ?? true else { return try startScalar(lifts.event(raw)) }
        let p = raw.baseAddress!.assumingMemoryBound(to: UInt8.self)
        if memchr(p + 1, 0x5C, raw.count - 2) == nil {
            output.writeRaw(raw)
        } else {
            output.reserve(raw.count + 32)
            let count = cjsonscan_canonical_string(p, raw.count, output.end)
            guard count >= 0 else { return try startScalar(lifts.event(raw)) }
            output.end += count
        }
        kind = .value
    }

    override func nextInContainer(_ e: JSONEvent) throws -> Bool {
        switch e {
        case .null: return copyLiteral(0x6C6C_756E, count: 4)
        case .bool(let b): return b ? copyLiteral(0x6575_7274, count: 4) : copyLiteral(0x65_736C_6166, count: 5)
        case .number(let t): return copyNumber(t)
        case .string(let s, let verbatim): return copyString(s, verbatim: verbatim)
        case .startObject: return copyStartObject()
        case .startArray: return copyStartArray()
        case .key(let k, let verbatim): return copyKey(k, verbatim: verbatim)
        case .endObject: return try copyEndObject()
        case .endArray: return try copyEndArray()
        }
    }

    // MARK: One event each (what `nextInContainer` does for it). They return whether the value is complete.

    /// `null`, `true` or `false` (the first `count` bytes of `word`).
    @inline(__always)
    func copyLiteral(_ word: UInt64, count: Int) -> Bool {
        scratch.reserve(9)
        var p = scratch.end
        p.pointee = UInt8(ascii: ",")
        p += comma
        UnsafeMutableRawPointer(p).storeBytes(of: word.littleEndian, as: UInt64.self)
        scratch.end = p + count
        comma = 1
        return afterValue()
    }

    @inline(__always)
    func copyNumber(_ t: UnsafeRawBufferPointer) -> Bool {
        scratch.reserve(t.count + 1)
        var p = scratch.end
        p.pointee = UInt8(ascii: ",")
        p += comma
        ByteBuffer.copy(t, to: UnsafeMutableRawPointer(p))
        scratch.end = p + t.count
        comma = 1
        return afterValue()
    }

    @inline(__always)
    func copyString(_ s: UnsafeRawBufferPointer, verbatim: Bool) -> Bool {
        if s.count > Self.scratchLimit {
            // A big string goes straight to the output instead of growing the scratch buffer.
            if comma != 0 { scratch.append(UInt8(ascii: ",")) }
            flushScratch()
            output.writeString(utf8: s, verbatim: verbatim)
            flushed = output.count
        } else if verbatim {
            _ = writeQuoted(s, room: 0)
        } else {
            if comma != 0 { scratch.append(UInt8(ascii: ",")) }
            scratch.appendEscaped(s)
        }
        comma = 1
        return afterValue()
    }

    @inline(__always)
    func copyKey(_ k: UnsafeRawBufferPointer, verbatim: Bool) -> Bool {
        if _slowPath(renamer != nil) && (renamesDeep || depth == 1) { return copyRenamedKey(k, verbatim: verbatim) }
        return copyKeyText(k, verbatim: verbatim)
    }

    /// A key of an object whose keys the style renames.
    @inline(never)
    private func copyRenamedKey(_ k: UnsafeRawBufferPointer, verbatim: Bool) -> Bool {
        guard let name = renamer.unsafelyUnwrapped.name(of: k) else { return copyKeyText(k, verbatim: verbatim) }
        if comma != 0 { scratch.append(UInt8(ascii: ",")) }
        let quote = scratch.count
        scratch.append(name.text)  // quoted and escaped
        let start = flushed + quote + 1, length = name.text.count - 2
        scratch.append(UInt8(ascii: ":"))
        comma = 0
        if verbatim { inputKeys.appendQuoted(k) } else { inputKeys.appendEscaped(k) }
        renamed.append((start, inputKeys.count))
        if checksDuplicates && !sawDuplicate { noteKey(hash: name.hash, start: start, length: length) }
        return afterValue()
    }

    @inline(__always)
    private func copyKeyText(_ k: UnsafeRawBufferPointer, verbatim: Bool) -> Bool {
        // Where the key's text starts (after its opening quote) in the value's text, and its length.
        let start: Int, length: Int
        if k.count > Self.scratchLimit {
            if comma != 0 { scratch.append(UInt8(ascii: ",")) }
            flushScratch()
            output.writeString(utf8: k, verbatim: verbatim)
            start = flushed + 1
            length = output.count - start - 1
            flushed = output.count
            scratch.append(UInt8(ascii: ":"))
        } else if verbatim {
            let text = writeQuoted(k, room: 1)
            scratch.end.pointee = UInt8(ascii: ":")
            scratch.end += 1
            start = flushed &+ (text - scratch.base)
            length = k.count
        } else {
            if comma != 0 { scratch.append(UInt8(ascii: ",")) }
            let quote = scratch.count
            scratch.appendEscaped(k)
            start = flushed + quote + 1
            length = scratch.count - quote - 2
            scratch.append(UInt8(ascii: ":"))
        }
        comma = 0
        if checksDuplicates && !sawDuplicate { noteKey(k, start: start, length: length) }
        return afterValue()
    }

    @inline(__always)
    func copyStartObject() -> Bool {
        writeOpening(UInt8(ascii: "{"))
        openObject()
        requestVerbatimCopy()
        return afterValue()
    }

    @inline(__always)
    func copyStartArray() -> Bool {
        writeOpening(UInt8(ascii: "["))
        openArray()
        requestVerbatimCopy()
        return afterValue()
    }

    /// A comma when one is due (written always, kept only then), `"`, text that needs no escaping, `"`, with
    /// room for `extra` more bytes: where the text starts.
    @inline(__always)
    private func writeQuoted(_ text: UnsafeRawBufferPointer, room extra: Int) -> UnsafeMutablePointer<UInt8> {
        scratch.reserve(text.count + 3 + extra)
        var p = scratch.end
        p.pointee = UInt8(ascii: ",")
        p += comma
        p.pointee = 0x22
        ByteBuffer.copy(text, to: UnsafeMutableRawPointer(p + 1))
        (p + 1 + text.count).pointee = 0x22
        scratch.end = p + text.count + 2
        return p + 1
    }

    /// A comma when one is due (written always, kept only then), and the container's opening bracket.
    @inline(__always)
    private func writeOpening(_ bracket: UInt8) {
        scratch.reserve(2)
        var p = scratch.end
        p.pointee = UInt8(ascii: ",")
        p += comma
        p.pointee = bracket
        scratch.end = p + 1
    }

    @inline(__always)
    func copyEndObject() throws -> Bool {
        scratch.append(UInt8(ascii: "}"))
        comma = 1
        if checksDuplicates && !sawDuplicate && keys.count - firstKey > Self.filteredKeys && hasDuplicate(from: firstKey) {
            sawDuplicate = true
        }
        keys.count = firstKey
        openObjects -= 1
        filter -= Self.filterWords
        if openObjects > 0 { firstKey = frames.pop() }
        depth -= 1
        return depth == 0 ? try finish() : afterValue()
    }

    @inline(__always)
    func copyEndArray() throws -> Bool {
        scratch.append(UInt8(ascii: "]"))
        comma = 1
        depth -= 1
        return depth == 0 ? try finish() : afterValue()
    }

    @inline(__always)
    private func openArray() {
        depth += 1
        comma = 0
    }

    @inline(__always)
    private func openObject() {
        depth += 1
        comma = 0
        if openObjects > 0 { frames.push(firstKey) }
        firstKey = keys.count
        openObjects += 1
        if openObjects > filterCapacity { growFilters() }
        filter = filters + (openObjects - 1) * Self.filterWords
        filter.update(repeating: 0, count: Self.filterWords)
    }

    @inline(never)
    private func growFilters() {
        let grown = UnsafeMutablePointer<UInt64>.allocate(capacity: 2 * filterCapacity * Self.filterWords)
        grown.moveUpdate(from: filters, count: filterCapacity * Self.filterWords)
        filters.deallocate()
        filters = grown
        filterCapacity *= 2
    }

    /// An event inside the value (not its end): sends the scratch text on when it grew large.
    @inline(__always)
    private func afterValue() -> Bool {
        if scratch.count >= Self.scratchLimit { flushScratch() }
        return false
    }

    /// The value's last event.
    private func finish() throws -> Bool {
        flushScratch()
        if sawDuplicate && renamer != nil {
            // Output keys repeat: the tree decides (collisions are errors or warnings, duplicates collapse first).
            let input = inputText()
            output.removeAll()
            setResult(mapper.map(try JSONParser.parse(input)))
            return true
        }
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

    /// The value's input text (canonical): the output's, with the input keys back in place of their names.
    private func inputText() -> [UInt8] {
        var input: [UInt8] = []
        input.reserveCapacity(output.count + inputKeys.count)
        let out = output.bytes, keys = inputKeys.bytes
        var position = 0, inputStart = 0
        for r in renamed {
            input.append(contentsOf: out[position..<r.start - 1])
            input.append(contentsOf: keys[inputStart..<r.inputEnd])
            inputStart = r.inputEnd
            // The name's closing quote: canonical text escapes a quote as `\"`, so a backslash skips a byte.
            var i = r.start
            while out[i] != UInt8(ascii: "\"") { i += out[i] == UInt8(ascii: "\\") ? 2 : 1 }
            position = i + 1
        }
        input.append(contentsOf: out[position...])
        return input
    }

    /// Logs a key of the innermost object (`start`, `length`: its canonical text) and, among the object's first
    /// `filteredKeys` keys, checks it against the earlier ones whose hash shares its filter bit.
    @inline(__always)
    private func noteKey(_ k: UnsafeRawBufferPointer, start: Int, length: Int) {
        noteKey(hash: Self.keyHash(k), start: start, length: length)
    }

    /// `noteKey` of a key whose `keyHash` is `h`.
    @inline(__always)
    private func noteKey(hash h: UInt64, start: Int, length: Int) {
        let index = keys.count
        keys.push(KeyEntry(offset: start, length: length, hash: h))
        guard index - firstKey < Self.filteredKeys else { return }
        let word = Int(truncatingIfNeeded: h >> 60)
        let bit: UInt64 = 1 << ((h >> 54) & 63)
        let w = filter[word]
        filter[word] = w | bit
        if w & bit != 0 && matchesEarlierKey(index) { sawDuplicate = true }
    }

    @inline(never)
    private func matchesEarlierKey(_ index: Int) -> Bool {
        for j in firstKey..<index where sameKey(j, index) { return true }
        return false
    }

    /// A hash of a decoded key: of its length and its first and last 8 bytes, read without a byte loop and
    /// without reading outside the key. (Not `KeyTable.hash` of `KeyTable.prefix`: this one is cheaper per key,
    /// which the identity copy feels: 2% of its instructions.) `KeyRenamer` shares it.
    @inline(__always)
    static func keyHash(_ k: UnsafeRawBufferPointer) -> UInt64 {
        let n = k.count
        var prefix: UInt64 = 0, suffix: UInt64 = 0
        if let p = k.baseAddress {
            if n >= 8 {
                prefix = p.loadUnaligned(as: UInt64.self)
                suffix = p.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
            } else if n >= 4 {
                prefix = UInt64(p.loadUnaligned(as: UInt32.self))
                suffix = UInt64(p.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self))
            } else if n > 0 {
                prefix = UInt64(p.load(as: UInt8.self)) | UInt64(p.load(fromByteOffset: n >> 1, as: UInt8.self)) << 8
                suffix = UInt64(p.load(fromByteOffset: n - 1, as: UInt8.self))
            }
        }
        return ((prefix &* 0x9E37_79B9_7F4A_7C15) ^ suffix ^ UInt64(truncatingIfNeeded: n)) &* 0xBF58_476D_1CE4_E5B9
    }

    /// Where a key's canonical text is: in `scratch`, or (sent on already) in `out`, `output`'s bytes.
    @inline(__always)
    private func text(_ e: KeyEntry, in out: UnsafeRawBufferPointer) -> UnsafeRawPointer {
        e.offset >= flushed ? UnsafeRawPointer(scratch.base + (e.offset - flushed)) : out.baseAddress! + e.offset
    }

    /// Whether two keys' canonical texts are equal (`a`, `b` of equal length).
    private func sameText(_ a: KeyEntry, _ b: KeyEntry) -> Bool { compareText(a, b) == 0 }

    private func compareText(_ a: KeyEntry, _ b: KeyEntry) -> Int32 {
        if a.offset >= flushed && b.offset >= flushed {
            return memcmp(scratch.base + (a.offset - flushed), scratch.base + (b.offset - flushed), a.length)
        }
        return memcmp(text(a, in: output.bytes), text(b, in: output.bytes), a.length)
    }

    /// A reusable open-addressing table of key indexes, for the duplicate check of large objects. A slot is in use
    /// only if it carries the current check's stamp, so the table is never cleared.
    @exclusivity(unchecked) private var table = UnsafeMutableBufferPointer<(stamp: UInt32, key: Int32)>(start: nil, count: 0)
    @exclusivity(unchecked) private var stamp: UInt32 = 0

    @inline(__always)
    private func sameKey(_ i: Int, _ j: Int) -> Bool {
        let a = keys[i], b = keys[j]
        return a.hash == b.hash && a.length == b.length && sameText(a, b)
    }

    /// Whether two keys of the object whose keys start at `first` are equal: the whole-object check of an object
    /// with more than `filteredKeys` keys.
    private func hasDuplicate(from first: Int) -> Bool {
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
            let h = keys[i].hash
            var slot = Int(truncatingIfNeeded: h >> 32) & mask
            while table[slot].stamp == stamp {
                if sameKey(Int(table[slot].key), i) { return true }
                slot = (slot + 1) & mask
                probes += 1
            }
            // The hash reads only a key's length and first and last 8 bytes: keys made to share them would make
            // this quadratic (200 000 such keys took a minute). Past a few probes per key, sort instead.
            if probes > 4 * n { return hasDuplicateSorted(from: first) }
            table[slot] = (stamp, Int32(i))
        }
        return false
    }

    /// The duplicate check by sorting the keys: O(n log n) whatever they are.
    private func hasDuplicateSorted(from first: Int) -> Bool {
        let order = (first..<keys.count).sorted { a, b in
            let x = keys[a], y = keys[b]
            if x.hash != y.hash { return x.hash < y.hash }
            if x.length != y.length { return x.length < y.length }
            return compareText(x, y) < 0
        }
        for (a, b) in zip(order, order.dropFirst()) where sameKey(a, b) { return true }
        return false
    }
}

/// A growable stack of plain values without copy-on-write checks (`CopySink`'s key log and object stack). Its
/// owner frees it (`deallocate`).
struct RawStack<Element> {
    private var base: UnsafeMutablePointer<Element>
    /// Elements in use. Lowering it drops the ones above (plain values: nothing to deinitialize).
    var count = 0
    private var capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
        base = .allocate(capacity: capacity)
    }

    func deallocate() { base.deallocate() }

    mutating func removeAll() { count = 0 }

    @inline(__always)
    subscript(i: Int) -> Element { base[i] }

    @inline(__always)
    mutating func push(_ e: Element) {
        if _slowPath(count == capacity) { grow() }
        (base + count).initialize(to: e)
        count += 1
    }

    @inline(__always)
    mutating func pop() -> Element {
        count -= 1
        return base[count]
    }

    @inline(never)
    private mutating func grow() {
        let grown = UnsafeMutablePointer<Element>.allocate(capacity: capacity * 2)
        grown.moveInitialize(from: base, count: count)
        base.deallocate()
        base = grown
        capacity *= 2
    }
}
