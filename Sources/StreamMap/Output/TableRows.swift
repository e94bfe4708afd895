internal import CJSONScan
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A table format for mapped records (`--to csv|tsv`): one row per record, one column per output leaf.
public enum TableFormat: String, Sendable, CaseIterable {
    /// Comma-separated values, quoted as RFC 4180 says.
    case csv
    /// Tab-separated values, quoted the same way (a cell with a tab, a quote or a line break is quoted).
    case tsv

    /// The byte between cells: `,` or a tab.
    public var separator: UInt8 { self == .csv ? UInt8(ascii: ",") : UInt8(ascii: "\t") }
}

/// Why a mapper's output cannot be laid out as a table: its keys are only known once records are read.
public struct TableLayoutError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What makes the keys unknown (`unmapped keys are passed through ("unmapped": "keep")`).
    public var reason: String
    public var description: String {
        "the output's columns are not known before the records are read: \(reason); name every output field in the spec (with \"unmapped\": \"drop\") to write a table"
    }
}

/// The columns of a mapper's output, in spec order: each output leaf's destination path. A field whose value is
/// an object mapped field by field adds its fields' columns under its path; any other value (a scalar, an array,
/// an object passed as it is) is one column, written as its compact JSON text when it is not a scalar.
public struct TableLayout: Sendable, Equatable {
    /// The columns' destination paths (steps).
    public let columns: [[String]]

    /// A layout of these columns (destination paths, in order), as `init(mapper:)` would find them.
    public init(columns: [[String]]) { self.columns = columns }

    /// The layout of `mapper`'s output, which must be an object of named fields (`TableLayoutError` otherwise:
    /// `identity`, `"unmapped": "keep"`, a key style applied to whole records, a closure's result).
    public init(mapper: Mapper) throws(TableLayoutError) {
        switch Shape(of: mapper) {
        case .fields(let fields):
            // A destination written by more than one field (alternatives, or fields that omit their value) is
            // one column, where it first appears.
            var seen = Set<[String]>()
            columns = Shape.leaves(fields, under: []).filter { seen.insert($0).inserted }
        case .open(let reason):
            throw TableLayoutError(reason: reason)
        case .value:
            throw TableLayoutError(reason: "the mapping's result is not an object of named fields")
        }
    }

    /// The header cells: each column's steps joined with `delimiter` (the spec's).
    public func header(delimiter: String = ".") -> [String] { columns.map { $0.joined(separator: delimiter) } }

    /// What a mapper's output looks like, as far as the mapper tells.
    private indirect enum Shape: Equatable {
        /// An object with these fields, in output order.
        case fields([Field])
        /// An object whose keys come from the record (the reason).
        case open(String)
        /// Any value: one cell.
        case value

        struct Field: Equatable {
            var path: [String]
            var shape: Shape
        }

        init(of mapper: Mapper) {
            switch mapper.kind {
            case .object(let o):
                if case .keep = o.unmapped {
                    self = .open("unmapped keys are passed through (\"unmapped\": \"keep\")")
                    return
                }
                if case .inPlace = o.unmapped {
                    self = .open("the records are kept as they come, checked in place (\"unmapped\": \"inPlace\")")
                    return
                }
                self = .fields(o.fields.flatMap { f -> [Field] in
                    // One-to-many: each destination takes one element of an array, whatever it holds.
                    f.destinations.count == 1 ? [Field(path: f.destinations[0].steps, shape: Shape(of: f.mapper))]
                        : f.destinations.map { Field(path: $0.steps, shape: .value) }
                })
            case .identity:
                self = .open("the mapping copies records as they are (identity)")
            case .convert(.keys):
                self = .open("keys are renamed by a key style as the records come")
            case .notNull(let m), .nonFatal(let m, _, _), .policy(let m, _), .split(let m, _), .forward(_, let m):
                self = Shape(of: m)
            case .backward(let path, let m):
                self = .fields([Field(path: path.steps, shape: Shape(of: m))])
            case .thread(let stages):
                // The last stage that shapes the value decides (an identity or a type check passes it on).
                self = .open("the mapping copies records as they are (identity)")
                for stage in stages.reversed() {
                    switch stage.kind {
                    case .identity, .check: continue
                    default: self = Shape(of: stage)
                    }
                    break
                }
            case .first(let alternatives):
                let shapes = alternatives.map(Shape.init(of:))
                self = shapes.dropFirst().allSatisfy { $0 == shapes[0] } ? (shapes.first ?? .value) : .value
            case .check, .arrayOf, .enumTable, .convert, .block, .postProcess, .compute:
                self = .value
            }
        }

        static func leaves(_ fields: [Field], under prefix: [String]) -> [[String]] {
            fields.flatMap { f -> [[String]] in
                if case .fields(let inner) = f.shape, !inner.isEmpty { return leaves(inner, under: prefix + f.path) }
                return [prefix + f.path]
            }
        }
    }
}

