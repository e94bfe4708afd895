// ArrowWriter.swift — mapped records (compact JSON objects, as the engines write them) into Arrow record
// batches, written in the Arrow IPC stream or file format (https://arrow.apache.org/docs/format/Columnar.html).
// Arrow data is little-endian, as every platform this package builds for is: buffers are copied as they are.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
#if _endian(big)
#error("ArrowWriter writes the host's integers as Arrow's little-endian buffers")
#endif

/// Which of Arrow IPC's two formats: the stream (read as it comes: `pyarrow.ipc.open_stream`, a pipe) or the
/// file (`ARROW1` magic and a footer indexing the batches: `pyarrow.ipc.open_file`, `polars.read_ipc`, Feather v2).
public enum ArrowIPCFormat: String, Sendable, CaseIterable {
    /// The IPC stream format: the schema, the record batches, an end-of-stream marker.
    case stream
    /// The IPC file format (Feather v2): `ARROW1`, the stream, a footer that indexes the batches, `ARROW1`.
    case file
}

/// A mapped value the writer cannot put in its column. The checks of `ArrowSchema.checking(_:)` reject such
/// records before they reach the writer, so this error means a mapping the schema does not describe.
public struct ArrowWriteError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What did not fit, with the column.
    public var message: String
    public var description: String { message }
}

/// Writes mapped records as Arrow record batches of a schema's columns.
///
/// Each record is one row; a field the record lacks, or null, is a null. Rows gather into a batch until
/// `batchRows` rows or about `batchBytes` bytes of records (whichever comes first), so memory stays bounded
/// whatever the number of records. What the writer produces is given to the caller to write, in order:
///
/// ```swift
/// var writer = ArrowRecordWriter(schema: try ArrowSchema(mapper: mapper), format: .stream)
/// var out: [UInt8] = []
/// try writer.append(recordLine)             // a mapped record's JSON text
/// if writer.isBatchFull { writer.writeBatch(into: &out) }
/// writer.finish(into: &out)                 // the last batch and the end of the stream (or the file's footer)
/// ```
public struct ArrowRecordWriter: Sendable {
    /// The columns.
    public let schema: ArrowSchema
    /// Stream or file.
    public let format: ArrowIPCFormat
    /// The most rows in one batch (65 536 by default).
    public var batchRows = 1 << 16
    /// About the most bytes of records in one batch (1 MiB by default, the block pyarrow's JSON reader makes a batch
    /// of: a few thousand rows of tweets, tens of thousands of narrow records). The columns of one batch are all the
    /// memory the writer keeps, touched page by page the first time it fills them: 8 MiB cost a run of 100 MB of
    /// tweets 5–6% of its time in page faults, which 1 MiB leaves out.
    public var batchBytes = 1 << 20

    private var columns: ColumnBuilder
    private var rows = 0
    private var recordBytes = 0
    private var started = false
    /// Bytes given out so far (the file format's footer needs each batch's offset).
    private var written = 0
    private var blocks: [Block] = []

    private struct Block: Sendable {
        var offset: Int
        var metadataBytes: Int
        var bodyBytes: Int
    }

    /// A writer of `schema`'s columns in `format`.
    public init(schema: ArrowSchema, format: ArrowIPCFormat) {
        self.schema = schema
        self.format = format
        columns = ColumnBuilder(.structure(schema.fields))
    }

    /// The columns are shared by copies of this writer until one of them changes them (then it takes its own).
    private mutating func ownColumns() {
        if !isKnownUniquelyReferenced(&columns) { columns = columns.copy() }
    }

    /// Rows appended since the last batch was written.
    public var pendingRows: Int { rows }
    /// Bytes of the records appended since the last batch was written (a batch is full at `batchBytes`).
    var pendingRecordBytes: Int { recordBytes }

    /// Whether the rows appended make a whole batch (`writeBatch(into:)` then).
    public var isBatchFull: Bool { rows >= batchRows || recordBytes >= batchBytes }

    /// Appends one mapped record: `record` is its JSON object (compact, as the engines write it; no newline).
    /// Throws when a value does not fit its column; then the writer must not be used again.
    public mutating func append(_ record: UnsafeRawBufferPointer) throws(ArrowWriteError) {
        ownColumns()
        try columns.appendRecord(record)
        rows += 1
        recordBytes += record.count
    }

    /// Appends rows `range` of `rows` (records a worker made columns of: `ArrowRowsPreparer`) — the same columns
    /// as appending those records' text. Throws as `append` does; then the writer must not be used again.
    mutating func append(_ rows: ArrowRows, _ range: Range<Int>) throws(ArrowWriteError) {
        ownColumns()
        try columns.appendRows(from: rows.columns!, range)
        self.rows += range.count
        for i in range { recordBytes += rows.lengths[i] }
    }

