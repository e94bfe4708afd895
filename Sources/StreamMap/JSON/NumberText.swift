// NumberText.swift — JSON number lexemes as text: validity, integers, exact comparison, and the decimal strings
// `stringToNumber` accepts. Exact: never through Double unless asked.


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

    /// The value of an integer lexeme of at most 18 digits (`-?[0-9]{1,18}`, as JSON writes integers), read
    /// without allocating; nil for any other text. Such values, their sums and their differences fit a 64-bit `Int`.
    static func smallInteger(_ text: String) -> Int? {
        let value: Int?? = text.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            var i = 0
            let negative = bytes.first == UInt8(ascii: "-")
            if negative { i = 1 }
            let digits = bytes.count - i
            guard digits >= 1, digits <= 18 else { return nil }
            var v = 0
            while i < bytes.count {
                let d = bytes[i] &- UInt8(ascii: "0")
                guard d < 10 else { return nil }
                v = v &* 10 &+ Int(d)
                i += 1
            }
            return negative ? -v : v
        }
        return value ?? nil
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

// MARK: - ASCII helpers

/// Byte-level ASCII classification shared by the scalar-text utilities.
enum ScalarTextASCII {
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
