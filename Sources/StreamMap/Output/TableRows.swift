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

    /// A writer of `layout`'s columns in `format`; the header joins each column's path with `delimiter` (the
    /// spec's key-path delimiter).
    public init(layout: TableLayout, format: TableFormat, delimiter: String = ".") {
        self.layout = layout
        self.format = format
        header = layout.header(delimiter: delimiter)
        for (column, steps) in layout.columns.enumerated() {
            var node = 0
            for step in steps {
                let key = Array(step.utf8)
                if let next = nodes[node].children[key] {
                    node = next
                } else {
                    nodes.append(Node())
                    nodes[node].children[key] = nodes.count - 1
                    node = nodes.count - 1
                }
            }
            if nodes[node].column == nil { nodes[node].column = column }
        }
    }

    /// The header row (with its LF).
    public func writeHeader(into out: inout [UInt8]) {
        for (i, name) in header.enumerated() {
            if i > 0 { out.append(format.separator) }
            writeText(Array(name.utf8)[...], into: &out)
        }
        out.append(0x0A)
    }

    /// Writes the row of one mapped record: `line` is its compact JSON object (without the newline).
    public func writeRow(_ line: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        var cells = [Range<Int>?](repeating: nil, count: layout.columns.count)
        var scanner = CompactJSONScanner(bytes: line)
        let start = scanner.skipSpace(0)
        if start < line.count && line[start] == UInt8(ascii: "{") { _ = collect(&scanner, at: start, node: 0, into: &cells) }
        for (i, cell) in cells.enumerated() {
            if i > 0 { out.append(format.separator) }
            if let cell { writeCell(UnsafeRawBufferPointer(rebasing: line[cell]), into: &out) }
        }
        out.append(0x0A)
    }

    /// Reads the object at `i` (a `{`), noting the value of each column under `node`; returns where it ends.
    private func collect(_ s: inout CompactJSONScanner, at i: Int, node: Int, into cells: inout [Range<Int>?]) -> Int {
        var i = s.skipSpace(i + 1)
        if i < s.bytes.count && s.bytes[i] == UInt8(ascii: "}") { return i + 1 }
        while i < s.bytes.count {
            let keyEnd = s.skipString(i)
            let child = s.key(in: (i + 1)..<(keyEnd - 1)).flatMap { nodes[node].children[$0] }
            i = s.skipSpace(keyEnd)
            i = s.skipSpace(i + 1)  // the colon
            let valueEnd: Int
            if let child, !nodes[child].children.isEmpty, s.bytes[i] == UInt8(ascii: "{") {
                valueEnd = collect(&s, at: i, node: child, into: &cells)
            } else {
                valueEnd = s.skipValue(i)
            }
            if let child, let column = nodes[child].column { cells[column] = i..<valueEnd }
            i = s.skipSpace(valueEnd)
            guard i < s.bytes.count, s.bytes[i] == UInt8(ascii: ",") else { return i + 1 }
            i = s.skipSpace(i + 1)
        }
        return i
    }

    private func writeCell(_ value: UnsafeRawBufferPointer, into out: inout [UInt8]) {
        guard let first = value.first else { return }
        switch first {
        case UInt8(ascii: "\""):
            let text = CompactJSONScanner.unescape(UnsafeRawBufferPointer(rebasing: value.dropFirst().dropLast()))
            if text.isEmpty { out.append(contentsOf: [0x22, 0x22]) } else { writeText(text[...], into: &out) }
        case UInt8(ascii: "n"):  // null
            return
        default:
            writeText(Array(value)[...], into: &out)
        }
    }

    /// One cell's text, quoted when it holds the separator, a quote, CR or LF.
    private func writeText(_ text: ArraySlice<UInt8>, into out: inout [UInt8]) {
        let separator = format.separator
        guard text.contains(where: { $0 == separator || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }) else {
            out.append(contentsOf: text)
            return
        }
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