    /// Writes the rows appended so far as one record batch (after the file's magic and the schema, the first time).
    /// Nothing when no row is waiting (except that first part).
    public mutating func writeBatch(into out: inout [UInt8]) {
        writeBatch(into: &out, direct: nil)
    }

    /// A body buffer this large goes to `writeBatch(into:direct:)`'s `direct` instead of being copied into `out`.
    static let directBytes = 1 << 16

    /// `writeBatch(into:)`, except that each body buffer of `directBytes` or more is handed to `direct` rather than
    /// copied into `out`: `direct` gets `out` (everything before the buffer, to be written first and removed) and
    /// the buffer. The bytes, in order, are the same.
    mutating func writeBatch(into out: inout [UInt8], direct: ((inout [UInt8], UnsafeRawBufferPointer) -> Void)?) {
        writeStart(into: &out)
        guard rows > 0 else { return }
        var nodes: [UInt8] = []
        var buffers: [UInt8] = []
        var bodyBytes = 0
        for child in columns.children { child.layout(nodes: &nodes, buffers: &buffers, bodyBytes: &bodyBytes) }
        let batch = FlatObject.table([
            .int64(Int64(rows)),
            .object(.structs(nodes, count: nodes.count / 16, alignment: 8)),
            .object(.structs(buffers, count: buffers.count / 16, alignment: 8)),
        ])
        // The body goes straight after the metadata, from the columns: never gathered in a buffer of its own.
        if direct == nil { out.reserveCapacity(out.count + bodyBytes + 4096) }
        writeMessage(header: 3, batch, bodyBytes: bodyBytes, into: &out, indexed: true)
        let bodyStart = out.count
        for child in columns.children { child.appendBody(to: &out, direct: direct) }
        assert(direct != nil || out.count - bodyStart == bodyBytes)  // (the layout lists what the body holds)
        written += bodyBytes
        // Emptied in place; columns another copy of the writer still holds are left to it (not copied to be emptied).
        if isKnownUniquelyReferenced(&columns) { columns.removeAll() } else { columns = ColumnBuilder(.structure(schema.fields)) }
        rows = 0
        recordBytes = 0
    }

    /// Writes the last batch and ends the output: the stream's end marker, or the file's footer.
    public mutating func finish(into out: inout [UInt8]) {
        writeBatch(into: &out)
        put(0xFFFF_FFFF as UInt32, 0 as UInt32, into: &out)
        guard format == .file else { return }
        var blockBytes: [UInt8] = []
        for b in blocks {
            blockBytes.appendLittleEndian(Int64(b.offset))
            blockBytes.appendLittleEndian(Int32(b.metadataBytes))
            blockBytes.appendLittleEndian(Int32(0))
            blockBytes.appendLittleEndian(Int64(b.bodyBytes))
        }
        let footer = FlatBufferEncoder.encode(.table([
            .int16(Self.metadataVersion),
            .object(schemaTable),
            .object(.structs([], count: 0, alignment: 8)),
            .object(.structs(blockBytes, count: blocks.count, alignment: 8)),
        ]))
        append(footer, into: &out)
        put(UInt32(footer.count), into: &out)
        append(Array("ARROW1".utf8), into: &out)
    }

    /// MetadataVersion V5.
    static let metadataVersion: Int16 = 4

    private mutating func writeStart(into out: inout [UInt8]) {
        guard !started else { return }
        started = true
        if format == .file { append(Array("ARROW1".utf8) + [0, 0], into: &out) }
        writeMessage(header: 1, schemaTable, bodyBytes: 0, into: &out, indexed: false)
    }

    private var schemaTable: FlatObject {
        .table([.int16(0), .object(.objects(schema.fields.map(Self.fieldTable)))])
    }

    private static func fieldTable(_ field: ArrowField) -> FlatObject {
        let (typeID, typeTable, children) = typeParts(field.type)
        return .table([
            .object(.string(field.name)), .bool(true), .uint8(typeID), .object(typeTable), nil,
            .object(.objects(children.map(fieldTable))),
        ])
    }

    /// The `Type` union's member (its id and table) and the children of a field of `type`.
    private static func typeParts(_ type: ArrowType) -> (UInt8, FlatObject, [ArrowField]) {
        switch type {
        case .int64: return (2, .table([.int32(64), .bool(true)]), [])
        case .float64: return (3, .table([.int16(2)]), [])
        case .utf8, .jsonText: return (5, .table([]), [])
        case .bool: return (6, .table([]), [])
        // Decimal { precision: int; scale: int; bitWidth: int = 128 }.
        case .decimal128(let p, let s): return (7, .table([.int32(Int32(p)), .int32(Int32(s)), .int32(128)]), [])
        // Timestamp { unit: TimeUnit (SECOND, MILLISECOND, MICROSECOND, NANOSECOND); timezone: string }.
        case .timestamp(let unit):
            let code: Int16 = switch unit {
            case .seconds: 0
            case .milliseconds: 1
            case .microseconds: 2
            case .nanoseconds: 3
            }
            return (10, .table([.int16(code), .object(.string("UTC"))]), [])
        case .list(let item): return (12, .table([]), [ArrowField("item", item)])
        case .structure(let fields): return (13, .table([]), fields)
        }
    }

