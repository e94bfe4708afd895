import Testing
@testable import StreamMap

/// A `(input, expected)` vector with a readable test-argument description.
struct KeyStyleVector: Sendable, CustomTestStringConvertible {
    let input: String
    let expected: String
    init(_ input: String, _ expected: String) {
        self.input = input
        self.expected = expected
    }
    var testDescription: String { "\"\(input)\" → \"\(expected)\"" }
}

@Suite("KeyStyle: Hydrant HYDCamelToSnakeCaseValueTransformer")
struct HydrantKeyStyleTests {
    /// Hydrant's own spec (`HYDCamelToSnakeCaseValueTransformerSpec`) plus the digit/acronym behaviour of its loop.
    static let camelToSnake: [KeyStyleVector] = [
        KeyStyleVector("fooBar", "foo_bar"),
        KeyStyleVector("fooBarLol", "foo_bar_lol"),
        KeyStyleVector("yoDog", "yo_dog"),
        KeyStyleVector("YoDog", "yo_dog"),
        KeyStyleVector("#@!)($*%)!*#%$yoDog@*#%(&!)*(@#", "#@!)($*%)!*#%$yo_dog@*#%(&!)*(@#"),
        KeyStyleVector("yodog", "yodog"),
        KeyStyleVector("field1", "field_1"),
        KeyStyleVector("utf8String", "utf_8_string"),
        KeyStyleVector("URLString", "u_r_l_string"),
        KeyStyleVector("", ""),
        KeyStyleVector("A", "a"),
        KeyStyleVector("1a", "1a"),
        KeyStyleVector("already_snake", "already_snake"),
        KeyStyleVector("fooÉtat", "foo_état"),
        KeyStyleVector("e\u{301}", "e_\u{301}"),  // combining marks are "alphanumeric" and their own uppercase
        KeyStyleVector("a\u{1D400}b", "a\u{1D400}b"),  // non-BMP: Hydrant sees lone surrogates, leaves them alone
    ]

    static let snakeToLowerCamel: [KeyStyleVector] = [
        KeyStyleVector("foo_bar", "fooBar"),
        KeyStyleVector("foo_bar_lol", "fooBarLol"),
        KeyStyleVector("Yo__Dog", "yoDog"),
        KeyStyleVector("_yoDog", "Yodog"),
        KeyStyleVector("yoDog_", "yodog"),
        KeyStyleVector("^%)$(@yoDog$!@$)!#(~", "^%)$(@yodog$!@$)!#(~"),
        KeyStyleVector("", ""),
        KeyStyleVector("___", ""),
        KeyStyleVector("field_1", "field1"),
        KeyStyleVector("état_civil", "étatCivil"),
    ]

    static let snakeToUpperCamel: [KeyStyleVector] = [
        KeyStyleVector("foo_bar", "FooBar"),
        KeyStyleVector("foo_bar_lol", "FooBarLol"),
        KeyStyleVector("Yo__Dog", "YoDog"),
        KeyStyleVector("_yoDog", "Yodog"),
        KeyStyleVector("yoDog_", "Yodog"),
        KeyStyleVector("^%)$(@yoDog$!@$)!#(~", "^%)$(@yodog$!@$)!#(~"),
        KeyStyleVector("1_a", "1A"),
    ]

    @Test("camel → snake", arguments: camelToSnake)
    func snake(_ vector: KeyStyleVector) {
        #expect(KeyStyle.hydrantSnake.apply(vector.input) == vector.expected)
    }

    @Test("snake → lowerCamel", arguments: snakeToLowerCamel)
    func lowerCamel(_ vector: KeyStyleVector) {
        #expect(KeyStyle.hydrantCamel.apply(vector.input) == vector.expected)
    }

    @Test("snake → UpperCamel", arguments: snakeToUpperCamel)
    func upperCamel(_ vector: KeyStyleVector) {
        #expect(KeyStyle.hydrantUpperCamel.apply(vector.input) == vector.expected)
    }

    @Test("combining marks are compared per scalar, not canonically")
    func perScalar() {
        let result = KeyStyle.hydrantSnake.apply("e\u{301}")
        #expect(Array(result.unicodeScalars) == ["e", "_", "\u{301}"])
    }
}