/// Writes mapped records (compact JSON objects, one per line, as the engines write them) as table rows.
///
/// Cells: a string's text; a number exactly as the JSON has it; `true`/`false`; an array or object as its compact
/// JSON text; absent or null: an empty cell; an empty string: `""` (so the two stay apart, as PostgreSQL's
/// `COPY … CSV` reads them: NULL and an empty string). A cell holding the separator, a double quote, CR or LF is
/// quoted, its quotes doubled (RFC 4180). Rows end with LF.
public struct TableWriter: Sendable {
    /// The columns it writes, in order.
    public let layout: TableLayout
    /// CSV or TSV.
    public let format: TableFormat
    private let header: [String]
    /// The columns' paths as a trie: per node, its children by key and the column ending there.
    private var nodes: [Node] = [Node()]

    private struct Node: Sendable {
        var children: [[UInt8]: Int] = [:]
        var column: Int?
    }

    /// The same trie in plain values, for reading rows: per node, its children in the order the columns' paths
    /// reach them (`ordered[start..<start + count]`), which is the order a mapped record's members come in (the
    /// engines write a mapping's fields in spec order) — a member is looked for there first, at the place after
    /// the last one found, its key compared where it is (`keyBytes`): no key made, none hashed, nothing retained.
    private var plain: [(start: Int, count: Int, column: Int, hasChildren: Bool, place: Int)] = []
    private var ordered: [(keyStart: Int, keyCount: Int, child: Int)] = []
    private var keyBytes: [UInt8] = []

    /// A writer of `layout`'s columns in `format`; the header joins each column's path with `delimiter` (the
    /// spec's key-path delimiter).
    public init(layout: TableLayout, format: TableFormat, delimiter: String = ".") {
        self.layout = layout
        self.format = format
        header = layout.header(delimiter: delimiter)
        var childrenInOrder: [[(key: [UInt8], child: Int)]] = [[]]
        for (column, steps) in layout.columns.enumerated() {
            var node = 0
            for step in steps {
                let key = Array(step.utf8)
                if let next = nodes[node].children[key] {
                    node = next
                } else {
                    nodes.append(Node())
                    nodes[node].children[key] = nodes.count - 1
                    childrenInOrder.append([])
                    childrenInOrder[node].append((key, nodes.count - 1))
                    node = nodes.count - 1
                }
            }
            if nodes[node].column == nil { nodes[node].column = column }
        }
        var place = [Int](repeating: 0, count: nodes.count)  // each node's place among its parent's children
        for children in childrenInOrder {
            for (k, (_, child)) in children.enumerated() { place[child] = k }
        }
        for (n, children) in childrenInOrder.enumerated() {
            plain.append((ordered.count, children.count, nodes[n].column ?? -1, !children.isEmpty, place[n]))
            for (key, child) in children {
                ordered.append((keyBytes.count, key.count, child))
                keyBytes += key
            }
        }
    }

    /// The header row (with its LF).
    public func writeHeader(into out: inout [UInt8]) {
        for (i, name) in header.enumerated() {
            if i > 0 { out.append(format.separator) }
            var name = name
            name.withUTF8 { writeText(UnsafeRawBufferPointer($0), into: &out) }
        }
        out.append(0x0A)
    }

    /// Writes the row of one mapped record: `line` is its compact JSON object (without the newline).
    ///
    /// (Nothing is allocated for a row but where a cell must be quoted after its escapes are undone: the cells'
    /// places are on the stack, a member's key is matched where the columns expect it, a cell is written from the
    /// record's bytes or unescaped straight into `out`.)
    public func writeRow(_ line: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        let columns = layout.columns.count
        withUnsafeTemporaryAllocation(of: Cell.self, capacity: max(columns, 1)) { cells in
            cells.initialize(repeating: Cell(start: -1, end: -1))
            let scanner = CompactJSONScanner(bytes: line)
            let start = scanner.skipSpace(0)
            if start < line.count && line[start] == UInt8(ascii: "{") { _ = collect(scanner, at: start, node: 0, into: cells) }
            for i in 0..<columns {
                if i > 0 { out.append(format.separator) }
                let cell = cells[i]
                if cell.start >= 0 { writeCell(UnsafeRawBufferPointer(rebasing: line[cell.start..<cell.end]), into: &out) }
            }
        }
        out.append(0x0A)
    }

    /// Where a column's value is in the row's line (`start` -1: none).
    private struct Cell {
        var start: Int
        var end: Int
    }