    /// An encapsulated message's start: continuation marker, metadata length, the `Message` flatbuffer padded to 8
    /// bytes. Its body (of `bodyBytes`) is the caller's to write next.
    private mutating func writeMessage(header: UInt8, _ table: FlatObject, bodyBytes: Int, into out: inout [UInt8], indexed: Bool) {
        let metadata = FlatBufferEncoder.encode(.table([
            .int16(Self.metadataVersion), .uint8(header), .object(table), .int64(Int64(bodyBytes)),
        ]))
        let padded = (metadata.count + 7) / 8 * 8
        if indexed { blocks.append(Block(offset: written, metadataBytes: 8 + padded, bodyBytes: bodyBytes)) }
        put(0xFFFF_FFFF as UInt32, UInt32(padded), into: &out)
        append(metadata + [UInt8](repeating: 0, count: padded - metadata.count), into: &out)
    }

    private mutating func put(_ values: UInt32..., into out: inout [UInt8]) {
        for v in values { out.appendLittleEndian(v) }
        written += 4 * values.count
    }

    private mutating func append(_ bytes: [UInt8], into out: inout [UInt8]) {
        out.append(contentsOf: bytes)
        written += bytes.count
    }
}

/// One column (or child) being filled: its validity bitmap, its values and its children, in Arrow's layout.
///
/// A class, so that a value appended to a child column is appended in place (no copy-on-write check of the
/// children's array, or of each buffer, per value); its buffers are `ColumnData`, which it frees. One thread fills
/// it; a finished one may be handed to another (`ArrowRows`). `ArrowRecordWriter`, a value, copies its columns
/// (`copy()`) before changing columns another writer shares.
final class ColumnBuilder: @unchecked Sendable {
    let type: ArrowType
    /// `type`'s case without its payload: what `append` switches on for every value (an indirect enum's case is
    /// read through its box).
    private let kind: Kind
    @exclusivity(unchecked) private(set) var count = 0
    @exclusivity(unchecked) private var nullCount = 0
    /// The validity bitmap, kept only once a null came (until then every row is valid: `forEachBuffer` makes
    /// the all-set bitmap when the batch is written).
    @exclusivity(unchecked) private var validity = ColumnData<UInt8>()
    /// Bits (bool) or UTF-8 bytes (utf8).
    @exclusivity(unchecked) private var values = ColumnData<UInt8>()
    /// int64 and timestamp values, float64 values' bit patterns, or decimal128 values (two words each, low first).
    @exclusivity(unchecked) private var words = ColumnData<UInt64>()
    /// utf8 and list: where each value starts, then where the last ends.
    @exclusivity(unchecked) private var offsets = ColumnData<Int32>()
    /// An escaped string's text, unescaped, before it joins `values`.
    @exclusivity(unchecked) private var unescaped: [UInt8] = []
    let children: [ColumnBuilder]
    /// struct: each child's key, and the keys by child (mapped records write them in this order).
    private var keys: [[UInt8]: Int] = [:]
    private var names: [[UInt8]] = []
    /// Per child: its name has no `"` or `\\`, so a mapped record's key that is those bytes between quotes is it (no
    /// escape can hide in it).
    private var plainNames: [Bool] = []

    private enum Kind { case bool, int64, float64, utf8, jsonText, timestamp, decimal128, list, structure }

    init(_ type: ArrowType) {
        self.type = type
        switch type {
        case .bool: kind = .bool
        case .int64: kind = .int64
        case .float64: kind = .float64
        case .utf8: kind = .utf8
        case .jsonText: kind = .jsonText
        case .timestamp: kind = .timestamp
        case .decimal128: kind = .decimal128
        case .list: kind = .list
        case .structure: kind = .structure
        }
        switch type {
        case .list(let item): children = [ColumnBuilder(item)]
        case .structure(let fields):
            children = fields.map { ColumnBuilder($0.type) }
            names = fields.map { Array($0.name.utf8) }
            plainNames = names.map { !$0.contains(0x22) && !$0.contains(0x5C) }
            for (i, name) in names.enumerated() { keys[name] = i }
        default: children = []
        }
        offsets.append(0)
    }

    deinit {
        validity.deallocate()
        values.deallocate()
        words.deallocate()
        offsets.deallocate()
    }

