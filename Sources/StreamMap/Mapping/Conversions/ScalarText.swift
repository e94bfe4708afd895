// ScalarText.swift — exact, locale-free utilities on JSON scalar text: number lexemes, UUIDs, absolute URLs, base64.
//
// Everything works on the UTF-8 (or Unicode scalar) view of its input with the standard library only: no Foundation,
// no locale, no global mutable state. Numbers are never routed through `Double` unless `double(_:)` is asked for.

// MARK: - ASCII helpers

/// Byte-level ASCII classification shared by the scalar-text utilities.
fileprivate enum ScalarTextASCII {
    static let minus = UInt8(ascii: "-")
    static let plus = UInt8(ascii: "+")
    static let dot = UInt8(ascii: ".")
    static let comma = UInt8(ascii: ",")
    static let zero = UInt8(ascii: "0")
    static let percent = UInt8(ascii: "%")
    static let equals = UInt8(ascii: "=")

    static func isDigit(_ byte: UInt8) -> Bool {
        byte >= zero && byte <= UInt8(ascii: "9")
    }

    static func isExponentMarker(_ byte: UInt8) -> Bool {
        byte == UInt8(ascii: "e") || byte == UInt8(ascii: "E")
    }

    /// Space, tab, LF, VT, FF, CR.
    static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
    }

    /// The value of a hexadecimal digit (either case), or `nil`.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): return byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): return byte - UInt8(ascii: "A") + 10
        default: return nil
        }
    }

    /// The uppercase hexadecimal digit for a value 0...15.
    static func upperHexDigit(_ value: UInt8) -> UInt8 {
        value < 10 ? zero + value : UInt8(ascii: "A") + value - 10
    }
}

// MARK: - NumberText

/// Utilities on JSON number lexemes and scalar strings. Exact: never goes through Double unless asked.
public enum NumberText {
    /// True when `text` is a JSON number per RFC 8259 (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`).
    /// No surrounding whitespace, no `+` sign, no leading zeros, no `NaN`/`Infinity`.
    public static func isValid(_ text: some StringProtocol) -> Bool {
        Lexeme(Array(text.utf8)) != nil
    }

    /// True for a valid JSON number with no fraction and no exponent (`"-0"` included), of any size.
    /// This is lexical: `"1.0"` and `"1e2"` are valid numbers with integral values but are not integer lexemes.
    public static func isInteger(_ text: some StringProtocol) -> Bool {
        guard let lexeme = Lexeme(Array(text.utf8)) else { return false }
        return lexeme.isIntegerLexeme
    }

    /// Locale-free lenient parse for "string → number".
    ///
    /// Trims ASCII whitespace (space, tab, LF, VT, FF, CR); accepts one optional leading `+`; accepts grouping
    /// commas only in correct groups of three in the integer part (`"1,235,555"` yes, `"1,23"` / `"1234,567"` no);
    /// otherwise requires a JSON number (no `"007"`, `".5"`, `"5."`, hex, `"NaN"`, `"Infinity"`).
    /// Returns the canonical JSON lexeme — the input minus whitespace, `+` and commas — or `nil`.
    public static func parseLenient(_ text: some StringProtocol) -> String? {
        var bytes = ArraySlice(Array(text.utf8))
        while let first = bytes.first, ScalarTextASCII.isWhitespace(first) { bytes.removeFirst() }
        while let last = bytes.last, ScalarTextASCII.isWhitespace(last) { bytes.removeLast() }
        if bytes.first == ScalarTextASCII.plus {
            bytes.removeFirst()
            guard bytes.first != ScalarTextASCII.minus else { return nil }  // "+-1"
        }
        guard let ungrouped = removingGroupingCommas(bytes), Lexeme(ungrouped) != nil else { return nil }
        return String(decoding: ungrouped, as: UTF8.self)
    }

    /// Numeric value equality of two valid JSON number lexemes, exactly and of any size:
    /// `1 == 1.0 == 1e0 == 10e-1`, `-0 == 0`. Returns `false` when either lexeme is not a valid JSON number.
    public static func numericallyEqual(_ a: some StringProtocol, _ b: some StringProtocol) -> Bool {
        guard let left = Lexeme(Array(a.utf8)), let right = Lexeme(Array(b.utf8)) else { return false }
        return left.canonicalKey == right.canonicalKey
    }

