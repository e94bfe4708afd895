/// The destinations of an object mapping's fields as a tree of keys, and the object's text around the values of
/// the destinations filled in a record (its layout). Shared by the streamed object (`ObjectSink`) and the fields
/// written straight from a projection (`ProjectedFields`), so that both lay an object out as the tree engine
/// does: destinations in the order their first filled slot comes in the spec.
final class DestinationTree {
    /// A node: a key (pre-escaped, with its colon) and either a slot or children.
    private struct Node {
        let keyBytes: [UInt8]
        var slot: Int?
        var children: [Int] = []
    }

    /// An object's text around its slots: `text[start..<piece.end]`, then the slot's value (none when -1), for
    /// each piece in turn, `start` being the previous piece's end. `{`, keys and slots, without the closing brace.
    /// In memory of the tree's own (`allocate`, `deallocate`), not in arrays: a layout is lent for every record
    /// written, and lending arrays out of the cache retained and released both of them each time (two pairs of
    /// atomic operations a record).
    struct Layout {
        let text: UnsafeRawBufferPointer
        let pieces: UnsafeBufferPointer<(end: Int, slot: Int)>

        static func allocate(text: [UInt8], pieces: [(end: Int, slot: Int)]) -> Layout {
            let t = UnsafeMutableRawBufferPointer.allocate(byteCount: text.count, alignment: 1)
            text.withUnsafeBytes { t.copyMemory(from: $0) }
            let p = UnsafeMutableBufferPointer<(end: Int, slot: Int)>.allocate(capacity: pieces.count)
            _ = p.initialize(from: pieces)
            return Layout(text: UnsafeRawBufferPointer(t), pieces: UnsafeBufferPointer(p))
        }

        func deallocate() {
            text.deallocate()
            pieces.deallocate()
        }
    }

    private var nodes: [Node] = [Node(keyBytes: [], slot: nil)]
    /// Per node, its children by key text (a linear search made many fields quadratic).
    private var childOfKey: [[[UInt8]: Int]] = [[:]]
    /// For each slot, the nodes from the top down to the slot's own node.
    private var slotPaths: [[Int]] = []
    var slotCount: Int { slotPaths.count }

    /// What a record's object is for each set of filled slots (a bit mask, for up to 64 slots), computed the first
    /// time a set is seen; records of one source mostly fill one of a few sets.
    @exclusivity(unchecked) private var layouts: [(filled: UInt64, layout: Layout)] = []
    private static let layoutCacheLimit = 32
    @exclusivity(unchecked) private var opened: [Bool] = [false]
    @exclusivity(unchecked) private var order: [[Int]] = [[]]

    init() {}

    deinit {
        for cached in layouts { cached.layout.deallocate() }
    }

    /// A new slot at `steps` (a destination path of keys); returns its index. Destinations must not repeat or
    /// nest in each other (`KeyPath.earlierOverlaps`).
    func addSlot(_ steps: [String]) -> Int {
        let slot = slotPaths.count
        var node = 0
        var path: [Int] = []
        for step in steps {
            var w = JSONWriter()
            w.writeString(step)
            w.writeRaw(UInt8(ascii: ":"))
            if let existing = childOfKey[node][w.bytes] {
                node = existing
            } else {
                nodes.append(Node(keyBytes: w.bytes, slot: nil))
                childOfKey.append([:])
                opened.append(false)
                order.append([])
                nodes[node].children.append(nodes.count - 1)
                childOfKey[node][w.bytes] = nodes.count - 1
                node = nodes.count - 1
            }
            path.append(node)
        }
        nodes[node].slot = slot
        slotPaths.append(path)
        // (`opened` and `order` grow with the nodes: made anew for every slot, they made a spec of n fields take
        // time n².)
        return slot
    }

    /// The layout for the slots `filled` says are filled: cached (computed the first time) when there are at most
    /// 64 slots and room in the cache, else computed for this record.
    func withLayout<R>(filled: [Bool], _ body: (Layout) -> R) -> R {
        guard filled.count <= 64 else {
            let layout = computeLayout { filled[$0] }
            defer { layout.deallocate() }
            return body(layout)
        }
        var mask: UInt64 = 0
        for (slot, f) in filled.enumerated() where f { mask |= 1 << UInt64(slot) }
        return withLayout(mask: mask, body)
    }

    /// The layout for the slots whose bits `mask` sets (at most 64 slots).
    @inline(__always)
    func withLayout<R>(mask: UInt64, _ body: (Layout) -> R) -> R {
        for i in layouts.indices where layouts[i].filled == mask { return body(layouts[i].layout) }
        let layout = computeLayout { mask & (1 << UInt64($0)) != 0 }
        guard layouts.count < Self.layoutCacheLimit else {
            defer { layout.deallocate() }
            return body(layout)
        }
        layouts.append((mask, layout))
        return body(layout)
    }

    /// The object's text for the slots filled: `{`, then keys and slots, each destination opened where its first
    /// filled slot comes in the spec (as the tree inserts them).
    private func computeLayout(_ isFilled: (Int) -> Bool) -> Layout {
        for n in nodes.indices {
            opened[n] = false
            order[n].removeAll(keepingCapacity: true)
        }
        for slot in slotPaths.indices where isFilled(slot) {
            var parent = 0
            for n in slotPaths[slot] {
                if !opened[n] {
                    opened[n] = true
                    order[parent].append(n)
                }
                parent = n
            }
        }
        var text: [UInt8] = [UInt8(ascii: "{")]
        var pieces: [(end: Int, slot: Int)] = []
        func visit(_ node: Int) {
            for (i, child) in order[node].enumerated() {
                if i > 0 { text.append(UInt8(ascii: ",")) }
                text += nodes[child].keyBytes
                if let slot = nodes[child].slot {
                    pieces.append((text.count, slot))
                } else {
                    text.append(UInt8(ascii: "{"))
                    visit(child)
                    text.append(UInt8(ascii: "}"))
                }
            }
        }
        visit(0)
        pieces.append((text.count, -1))
        return Layout.allocate(text: text, pieces: pieces)
    }
}

extension DestinationTree.Layout {
    /// Writes the layout to `output`, each slot's value by `slot`.
    @inline(__always)
    func write(to output: inout ByteBuffer, slot: (Int, inout ByteBuffer) -> Void) {
        var start = 0
        for piece in pieces {
            output.append(UnsafeRawBufferPointer(rebasing: text[start..<piece.end]))
            start = piece.end
            if piece.slot >= 0 { slot(piece.slot, &output) }
        }
    }
}