    /// A column of the same rows that shares nothing with this one.
    func copy() -> ColumnBuilder {
        let column = ColumnBuilder(type)
        column.take(self)
        return column
    }

    /// This column's rows become `other`'s (a column of the same type), copied, its children's too.
    private func take(_ other: ColumnBuilder) {
        count = other.count
        nullCount = other.nullCount
        validity.replace(with: other.validity)
        values.replace(with: other.values)
        words.replace(with: other.words)
        offsets.replace(with: other.offsets)
        for (child, from) in zip(children, other.children) { child.take(from) }
    }

    /// The bytes its buffers hold room for, its children's included.
    var capacityBytes: Int {
        validity.capacityBytes + values.capacityBytes + words.capacityBytes + offsets.capacityBytes + unescaped.capacity
            + children.reduce(0) { $0 + $1.capacityBytes }
    }

    func removeAll() {
        count = 0
        nullCount = 0
        validity.removeAll()
        values.removeAll()
        words.removeAll()
        offsets.removeAll()
        offsets.append(0)
        for child in children { child.removeAll() }
    }

    /// Counts a valid row (its bit is set only where the column has had a null).
    @inline(__always) private func markValid() {
        if nullCount > 0 {
            if count % 8 == 0 { validity.append(0) }
            validity[count / 8] |= 1 << UInt8(count % 8)
        }
        count += 1
    }

    /// Counts a null row; the first one makes the bitmap of the valid rows before it.
    private func markNull() {
        if nullCount == 0 { Self.allValid(count).withUnsafeBytes { validity.append(raw: $0) } }
        if count % 8 == 0 { validity.append(0) }
        nullCount += 1
        count += 1
    }

    private func markValid(_ valid: Bool) {
        if valid { markValid() } else { markNull() }
    }

    /// The bitmap of `rows` valid rows: Arrow's bytes, bits past the last row clear.
    private static func allValid(_ rows: Int) -> [UInt8] {
        var bits = [UInt8](repeating: 0xFF, count: (rows + 7) / 8)
        if rows % 8 != 0 { bits[bits.count - 1] = UInt8(1 << (rows % 8) - 1) }
        return bits
    }

    func appendNull() {
        markNull()
        switch kind {
        case .int64, .float64, .timestamp: words.append(0)
        case .decimal128:
            words.append(0)
            words.append(0)
        case .bool: if (count - 1) % 8 == 0 { values.append(0) }
        case .utf8, .jsonText, .list: offsets.append(offsets[offsets.count - 1])
        case .structure: for child in children { child.appendNull() }
        }
    }

    /// Appends a mapped record (its compact JSON object) as one row of this struct column.
    func appendRecord(_ record: UnsafeRawBufferPointer) throws(ArrowWriteError) {
        let scanner = CompactJSONScanner(bytes: record)
        let start = scanner.skipSpace(0)
        guard start < record.count, record[start] == UInt8(ascii: "{") else {
            throw ArrowWriteError(message: "a mapped record is not a JSON object")
        }
        _ = try append(scanner, at: start)
    }

