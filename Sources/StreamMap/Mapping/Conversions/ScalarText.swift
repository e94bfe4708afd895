// ScalarText.swift — exact, locale-free utilities on JSON scalar text: UUIDs, absolute URLs, base64 (number lexemes:
// JSON/NumberText.swift).
//
// Everything works on the UTF-8 (or Unicode scalar) view of its input with the standard library only: no Foundation,
// no locale, no global mutable state. Numbers are never routed through `Double` unless `double(_:)` is asked for.



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
