#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The members an object passes through (`unmapped: keep`), for `ObjectSink`: what `ObjectMapping.map` does with
/// the keys no field reads, without a `String`, a dictionary or an array per member.
///
/// Keys are interned across records: a key's decoded bytes are looked up in an open-addressing table (one hash,
/// seeded per process, then a byte compare) and each distinct key keeps what the assembly needs — its output text (styled,
/// escaped, with the colon), whether a field's destination reserves it, and which key is the first with the same
/// output name (two keys that style alike are one member). Per object, the values' texts go into one buffer and
/// members are found by key through stamped tables that are never cleared. The interned keys are forgotten
/// between objects once there are more than `keyLimit` of them, so hostile input with ever-new keys cannot make
/// the table grow without bound.
///
/// Rules (as the tree engine's): members in input order; a key seen again keeps its first position and takes its
/// last value (and only that value's errors); a reserved output name is dropped with a warning; a key whose output
/// name an earlier key of the object has is a collision (an error and the member is dropped, or under `.warn` a
/// warning and the first position and the last value win); a member whose value is fatal or absent is dropped with
/// its errors reported.
struct PassThroughMembers {
    /// A distinct input key. Plain data: reading it costs no reference counting.
    private struct Key {
        var hash: Int
        var start: Int
        var length: Int
        /// `"outputName":` in `texts`.
        var text: Range<Int>
        var reserved: Bool
        /// The first key with the same output name.
        var sameName: Int32
    }

    private struct Member {
        var key: Int32
        /// The value's text in `values`.
        var value: Range<Int>
        var kind: ResultKind
        var errors: [MapError]
    }

    static let keyLimit = 1 << 14

    private let style: KeyStyle?
    private let reserved: Set<ByteKey>
    private let collisions: KeyCollisions

    private var keys: [Key] = []
    /// The input and output names, for error paths only.
    private var names: [(input: String, output: String)] = []
    private var keyBytes = ByteBuffer(capacity: 1024)
    private var texts = ByteBuffer(capacity: 1024)
    /// Key indexes (-1: free); a power of two, at most half full.
    private var table = [Int32](repeating: -1, count: 64)
    /// Output names seen, with a key style (two input names can style alike).
    private var keyOfOutputName: [ByteKey: Int32] = [:]

    // Per object.
    private var stamp: UInt32 = 0
    /// By key: its member in this object, valid when the stamp is the object's.
    private var memberOfKey: [(stamp: UInt32, index: Int32)] = []
    /// By output name (its first key): its place in `passed`, valid when the stamp is the object's.
    private var passedOfName: [(stamp: UInt32, index: Int32)] = []
    /// By output name (its first key): the object's first key with that name, valid when the stamp is the object's.
    private var firstKeyOfName: [(stamp: UInt32, key: Int32)] = []
    private var members: [Member] = []
    private var values = ByteBuffer(capacity: 4096)
    /// What `collect` keeps, in order: a key and a value text.
    private var passed: [(key: Int32, value: Range<Int>)] = []

    init(style: KeyStyle?, reserved: Set<ByteKey>, collisions: KeyCollisions) {
        self.style = style
        self.reserved = reserved
        self.collisions = collisions
    }

    func deallocate() {
        keyBytes.deallocate()
        texts.deallocate()
        values.deallocate()
    }

    /// Before an object's members.
    mutating func beginObject() {
        if keys.count > Self.keyLimit { forgetKeys() }
        stamp &+= 1
        if stamp == 0 {
            for i in memberOfKey.indices { memberOfKey[i].stamp = 0 }
            for i in passedOfName.indices { passedOfName[i].stamp = 0 }
            for i in firstKeyOfName.indices { firstKeyOfName[i].stamp = 0 }
            stamp = 1
        }
        members.removeAll(keepingCapacity: true)
        passed.removeAll(keepingCapacity: true)
        values.reset(keeping: 1 << 18)
    }

    private mutating func forgetKeys() {
        keys.removeAll()
        names.removeAll()
        keyBytes.reset(keeping: 1024)
        texts.reset(keeping: 1024)
        table = [Int32](repeating: -1, count: 64)
        keyOfOutputName.removeAll()
        memberOfKey.removeAll()
        passedOfName.removeAll()
        firstKeyOfName.removeAll()
    }