    /// A canonical key for numeric equality, usable as a `Dictionary` key: two valid lexemes have the same key
    /// exactly when they are numerically equal.
    ///
    /// The key is normalized scientific notation: `"0"` for any zero (sign dropped), otherwise an optional `-`, the
    /// significant digits as `d` or `d.ddd` (no trailing zeros), `e`, and the decimal exponent:
    /// `"100"` → `"1e2"`, `"-0.0150"` → `"-1.5e-2"`, `"1.0"` → `"1e0"`. An invalid lexeme maps to
    /// `"invalid:" + text`, which never collides with the key of a valid number.
    public static func canonicalKey(_ text: some StringProtocol) -> String {
        guard let lexeme = Lexeme(Array(text.utf8)) else { return "invalid:" + String(text) }
        return lexeme.canonicalKey
    }

    /// The `Int64` value when `text` is an integer lexeme (see `isInteger`) in range, else `nil`.
    /// `"-0"` gives `0`; `"1.0"` and `"1e2"` give `nil`.
    public static func int64(_ text: some StringProtocol) -> Int64? {
        guard let lexeme = Lexeme(Array(text.utf8)), lexeme.isIntegerLexeme else { return nil }
        var value: Int64 = 0
        for byte in lexeme.integerDigits {
            let digit = Int64(byte - ScalarTextASCII.zero)
            let (shifted, overflowShift) = value.multipliedReportingOverflow(by: 10)
            let (next, overflowAdd) = lexeme.isNegative
                ? shifted.subtractingReportingOverflow(digit)
                : shifted.addingReportingOverflow(digit)
            guard !overflowShift && !overflowAdd else { return nil }
            value = next
        }
        return value
    }

    /// The nearest `Double` (may round; underflow gives ±0) when `text` is a valid JSON number whose value is
    /// finite as a `Double`, else `nil` (`"1e400"` → `nil`).
    public static func double(_ text: some StringProtocol) -> Double? {
        guard isValid(text), let value = Double(String(text)), value.isFinite else { return nil }
        return value
    }

    /// Removes grouping commas from the integer part of `bytes`, or returns `nil` when they are misplaced.
    /// Without commas the input is returned unchanged (validation happens afterwards).
    static func removingGroupingCommas(_ bytes: ArraySlice<UInt8>) -> [UInt8]? {
        guard bytes.contains(ScalarTextASCII.comma) else { return Array(bytes) }
        let integerEnd = bytes.firstIndex(where: { $0 == ScalarTextASCII.dot || ScalarTextASCII.isExponentMarker($0) })
            ?? bytes.endIndex
        guard !bytes[integerEnd...].contains(ScalarTextASCII.comma) else { return nil }

        var integerPart = bytes[..<integerEnd]
        var result: [UInt8] = []
        if integerPart.first == ScalarTextASCII.minus {
            result.append(ScalarTextASCII.minus)
            integerPart.removeFirst()
        }
        let groups = integerPart.split(separator: ScalarTextASCII.comma, omittingEmptySubsequences: false)
        for (position, group) in groups.enumerated() {
            let sizeIsValid = position == 0 ? (1...3).contains(group.count) : group.count == 3
            guard sizeIsValid, group.allSatisfy(ScalarTextASCII.isDigit) else { return nil }
            result.append(contentsOf: group)
        }
        result.append(contentsOf: bytes[integerEnd...])
        return result
    }
}

extension NumberText {
    /// The parts of a valid RFC 8259 number lexeme (ASCII digit bytes).
    struct Lexeme {
        var isNegative = false
        var integerDigits: ArraySlice<UInt8> = []
        /// `nil` when there is no `.`; otherwise at least one digit.
        var fractionDigits: ArraySlice<UInt8>?
        var exponentIsNegative = false
        /// `nil` when there is no `e`/`E`; otherwise at least one digit (leading zeros allowed).
        var exponentDigits: ArraySlice<UInt8>?

        /// Parses `bytes`, which must be exactly one JSON number.
        init?(_ bytes: [UInt8]) {
            var index = bytes.startIndex
            let end = bytes.endIndex

            if index < end && bytes[index] == ScalarTextASCII.minus {
                isNegative = true
                index += 1
            }
            guard index < end, ScalarTextASCII.isDigit(bytes[index]) else { return nil }
            let integerStart = index
            if bytes[index] == ScalarTextASCII.zero {
                index += 1  // a leading zero must stand alone
            } else {
                index = Self.skipDigits(bytes, from: index)
            }
            integerDigits = bytes[integerStart..<index]

            if index < end && bytes[index] == ScalarTextASCII.dot {
                let start = index + 1
                index = Self.skipDigits(bytes, from: start)
                guard index > start else { return nil }
                fractionDigits = bytes[start..<index]
            }

            if index < end && ScalarTextASCII.isExponentMarker(bytes[index]) {
                index += 1
                if index < end && (bytes[index] == ScalarTextASCII.plus || bytes[index] == ScalarTextASCII.minus) {
                    exponentIsNegative = bytes[index] == ScalarTextASCII.minus
                    index += 1
                }
                let start = index
                index = Self.skipDigits(bytes, from: start)
                guard index > start else { return nil }
                exponentDigits = bytes[start..<index]
            }

            guard index == end else { return nil }
        }