    /// Reads the object at `i` (a `{`), noting the value of each column under `node`; returns where it ends.
    private func collect(_ s: CompactJSONScanner, at i: Int, node: Int, into cells: UnsafeMutableBufferPointer<Cell>) -> Int {
        var i = s.skipSpace(i + 1)
        if i < s.bytes.count && s.bytes[i] == UInt8(ascii: "}") { return i + 1 }
        var next = 0  // where in `ordered` the next member is expected
        while i < s.bytes.count {
            let (keyEnd, escaped) = s.stringEnd(i)
            let child = find(UnsafeRawBufferPointer(rebasing: s.bytes[(i + 1)..<max(i + 1, keyEnd - 1)]), escaped: escaped,
                             in: node, from: &next, s)
            i = s.skipSpace(keyEnd)
            i = s.skipSpace(i + 1)  // the colon
            let valueEnd: Int
            if let child, plain[child].hasChildren, s.bytes[i] == UInt8(ascii: "{") {
                valueEnd = collect(s, at: i, node: child, into: cells)
            } else {
                valueEnd = s.skipValue(i)
            }
            if let child, plain[child].column >= 0 { cells[plain[child].column] = Cell(start: i, end: valueEnd) }
            i = s.skipSpace(valueEnd)
            guard i < s.bytes.count, s.bytes[i] == UInt8(ascii: ",") else { return i + 1 }
            i = s.skipSpace(i + 1)
        }
        return i
    }

    /// The child of `node` whose key is `raw` (a key's text between its quotes), or nil: the one expected at `next`
    /// when its bytes are the key's (then `next` moves past it), else by the key unescaped, in the table.
    @inline(__always)
    private func find(_ raw: UnsafeRawBufferPointer, escaped: Bool, in node: Int, from next: inout Int, _ s: CompactJSONScanner) -> Int? {
        let children = plain[node]
        if !escaped, next < children.count {
            let expected = ordered[children.start + next]
            if expected.keyCount == raw.count,
               raw.count == 0 || keyBytes.withUnsafeBytes({ memcmp($0.baseAddress! + expected.keyStart, raw.baseAddress!, raw.count) == 0 }) {
                next += 1
                return expected.child
            }
        }
        guard let child = nodes[node].children[CompactJSONScanner.unescape(raw)] else { return nil }
        next = plain[child].place + 1
        return child
    }

    private func writeCell(_ value: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        guard let first = value.first else { return }
        switch first {
        case UInt8(ascii: "\""):
            let raw = UnsafeRawBufferPointer(rebasing: value.dropFirst().dropLast())
            if raw.isEmpty {
                out.append(contentsOf: [0x22, 0x22])
            } else if memchr(raw.baseAddress!, 0x5C, raw.count) == nil {
                // (No escape: no quote, CR or LF either — JSON escapes those — so only the separator can need quotes.)
                if memchr(raw.baseAddress!, Int32(format.separator), raw.count) == nil {
                    out.append(contentsOf: raw)
                } else {
                    writeQuoted(raw, into: &out)
                }
            } else {
                // Unescaped where it goes; taken back out and quoted when what it holds must be.
                let mark = out.count
                CompactJSONScanner.unescape(raw, appendingTo: &out)
                let separator = format.separator
                if out[mark...].contains(where: { Self.needsQuotes($0, separator) }) {
                    let text = Array(out[mark...])
                    out.removeSubrange(mark...)
                    text.withUnsafeBytes { writeQuoted($0, into: &out) }
                }
            }
        case UInt8(ascii: "n"):  // null
            return
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            writeText(value, into: &out)
        default:
            out.append(contentsOf: value)  // a number, true or false: nothing to quote
        }
    }

    /// Whether a cell holding `b` is quoted: the separator, a double quote, CR or LF. (Static: a method of the
    /// writer passed as a closure captured a copy of the writer, its arrays retained, for every cell.)
    @inline(__always)
    private static func needsQuotes(_ b: UInt8, _ separator: UInt8) -> Bool { b == separator || b == 0x22 || b == 0x0A || b == 0x0D }

    /// One cell's text, quoted when it holds the separator, a quote, CR or LF.
    private func writeText(_ text: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        let separator = format.separator
        guard text.contains(where: { Self.needsQuotes($0, separator) }) else {
            out.append(contentsOf: text)
            return
        }
        writeQuoted(text, into: &out)
    }

    /// `text` in double quotes, each of its quotes doubled.
    private func writeQuoted(_ text: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        out.append(0x22)
        for b in text {
            if b == 0x22 { out.append(0x22) }
            out.append(b)
        }
        out.append(0x22)
    }
}

/// Steps over compact JSON known to be valid (the engines' output): strings, whole values, keys.
struct CompactJSONScanner {
    let bytes: UnsafeRawBufferPointer

