// FlatBufferEncoder.swift — the few FlatBuffers the Arrow IPC format needs for its metadata (Message, Schema,
// RecordBatch, Footer), written by hand: no Swift FlatBuffers or Arrow package is available to this project, and
// the metadata is a handful of small tables per batch, so a 100-line encoder beats a generated one plus a runtime.

/// A FlatBuffers object: a table, a string or a vector. Encoded front to back: every object is written before
/// the objects it refers to, so every offset points forward, as FlatBuffers' unsigned offsets must.
indirect enum FlatObject {
    /// A table: its fields by field id (nil: absent, the schema's default).
    case table([FlatField?])
    /// A string (UTF-8, with the NUL FlatBuffers adds).
    case string(String)
    /// A vector of tables (or strings).
    case objects([FlatObject])
    /// A vector of structs: their bytes, laid out already, `count` of them, aligned to `alignment`.
    case structs([UInt8], count: Int, alignment: Int)
}

/// A table's field: a scalar, or an offset to an object.
enum FlatField {
    case bool(Bool)
    case uint8(UInt8)
    case int16(Int16)
    case int32(Int32)
    case int64(Int64)
    case object(FlatObject)

    /// Its size inline in the table (an object is a 4-byte offset); also its alignment.
    var size: Int {
        switch self {
        case .bool, .uint8: return 1
        case .int16: return 2
        case .int32, .object: return 4
        case .int64: return 8
        }
    }
}

/// Encodes one FlatBuffers object as a root buffer. The buffer is meant to be placed at an 8-byte-aligned address
/// (in Arrow IPC it follows the 8-byte message prefix), which is what its 8-byte fields are aligned to.
struct FlatBufferEncoder {
    private var out: [UInt8] = []

    /// The bytes of a buffer whose root is `root` (a table).
    static func encode(_ root: FlatObject) -> [UInt8] {
        var e = FlatBufferEncoder()
        e.out.reserveCapacity(256)
        e.put(UInt32(0))  // the root offset, patched below
        let position = e.write(root)
        e.patchOffset(at: 0, to: position)
        return e.out
    }

    private mutating func pad(to alignment: Int) {
        while out.count % alignment != 0 { out.append(0) }
    }

    private mutating func put<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { out.append(contentsOf: $0) }
    }

    private mutating func set<T: FixedWidthInteger>(_ value: T, at position: Int) {
        withUnsafeBytes(of: value.littleEndian) { bytes in
            for (i, b) in bytes.enumerated() { out[position + i] = b }
        }
    }

    /// An unsigned offset at `position` to `target` (always after it).
    private mutating func patchOffset(at position: Int, to target: Int) {
        set(UInt32(target - position), at: position)
    }

    /// Writes `object` and the objects it refers to; returns where it starts (what an offset to it points at).
    private mutating func write(_ object: FlatObject) -> Int {
        switch object {
        case .string(let s):
            pad(to: 4)
            let position = out.count
            let bytes = Array(s.utf8)
            put(UInt32(bytes.count))
            out.append(contentsOf: bytes)
            out.append(0)
            return position
        case .objects(let items):
            pad(to: 4)
            let position = out.count
            put(UInt32(items.count))
            let slots = items.indices.map { position + 4 + 4 * $0 }
            for _ in items { put(UInt32(0)) }
            for (slot, item) in zip(slots, items) { patchOffset(at: slot, to: write(item)) }
            return position
        case .structs(let bytes, let count, let alignment):
            // The length comes right before the elements, which are aligned to the struct's alignment.
            while (out.count + 4) % max(alignment, 4) != 0 { out.append(0) }
            let position = out.count
            put(UInt32(count))
            out.append(contentsOf: bytes)
            return position
        case .table(let fields):
            return writeTable(fields)
        }
    }

    private mutating func writeTable(_ fields: [FlatField?]) -> Int {
        // Inline layout: the vtable offset (4 bytes), then the fields largest first, each aligned to its size
        // relative to the table's start, which is 8-byte aligned.
        var fieldOffsets = [Int](repeating: 0, count: fields.count)
        var end = 4
        for size in [8, 4, 2, 1] {
            for (id, field) in fields.enumerated() where field?.size == size {
                end = (end + size - 1) / size * size
                fieldOffsets[id] = end
                end += size
            }
        }
        let tableSize = (end + 3) / 4 * 4
        // The vtable, then the table at the next 8-byte boundary.
        pad(to: 2)
        let vtable = out.count
        put(UInt16(4 + 2 * fields.count))
        put(UInt16(tableSize))
        for offset in fieldOffsets { put(UInt16(offset)) }
        pad(to: 8)
        let table = out.count
        put(Int32(table - vtable))
        out.append(contentsOf: repeatElement(0, count: tableSize - 4))
        var children: [(slot: Int, object: FlatObject)] = []
        for (id, field) in fields.enumerated() {
            guard let field else { continue }
            let at = table + fieldOffsets[id]
            switch field {
            case .bool(let b): out[at] = b ? 1 : 0
            case .uint8(let v): out[at] = v
            case .int16(let v): set(v, at: at)
            case .int32(let v): set(v, at: at)
            case .int64(let v): set(v, at: at)
            case .object(let o): children.append((at, o))
            }
        }
        for child in children { patchOffset(at: child.slot, to: write(child.object)) }
        return table
    }
}

extension Array where Element == UInt8 {
    /// Appends `value` in little-endian order.
    mutating func appendLittleEndian<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }
}
