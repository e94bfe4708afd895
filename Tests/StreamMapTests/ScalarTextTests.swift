import Testing
@testable import StreamMap

@Suite("NumberText")
struct NumberTextTests {
    static let valid = [
        "0", "-0", "1", "-1", "10", "123456789012345678901234567890", "0.5", "-0.5", "1.0", "1e2", "1E2", "1e+2",
        "1E+2", "1e-2", "1e0", "1e00", "0e0", "-0.0e-0", "1e400", "1.5e-400", "9007199254740993", "3.14159",
    ]
    static let invalid = [
        "", "-", "+1", " 1", "1 ", "01", "-01", "00", ".5", "5.", "-.5", "1.e2", "1e", "1e+", "1E-", "e1", "0x1F",
        "NaN", "Infinity", "-Infinity", "1,000", "1_000", "1..2", "1.2.3", "--1", "1e2e3", "1e2.5", "١", "１",
    ]

    @Test("valid lexemes", arguments: valid)
    func isValid(_ text: String) {
        #expect(NumberText.isValid(text))
    }

    @Test("invalid lexemes", arguments: invalid)
    func isInvalid(_ text: String) {
        #expect(!NumberText.isValid(text))
        #expect(!NumberText.isInteger(text))
        #expect(NumberText.int64(text) == nil)
        #expect(NumberText.double(text) == nil)
    }

    @Test("integer lexemes", arguments: [
        ("0", true), ("-0", true), ("42", true), ("123456789012345678901234567890", true),
        ("1.0", false), ("1e2", false), ("-5E0", false), ("01", false), ("abc", false),
    ])
    func isInteger(_ text: String, _ expected: Bool) {
        #expect(NumberText.isInteger(text) == expected)
    }

    @Test("works on substrings")
    func substrings() {
        let text = "[12.5e1]"
        let inner = text.dropFirst().dropLast()
        #expect(NumberText.isValid(inner))
        #expect(NumberText.canonicalKey(inner) == "1.25e2")
        #expect(!NumberText.isValid(text.dropFirst()))
    }

    static let equalPairs: [(String, String)] = [
        ("1", "1.0"), ("1", "1e0"), ("1", "10e-1"), ("1.0", "10e-1"), ("1E+2", "100"), ("-0", "0"), ("0", "0.000"),
        ("0", "0e99999"), ("-0.0", "0e-5"), ("0.1e1", "1"), ("1e400", "10e399"), ("1e400", "0.0001e404"),
        ("123456789012345678901234567890", "1.2345678901234567890123456789e29"), ("-2.50", "-25e-1"),
        ("1e-400", "0.1e-399"), ("12300", "1.23e4"),
        ("1e123456789012345678901234567890", "10e123456789012345678901234567889"),
        ("1e-123456789012345678901234567890", "0.1e-123456789012345678901234567889"),
        ("1e1000000000000000000", "100e999999999999999998"),
        ("1e-1000000000000000000", "0.01e-999999999999999998"),
    ]
    static let unequalPairs: [(String, String)] = [
        ("1", "-1"), ("1", "1.0000000000000000000000000001"), ("9007199254740993", "9007199254740992"),
        ("1e400", "1e401"), ("0.1", "1e-2"), ("1e123456789012345678901234567890", "1e123456789012345678901234567891"),
        ("1e-1000000000000000000", "1e1000000000000000000"), ("-0", "1e-400"),
    ]

    @Test("numerically equal", arguments: equalPairs)
    func equal(_ a: String, _ b: String) {
        #expect(NumberText.numericallyEqual(a, b))
        #expect(NumberText.numericallyEqual(b, a))
        #expect(NumberText.canonicalKey(a) == NumberText.canonicalKey(b))
    }

    @Test("numerically different", arguments: unequalPairs)
    func unequal(_ a: String, _ b: String) {
        #expect(!NumberText.numericallyEqual(a, b))
        #expect(NumberText.canonicalKey(a) != NumberText.canonicalKey(b))
    }

    @Test("invalid lexemes are never numerically equal")
    func invalidEquality() {
        #expect(!NumberText.numericallyEqual("+1", "1"))
        #expect(!NumberText.numericallyEqual("x", "x"))
        #expect(NumberText.canonicalKey("x") == "invalid:x")
    }