    /// Appends the value at `i`; returns where it ends.
    func append(_ s: CompactJSONScanner, at i: Int) throws(ArrowWriteError) -> Int {
        let b = s.bytes
        if b[i] == UInt8(ascii: "n") {  // null
            appendNull()
            return i + 4
        }
        switch kind {
        case .jsonText:
            let end = s.skipValue(i)
            try appendBytes(UnsafeRawBufferPointer(rebasing: b[i..<end]))
            return end
        case .utf8:
            guard b[i] == UInt8(ascii: "\"") else { throw mismatch(s, i) }
            let (end, escaped) = s.stringEnd(i)
            let raw = UnsafeRawBufferPointer(rebasing: b[(i + 1)..<(end - 1)])
            try checkRoom(raw.count)  // (unescaped text is never longer)
            if escaped {
                markValid()
                unescaped.removeAll(keepingCapacity: true)
                CompactJSONScanner.unescape(raw, appendingTo: &unescaped)
                unescaped.withUnsafeBytes { values.append(raw: $0) }
                offsets.append(Int32(values.count))
            } else {
                appendUnchecked(raw)
            }
            return end
        case .bool:
            guard b[i] == UInt8(ascii: "t") || b[i] == UInt8(ascii: "f") else { throw mismatch(s, i) }
            markValid()
            if (count - 1) % 8 == 0 { values.append(0) }
            if b[i] == UInt8(ascii: "t") { values[(count - 1) / 8] |= 1 << UInt8((count - 1) % 8) }
            return b[i] == UInt8(ascii: "t") ? i + 4 : i + 5
        case .int64:
            if let (v, end) = Self.int64Prefix(b, at: i) {
                markValid()
                words.append(v)
                return end
            }
            let end = s.skipValue(i)
            guard let v = Self.int64(UnsafeRawBufferPointer(rebasing: b[i..<end])) else { throw mismatch(s, i) }
            markValid()
            words.append(UInt64(bitPattern: v))
            return end
        case .float64:
            let end = s.skipValue(i)
            guard let v = Self.double(UnsafeRawBufferPointer(rebasing: b[i..<end])) else { throw mismatch(s, i) }
            markValid()
            words.append(v.bitPattern)
            return end
        case .timestamp:
            guard b[i] == UInt8(ascii: "\""), case .timestamp(let unit) = type else { throw mismatch(s, i) }
            let end = s.skipString(i)
            switch ArrowScalars.timestamp(jsonString: UnsafeRawBufferPointer(rebasing: b[i..<end]), unit) {
            case .success(let v):
                markValid()
                words.append(UInt64(bitPattern: v))
            case .failure(let e):
                throw ArrowWriteError(message: e.message)
            }
            return end
        case .decimal128:
            guard case .decimal128(let p, let scale) = type else { throw mismatch(s, i) }
            let end = s.skipValue(i)
            switch ArrowScalars.decimal(UnsafeRawBufferPointer(rebasing: b[i..<end]).assumingMemoryBound(to: UInt8.self), precision: p, scale: scale) {
            case .success(let v):
                markValid()
                words.append(UInt64(truncatingIfNeeded: v))
                words.append(UInt64(truncatingIfNeeded: v >> 64))
            case .failure(let e):
                throw ArrowWriteError(message: e.message)
            }
            return end
        case .list:
            guard b[i] == UInt8(ascii: "[") else { throw mismatch(s, i) }
            var j = s.skipSpace(i + 1)
            if j < b.count && b[j] == UInt8(ascii: "]") {
                j += 1
            } else {
                while j < b.count {
                    j = s.skipSpace(try children[0].append(s, at: j))
                    guard j < b.count, b[j] == UInt8(ascii: ",") else {
                        j += 1
                        break
                    }
                    j = s.skipSpace(j + 1)
                }
            }
            guard children[0].count <= Int(Int32.max) else { throw ArrowWriteError(message: "a list column holds more than 2^31 elements in one batch") }
            markValid()
            offsets.append(Int32(children[0].count))
            return j
        case .structure:
            guard b[i] == UInt8(ascii: "{") else { throw mismatch(s, i) }
            let row = count
            var j = s.skipSpace(i + 1)
            var expected = 0
            if j < b.count && b[j] == UInt8(ascii: "}") {
                j += 1
            } else {
                while j < b.count {
                    // Mapped records write the columns' keys in order: the next one is tried where it stands, with
                    // no scan for the key's end.
                    var keyEnd = expectedKeyEnd(expected, at: j, in: b)
                    let child: Int
                    if keyEnd > 0 {
                        child = expected
                    } else {
                        keyEnd = s.skipString(j)
                        guard let named = self.child(named: UnsafeRawBufferPointer(rebasing: b[(j + 1)..<(keyEnd - 1)]), expected, s, j, keyEnd) else {
                            throw ArrowWriteError(message: "the key \(String(decoding: b[j..<keyEnd], as: UTF8.self)) is not one of the columns (\(type))")
                        }
                        child = named
                    }
                    expected = child + 1
                    // (The child is reached without a retain and a release: `children` holds it.)
                    let column = Unmanaged.passUnretained(children[child])
                    guard column._withUnsafeGuaranteedRef({ $0.count }) == row else {
                        throw ArrowWriteError(message: "the key \(String(decoding: b[j..<keyEnd], as: UTF8.self)) comes twice in one object")
                    }
                    j = s.skipSpace(s.skipSpace(keyEnd) + 1)
                    let end: Result<Int, ArrowWriteError> = column._withUnsafeGuaranteedRef { column in
                        do throws(ArrowWriteError) { return .success(try column.append(s, at: j)) } catch { return .failure(error) }
                    }
                    j = s.skipSpace(try end.get())
                    guard j < b.count, b[j] == UInt8(ascii: ",") else {
                        j += 1
                        break
                    }
                    j = s.skipSpace(j + 1)
                }
            }
            // The members the object did not have: nulls (each child reached without a retain, as above).
            for k in children.indices {
                Unmanaged.passUnretained(children[k])._withUnsafeGuaranteedRef { if $0.count == row { $0.appendNull() } }
            }
            markValid()
            return j
        }
    }

    /// Whether row `i` is not null.
    private func isValid(_ i: Int) -> Bool { nullCount == 0 || validity[i / 8] & (1 << UInt8(i % 8)) != 0 }