@Suite("KeyStyle: Foundation key strategies")
struct FoundationKeyStyleTests {
    /// swift-foundation `JSONEncoderTests.testEncodingKeyStrategySnake` vectors, plus extra cases.
    static let toSnakeCase: [KeyStyleVector] = [
        KeyStyleVector("simpleOneTwo", "simple_one_two"),
        KeyStyleVector("myURL", "my_url"),
        KeyStyleVector("singleCharacterAtEndX", "single_character_at_end_x"),
        KeyStyleVector("thisIsAnXMLProperty", "this_is_an_xml_property"),
        KeyStyleVector("single", "single"),
        KeyStyleVector("", ""),
        KeyStyleVector("a", "a"),
        KeyStyleVector("aA", "a_a"),
        KeyStyleVector("version4Thing", "version4_thing"),
        KeyStyleVector("partCAPS", "part_caps"),
        KeyStyleVector("partCAPSLowerAGAIN", "part_caps_lower_again"),
        KeyStyleVector("manyWordsInThisThing", "many_words_in_this_thing"),
        KeyStyleVector("asdf\u{106}qer", "asdf_\u{107}qer"),
        KeyStyleVector("already_snake_case", "already_snake_case"),
        KeyStyleVector("dataPoint22", "data_point22"),
        KeyStyleVector("dataPoint22Word", "data_point22_word"),
        KeyStyleVector("_oneTwoThree", "_one_two_three"),
        KeyStyleVector("oneTwoThree_", "one_two_three_"),
        KeyStyleVector("__oneTwoThree", "__one_two_three"),
        KeyStyleVector("oneTwoThree__", "one_two_three__"),
        KeyStyleVector("_oneTwoThree_", "_one_two_three_"),
        KeyStyleVector("__oneTwoThree__", "__one_two_three__"),
        KeyStyleVector("_test", "_test"),
        KeyStyleVector("_test_", "_test_"),
        KeyStyleVector("__test", "__test"),
        KeyStyleVector("test__", "test__"),
        KeyStyleVector(
            "m\u{349}\u{31F}\u{339}y\u{326}\u{333}G\u{34D}\u{35A}\u{34E}\u{333}r\u{324}\u{349}\u{324}\u{355}\u{345}"
                + "ea\u{332}\u{355}t\u{347}\u{325}\u{33C}\u{356}U\u{347}\u{31D}\u{320}R\u{359}\u{33B}\u{325}\u{353}"
                + "\u{323}L\u{325}\u{316}\u{34E}\u{353}\u{32A}\u{32B}\u{345}R\u{329}\u{356}\u{329}eq\u{348}\u{353}"
                + "u\u{31E}e\u{331}s\u{319}t\u{324}\u{33A}\u{345}",
            "m\u{349}\u{31F}\u{339}y\u{326}\u{333}_g\u{34D}\u{35A}\u{34E}\u{333}r\u{324}\u{349}\u{324}\u{355}\u{345}"
                + "ea\u{332}\u{355}t\u{347}\u{325}\u{33C}\u{356}_u\u{347}\u{31D}\u{320}r\u{359}\u{33B}\u{325}\u{353}"
                + "\u{323}l\u{325}\u{316}\u{34E}\u{353}\u{32A}\u{32B}\u{345}_r\u{329}\u{356}\u{329}eq\u{348}\u{353}"
                + "u\u{31E}e\u{331}s\u{319}t\u{324}\u{33A}\u{345}"),
        KeyStyleVector("🐧🐟", "🐧🐟"),
        // Further cases from the brief that the algorithm also produces.
        KeyStyleVector("SingleUppercaseCharacterAtStart", "single_uppercase_character_at_start"),
        KeyStyleVector("_leadingUnderscore", "_leading_underscore"),
        KeyStyleVector("trailingUnderscore_", "trailing_underscore_"),
        KeyStyleVector("_single_", "_single_"),
    ]

    /// Quirks of the real algorithm: the first character is never examined as a boundary, so a leading capital run
    /// splits after its first letter. These pin swift-foundation's actual output.
    static let toSnakeCaseLeadingCapitals: [KeyStyleVector] = [
        KeyStyleVector("SINGLE", "s_ingle"),
        KeyStyleVector("ALLCAPSAtStart", "a_llcaps_at_start"),
        KeyStyleVector("URLSession", "u_rl_session"),
        KeyStyleVector("AB", "a_b"),
        KeyStyleVector("_Abc", "__abc"),
        KeyStyleVector("Sample", "sample"),
    ]

