// KeyStyles.swift — named, locale-free transformations of object keys.
//
// Every style reproduces a published algorithm exactly (see each implementation's notes), using only the
// Swift standard library's Unicode tables: no Foundation, no locale, no global mutable state.

/// A named transformation of object keys. Raw values are the spec-file names.
public enum KeyStyle: String, Sendable, CaseIterable {
    /// Hydrant's `HYDCamelToSnakeCaseValueTransformer.transformedValue` (camelCase → snake_case).
    /// `"fooBar"` → `"foo_bar"`, `"field1"` → `"field_1"`, `"URLString"` → `"u_r_l_string"`.
    case hydrantSnake = "hydrant.snake"
    /// Hydrant's `reverseTransformedValue`, lower style (snake_case → camelCase). Capitals not after `_` are lowered:
    /// `"foo_bar"` → `"fooBar"`, `"Yo__Dog"` → `"yoDog"`.
    case hydrantCamel = "hydrant.camel"
    /// Hydrant's `reverseTransformedValue`, upper style (snake_case → CamelCase): `"foo_bar"` → `"FooBar"`.
    case hydrantUpperCamel = "hydrant.upperCamel"
    /// `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase` (swift-foundation): `"myURL"` → `"my_url"`.
    case foundationSnake = "foundation.snake"
    /// `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase` (swift-foundation): `"one_two"` → `"oneTwo"`.
    case foundationCamel = "foundation.camel"
    /// KVMapper's sample `Transformers.snakeToLlamaCase`: `"maggy_the_ninja"` → `"maggyTheNinja"`.
    case llama = "kvmapper.llama"
    /// Unicode default lowercase mapping (Swift's `String.lowercased()`), locale-free.
    case lowercase = "lower"
    /// Unicode default uppercase mapping (Swift's `String.uppercased()`), locale-free.
    case uppercase = "upper"

    /// Transforms one key.
    public func apply(_ key: String) -> String {
        switch self {
        case .hydrantSnake: return Hydrant.camelToSnake(key)
        case .hydrantCamel: return Hydrant.snakeToCamel(key, upperFirst: false)
        case .hydrantUpperCamel: return Hydrant.snakeToCamel(key, upperFirst: true)
        case .foundationSnake: return SwiftFoundation.convertToSnakeCase(key)
        case .foundationCamel: return SwiftFoundation.convertFromSnakeCase(key)
        case .llama: return KVMapper.snakeToLlamaCase(key)
        case .lowercase: return key.lowercased()
        case .uppercase: return key.uppercased()
        }
    }

    /// The style that undoes this one where the source library declares one, else `nil`.
    ///
    /// - `hydrantSnake` ⇄ `hydrantCamel` (one Hydrant transformer, default lower style).
    /// - `hydrantUpperCamel` → `hydrantSnake`: the upper-style transformer's forward direction is the same
    ///   camel→snake algorithm (the style only affects the reverse), so this is one-way.
    /// - `foundationSnake` ⇄ `foundationCamel` (the encoder/decoder strategy pair).
    /// - `llama`, `lowercase`, `uppercase` → `nil`: KVMapper ships no inverse, and case folding is lossy.
    ///
    /// None of these round-trips is lossless for every key (e.g. `"URLString"` → `"u_r_l_string"` → `"uRLString"`).
    public var reversed: KeyStyle? {
        switch self {
        case .hydrantSnake: return .hydrantCamel
        case .hydrantCamel, .hydrantUpperCamel: return .hydrantSnake
        case .foundationSnake: return .foundationCamel
        case .foundationCamel: return .foundationSnake
        case .llama, .lowercase, .uppercase: return nil
        }
    }

    /// Short aliases accepted by spec files in addition to the raw values.
    static let aliases: [(name: String, style: KeyStyle)] = [
        ("snake", .foundationSnake),
        ("camel", .foundationCamel),
    ]