    @Test("canonical keys", arguments: [
        ("0", "0"), ("-0", "0"), ("0.000e7", "0"), ("1", "1e0"), ("100", "1e2"), ("-0.0150", "-1.5e-2"),
        ("1.0", "1e0"), ("12.34e-5", "1.234e-4"), ("1e400", "1e400"), ("7e0", "7e0"), ("0.0070", "7e-3"),
        ("1e0000000000000000000000000000012", "1e12"),
        ("12e123456789012345678901234567890", "1.2e123456789012345678901234567891"),
        ("0.12e-123456789012345678901234567890", "1.2e-123456789012345678901234567891"),
        ("1000e-1000000000000000000", "1e-999999999999999997"),
    ])
    func canonicalKey(_ text: String, _ expected: String) {
        #expect(NumberText.canonicalKey(text) == expected)
    }

    @Test("canonical keys work as dictionary keys")
    func dictionaryKeys() {
        var counts: [String: Int] = [:]
        for text in ["1", "1.0", "1e0", "10e-1", "2", "0.2e1", "-0", "0"] {
            counts[NumberText.canonicalKey(text), default: 0] += 1
        }
        #expect(counts == ["1e0": 4, "2e0": 2, "0": 2])
    }

    @Test("Int64 values", arguments: [
        ("0", Int64(0)), ("-0", 0), ("42", 42), ("-42", -42),
        ("9223372036854775807", .max), ("-9223372036854775808", .min),
    ])
    func int64(_ text: String, _ expected: Int64) {
        #expect(NumberText.int64(text) == expected)
    }

    @Test("Int64 rejects", arguments: [
        "9223372036854775808", "-9223372036854775809", "123456789012345678901234567890", "1.0", "1e2", "+1", "",
    ])
    func int64Rejects(_ text: String) {
        #expect(NumberText.int64(text) == nil)
    }

    @Test("Double values", arguments: [
        ("0", 0.0), ("-0", -0.0), ("1.5", 1.5), ("1e2", 100.0), ("-2.5E-3", -0.0025), ("1e-400", 0.0),
        ("9007199254740993", 9007199254740992.0), ("1.7976931348623157e308", Double.greatestFiniteMagnitude),
    ])
    func double(_ text: String, _ expected: Double) {
        #expect(NumberText.double(text) == expected)
    }

    @Test("Double sign of zero is kept")
    func negativeZero() {
        #expect(NumberText.double("-0")?.sign == .minus)
    }

    @Test("Double rejects non-finite and non-JSON",
          arguments: ["1e400", "-1e400", "1.8e308", "NaN", "inf", "0x10", " 1"])
    func doubleRejects(_ text: String) {
        #expect(NumberText.double(text) == nil)
    }

    static let lenientAccepted: [(String, String)] = [
        ("1", "1"), ("  42\t", "42"), ("\n-7\r\n", "-7"), ("+5", "5"), ("+0", "0"), ("-0", "-0"), ("+1.5e3", "1.5e3"),
        ("1,235,555", "1235555"), ("-1,234.56", "-1234.56"), ("+1,000", "1000"), ("999,999.5e-1", "999999.5e-1"),
        ("12,345", "12345"), ("123", "123"), ("1,000,000,000,000,000,000,000", "1000000000000000000000"),
        (" 0.5 ", "0.5"), ("1E+2", "1E+2"), ("\u{0B}\u{0C}3", "3"),
    ]
    static let lenientRejected = [
        "", "   ", "+", "-", "1,23", "1234,567", ",123", "123,", "1,,234", "1,2345", "0,123", "1,234,56",
        "1.234,5", "1e1,000", "007", "-007", ".5", "5.", "+.5", "0x1F", "NaN", "Infinity", "-Infinity", "+-1", "++1",
        "-+1", "+ 1", "1 000", "1_000", "1.2.3", "abc", "12abc", "\u{A0}1", "1\u{A0}", "１２", "-,123", "1,234 ,567",
    ]

    @Test("lenient accepts", arguments: lenientAccepted)
    func lenientAccepts(_ text: String, _ expected: String) {
        #expect(NumberText.parseLenient(text) == expected)
    }

    @Test("lenient rejects", arguments: lenientRejected)
    func lenientRejects(_ text: String) {
        #expect(NumberText.parseLenient(text) == nil)
    }

    @Test("lenient output is always a valid lexeme", arguments: lenientAccepted)
    func lenientOutputIsValid(_ text: String, _ expected: String) {
        #expect(NumberText.parseLenient(text).map(NumberText.isValid) == true)
    }
}