    /// The key whose decoded bytes are `k`, interned the first time.
    mutating func key(_ k: UnsafeRawBufferPointer) throws -> Int32 {
        var hasher = Hasher()  // seeded per process: keys cannot be chosen to collide
        hasher.combine(bytes: k)
        let hash = hasher.finalize()
        let mask = table.count - 1
        var slot = hash & mask
        while table[slot] >= 0 {
            let id = table[slot]
            let key = keys[Int(id)]
            if key.hash == hash && key.length == k.count
                && (k.count == 0 || memcmp(keyBytes.base + key.start, k.baseAddress!, k.count) == 0) {
                return id
            }
            slot = (slot + 1) & mask
        }
        let id = try intern(k, hash: hash)
        table[slot] = id
        if keys.count * 2 > table.count { rehash() }
        return id
    }

    private mutating func intern(_ k: UnsafeRawBufferPointer, hash: Int) throws -> Int32 {
        let input = try JSONTreeBuilder.makeString(k)
        let output = style?.apply(input) ?? input
        let id = Int32(keys.count)
        var sameName = id
        if style != nil {
            if let first = keyOfOutputName[ByteKey(output)] { sameName = first } else { keyOfOutputName[ByteKey(output)] = id }
        }
        var text = JSONWriter()
        text.writeString(output)
        text.writeRaw(UInt8(ascii: ":"))
        let textStart = texts.count
        text.bytes.withUnsafeBytes { texts.append($0) }
        keys.append(Key(hash: hash, start: keyBytes.count, length: k.count, text: textStart..<texts.count,
                        reserved: reserved.contains(ByteKey(output)), sameName: sameName))
        keyBytes.append(k)
        names.append((input, output))
        memberOfKey.append((0, -1))
        passedOfName.append((0, -1))
        firstKeyOfName.append((0, -1))
        return id
    }

    private mutating func rehash() { table = KeyRenamer.slots(size: table.count * 2, hashes: keys.lazy.map(\.hash)) }

    /// The value of a member has been mapped by `sink`.
    mutating func add(key: Int32, from sink: ValueSink) {
        let start = values.count
        if start == 0 {
            // The object's first value: the sink's buffer becomes ours (one huge member is not copied).
            swap(&values, &sink.output)
            sink.output.removeAll()
        } else {
            values.appendReleasing(sink.output.bytes)  // (the sink starts its next value afresh)
        }
        let member = Member(key: key, value: start..<values.count, kind: sink.kind, errors: sink.errors)
        let k = Int(key)
        if memberOfKey[k].stamp == stamp {
            members[Int(memberOfKey[k].index)] = member
        } else {
            memberOfKey[k] = (stamp, Int32(members.count))
            members.append(member)
        }
    }

    /// At the end of the object: decides which members are written (see the rules above), appending the errors of
    /// the others, with their paths, to `errors`.
    mutating func collect(into errors: inout [MapError]) {
        for m in members {
            let key = keys[Int(m.key)]
            guard !key.reserved else {
                let name = names[Int(m.key)]
                errors.append(ObjectMapping.shadowedKeyWarning(name.input, name: name.output))
                continue
            }
            let n = Int(key.sameName)
            if let style {
                if firstKeyOfName[n].stamp == stamp {
                    // An earlier key of this object has the same output name (members are distinct keys).
                    let first = names[Int(firstKeyOfName[n].key)], name = names[Int(m.key)]
                    errors.append(ObjectMapping.passThroughCollision(first.input, name.input, name: name.output, style: style,
                                                                     collisions: collisions))
                    if collisions == .fail { continue }
                } else {
                    firstKeyOfName[n] = (stamp, m.key)
                }
            }
            if !m.errors.isEmpty {
                let name = names[Int(m.key)]
                for e in m.errors { errors.append(e.prefixed(source: [.key(name.input)], destination: [.key(name.output)])) }
                if m.errors.contains(where: \.isFatal) { continue }
            }
            guard m.kind != .absent else { continue }
            if passedOfName[n].stamp == stamp {
                passed[Int(passedOfName[n].index)].value = m.value
            } else {
                passedOfName[n] = (stamp, Int32(passed.count))
                passed.append((m.key, m.value))
            }
        }
    }

    /// Writes the members `collect` kept, each after a comma when `count` says members came before.
    func write(to output: inout ByteBuffer, count: inout Int) {
        for p in passed {
            if count > 0 { output.writeRaw(UInt8(ascii: ",")) }
            let text = keys[Int(p.key)].text
            output.writeRaw(UnsafeRawBufferPointer(start: texts.base + text.lowerBound, count: text.count))
            // (Each value is written once, and `values` is emptied at the next object.)
            output.appendReleasing(UnsafeRawBufferPointer(start: values.base + p.value.lowerBound, count: p.value.count))
            count += 1
        }
    }
}