    /// Looks up a style by spec-file name: a raw value (`"hydrant.snake"`) or an alias (`"snake"`, `"camel"`).
    /// Matching is exact and case-sensitive; returns `nil` for unknown names.
    public init?(specName: String) {
        if let style = KeyStyle(rawValue: specName) {
            self = style
        } else if let alias = Self.aliases.first(where: { $0.name == specName }) {
            self = alias.style
        } else {
            return nil
        }
    }

    /// Every name `init(specName:)` accepts (raw values in declaration order, then aliases), for "did you mean".
    public static var specNames: [String] {
        allCases.map(\.rawValue) + aliases.map(\.name)
    }
}

// MARK: - Hydrant

extension KeyStyle {
    /// Port of Hydrant's `HYDCamelToSnakeCaseValueTransformer` (Objective-C, per UTF-16 code unit).
    ///
    /// This port iterates Unicode scalars. For BMP scalars that is identical to Hydrant's per-unit loop. Hydrant sees
    /// a non-BMP scalar as two lone surrogates, which it never case-maps and never treats as alphanumeric, so
    /// non-BMP scalars pass through unchanged here too (no case change, no `_` inserted, and they clear the
    /// "previous was underscore" flag).
    ///
    /// "Alphanumeric" is `NSCharacterSet.alphanumericCharacterSet`: general categories L*, M* and N*. Marks count,
    /// so a decomposed accent (`"e\u{301}"`) gets a `_` before its combining mark, exactly as Hydrant does.
    enum Hydrant {
        /// `transformedValue:` — emit `_` before every non-initial unit that equals its own uppercase mapping and is
        /// alphanumeric (so digits count: `"field1"` → `"field_1"`), then emit the unit lowercased.
        static func camelToSnake(_ key: String) -> String {
            var result = ""
            result.reserveCapacity(key.utf8.count + 4)
            for (offset, scalar) in key.unicodeScalars.enumerated() {
                guard isBMP(scalar) else {
                    result.unicodeScalars.append(scalar)
                    continue
                }
                if offset != 0 && isUppercased(scalar) && isAlphanumeric(scalar) {
                    result += "_"
                }
                result += scalar.properties.lowercaseMapping
            }
            return result
        }

        /// `reverseTransformedValue:` — drop every `_`; uppercase a unit that follows `_` (or, in upper style, the
        /// very first unit when alphanumeric); lowercase every other unit.
        static func snakeToCamel(_ key: String, upperFirst: Bool) -> String {
            var result = ""
            result.reserveCapacity(key.utf8.count)
            var previousWasUnderscore = false
            for (offset, scalar) in key.unicodeScalars.enumerated() {
                let isUnderscore = scalar == "_"
                if !isUnderscore {
                    if !isBMP(scalar) {
                        result.unicodeScalars.append(scalar)
                    } else if (upperFirst && offset == 0 && isAlphanumeric(scalar)) || previousWasUnderscore {
                        result += scalar.properties.uppercaseMapping
                    } else {
                        result += scalar.properties.lowercaseMapping
                    }
                }
                previousWasUnderscore = isUnderscore
            }
            return result
        }

        static func isBMP(_ scalar: Unicode.Scalar) -> Bool {
            scalar.value <= 0xFFFF
        }

        /// Hydrant's `isUppercasedString:` — the text equals its own uppercase mapping (compared literally).
        static func isUppercased(_ scalar: Unicode.Scalar) -> Bool {
            scalar.properties.uppercaseMapping.unicodeScalars.elementsEqual(CollectionOfOne(scalar))
        }

        /// `NSCharacterSet.alphanumericCharacterSet`: Unicode general categories L*, M*, N*.
        static func isAlphanumeric(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.properties.generalCategory {
            case .uppercaseLetter, .lowercaseLetter, .titlecaseLetter, .modifierLetter, .otherLetter,
                 .nonspacingMark, .spacingMark, .enclosingMark,
                 .decimalNumber, .letterNumber, .otherNumber:
                return true
            default:
                return false
            }
        }
    }
}

