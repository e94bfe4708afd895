// ArrowReading.swift — a small reader of the Arrow IPC that `ArrowRecordWriter` writes, for the tests: it walks
// the FlatBuffers metadata by its vtables (an independent path from the encoder's) and turns every batch back
// into JSON values, so that the differential tests can compare Arrow output with NDJSON output in Swift. The
// proof against real readers (pyarrow, DuckDB, Polars) is Integrations/arrow, run by scripts/arrow-test.sh.

import StreamMap

/// What reading Arrow IPC bytes gives: the schema and the rows (objects of the non-null columns; a float64 is
/// the `Double`'s description as a JSON number, a JSON-text column its text as a string).
public struct ArrowReadTable: Equatable {
    public var schema: ArrowSchema
    public var rows: [JSONValue]
    /// The rows of each record batch, in order.
    public var batchRows: [Int]
    /// How many record batches.
    public var batches: Int { batchRows.count }
}

public struct ArrowReadError: Error, CustomStringConvertible {
    public var description: String
    init(_ d: String) { description = d }
}

public enum ArrowReading {
    /// Reads the stream format, or the file format (`ARROW1` magic; the footer's blocks must point at the batches).
    public static func read(_ bytes: [UInt8]) throws -> ArrowReadTable {
        var position = 0
        var isFile = false
        if bytes.starts(with: Array("ARROW1".utf8)) {
            isFile = true
            guard bytes.count >= 18, Array(bytes.suffix(6)) == Array("ARROW1".utf8) else { throw ArrowReadError("no closing magic") }
            position = 8
        }
        var schema: ArrowSchema?
        var rows: [JSONValue] = []
        var batchRows: [Int] = []
        var batchOffsets: [Int] = []
        while true {
            guard position % 8 == 0 else { throw ArrowReadError("message at \(position) is not 8-byte aligned") }
            let marker = try u32(bytes, position)
            guard marker == 0xFFFF_FFFF else { throw ArrowReadError("no continuation marker at \(position)") }
            let length = Int(try u32(bytes, position + 4))
            if length == 0 {
                position += 8
                break
            }
            guard length % 8 == 0 else { throw ArrowReadError("metadata length \(length) is not a multiple of 8") }
            let messageStart = position
            let meta = position + 8
            let root = meta + Int(try u32(bytes, meta))
            let fb = FlatTable(bytes: bytes, base: meta, at: root)
            guard try fb.scalar(0, Int16.self) == 4 else { throw ArrowReadError("not metadata version V5") }
            let headerType = try fb.scalar(1, UInt8.self)
            guard let header = try fb.table(2) else { throw ArrowReadError("message without header") }
            let bodyLength = Int(try fb.scalar(3, Int64.self))
            let body = meta + length
            guard body + bodyLength <= bytes.count else { throw ArrowReadError("body past the end") }
            switch headerType {
            case 1:
                guard schema == nil else { throw ArrowReadError("two schemas") }
                schema = ArrowSchema(fields: try fields(header.vector(1)))
            case 3:
                guard let schema else { throw ArrowReadError("a batch before the schema") }
                batchOffsets.append(messageStart)
                let read = try batch(header, schema: schema, bytes: bytes, body: body, bodyLength: bodyLength)
                rows += read
                batchRows.append(read.count)
            default:
                throw ArrowReadError("unexpected message type \(headerType)")
            }
            position = body + bodyLength
        }
        guard let schema else { throw ArrowReadError("no schema") }
        if isFile {
            let footerLength = Int(try u32(bytes, bytes.count - 10))
            guard position + footerLength + 10 == bytes.count else { throw ArrowReadError("footer length does not match") }
            let footer = FlatTable(bytes: bytes, base: position, at: position + Int(try u32(bytes, position)))
            guard let footerSchema = try footer.table(1) else { throw ArrowReadError("footer without schema") }
            guard ArrowSchema(fields: try fields(footerSchema.vector(1))) == schema else { throw ArrowReadError("footer schema differs") }
            guard let blocks = try footer.vectorStart(3) else { throw ArrowReadError("footer without record batches") }
            let offsets = try (0..<blocks.count).map { Int(try i64(bytes, blocks.start + 24 * $0)) }
            guard offsets == batchOffsets else { throw ArrowReadError("footer blocks \(offsets) ≠ batches at \(batchOffsets)") }
        } else {
            guard position == bytes.count else { throw ArrowReadError("bytes after the end of the stream") }
        }
        return ArrowReadTable(schema: schema, rows: rows, batchRows: batchRows)
    }

