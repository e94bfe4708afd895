/// How both expression parsers — `where`'s (RecordFilterParser) and computed fields' (ExpressionParser) — read
/// their text: a byte position in its UTF-8, looking ahead, and the excerpts and columns of their messages.
protocol ExpressionScanning {
    /// The expression's UTF-8.
    var bytes: [UInt8] { get }
    /// The expression, for messages.
    var text: String { get }
    /// The next byte to read.
    var position: Int { get set }
}

extension ExpressionScanning {
    func peek(_ ahead: Int) -> UInt8? {
        position + ahead < bytes.count ? bytes[position + ahead] : nil
    }

    func starts(with s: String) -> Bool { starts(with: Array(s.utf8)) }

    /// Whether the text continues with `s` here (never for an empty `s`).
    func starts(with s: [UInt8]) -> Bool {
        guard !s.isEmpty, position + s.count <= bytes.count else { return false }
        for i in s.indices where bytes[position + i] != s[i] { return false }
        return true
    }

    /// `word` here, not followed by a letter, digit or `_` (so `index` is a path, `in [` an operator).
    func wordAhead(_ word: String) -> Bool {
        guard starts(with: word) else { return false }
        let end = position + word.utf8.count
        return end == bytes.count || !Self.isWordByte(bytes[end])
    }

    mutating func skipSpace() {
        while position < bytes.count && Self.isSpace(bytes[position]) { position += 1 }
    }

    /// A path between backquotes, here (a backquote inside doubled): its bytes, the position after it.
    mutating func backquoted() throws(RecordFilterSyntaxError) -> [UInt8] {
        let start = position
        var raw: [UInt8] = []
        position += 1
        while true {
            guard position < bytes.count else { throw error(at: start, "this backquoted path is never closed") }
            if bytes[position] == UInt8(ascii: "`") {
                if peek(1) == UInt8(ascii: "`") {
                    raw.append(UInt8(ascii: "`"))
                    position += 2
                    continue
                }
                position += 1
                return raw
            }
            raw.append(bytes[position])
            position += 1
        }
    }

    /// What is at `offset`, for messages: a few characters of it, or the end.
    func found(_ offset: Int) -> String {
        guard offset < bytes.count else { return "the end of the expression" }
        var end = offset
        var scalars = 0
        while end < bytes.count && scalars < 12 {
            end += 1
            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
            scalars += 1
        }
        let excerpt = String(decoding: bytes[offset..<end], as: UTF8.self)
        return JSONWriter.string(.string(excerpt)) + (end < bytes.count ? "…" : "")
    }

    /// The 1-based column of a byte offset, in Unicode scalars.
    func column(_ offset: Int) -> Int {
        var column = 1
        for b in bytes.prefix(offset) where b & 0xC0 != 0x80 { column += 1 }
        return column
    }

    func error(at offset: Int, _ message: String) -> RecordFilterSyntaxError {
        RecordFilterSyntaxError(column: column(offset), message: message, text: text)
    }

    static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    static func isWordByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z")) || isDigit(b)
            || b == UInt8(ascii: "_")
    }

    static func isSpace(_ b: UInt8) -> Bool {
        b == UInt8(ascii: " ") || b == UInt8(ascii: "\t") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r")
    }
}

/// The distinct paths an expression reads, in order of first use (steps compared by bytes).
struct DistinctPaths {
    private(set) var paths: [KeyPath] = []
    private var indexOfSteps: [[[UInt8]]: Int] = [:]

    /// The path's index, added when it is new.
    mutating func index(of path: KeyPath) -> Int {
        let key = path.steps.map { Array($0.utf8) }
        if let i = indexOfSteps[key] { return i }
        indexOfSteps[key] = paths.count
        paths.append(path)
        return paths.count - 1
    }
}