        var isIntegerLexeme: Bool {
            fractionDigits == nil && exponentDigits == nil
        }

        /// See `NumberText.canonicalKey(_:)`.
        var canonicalKey: String {
            let fraction = fractionDigits ?? []
            let digits = Array(integerDigits) + Array(fraction)
            guard let firstSignificant = digits.firstIndex(where: { $0 != ScalarTextASCII.zero }),
                  let lastSignificant = digits.lastIndex(where: { $0 != ScalarTextASCII.zero })
            else { return "0" }

            // value = digits × 10^(exponent − fraction.count)
            //       = significant × 10^(exponent − fraction.count + trailingZeros)
            //       = s.ignificant × 10^(exponent − fraction.count + trailingZeros + significant.count − 1)
            let significant = digits[firstSignificant...lastSignificant]
            let trailingZeros = digits.count - 1 - lastSignificant
            let shift = trailingZeros - fraction.count + significant.count - 1
            let exponent = DecimalExponent.text(
                isNegative: exponentIsNegative, digits: exponentDigits ?? [], adding: shift)

            var key = isNegative ? "-" : ""
            key.unicodeScalars.append(Unicode.Scalar(significant[significant.startIndex]))
            if significant.count > 1 {
                key += "."
                key += String(decoding: significant.dropFirst(), as: UTF8.self)
            }
            return key + "e" + exponent
        }

        private static func skipDigits(_ bytes: [UInt8], from start: Int) -> Int {
            var index = start
            while index < bytes.endIndex && ScalarTextASCII.isDigit(bytes[index]) { index += 1 }
            return index
        }
    }

    /// Exact arithmetic on decimal exponents of any length.
    enum DecimalExponent {
        /// The decimal text of `(isNegative ? -1 : 1) × digits + delta`, with `digits` any run of ASCII digits.
        ///
        /// Exponents up to 18 digits use `Int64`; longer ones (≥ 10¹⁸ in magnitude, so far larger than any `delta`
        /// derived from a lexeme's length) keep their sign and have `delta` applied to their digit string.
        static func text(isNegative: Bool, digits: ArraySlice<UInt8>, adding delta: Int) -> String {
            let magnitude = digits.drop(while: { $0 == ScalarTextASCII.zero })
            if magnitude.count <= 18 {
                var value: Int64 = 0
                for byte in magnitude { value = value * 10 + Int64(byte - ScalarTextASCII.zero) }
                return String((isNegative ? -value : value) + Int64(delta))
            }
            let moved = adding(isNegative ? -delta : delta, toMagnitude: magnitude)
            return (isNegative ? "-" : "") + String(decoding: moved, as: UTF8.self)
        }

        /// `magnitude + change` for a decimal digit string, when the result is known to be non-negative.
        static func adding(_ change: Int, toMagnitude magnitude: ArraySlice<UInt8>) -> [UInt8] {
            var littleEndian = magnitude.reversed().map { Int($0 - ScalarTextASCII.zero) }
            var carry = change
            var position = 0
            while carry != 0 {
                if position == littleEndian.count { littleEndian.append(0) }
                let sum = littleEndian[position] + carry
                var digit = sum % 10
                carry = sum / 10
                if digit < 0 {
                    digit += 10
                    carry -= 1
                }
                littleEndian[position] = digit
                position += 1
            }
            while littleEndian.count > 1 && littleEndian.last == 0 { littleEndian.removeLast() }
            return littleEndian.reversed().map { ScalarTextASCII.zero + UInt8($0) }
        }
    }
}

// MARK: - UUIDText