    private static func fields(_ tables: [FlatTable]) throws -> [ArrowField] {
        try tables.map { t in
            guard let name = try t.string(0) else { throw ArrowReadError("field without name") }
            let children = try fields(t.vector(5))
            guard let type = try t.table(3) else { throw ArrowReadError("field without type") }
            switch try t.scalar(2, UInt8.self) {
            case 2:
                guard try type.scalar(0, Int32.self) == 64, try type.scalar(1, UInt8.self) == 1 else { throw ArrowReadError("not int64") }
                return ArrowField(name, .int64)
            case 3:
                guard try type.scalar(0, Int16.self) == 2 else { throw ArrowReadError("not a double") }
                return ArrowField(name, .float64)
            case 5: return ArrowField(name, .utf8)
            case 6: return ArrowField(name, .bool)
            case 7:
                guard try type.scalar(2, Int32.self) == 128 else { throw ArrowReadError("not decimal128") }
                return ArrowField(name, .decimal128(precision: Int(try type.scalar(0, Int32.self)), scale: Int(try type.scalar(1, Int32.self))))
            case 10:
                guard try type.string(1) == "UTC" else { throw ArrowReadError("a timestamp not in UTC") }
                let units: [ColumnType.TimeUnit] = [.seconds, .milliseconds, .microseconds, .nanoseconds]
                let code = Int(try type.scalar(0, Int16.self))
                guard units.indices.contains(code) else { throw ArrowReadError("unknown time unit \(code)") }
                return ArrowField(name, .timestamp(units[code]))
            case 12:
                guard children.count == 1 else { throw ArrowReadError("list without one child") }
                return ArrowField(name, .list(children[0].type))
            case 13: return ArrowField(name, .structure(children))
            case let other: throw ArrowReadError("unexpected type \(other)")
            }
        }
    }

    private struct Cursor {
        var nodes: [(length: Int, nulls: Int)]
        var buffers: [(offset: Int, length: Int)]
        var node = 0
        var buffer = 0
    }

    private static func batch(_ t: FlatTable, schema: ArrowSchema, bytes: [UInt8], body: Int, bodyLength: Int) throws -> [JSONValue] {
        let length = Int(try t.scalar(0, Int64.self))
        guard let n = try t.vectorStart(1), let b = try t.vectorStart(2) else { throw ArrowReadError("batch without nodes or buffers") }
        var cursor = Cursor(
            nodes: try (0..<n.count).map { (Int(try i64(bytes, n.start + 16 * $0)), Int(try i64(bytes, n.start + 16 * $0 + 8))) },
            buffers: try (0..<b.count).map { (Int(try i64(bytes, b.start + 16 * $0)), Int(try i64(bytes, b.start + 16 * $0 + 8))) })
        for buffer in cursor.buffers {
            guard buffer.offset % 8 == 0, buffer.offset + buffer.length <= bodyLength else { throw ArrowReadError("buffer out of the body") }
        }
        let columns = try schema.fields.map { try column($0.type, &cursor, bytes: bytes, body: body) }
        guard cursor.node == cursor.nodes.count, cursor.buffer == cursor.buffers.count else { throw ArrowReadError("nodes or buffers left over") }
        return try (0..<length).map { row in
            var o = JSONObject()
            for (f, values) in zip(schema.fields, columns) {
                guard values.count == length else { throw ArrowReadError("column \(f.name) has \(values.count) values, not \(length)") }
                if let v = values[row] { o[f.name] = v }
            }
            return .object(o)
        }
    }

