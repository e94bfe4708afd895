#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A key style's names for the keys a stream has seen: the style runs once per distinct key, not once per key
/// event (records repeat their keys). Keys are looked up by their decoded bytes in an open-addressing table (a
/// hash of a key's length and first and last 8 bytes, then a byte compare). A key that does not turn up within
/// `probeLimit` slots is named without the table, so keys made to share a hash cost the style's own time, not a
/// search. Past `keyLimit` distinct keys, or `byteLimit` bytes of them, the table is emptied: input with
/// ever-new keys costs bounded memory.
final class KeyRenamer {
    let style: KeyStyle

    private struct Entry {
        var hash: Int
        var key: Range<Int>
        /// The output name's canonical text, quoted, in `bytes`; nil when the style leaves the key as it is.
        var name: Range<Int>?
        /// `CopySink.keyHash` of the name's decoded bytes.
        var nameHash: UInt64
    }

    /// A key's new name: its canonical JSON text with the quotes, and `CopySink.keyHash` of its decoded bytes.
    struct Name {
        var text: UnsafeRawBufferPointer
        var hash: UInt64
    }

    @exclusivity(unchecked) private var entries: [Entry] = []
    /// Entry indexes (-1: free); a power of two, at most half full.
    @exclusivity(unchecked) private var table = [Int32](repeating: -1, count: 64)
    @exclusivity(unchecked) private var bytes = ByteBuffer(capacity: 4096)
    static let keyLimit = 1 << 12
    static let byteLimit = 1 << 20
    static let probeLimit = 8
    /// The name of the last key named without the table.
    @exclusivity(unchecked) private var uncached = ByteBuffer(capacity: 64)

    init(style: KeyStyle) { self.style = style }

    deinit {
        bytes.deallocate()
        uncached.deallocate()
    }

    /// The output name of the key whose decoded bytes are `key`, or nil when it is `key` itself. The text is
    /// valid until the next call.
    func name(of key: UnsafeRawBufferPointer) -> Name? {
        let hash = Self.hash(key)
        let mask = table.count - 1
        var slot = hash & mask
        var probes = 0
        while table[slot] >= 0 {
            probes += 1
            if probes > Self.probeLimit { return uncachedName(of: key) }
            let e = entries[Int(table[slot])]
            if e.hash == hash && e.key.count == key.count
                && (key.count == 0 || memcmp(bytes.base + e.key.lowerBound, key.baseAddress!, key.count) == 0) {
                return name(e)
            }
            slot = (slot + 1) & mask
        }
        if entries.count >= Self.keyLimit || bytes.count >= Self.byteLimit {
            forget()
            return name(of: key)
        }
        let entry = learn(key, hash: hash)
        table[slot] = Int32(entries.count)
        entries.append(entry)
        if entries.count * 2 > table.count { rehash() }
        return name(entry)
    }

    private func name(_ e: Entry) -> Name? {
        guard let r = e.name else { return nil }
        return Name(text: UnsafeRawBufferPointer(start: bytes.base + r.lowerBound, count: r.count), hash: e.nameHash)
    }

    private func uncachedName(of key: UnsafeRawBufferPointer) -> Name? {
        var name = style.apply(String(decoding: key, as: UTF8.self))
        return name.withUTF8 { n -> Name? in
            let decoded = UnsafeRawBufferPointer(n)
            if Self.same(decoded, key) { return nil }
            uncached.removeAll()
            uncached.appendEscaped(decoded)
            return Name(text: uncached.bytes, hash: CopySink.keyHash(decoded))
        }
    }

    private static func same(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        a.count == b.count && (a.isEmpty || memcmp(a.baseAddress!, b.baseAddress!, a.count) == 0)
    }

    @inline(__always)
    private static func hash(_ k: UnsafeRawBufferPointer) -> Int { Int(truncatingIfNeeded: CopySink.keyHash(k) >> 16) }

    /// A new entry: the key's bytes and, when the style changes it, its name's canonical text (yajl's keys are
    /// valid UTF-8: the strict scanner checked them).
    private func learn(_ key: UnsafeRawBufferPointer, hash: Int) -> Entry {
        let start = bytes.count
        bytes.append(key)
        var entry = Entry(hash: hash, key: start..<bytes.count, name: nil, nameHash: 0)
        var name = style.apply(String(decoding: key, as: UTF8.self))
        name.withUTF8 { n in
            let decoded = UnsafeRawBufferPointer(n)
            guard !Self.same(decoded, key) else { return }
            let nameStart = bytes.count
            bytes.appendEscaped(decoded)
            entry.name = nameStart..<bytes.count
            entry.nameHash = CopySink.keyHash(decoded)
        }
        return entry
    }

    private func forget() {
        entries.removeAll(keepingCapacity: true)
        table = [Int32](repeating: -1, count: 64)
        bytes.reset(keeping: 4096)
    }

    private func rehash() { table = Self.slots(size: table.count * 2, hashes: entries.lazy.map(\.hash)) }

    /// An open-addressing table of `size` slots (a power of two) holding the indexes of `hashes`, each at the
    /// first free slot from its hash (linear probing); -1: free. (`PassThroughMembers` builds its table so too.)
    static func slots(size: Int, hashes: some Sequence<Int>) -> [Int32] {
        var table = [Int32](repeating: -1, count: size)
        let mask = size - 1
        for (i, hash) in hashes.enumerated() {
            var slot = hash & mask
            while table[slot] >= 0 { slot = (slot + 1) & mask }
            table[slot] = Int32(i)
        }
        return table
    }
}