@Suite("UUIDText")
struct UUIDTextTests {
    @Test("accepts and canonicalizes", arguments: [
        ("123e4567-e89b-12d3-a456-426614174000", "123e4567-e89b-12d3-a456-426614174000"),
        ("123E4567-E89B-12D3-A456-426614174000", "123e4567-e89b-12d3-a456-426614174000"),
        ("00000000-0000-0000-0000-000000000000", "00000000-0000-0000-0000-000000000000"),
        ("FFFFFFFF-ffff-FfFf-fFfF-FFFFFFFFFFFF", "ffffffff-ffff-ffff-ffff-ffffffffffff"),
        ("E621E1F8-C36C-495A-93FC-0C247A3E6E5F", "e621e1f8-c36c-495a-93fc-0c247a3e6e5f"),
    ])
    func accepts(_ text: String, _ expected: String) {
        #expect(UUIDText.canonical(text) == expected)
    }

    @Test("rejects", arguments: [
        "", "123e4567e89b12d3a456426614174000", "{123e4567-e89b-12d3-a456-426614174000}",
        "urn:uuid:123e4567-e89b-12d3-a456-426614174000", " 123e4567-e89b-12d3-a456-426614174000",
        "123e4567-e89b-12d3-a456-426614174000 ", "123e4567-e89b-12d3-a456-42661417400",
        "123e4567-e89b-12d3-a456-4266141740000", "123e4567-e89b-12d3-a456_426614174000",
        "123e4567-e89b-12d3a-456-426614174000", "g23e4567-e89b-12d3-a456-426614174000",
        "123e4567-e89b-12d3-a456-42661417400０", "123e4567-e89b-12d3-a456-4266141740-0",
        "------------------------------------",
    ])
    func rejects(_ text: String) {
        #expect(UUIDText.canonical(text) == nil)
    }
}

@Suite("URLText")
struct URLTextTests {
    @Test("accepts absolute URLs", arguments: [
        ("http://ex.com/a", "http://ex.com/a", "http"),
        ("HTTP://X", "HTTP://X", "http"),
        ("mailto:a@b.c", "mailto:a@b.c", "mailto"),
        ("urn:isbn:0451450523", "urn:isbn:0451450523", "urn"),
        ("coap+tcp://h:5683/x", "coap+tcp://h:5683/x", "coap+tcp"),
        ("x-my.app-1://y", "x-my.app-1://y", "x-my.app-1"),
        ("https://ex.com/?q=a&b=%2F#frag", "https://ex.com/?q=a&b=%2F#frag", "https"),
        ("file:///tmp/a", "file:///tmp/a", "file"),
        ("data:,Hello", "data:,Hello", "data"),
    ])
    func accepts(_ text: String, _ url: String, _ scheme: String) {
        let parsed = URLText.parseAbsolute(text)
        #expect(parsed?.url == url)
        #expect(parsed?.scheme == scheme)
    }

    @Test("percent-encodes what a URL may not contain", arguments: [
        ("http://ex.com/a b", "http://ex.com/a%20b"),
        ("http://ex.com/ä", "http://ex.com/%C3%A4"),
        ("http://ex.com/€", "http://ex.com/%E2%82%AC"),
        ("http://ex.com/😀", "http://ex.com/%F0%9F%98%80"),
        ("http://ex.com/\"<>\\^`{|}", "http://ex.com/%22%3C%3E%5C%5E%60%7B%7C%7D"),
        ("http://ex.com/100%", "http://ex.com/100%25"),
        ("http://ex.com/%zz", "http://ex.com/%25zz"),
        ("http://ex.com/%4", "http://ex.com/%254"),
        ("http://ex.com/%4a%4A", "http://ex.com/%4a%4A"),
        ("http://ex.com/a b%20c", "http://ex.com/a%20b%20c"),
        ("http://ex.com/ ", "http://ex.com/%20"),
    ])
    func escapes(_ text: String, _ expected: String) {
        #expect(URLText.parseAbsolute(text)?.url == expected)
    }

    @Test("rejects relative references, bad schemes and controls", arguments: [
        "", "!!", "/relative", "a/b", "//host/path", "?q", "#f", "http", "http:", "1http://x", "+a:b", ":x",
        "ht tp://x", "ht_tp://x", "hé://x", " http://x", "http://ex.com/a\u{0}", "http://ex.com/a\nb",
        "http://ex.com/\t", "http://ex.com/\u{7F}", "http://ex.com/\u{85}", "\u{1F600}:x",
    ])
    func rejects(_ text: String) {
        #expect(URLText.parseAbsolute(text) == nil)
    }