    /// A column's values (nil: null).
    private static func column(_ type: ArrowType, _ c: inout Cursor, bytes: [UInt8], body: Int) throws -> [JSONValue?] {
        guard c.node < c.nodes.count else { throw ArrowReadError("too few nodes") }
        let node = c.nodes[c.node]
        c.node += 1
        func nextBuffer() throws -> (start: Int, length: Int) {
            guard c.buffer < c.buffers.count else { throw ArrowReadError("too few buffers") }
            defer { c.buffer += 1 }
            return (body + c.buffers[c.buffer].offset, c.buffers[c.buffer].length)
        }
        let validity = try nextBuffer()
        func isValid(_ i: Int) -> Bool {
            validity.length == 0 || bytes[validity.start + i / 8] & (1 << UInt8(i % 8)) != 0
        }
        guard validity.length == 0 || validity.length >= (node.length + 7) / 8 else { throw ArrowReadError("short validity") }
        guard (0..<node.length).filter({ !isValid($0) }).count == node.nulls else { throw ArrowReadError("null count is wrong") }
        func offsets(_ buffer: (start: Int, length: Int)) throws -> [Int] {
            guard buffer.length >= 4 * (node.length + 1) else { throw ArrowReadError("short offsets") }
            return try (0...node.length).map { Int(Int32(bitPattern: try u32(bytes, buffer.start + 4 * $0))) }
        }
        var out: [JSONValue?] = []
        switch type {
        case .int64, .float64:
            let values = try nextBuffer()
            guard values.length >= 8 * node.length else { throw ArrowReadError("short values") }
            for i in 0..<node.length {
                guard isValid(i) else { out.append(nil); continue }
                let raw = try i64(bytes, values.start + 8 * i)
                out.append(.number(JSONNumber(unchecked: type == .int64 ? String(raw) : "\(Double(bitPattern: UInt64(bitPattern: raw)))")))
            }
        case .timestamp(let unit):
            let values = try nextBuffer()
            guard values.length >= 8 * node.length else { throw ArrowReadError("short values") }
            for i in 0..<node.length {
                guard isValid(i) else { out.append(nil); continue }
                let raw = try i64(bytes, values.start + 8 * i)
                var seconds = raw / unit.perSecond, rest = raw % unit.perSecond
                if rest < 0 { seconds -= 1; rest += unit.perSecond }
                let t = Timestamp(seconds: seconds, nanoseconds: Int32(rest * (1_000_000_000 / unit.perSecond)))
                out.append(.string(t.rfc3339 ?? "\(t)"))
            }
        case .decimal128(_, let scale):
            let values = try nextBuffer()
            guard values.length >= 16 * node.length else { throw ArrowReadError("short values") }
            for i in 0..<node.length {
                guard isValid(i) else { out.append(nil); continue }
                let low = UInt64(bitPattern: try i64(bytes, values.start + 16 * i))
                let high = try i64(bytes, values.start + 16 * i + 8)
                let v = Int128(high) << 64 | Int128(low)
                out.append(.number(JSONNumber(unchecked: NumberText.canonicalKey(String(v) + (scale == 0 ? "" : "e-\(scale)")))))
            }
        case .bool:
            let values = try nextBuffer()
            for i in 0..<node.length {
                out.append(isValid(i) ? .bool(bytes[values.start + i / 8] & (1 << UInt8(i % 8)) != 0) : nil)
            }
        case .utf8, .jsonText:
            let o = try offsets(try nextBuffer())
            let data = try nextBuffer()
            for i in 0..<node.length {
                guard isValid(i) else { out.append(nil); continue }
                guard o[i] <= o[i + 1], o[i + 1] <= data.length else { throw ArrowReadError("bad string offsets") }
                out.append(.string(String(decoding: bytes[(data.start + o[i])..<(data.start + o[i + 1])], as: UTF8.self)))
            }
        case .list(let item):
            let o = try offsets(try nextBuffer())
            let items = try column(item, &c, bytes: bytes, body: body)
            for i in 0..<node.length {
                guard isValid(i) else { out.append(nil); continue }
                guard o[i] <= o[i + 1], o[i + 1] <= items.count else { throw ArrowReadError("bad list offsets") }
                out.append(.array(items[o[i]..<o[i + 1]].map { $0 ?? .null }))
            }
        case .structure(let fields):
            let children = try fields.map { try column($0.type, &c, bytes: bytes, body: body) }
            for i in 0..<node.length {
                guard isValid(i) else { out.append(nil); continue }
                var o = JSONObject()
                for (f, values) in zip(fields, children) {
                    guard values.count == node.length else { throw ArrowReadError("struct child \(f.name) has the wrong length") }
                    if let v = values[i] { o[f.name] = v }
                }
                out.append(.object(o))
            }
        }
        return out
    }

    static func u32(_ b: [UInt8], _ i: Int) throws -> UInt32 {
        guard i >= 0, i + 4 <= b.count else { throw ArrowReadError("read past the end at \(i)") }
        return (0..<4).reduce(UInt32(0)) { $0 | UInt32(b[i + $1]) << (8 * UInt32($1)) }
    }

    static func i64(_ b: [UInt8], _ i: Int) throws -> Int64 {
        guard i >= 0, i + 8 <= b.count else { throw ArrowReadError("read past the end at \(i)") }
        return Int64(bitPattern: (0..<8).reduce(UInt64(0)) { $0 | UInt64(b[i + $1]) << (8 * UInt64($1)) })
    }

    /// `schema` as the IPC stream tells it: a JSON-text column is a utf8 column there.
    public static func asWritten(_ schema: ArrowSchema) -> ArrowSchema {
        func written(_ t: ArrowType) -> ArrowType {
            switch t {
            case .jsonText: return .utf8
            case .list(let item): return .list(written(item))
            case .structure(let fields): return .structure(fields.map { ArrowField($0.name, written($0.type)) })
            default: return t
            }
        }
        return ArrowSchema(fields: schema.fields.map { ArrowField($0.name, written($0.type)) })
    }