// MARK: - Foundation (swift-foundation JSONEncoder / JSONDecoder key strategies)

extension KeyStyle {
    /// Ports of swift-foundation's `_convertToSnakeCase` / `_convertFromSnakeCase`, kept structurally identical to
    /// the originals (same index arithmetic on `String`), so grapheme-cluster edge cases behave the same.
    ///
    /// "Uppercase letter" is CoreFoundation's set (general categories Lu and Lt), "lowercase letter" is Ll.
    /// `lowercased()` is the standard library's (what swift-foundation calls); `capitalized` is ported from
    /// FoundationEssentials' `String._capitalized()` (see `capitalized(_:)`).
    enum SwiftFoundation {
        /// `JSONEncoder.KeyEncodingStrategy.convertToSnakeCase`.
        ///
        /// Splits before an uppercase letter that follows a non-uppercase one, and before the last capital of a
        /// capital run that is followed by a lowercase letter; lowercases the words and joins them with `_`.
        /// The first character is never examined as a split point (the original assumes it is lowercase), which
        /// gives the original's quirks on leading capitals: `"SINGLE"` → `"s_ingle"`, `"URLSession"` →
        /// `"u_rl_session"`, `"ALLCAPSAtStart"` → `"a_llcaps_at_start"`.
        static func convertToSnakeCase(_ key: String) -> String {
            guard !key.isEmpty else { return key }

            var words: [Range<String.Index>] = []
            var wordStart = key.startIndex
            var searchRange = key.index(after: wordStart)..<key.endIndex

            while let upper = firstScalar(in: key, searchRange, where: isUppercaseLetter) {
                words.append(wordStart..<upper.lowerBound)

                searchRange = upper.lowerBound..<searchRange.upperBound
                guard let lower = firstScalar(in: key, searchRange, where: isLowercaseLetter) else {
                    // No more lowercase letters: the rest is one word.
                    wordStart = searchRange.lowerBound
                    break
                }

                let nextCharacterAfterCapital = key.index(after: upper.lowerBound)
                if lower.lowerBound == nextCharacterAfterCapital {
                    // A single capital starts a word; keep looking for the next boundary.
                    wordStart = upper.lowerBound
                } else {
                    // A run of capitals: it is its own word, except its last capital, which starts the next word.
                    let beforeLower = key.index(before: lower.lowerBound)
                    words.append(upper.lowerBound..<beforeLower)
                    wordStart = beforeLower
                }
                searchRange = lower.upperBound..<searchRange.upperBound
            }
            words.append(wordStart..<searchRange.upperBound)

            return words.map { key[$0].lowercased() }.joined(separator: "_")
        }

        /// `JSONDecoder.KeyDecodingStrategy.convertFromSnakeCase`.
        ///
        /// Leading and trailing underscores are kept verbatim. The middle is split on `_` (empty pieces dropped);
        /// a single piece is returned unchanged (`"SINGLE"` stays `"SINGLE"`); otherwise the first piece is
        /// lowercased, the others capitalized, and all are joined.
        static func convertFromSnakeCase(_ key: String) -> String {
            guard !key.isEmpty else { return key }
            guard let firstNonUnderscore = key.firstIndex(where: { $0 != "_" }) else {
                return key  // all underscores
            }

            var lastNonUnderscore = key.index(before: key.endIndex)
            while lastNonUnderscore > firstNonUnderscore && key[lastNonUnderscore] == "_" {
                key.formIndex(before: &lastNonUnderscore)
            }

            let keyRange = firstNonUnderscore...lastNonUnderscore
            let leading = key[key.startIndex..<firstNonUnderscore]
            let trailing = key[key.index(after: lastNonUnderscore)..<key.endIndex]

            let components = key[keyRange].split(separator: "_")
            let joined: String
            if components.count == 1 {
                joined = String(key[keyRange])
            } else {
                joined = ([components[0].lowercased()] + components.dropFirst().map(capitalized)).joined()
            }
            return String(leading) + joined + String(trailing)
        }