    /// Appends rows `range` of `other`, a column of the same type: the same buffers as appending their values.
    func appendRows(from other: ColumnBuilder, _ range: Range<Int>) throws(ArrowWriteError) {
        guard !range.isEmpty else { return }
        switch type {
        case .int64, .float64, .timestamp:
            words.append(other.words, range)
        case .decimal128:
            words.append(other.words, (2 * range.lowerBound)..<(2 * range.upperBound))
        case .bool:
            for i in range {
                let row = count + i - range.lowerBound
                if row % 8 == 0 { values.append(0) }
                if other.values[i / 8] & (1 << UInt8(i % 8)) != 0 { values[row / 8] |= 1 << UInt8(row % 8) }
            }
        case .utf8, .jsonText:
            let start = Int(other.offsets[range.lowerBound]), end = Int(other.offsets[range.upperBound])
            try checkRoom(end - start)
            let base = Int32(values.count) - Int32(start)
            values.append(other.values, start..<end)
            for i in range { offsets.append(other.offsets[i + 1] + base) }
        case .list:
            let start = Int(other.offsets[range.lowerBound]), end = Int(other.offsets[range.upperBound])
            let base = Int32(children[0].count) - Int32(start)
            try children[0].appendRows(from: other.children[0], start..<end)
            guard children[0].count <= Int(Int32.max) else { throw ArrowWriteError(message: "a list column holds more than 2^31 elements in one batch") }
            for i in range { offsets.append(other.offsets[i + 1] + base) }
        case .structure:
            for (child, from) in zip(children, other.children) { try child.appendRows(from: from, range) }
        }
        if other.nullCount == 0 && nullCount == 0 {
            count += range.count
        } else {
            for i in range { markValid(other.isValid(i)) }
        }
    }

    /// Where the key at `j` (its opening quote) ends, past its closing quote, when it is child `k`'s name; else 0.
    @inline(__always) private func expectedKeyEnd(_ k: Int, at j: Int, in b: UnsafeRawBufferPointer) -> Int {
        guard k < names.count, plainNames[k] else { return 0 }
        return names[k].withUnsafeBytes { name in
            let close = j + 1 + name.count
            guard close < b.count, b[close] == 0x22 else { return 0 }
            return Self.equal(UnsafeRawBufferPointer(rebasing: b[(j + 1)..<close]), name) ? close + 1 : 0
        }
    }