    /// Past the whitespace at `i` (compact JSON has none: one test, no loop).
    @inline(__always) func skipSpace(_ i: Int) -> Int {
        guard i < bytes.count, bytes[i] <= 0x20 else { return i }
        var i = i
        while i < bytes.count, bytes[i] == 0x20 || bytes[i] == 0x0A || bytes[i] == 0x0D || bytes[i] == 0x09 { i += 1 }
        return i
    }

    /// The end of the string starting at `i` (its opening quote), past its closing quote. 32 bytes at a time to the
    /// next quote or backslash (a mapped record's text is mostly long strings).
    func skipString(_ i: Int) -> Int { stringEnd(i).end }

    /// ``skipString(_:)``, and whether the string holds a backslash (an escape to undo).
    func stringEnd(_ i: Int) -> (end: Int, escaped: Bool) {
        var i = i + 1
        var escaped = false
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return (bytes.count, false) }
        while i < bytes.count {
            // To the next quote or backslash (or control byte, which compact JSON has none of), 32 bytes at a time.
            i = cjsonscan_string_stop(base, i, bytes.count)
            guard i < bytes.count else { break }
            switch bytes[i] {
            case 0x5C:
                escaped = true
                i += 2
            case 0x22: return (i + 1, escaped)
            default: i += 1
            }
        }
        return (bytes.count, escaped)
    }

    /// The end of the value starting at `i`.
    func skipValue(_ i: Int) -> Int {
        guard i < bytes.count else { return i }
        switch bytes[i] {
        case 0x22:
            return skipString(i)
        case UInt8(ascii: "{"), UInt8(ascii: "["):
            var depth = 0, j = i
            while j < bytes.count {
                switch bytes[j] {
                case 0x22: j = skipString(j); continue
                case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    depth -= 1
                    if depth == 0 { return j + 1 }
                default: break
                }
                j += 1
            }
            return j
        default:
            var j = i
            while j < bytes.count {
                let b = bytes[j]
                if b == UInt8(ascii: ",") || b == UInt8(ascii: "}") || b == UInt8(ascii: "]") || b == 0x20 || b == 0x0A { break }
                j += 1
            }
            return j
        }
    }

    /// A key's bytes (between its quotes), unescaped.
    func key(in range: Range<Int>) -> [UInt8]? {
        guard range.lowerBound <= range.upperBound, range.upperBound <= bytes.count else { return nil }
        return Self.unescape(UnsafeRawBufferPointer(rebasing: bytes[range]))
    }

    /// A JSON string's contents (between the quotes) as UTF-8 text.
    static func unescape(_ raw: UnsafeRawBufferPointer) -> [UInt8] {
        guard raw.contains(0x5C) else { return Array(raw) }
        var out: [UInt8] = []
        out.reserveCapacity(raw.count)
        unescape(raw, appendingTo: &out)
        return out
    }

    /// Appends a JSON string's contents (between the quotes) as UTF-8 text to `out`.
    static func unescape(_ raw: UnsafeRawBufferPointer, appendingTo out: inout [UInt8]) {
        var i = 0
        func hex(_ at: Int) -> UInt32? {
            guard at + 4 <= raw.count else { return nil }
            var v: UInt32 = 0
            for b in raw[at..<(at + 4)] {
                guard let d = Character(UnicodeScalar(b)).hexDigitValue else { return nil }
                v = v << 4 | UInt32(d)
            }
            return v
        }
        while i < raw.count {
            // The run up to the next backslash, in one append.
            let run = memchr(raw.baseAddress! + i, 0x5C, raw.count - i).map { UnsafeRawPointer($0) - raw.baseAddress! } ?? raw.count
            if run > i {
                out.append(contentsOf: UnsafeRawBufferPointer(rebasing: raw[i..<run]))
                i = run
                continue
            }
            guard i + 1 < raw.count else {
                out.append(raw[i])
                i += 1
                continue
            }
            let e = raw[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "n"): out.append(0x0A)
            case UInt8(ascii: "t"): out.append(0x09)
            case UInt8(ascii: "r"): out.append(0x0D)
            case UInt8(ascii: "b"): out.append(0x08)
            case UInt8(ascii: "f"): out.append(0x0C)
            case UInt8(ascii: "u"):
                guard var scalar = hex(i) else { continue }
                i += 4
                if (0xD800..<0xDC00).contains(scalar), i + 6 <= raw.count, raw[i] == 0x5C, raw[i + 1] == UInt8(ascii: "u"),
                   let low = hex(i + 2), (0xDC00..<0xE000).contains(low) {
                    scalar = 0x10000 + ((scalar - 0xD800) << 10) + (low - 0xDC00)
                    i += 6
                }
                out.append(contentsOf: String(UnicodeScalar(scalar).map(Character.init) ?? "\u{FFFD}").utf8)
            default: out.append(e)  // \" \\ \/
            }
        }
    }
}