        /// Port of FoundationEssentials' `String._capitalized()` (what `.capitalized` runs on Linux):
        /// an uppercase letter after a cased letter is lowercased; a lowercase letter not after a cased letter is
        /// titlecased; case-ignorable scalars are copied without changing state; anything else (digits, symbols,
        /// uncased letters) is copied and resets the state. So `"2nd"` capitalizes to `"2Nd"`.
        static func capitalized(_ word: Substring) -> String {
            var result = ""
            result.reserveCapacity(word.utf8.count)
            var isLastCased = false
            for scalar in word.unicodeScalars {
                if isUppercaseLetter(scalar) {
                    if isLastCased {
                        result += scalar.properties.lowercaseMapping
                    } else {
                        result.unicodeScalars.append(scalar)
                    }
                    isLastCased = true
                } else if isLowercaseLetter(scalar) {
                    if isLastCased {
                        result.unicodeScalars.append(scalar)
                    } else {
                        result += scalar.properties.titlecaseMapping
                    }
                    isLastCased = true
                } else {
                    result.unicodeScalars.append(scalar)
                    if !isCaseIgnorable(scalar) { isLastCased = false }
                }
            }
            return result
        }

        /// The range of the first scalar in `range` of `string` satisfying `predicate` (like `rangeOfCharacter`).
        static func firstScalar(
            in string: String, _ range: Range<String.Index>, where predicate: (Unicode.Scalar) -> Bool
        ) -> Range<String.Index>? {
            let scalars = string.unicodeScalars
            var index = range.lowerBound
            while index < range.upperBound {
                let next = scalars.index(after: index)
                if predicate(scalars[index]) { return index..<next }
                index = next
            }
            return nil
        }

        /// CoreFoundation's `uppercaseLetters`: general categories Lu and Lt.
        static func isUppercaseLetter(_ scalar: Unicode.Scalar) -> Bool {
            let category = scalar.properties.generalCategory
            return category == .uppercaseLetter || category == .titlecaseLetter
        }

        /// CoreFoundation's `lowercaseLetters`: general category Ll.
        static func isLowercaseLetter(_ scalar: Unicode.Scalar) -> Bool {
            scalar.properties.generalCategory == .lowercaseLetter
        }

        /// Approximation of CoreFoundation's case-ignorable set (a subset of Unicode `Case_Ignorable`): the
        /// general categories Mn, Me, Cf, Lm and Sk. Word-break punctuation such as `'` and `.` is not included.
        static func isCaseIgnorable(_ scalar: Unicode.Scalar) -> Bool {
            switch scalar.properties.generalCategory {
            case .nonspacingMark, .enclosingMark, .format, .modifierLetter, .modifierSymbol:
                return true
            default:
                return false
            }
        }
    }
}

// MARK: - KVMapper

extension KeyStyle {
    /// Port of KVMapper's sample `Transformers.snakeToLlamaCase:`.
    enum KVMapper {
        /// Splits on `_` (literally, per scalar, like `componentsSeparatedByString:`), uppercases the first scalar of
        /// each component (the rest unchanged), concatenates, then lowercases the first scalar of the result.
        ///
        /// The original crashes on an empty component (`"a__b"`, `"_a"`, `""`); here empty components are skipped,
        /// and a key with no non-empty component (`""`, `"__"`) is returned unchanged.
        static func snakeToLlamaCase(_ key: String) -> String {
            var joined = ""
            joined.reserveCapacity(key.utf8.count)
            for component in key.unicodeScalars.split(separator: "_") {
                joined += component[component.startIndex].properties.uppercaseMapping
                joined.unicodeScalars.append(contentsOf: component.dropFirst())
            }
            guard let first = joined.unicodeScalars.first else { return key }
            return first.properties.lowercaseMapping + String(joined.unicodeScalars.dropFirst())
        }
    }
}