/// UUID strings.
public enum UUIDText {
    /// 8-4-4-4-12 hexadecimal digits in any case and nothing else (no braces, no `urn:uuid:`, no whitespace).
    /// Returns the lowercase canonical form, or `nil`. Any version/variant bits are accepted.
    public static func canonical(_ text: some StringProtocol) -> String? {
        let hyphenOffsets: Set<Int> = [8, 13, 18, 23]
        var result: [UInt8] = []
        result.reserveCapacity(36)
        for byte in text.utf8 {
            let offset = result.count
            guard offset < 36 else { return nil }
            if hyphenOffsets.contains(offset) {
                guard byte == ScalarTextASCII.minus else { return nil }
                result.append(byte)
            } else {
                guard let value = ScalarTextASCII.hexValue(byte) else { return nil }
                result.append(value < 10 ? ScalarTextASCII.zero + value : UInt8(ascii: "a") + value - 10)
            }
        }
        guard result.count == 36 else { return nil }
        return String(decoding: result, as: UTF8.self)
    }
}

// MARK: - URLText

/// Absolute URL strings.
public enum URLText {
    /// Validates an absolute URL: an RFC 3986 scheme (`ALPHA *(ALPHA / DIGIT / "+" / "-" / ".")`), `":"`, and a
    /// non-empty rest. Nothing else about the rest is checked (`"mailto:a@b.c"`, `"urn:x"` are fine).
    ///
    /// Like `NSURL`'s retry with escaping, characters that may not appear in a URL are percent-encoded as UTF-8
    /// with uppercase hex: space, every non-ASCII scalar, the backquote, and `"` `<` `>` `\` `^` `{` `|` `}`. Valid `%XX`
    /// escapes are kept as written; a `%` not followed by two hex digits becomes `%25`.
    ///
    /// Returns the (possibly escaped) URL — the scheme keeps its original case — and the lowercased scheme; or
    /// `nil` for a relative reference (`"/a"`, `"a/b"`, `"!!"`, `""`), an empty rest (`"http:"`), or any control
    /// character (general category Cc: U+0000–U+001F, U+007F–U+009F), which is rejected rather than escaped.
    public static func parseAbsolute(_ text: some StringProtocol) -> (url: String, scheme: String)? {
        let scalars = Array(text.unicodeScalars)
        guard let colon = schemeTerminator(scalars), colon + 1 < scalars.count else { return nil }
        guard !scalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }

        var scheme = ""
        scheme.unicodeScalars.append(contentsOf: scalars[..<colon])
        return (url: escaped(scalars), scheme: scheme.lowercased())
    }

    /// The index of the `:` ending a valid scheme at the start of `scalars`, or `nil`.
    static func schemeTerminator(_ scalars: [Unicode.Scalar]) -> Int? {
        guard let first = scalars.first, isASCIILetter(first) else { return nil }
        for (index, scalar) in scalars.enumerated().dropFirst() {
            if scalar == ":" { return index }
            guard isASCIILetter(scalar) || ("0"..."9").contains(scalar) || "+-.".unicodeScalars.contains(scalar)
            else { return nil }
        }
        return nil
    }

    /// Percent-encodes everything not allowed in a URL and repairs stray `%`.
    static func escaped(_ scalars: [Unicode.Scalar]) -> String {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(scalars.count)
        for (index, scalar) in scalars.enumerated() {
            if scalar == "%" {
                if startsValidEscape(scalars, at: index) {
                    bytes.append(ScalarTextASCII.percent)
                } else {
                    bytes.append(contentsOf: Array("%25".utf8))
                }
            } else if needsEscaping(scalar) {
                for byte in String(scalar).utf8 {
                    bytes.append(contentsOf: [ScalarTextASCII.percent, ScalarTextASCII.upperHexDigit(byte >> 4),
                                              ScalarTextASCII.upperHexDigit(byte & 0x0F)])
                }
            } else {
                bytes.append(UInt8(scalar.value))
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    static func startsValidEscape(_ scalars: [Unicode.Scalar], at index: Int) -> Bool {
        guard index + 2 < scalars.count else { return false }
        return scalars[(index + 1)...(index + 2)].allSatisfy { scalar in
            scalar.isASCII && ScalarTextASCII.hexValue(UInt8(scalar.value)) != nil
        }
    }

    static func needsEscaping(_ scalar: Unicode.Scalar) -> Bool {
        !scalar.isASCII || " \"<>\\^`{|}".unicodeScalars.contains(scalar)
    }

    static func isASCIILetter(_ scalar: Unicode.Scalar) -> Bool {
        ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
    }
}

// MARK: - Base64Text

/// RFC 4648 base64, strict.
public enum Base64Text {
    /// The two RFC 4648 alphabets.
    public enum Alphabet: String, Sendable, CaseIterable {
        /// Section 4: `A–Z a–z 0–9 + /`, padded with `=`.
        case standard
        /// Section 5 ("base64url"): `A–Z a–z 0–9 - _`, padding optional.
        case url
    }

    /// Strict decode. The text must use exactly the given alphabet; padding (`=` / `==`) is required for
    /// `.standard` and optional for `.url` (but if present it must be complete); no whitespace or line breaks;
    /// the unused low bits of the last symbol must be zero (so every input has one canonical encoding).
    /// `""` decodes to `[]`. Returns `nil` when any rule is broken.
    public static func decode(_ text: some StringProtocol, alphabet: Alphabet) -> [UInt8]? {
        let symbols = Array(text.utf8)
        let padding = paddingCount(symbols)
        switch alphabet {
        case .standard:
            guard symbols.count % 4 == 0 else { return nil }
        case .url:
            guard padding == 0 ? symbols.count % 4 != 1 : symbols.count % 4 == 0 else { return nil }
        }

        var values: [UInt8] = []
        values.reserveCapacity(symbols.count)
        for symbol in symbols.dropLast(padding) {
            guard let value = sextet(symbol, alphabet) else { return nil }
            values.append(value)
        }
        return unpack(values)
    }

    /// Encodes `bytes`: `.standard` is padded with `=`, `.url` is unpadded.
    public static func encode(_ bytes: [UInt8], alphabet: Alphabet) -> String {
        var output: [UInt8] = []
        output.reserveCapacity((bytes.count + 2) / 3 * 4)
        var index = 0
        while index < bytes.count {
            let chunk = bytes[index..<min(index + 3, bytes.count)]
            let b0 = chunk[chunk.startIndex]
            let b1 = chunk.count > 1 ? chunk[chunk.startIndex + 1] : 0
            let b2 = chunk.count > 2 ? chunk[chunk.startIndex + 2] : 0
            let sextets = [b0 >> 2, (b0 & 0x03) << 4 | b1 >> 4, (b1 & 0x0F) << 2 | b2 >> 6, b2 & 0x3F]
            for value in sextets.prefix(chunk.count + 1) { output.append(symbol(value, alphabet)) }
            if alphabet == .standard {
                output.append(contentsOf: repeatElement(ScalarTextASCII.equals, count: 3 - chunk.count))
            }
            index += 3
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// Number of trailing `=` (at most 2 are treated as padding; a third is left to fail as a bad symbol).
    static func paddingCount(_ symbols: [UInt8]) -> Int {
        symbols.suffix(2).reversed().prefix(while: { $0 == ScalarTextASCII.equals }).count
    }

    /// Packs 6-bit values into bytes. A final group of 1 value is invalid; leftover bits must be zero.
    static func unpack(_ values: [UInt8]) -> [UInt8]? {
        let remainder = values.count % 4
        guard remainder != 1 else { return nil }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(values.count * 3 / 4)
        var index = 0
        while index < values.count {
            let group = values[index..<min(index + 4, values.count)]
            let v = Array(group) + Array(repeating: 0, count: 4 - group.count)
            let packed = [v[0] << 2 | v[1] >> 4, (v[1] & 0x0F) << 4 | v[2] >> 2, (v[2] & 0x03) << 6 | v[3]]
            bytes.append(contentsOf: packed.prefix(group.count - 1))
            index += 4
        }
        switch remainder {
        case 2: guard values[values.count - 1] & 0x0F == 0 else { return nil }
        case 3: guard values[values.count - 1] & 0x03 == 0 else { return nil }
        default: break
        }
        return bytes
    }

    /// The 6-bit value of an alphabet symbol, or `nil`.
    static func sextet(_ symbol: UInt8, _ alphabet: Alphabet) -> UInt8? {
        switch symbol {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): return symbol - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): return symbol - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return symbol - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+") where alphabet == .standard, UInt8(ascii: "-") where alphabet == .url: return 62
        case UInt8(ascii: "/") where alphabet == .standard, UInt8(ascii: "_") where alphabet == .url: return 63
        default: return nil
        }
    }

    /// The alphabet symbol for a 6-bit value.
    static func symbol(_ value: UInt8, _ alphabet: Alphabet) -> UInt8 {
        switch value {
        case 0..<26: return UInt8(ascii: "A") + value
        case 26..<52: return UInt8(ascii: "a") + value - 26
        case 52..<62: return UInt8(ascii: "0") + value - 52
        case 62: return alphabet == .standard ? UInt8(ascii: "+") : UInt8(ascii: "-")
        default: return alphabet == .standard ? UInt8(ascii: "/") : UInt8(ascii: "_")
        }
    }
}
