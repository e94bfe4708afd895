internal import CJSONScan

/// Holds the validating skipper (`cjsonscan_skip_value`, Sources/CJSONScan/SkipValue.c) to the parser it
/// shortcuts: yajl with the strict scanner in front, as `YajlParserBase.feed` runs them. For the fuzz target
/// (Fuzz/, through EngineFuzzing) and the tests; not part of the library's API.
@_spi(Fuzzing) public enum ValueSkipperCheck {
    /// Where the parser stands once the first value of some bytes is through.
    public enum Verdict: Equatable, CustomStringConvertible {
        /// The value ends just before this offset.
        case ends(at: Int)
        /// yajl or the strict scanner rejects it (or its nesting) here.
        case rejected(JSONSyntaxError)
        /// The bytes end inside the value.
        case unfinished

        public var description: String {
            switch self {
            case .ends(let at): "ends at \(at)"
            case .rejected(let error): "rejected: \(error)"
            case .unfinished: "unfinished"
            }
        }
    }

    /// What the parser says of the value at the start of `bytes`, nested at most `maximumDepth` levels.
    public static func parserVerdict(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int) -> Verdict {
        let end = JSONSyntaxError(byteOffset: -1, message: "the first value ends")
        let parser = JSONPushParser(handler: FirstValue(end: end), options: .init(maximumDepth: maximumDepth))
        do {
            try parser.feed(bytes)
            return .unfinished
        } catch let error as JSONSyntaxError {
            return error.message == end.message ? .ends(at: error.byteOffset) : .rejected(error)
        } catch {
            return .rejected(JSONSyntaxError(byteOffset: -1, message: "\(error)"))
        }
    }

    /// Where the skipper says the value at the start of `bytes` ends (0: it does not vouch for it), given the
    /// bytes yajl would see: those before the strict scanner's first violation.
    public static func skipperEnd(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int) -> Int {
        var strict = StrictJSONScanner()
        let seen = strict.scan(bytes)?.offset ?? bytes.count
        guard let base = bytes.baseAddress, seen > 0 else { return 0 }
        return cjsonscan_skip_value(base.assumingMemoryBound(to: UInt8.self), seen, maximumDepth)
    }

    /// `skipperEnd` by the skipper's portable code (no SIMD).
    public static func portableSkipperEnd(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int) -> Int {
        var strict = StrictJSONScanner()
        let seen = strict.scan(bytes)?.offset ?? bytes.count
        guard let base = bytes.baseAddress, seen > 0 else { return 0 }
        return cjsonscan_skip_value_portable(base.assumingMemoryBound(to: UInt8.self), seen, maximumDepth)
    }

    /// nil when the skipper (both its code paths) agrees with the parser on `bytes`, else what differs: a value the skipper passes must
    /// end where the parser's ends; a value the parser accepts (nested at most 4 096 levels, and followed by a
    /// byte the skipper is given — one before the strict scanner's first violation: the skipper needs a byte after
    /// a number or literal to know it ended) must be passed by the skipper, with the same end.
    public static func divergence(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int) -> String? {
        let skipped = skipperEnd(bytes, maximumDepth: maximumDepth)
        let portable = portableSkipperEnd(bytes, maximumDepth: maximumDepth)
        if portable != skipped { return "the skipper passes \(skipped) bytes, its portable code \(portable)" }
        let verdict = parserVerdict(bytes, maximumDepth: maximumDepth)
        if skipped > 0 {
            return verdict == .ends(at: skipped) ? nil : "the skipper passes \(skipped) bytes; the parser: \(verdict)"
        }
        var strict = StrictJSONScanner()
        let given = strict.scan(bytes)?.offset ?? bytes.count  // what skipperEnd hands the skipper
        guard case .ends(let at) = verdict, at < given, nesting(bytes.prefix(at)) <= 4096 else { return nil }
        return "the parser's value ends at \(at); the skipper does not pass it"
    }

    /// The deepest nesting of brackets outside strings in a valid value.
    private static func nesting(_ bytes: Slice<UnsafeRawBufferPointer>) -> Int {
        var depth = 0, deepest = 0, inString = false, escaped = false
        for b in bytes {
            if inString {
                if escaped { escaped = false } else if b == UInt8(ascii: "\\") { escaped = true } else if b == UInt8(ascii: "\"") { inString = false }
            } else if b == UInt8(ascii: "\"") {
                inString = true
            } else if b == UInt8(ascii: "{") || b == UInt8(ascii: "[") {
                depth += 1
                deepest = max(deepest, depth)
            } else if b == UInt8(ascii: "}") || b == UInt8(ascii: "]") {
                depth -= 1
            }
        }
        return deepest
    }

    /// Stops the parse (by throwing `end`, whose offset the parser fills in) when the first value is complete.
    private struct FirstValue: JSONEventHandler {
        let end: JSONSyntaxError
        var depth = 0

        mutating func scalar() throws { if depth == 0 { throw end } }
        mutating func null() throws { try scalar() }
        mutating func bool(_ value: Bool) throws { try scalar() }
        mutating func number(_ text: UnsafeRawBufferPointer) throws { try scalar() }
        mutating func string(_ utf8: UnsafeRawBufferPointer) throws { try scalar() }
        mutating func startObject() throws { depth += 1 }
        mutating func key(_ utf8: UnsafeRawBufferPointer) throws {}
        mutating func endObject() throws {
            depth -= 1
            try scalar()
        }
        mutating func startArray() throws { depth += 1 }
        mutating func endArray() throws {
            depth -= 1
            try scalar()
        }
    }
}
