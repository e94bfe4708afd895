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
        /// The output name's decoded bytes in `bytes`; nil when the style leaves the key as it is.
        var name: Range<Int>?
    }

    private var entries: [Entry] = []
    /// Entry indexes (-1: free); a power of two, at most half full.
    private var table = [Int32](repeating: -1, count: 64)
    private var bytes = ByteBuffer(capacity: 4096)
    static let keyLimit = 1 << 12
    static let byteLimit = 1 << 20
    static let probeLimit = 8
    /// The name of the last key named without the table.
    private var uncached = ByteBuffer(capacity: 64)

    init(style: KeyStyle) { self.style = style }

    deinit {
        bytes.deallocate()
        uncached.deallocate()
    }

    /// The output name of the key whose decoded bytes are `key`, or nil when it is `key` itself. The buffer is
    /// valid until the next call.
    func name(of key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
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
                return text(e.name)
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
        return text(entry.name)
    }

    private func uncachedName(of key: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        var name = style.apply(String(decoding: key, as: UTF8.self))
        uncached.removeAll()
        name.withUTF8 { uncached.append(UnsafeRawBufferPointer($0)) }
        let same = uncached.count == key.count && (key.isEmpty || memcmp(uncached.base, key.baseAddress!, key.count) == 0)
        return same ? nil : uncached.bytes
    }

    @inline(__always)
    private static func hash(_ k: UnsafeRawBufferPointer) -> Int { Int(truncatingIfNeeded: CopySink.keyHash(k) >> 16) }

    private func text(_ range: Range<Int>?) -> UnsafeRawBufferPointer? {
        range.map { UnsafeRawBufferPointer(start: bytes.base + $0.lowerBound, count: $0.count) }
    }

    /// A new entry: the key's bytes and, when the style changes it, its name's (yajl's keys are valid UTF-8:
    /// the strict scanner checked them).
    private func learn(_ key: UnsafeRawBufferPointer, hash: Int) -> Entry {
        let start = bytes.count
        bytes.append(key)
        var name = style.apply(String(decoding: key, as: UTF8.self))
        let same = name.withUTF8 { $0.count == key.count && ($0.isEmpty || memcmp($0.baseAddress!, key.baseAddress!, key.count) == 0) }
        var entry = Entry(hash: hash, key: start..<bytes.count, name: nil)
        if !same {
            let nameStart = bytes.count
            name.withUTF8 { bytes.append(UnsafeRawBufferPointer($0)) }
            entry.name = nameStart..<bytes.count
        }
        return entry
    }

    private func forget() {
        entries.removeAll(keepingCapacity: true)
        table = [Int32](repeating: -1, count: 64)
        bytes.reset(keeping: 4096)
    }

    private func rehash() {
        table = [Int32](repeating: -1, count: table.count * 2)
        let mask = table.count - 1
        for (i, e) in entries.enumerated() {
            var slot = e.hash & mask
            while table[slot] >= 0 { slot = (slot + 1) & mask }
            table[slot] = Int32(i)
        }
    }
}