    /// swift-foundation `JSONEncoderTests.testDecodingKeyStrategyCamel` vectors, plus extra cases.
    static let fromSnakeCase: [KeyStyleVector] = [
        KeyStyleVector("", ""),
        KeyStyleVector("a", "a"),
        KeyStyleVector("ALLCAPS", "ALLCAPS"),
        KeyStyleVector("ALL_CAPS", "allCaps"),
        KeyStyleVector("single", "single"),
        KeyStyleVector("snake_case", "snakeCase"),
        KeyStyleVector("one_two_three", "oneTwoThree"),
        KeyStyleVector("one_2_three", "one2Three"),
        KeyStyleVector("one2_three", "one2Three"),
        KeyStyleVector("snake_\u{106}ase", "snake\u{106}ase"),
        KeyStyleVector("snake_\u{107}ase", "snake\u{106}ase"),
        KeyStyleVector("alreadyCamelCase", "alreadyCamelCase"),
        KeyStyleVector("__this_and_that", "__thisAndThat"),
        KeyStyleVector("_this_and_that", "_thisAndThat"),
        KeyStyleVector("this__and__that", "thisAndThat"),
        KeyStyleVector("this_and_that__", "thisAndThat__"),
        KeyStyleVector("this_aNd_that", "thisAndThat"),
        KeyStyleVector("_one_two_three", "_oneTwoThree"),
        KeyStyleVector("one_two_three_", "oneTwoThree_"),
        KeyStyleVector("__one_two_three", "__oneTwoThree"),
        KeyStyleVector("one_two_three__", "oneTwoThree__"),
        KeyStyleVector("_one_two_three_", "_oneTwoThree_"),
        KeyStyleVector("__one_two_three__", "__oneTwoThree__"),
        KeyStyleVector("_test", "_test"),
        KeyStyleVector("_test_", "_test_"),
        KeyStyleVector("__test", "__test"),
        KeyStyleVector("test__", "test__"),
        KeyStyleVector("_", "_"),
        KeyStyleVector("__", "__"),
        KeyStyleVector("___", "___"),
        KeyStyleVector("🐧_🐟", "🐧🐟"),
        // From the brief / FoundationEssentials' `capitalized`.
        KeyStyleVector("a__b", "aB"),
        KeyStyleVector("url_ID", "urlId"),
        KeyStyleVector("SINGLE", "SINGLE"),
        KeyStyleVector("Hello_World", "helloWorld"),
        KeyStyleVector("item_2nd", "item2Nd"),  // a digit resets "last was cased", so the next letter is titlecased
        KeyStyleVector("snake_c\u{301}ase", "snakeC\u{301}ase"),  // a combining mark does not reset it
    ]

    @Test("convertToSnakeCase", arguments: toSnakeCase)
    func toSnake(_ vector: KeyStyleVector) {
        #expect(KeyStyle.foundationSnake.apply(vector.input) == vector.expected)
    }

    @Test("convertToSnakeCase: leading capitals", arguments: toSnakeCaseLeadingCapitals)
    func toSnakeLeadingCapitals(_ vector: KeyStyleVector) {
        #expect(KeyStyle.foundationSnake.apply(vector.input) == vector.expected)
    }

    @Test("convertFromSnakeCase", arguments: fromSnakeCase)
    func fromSnake(_ vector: KeyStyleVector) {
        #expect(KeyStyle.foundationCamel.apply(vector.input) == vector.expected)
    }

    @Test("convertToSnakeCase output is exact per scalar")
    func exactScalars() {
        #expect(Array(KeyStyle.foundationSnake.apply("asdf\u{106}qer").unicodeScalars)
            == Array("asdf_\u{107}qer".unicodeScalars))
    }

    @Test("capitalized port", arguments: [
        KeyStyleVector("hello", "Hello"),
        KeyStyleVector("HELLO", "Hello"),
        KeyStyleVector("hELLO", "Hello"),
        KeyStyleVector("2nd", "2Nd"),
        KeyStyleVector("\u{1C6}x", "\u{1C5}x"),  // lowercase dž titlecases to Dž
        KeyStyleVector("", ""),
    ])
    func capitalized(_ vector: KeyStyleVector) {
        #expect(KeyStyle.SwiftFoundation.capitalized(Substring(vector.input)) == vector.expected)
    }
}