    @Test("works on substrings")
    func substring() {
        let text = "<http://x/y>"
        let parsed = URLText.parseAbsolute(text.dropFirst().dropLast())
        #expect(parsed?.url == "http://x/y")
        #expect(parsed?.scheme == "http")
    }
}

@Suite("Base64Text")
struct Base64TextTests {
    /// RFC 4648 section 10 test vectors.
    static let rfc4648: [(plain: String, standard: String, url: String)] = [
        ("", "", ""),
        ("f", "Zg==", "Zg"),
        ("fo", "Zm8=", "Zm8"),
        ("foo", "Zm9v", "Zm9v"),
        ("foob", "Zm9vYg==", "Zm9vYg"),
        ("fooba", "Zm9vYmE=", "Zm9vYmE"),
        ("foobar", "Zm9vYmFy", "Zm9vYmFy"),
    ]

    @Test("RFC 4648 vectors encode", arguments: rfc4648)
    func encode(_ vector: (plain: String, standard: String, url: String)) {
        let bytes = Array(vector.plain.utf8)
        #expect(Base64Text.encode(bytes, alphabet: .standard) == vector.standard)
        #expect(Base64Text.encode(bytes, alphabet: .url) == vector.url)
    }

    @Test("RFC 4648 vectors decode", arguments: rfc4648)
    func decode(_ vector: (plain: String, standard: String, url: String)) {
        let bytes = Array(vector.plain.utf8)
        #expect(Base64Text.decode(vector.standard, alphabet: .standard) == bytes)
        #expect(Base64Text.decode(vector.url, alphabet: .url) == bytes)
        #expect(Base64Text.decode(vector.standard, alphabet: .url) == bytes)  // padding optional for .url
    }

    @Test("alphabet-specific symbols")
    func alphabets() {
        let bytes: [UInt8] = [0xFB, 0xFF, 0xBF]
        #expect(Base64Text.encode(bytes, alphabet: .standard) == "+/+/")
        #expect(Base64Text.encode(bytes, alphabet: .url) == "-_-_")
        #expect(Base64Text.decode("+/+/", alphabet: .standard) == bytes)
        #expect(Base64Text.decode("-_-_", alphabet: .url) == bytes)
        #expect(Base64Text.decode("+/+/", alphabet: .url) == nil)
        #expect(Base64Text.decode("-_-_", alphabet: .standard) == nil)
        #expect(Base64Text.encode([0xFF], alphabet: .standard) == "/w==")
        #expect(Base64Text.encode([0xFF], alphabet: .url) == "_w")
    }

    @Test("round-trips every byte value")
    func roundTrip() {
        let bytes = (0...255).map(UInt8.init)
        for length in [0, 1, 2, 3, 4, 5, 254, 255, 256] {
            let chunk = Array(bytes.prefix(length))
            for alphabet in Base64Text.Alphabet.allCases {
                #expect(Base64Text.decode(Base64Text.encode(chunk, alphabet: alphabet), alphabet: alphabet) == chunk)
            }
        }
    }

    @Test("standard rejects", arguments: [
        "Zg", "Zg=", "Zm8", "Zm9vYg", "Z", "Zg===", "====", "=", "Zm9v====", "Zg==Zg==", "Zm=v", "Zm9v\n", " Zm9v",
        "Zm 9v", "Zm9v-_-_", "Zh==", "Zm9=", "Zg==\r\n", "Zm9vYmFy=", "Zm9v!", "Zm9vYÿ==",
    ])
    func standardRejects(_ text: String) {
        #expect(Base64Text.decode(text, alphabet: .standard) == nil)
    }

    @Test("url rejects", arguments: [
        "Z", "Zg=", "Zm9vY", "Zg===", "=", "==", "Zg==Zg", "Zm=v", "Zm9v+/+/", "Zh", "Zm9", "Zm9v ", "Zm9vY===",
    ])
    func urlRejects(_ text: String) {
        #expect(Base64Text.decode(text, alphabet: .url) == nil)
    }

    @Test("alphabet names")
    func names() {
        #expect(Base64Text.Alphabet(rawValue: "standard") == .standard)
        #expect(Base64Text.Alphabet(rawValue: "url") == .url)
        #expect(Base64Text.Alphabet.allCases.count == 2)
    }
}