    /// Whether two pieces of the same length hold the same bytes: a column name and a key are short, and compared
    /// here in words that cover them (as `ByteBuffer.copy` copies), without a call to `memcmp`.
    @inline(__always) static func equal(_ a: UnsafeRawBufferPointer, _ b: UnsafeRawBufferPointer) -> Bool {
        let n = a.count
        guard n == b.count else { return false }
        guard n > 0, let x = a.baseAddress, let y = b.baseAddress else { return true }
        switch n {
        case 8...16:
            return x.loadUnaligned(as: UInt64.self) == y.loadUnaligned(as: UInt64.self)
                && x.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self) == y.loadUnaligned(fromByteOffset: n - 8, as: UInt64.self)
        case 4..<8:
            return x.loadUnaligned(as: UInt32.self) == y.loadUnaligned(as: UInt32.self)
                && x.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self) == y.loadUnaligned(fromByteOffset: n - 4, as: UInt32.self)
        case 1..<4:
            return a[0] == b[0] && a[n >> 1] == b[n >> 1] && a[n - 1] == b[n - 1]
        default:
            return memcmp(x, y, n) == 0
        }
    }

    /// The child a key names: the one after the last key's first (where mapped records have it), else looked up.
    private func child(named raw: UnsafeRawBufferPointer, _ expected: Int, _ s: CompactJSONScanner, _ start: Int, _ end: Int) -> Int? {
        if expected < names.count, names[expected].count == raw.count, names[expected].withUnsafeBytes({ name in
            // (Column names are short: byte by byte, no call.)
            var i = 0
            while i < raw.count && name[i] == raw[i] { i += 1 }
            return i == raw.count
        }) {
            return expected
        }
        return s.key(in: (start + 1)..<(end - 1)).flatMap { keys[$0] }
    }

    private func appendBytes(_ raw: UnsafeRawBufferPointer) throws(ArrowWriteError) {
        try checkRoom(raw.count)
        appendUnchecked(raw)
    }

    /// utf8 offsets are 32-bit: a batch's column holds less than 2 GiB of text.
    private func checkRoom(_ bytes: Int) throws(ArrowWriteError) {
        guard values.count + bytes <= Int(Int32.max) else {
            throw ArrowWriteError(message: "a utf8 column holds more than 2 GiB in one batch")
        }
    }

    private func appendUnchecked(_ raw: UnsafeRawBufferPointer) {
        markValid()
        values.append(raw: raw)
        offsets.append(Int32(values.count))
    }

    private func mismatch(_ s: CompactJSONScanner, _ i: Int) -> ArrowWriteError {
        let end = s.skipValue(i)
        let text = String(decoding: s.bytes[i..<min(end, i + 64)], as: UTF8.self)
        return ArrowWriteError(message: "\(text) does not fit a column of type \(type)")
    }

    /// The int64 at `i` and where it ends, when it is an integer of at most 19 digits that int64 holds, followed by
    /// the end of the value (`,` `}` `]`, space or the end); nil otherwise (`int64` and the value's end decide).
    /// One pass: 19 digits never overflow a UInt64.
    @inline(__always) static func int64Prefix(_ b: UnsafeRawBufferPointer, at i: Int) -> (UInt64, Int)? {
        var j = i
        let negative = j < b.count && b[j] == UInt8(ascii: "-")
        if negative { j += 1 }
        let first = j
        var v: UInt64 = 0
        // Eight digits at a time while eight are there (ids are 18 or 19 digits), then one at a time.
        while j + 8 <= b.count, let eight = eightDigits(b.loadUnaligned(fromByteOffset: j, as: UInt64.self)) {
            v = v &* 100_000_000 &+ eight
            j += 8
        }
        while j < b.count {
            let d = b[j] &- UInt8(ascii: "0")
            guard d < 10 else { break }
            v = v &* 10 &+ UInt64(d)
            j += 1
        }
        guard j > first, j - first <= 19, v <= (negative ? 1 << 63 : UInt64(Int64.max)) else { return nil }
        if j < b.count {
            let c = b[j]
            guard c == UInt8(ascii: ",") || c == UInt8(ascii: "}") || c == UInt8(ascii: "]") || c == 0x20 || c == 0x0A else { return nil }
        }
        return (negative ? 0 &- v : v, j)
    }

    /// The value of eight ASCII digits (the first one the most significant), read from a little-endian word; nil
    /// when a byte is not a digit.
    @inline(__always) static func eightDigits(_ w: UInt64) -> UInt64? {
        let ones: UInt64 = 0x0101_0101_0101_0101
        // Each byte's high nibble is 3 and its low one at most 9 (adding 6 keeps the high nibble 3).
        guard w & (ones &* 0xF0) == ones &* 0x30, (w &+ ones &* 0x06) & (ones &* 0xF0) == ones &* 0x30 else { return nil }
        var d = w &- ones &* 0x30
        d = (d &* 10 &+ (d >> 8)) & 0x00FF_00FF_00FF_00FF
        d = (d &* 100 &+ (d >> 16)) & 0x0000_FFFF_0000_FFFF
        return (d &* 10_000 &+ (d >> 32)) & 0xFFFF_FFFF
    }

    /// A JSON integer's value, if it is one that int64 holds.
    static func int64(_ text: UnsafeRawBufferPointer) -> Int64? {
        var i = 0
        let negative = text.first == UInt8(ascii: "-")
        if negative { i = 1 }
        guard i < text.count else { return nil }
        var v: Int64 = 0
        while i < text.count {
            let d = text[i] &- UInt8(ascii: "0")
            guard d < 10 else { return nil }
            let (m, o1) = v.multipliedReportingOverflow(by: 10)
            let (a, o2) = negative ? m.subtractingReportingOverflow(Int64(d)) : m.addingReportingOverflow(Int64(d))
            guard !o1, !o2 else { return nil }
            v = a
            i += 1
        }
        return v
    }

    /// A JSON number's nearest double, if finite.
    static func double(_ text: UnsafeRawBufferPointer) -> Double? {
        guard !text.isEmpty, text.count < 4096 else { return nil }
        let v = withUnsafeTemporaryAllocation(of: CChar.self, capacity: text.count + 1) { buffer -> Double? in
            for (k, byte) in text.enumerated() { buffer[k] = CChar(bitPattern: byte) }
            buffer[text.count] = 0
            var end: UnsafeMutablePointer<CChar>?
            let d = strtod(buffer.baseAddress!, &end)
            return end == buffer.baseAddress! + text.count ? d : nil
        }
        guard let v, v.isFinite else { return nil }
        return v
    }

    /// Appends this column's field nodes and buffers (pre-order, as the record batch lists them), the buffers at
    /// `bodyBytes` onwards, each padded to 8 bytes; `bodyBytes` ends past them.
    func layout(nodes: inout [UInt8], buffers: inout [UInt8], bodyBytes: inout Int) {
        nodes.appendLittleEndian(Int64(count))
        nodes.appendLittleEndian(Int64(nullCount))
        forEachBuffer { raw in
            buffers.appendLittleEndian(Int64(bodyBytes))
            buffers.appendLittleEndian(Int64(raw.count))
            bodyBytes += (raw.count + 7) / 8 * 8
        }
        for child in children { child.layout(nodes: &nodes, buffers: &buffers, bodyBytes: &bodyBytes) }
    }

    /// Appends the buffers `layout` lists, each padded to 8 bytes (a buffer of `ArrowRecordWriter.directBytes` or
    /// more is handed to `direct`, where there is one, with `out` as it is before it).
    func appendBody(to out: inout [UInt8], direct: ((inout [UInt8], UnsafeRawBufferPointer) -> Void)? = nil) {
        forEachBuffer { raw in
            if let direct, raw.count >= ArrowRecordWriter.directBytes {
                direct(&out, raw)
            } else {
                out.append(contentsOf: raw)
            }
            out.append(contentsOf: repeatElement(0, count: (8 - raw.count % 8) % 8))
        }
        for child in children { child.appendBody(to: &out, direct: direct) }
    }

    /// This column's own buffers, in Arrow's order for its type.
    private func forEachBuffer(_ body: (UnsafeRawBufferPointer) -> Void) {
        // The validity buffer: the bitmap, or all set when no row is null.
        if nullCount > 0 { validity.withUnsafeBytes(body) } else { Self.allValid(count).withUnsafeBytes(body) }
        switch type {
        case .int64, .float64, .timestamp, .decimal128: words.withUnsafeBytes(body)
        case .bool: values.withUnsafeBytes(body)
        case .utf8, .jsonText:
            offsets.withUnsafeBytes(body)
            values.withUnsafeBytes(body)
        case .list: offsets.withUnsafeBytes(body)
        case .structure: break
        }
    }
}