@Suite("KeyStyle: KVMapper llama case, lower, upper")
struct OtherKeyStyleTests {
    static let llama: [KeyStyleVector] = [
        KeyStyleVector("maggy_the_ninja", "maggyTheNinja"),
        KeyStyleVector("mable_the_wizard", "mableTheWizard"),
        KeyStyleVector("magrat_the_rockstar", "magratTheRockstar"),
        KeyStyleVector("milly_the_scratcher", "millyTheScratcher"),
        KeyStyleVector("single", "single"),
        KeyStyleVector("Single", "single"),
        KeyStyleVector("keep_iNNER_Case", "keepINNERCase"),
        KeyStyleVector("a__b", "aB"),  // empty components skipped (the original crashes)
        KeyStyleVector("_lead", "lead"),
        KeyStyleVector("trail_", "trail"),
        KeyStyleVector("", ""),
        KeyStyleVector("__", "__"),  // nothing left → unchanged
        KeyStyleVector("field_1", "field1"),
    ]

    @Test("snakeToLlamaCase", arguments: llama)
    func llamaCase(_ vector: KeyStyleVector) {
        #expect(KeyStyle.llama.apply(vector.input) == vector.expected)
    }

    @Test("lower / upper are locale-free Unicode mappings")
    func caseFolding() {
        #expect(KeyStyle.lowercase.apply("FooBAR_Ünï") == "foobar_ünï")
        #expect(KeyStyle.uppercase.apply("fooBar_ünï") == "FOOBAR_ÜNÏ")
        #expect(KeyStyle.uppercase.apply("straße") == "STRASSE")
        #expect(KeyStyle.lowercase.apply("I") == "i")  // no Turkish dotless-i tailoring
    }
}

@Suite("KeyStyle: names and reversal")
struct KeyStyleNamingTests {
    @Test("raw values are the spec names", arguments: KeyStyle.allCases)
    func rawValueRoundTrip(_ style: KeyStyle) {
        #expect(KeyStyle(specName: style.rawValue) == style)
        #expect(KeyStyle.specNames.contains(style.rawValue))
    }

    @Test("aliases")
    func aliases() {
        #expect(KeyStyle(specName: "snake") == .foundationSnake)
        #expect(KeyStyle(specName: "camel") == .foundationCamel)
        #expect(KeyStyle(specName: "lower") == .lowercase)
        #expect(KeyStyle(specName: "upper") == .uppercase)
    }

    @Test("unknown names", arguments: ["", "Snake", "hydrant", "foundation.Snake", "kebab", " snake"])
    func unknown(_ name: String) {
        #expect(KeyStyle(specName: name) == nil)
    }

    @Test("specNames lists every accepted name once")
    func specNames() {
        let names = KeyStyle.specNames
        #expect(names == [
            "hydrant.snake", "hydrant.camel", "hydrant.upperCamel", "foundation.snake", "foundation.camel",
            "kvmapper.llama", "lower", "upper", "snake", "camel",
        ])
        #expect(Set(names).count == names.count)
        #expect(names.allSatisfy { KeyStyle(specName: $0) != nil })
    }

    @Test("declared reverses")
    func reversed() {
        #expect(KeyStyle.hydrantSnake.reversed == .hydrantCamel)
        #expect(KeyStyle.hydrantCamel.reversed == .hydrantSnake)
        #expect(KeyStyle.hydrantUpperCamel.reversed == .hydrantSnake)
        #expect(KeyStyle.foundationSnake.reversed == .foundationCamel)
        #expect(KeyStyle.foundationCamel.reversed == .foundationSnake)
        #expect(KeyStyle.llama.reversed == nil)
        #expect(KeyStyle.lowercase.reversed == nil)
        #expect(KeyStyle.uppercase.reversed == nil)
    }

    @Test("reverse round-trips typical camelCase keys", arguments: ["fooBar", "oneTwoThree", "userId", "a"])
    func roundTrip(_ key: String) {
        for style in [KeyStyle.hydrantSnake, .foundationSnake] {
            let back = style.reversed.map { $0.apply(style.apply(key)) }
            #expect(back == key, "\(style.rawValue)")
        }
    }
}