    /// The values of a mapped NDJSON record as `read` gives them for `schema`: nulls left out, float64 numbers as
    /// their `Double`, JSON-text values as their compact text.
    public static func normalized(_ record: JSONValue, _ schema: ArrowSchema) -> JSONValue {
        normalized(record, .structure(schema.fields)) ?? .object(JSONObject())
    }

    static func normalized(_ v: JSONValue, _ type: ArrowType) -> JSONValue? {
        if case .null = v { return nil }
        switch (type, v) {
        case (.jsonText, _): return .string(JSONWriter.string(v))
        case (.float64, .number(let n)): return .number(JSONNumber(unchecked: "\(Double(n.text)!)"))
        case (.decimal128, .number(let n)): return .number(JSONNumber(unchecked: NumberText.canonicalKey(n.text)))
        case (.timestamp, .string(let s)): return .string(NamedDateFormat.iso8601.parse(s)?.rfc3339 ?? s)
        case (.list(let item), .array(let a)): return .array(a.map { normalized($0, item) ?? .null })
        case (.structure(let fields), .object(let o)):
            var out = JSONObject()
            for f in fields { if let x = o[f.name], let n = normalized(x, f.type) { out[f.name] = n } }
            return .object(out)
        default: return v
        }
    }
}

/// A FlatBuffers table read through its vtable.
struct FlatTable {
    let bytes: [UInt8]
    /// Where the buffer starts (offsets are not relative to it, but alignment is).
    let base: Int
    let at: Int

    init(bytes: [UInt8], base: Int, at: Int) {
        self.bytes = bytes
        self.base = base
        self.at = at
    }

    /// Where field `id` is, or nil when absent.
    func field(_ id: Int) throws -> Int? {
        let vtable = at - Int(Int32(bitPattern: try ArrowReading.u32(bytes, at)))
        guard (vtable - base) % 2 == 0, (at - base) % 4 == 0 else { throw ArrowReadError("misaligned table") }
        let vtableSize = Int(bytes[vtable]) | Int(bytes[vtable + 1]) << 8
        guard 4 + 2 * id + 2 <= vtableSize else { return nil }
        let o = Int(bytes[vtable + 4 + 2 * id]) | Int(bytes[vtable + 5 + 2 * id]) << 8
        return o == 0 ? nil : at + o
    }

    func scalar<T: FixedWidthInteger>(_ id: Int, _: T.Type) throws -> T {
        guard let p = try field(id) else { return 0 }
        guard (p - base) % MemoryLayout<T>.size == 0 else { throw ArrowReadError("misaligned scalar") }
        guard p + MemoryLayout<T>.size <= bytes.count else { throw ArrowReadError("scalar past the end") }
        var v = T(0)
        for k in 0..<MemoryLayout<T>.size { v |= T(truncatingIfNeeded: bytes[p + k]) << (8 * k) }
        return v
    }

    private func target(_ id: Int) throws -> Int? {
        guard let p = try field(id) else { return nil }
        return p + Int(try ArrowReading.u32(bytes, p))
    }

    func table(_ id: Int) throws -> FlatTable? {
        try target(id).map { FlatTable(bytes: bytes, base: base, at: $0) }
    }

    func string(_ id: Int) throws -> String? {
        guard let t = try target(id) else { return nil }
        let n = Int(try ArrowReading.u32(bytes, t))
        guard t + 4 + n < bytes.count, bytes[t + 4 + n] == 0 else { throw ArrowReadError("string without its NUL") }
        return String(decoding: bytes[(t + 4)..<(t + 4 + n)], as: UTF8.self)
    }

    /// A vector of tables (empty when absent).
    func vector(_ id: Int) throws -> [FlatTable] {
        guard let t = try target(id) else { return [] }
        let n = Int(try ArrowReading.u32(bytes, t))
        return try (0..<n).map { k in
            let slot = t + 4 + 4 * k
            return FlatTable(bytes: bytes, base: base, at: slot + Int(try ArrowReading.u32(bytes, slot)))
        }
    }

    /// A vector of structs: where its elements start (8-byte aligned) and how many.
    func vectorStart(_ id: Int) throws -> (start: Int, count: Int)? {
        guard let t = try target(id) else { return nil }
        guard (t + 4 - base) % 8 == 0 else { throw ArrowReadError("struct vector not 8-byte aligned") }
        return (t + 4, Int(try ArrowReading.u32(bytes, t)))
    }
}