/// A column buffer's values: memory from `malloc` that grows by `realloc`, appended to without the copy-on-write
/// checks of an `Array` (an append is a test and a store). Its owner frees it (`deallocate`), and `replace(with:)`
/// copies another's values into it; a plain copy of the struct shares the memory.
struct ColumnData<Element: BitwiseCopyable> {
    private(set) var base: UnsafeMutablePointer<Element>
    private(set) var count = 0
    private var capacity = 16

    init() {
        base = Self.allocate(capacity)
    }

    func deallocate() { free(base) }

    private static func allocate(_ capacity: Int) -> UnsafeMutablePointer<Element> {
        guard let memory = malloc(capacity * MemoryLayout<Element>.stride) else {
            fatalError("out of memory (\(capacity * MemoryLayout<Element>.stride) bytes)")
        }
        return memory.bindMemory(to: Element.self, capacity: capacity)
    }

    /// Room for `n` more values.
    @inline(__always) private mutating func reserve(_ n: Int) {
        if _slowPath(count + n > capacity) { grow(n) }
    }

    @inline(never) private mutating func grow(_ n: Int) {
        var newCapacity = capacity * 2
        while newCapacity < count + n { newCapacity *= 2 }
        guard let grown = realloc(base, newCapacity * MemoryLayout<Element>.stride) else {
            fatalError("out of memory (\(newCapacity * MemoryLayout<Element>.stride) bytes)")
        }
        base = grown.assumingMemoryBound(to: Element.self)
        capacity = newCapacity
    }

    subscript(i: Int) -> Element {
        @inline(__always) get {
            assert(i >= 0 && i < count)
            return base[i]
        }
        @inline(__always) nonmutating set {
            assert(i >= 0 && i < count)
            base[i] = newValue
        }
    }

    @inline(__always) mutating func append(_ value: Element) {
        reserve(1)
        base[count] = value
        count += 1
    }

    /// Appends `other`'s values `range`.
    mutating func append(_ other: ColumnData<Element>, _ range: Range<Int>) {
        precondition(range.lowerBound >= 0 && range.upperBound <= other.count)
        reserve(range.count)
        (base + count).update(from: other.base + range.lowerBound, count: range.count)
        count += range.count
    }

    /// Appends the values whose bytes are `raw` (whole values).
    @inline(__always) mutating func append(raw: UnsafeRawBufferPointer) {
        let n = raw.count / MemoryLayout<Element>.stride
        guard n > 0 else { return }
        reserve(n)
        // (Short pieces, most strings of a record, without a call to `memcpy`.)
        ByteBuffer.copy(UnsafeRawBufferPointer(rebasing: raw[..<(n * MemoryLayout<Element>.stride)]), to: UnsafeMutableRawPointer(base + count))
        count += n
    }

    /// This buffer's values become `other`'s (copied).
    mutating func replace(with other: ColumnData<Element>) {
        count = 0
        append(other, 0..<other.count)
    }

    mutating func removeAll() { count = 0 }

    var capacityBytes: Int { capacity * MemoryLayout<Element>.stride }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count * MemoryLayout<Element>.stride))
    }
}
