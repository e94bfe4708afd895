import Testing
@testable import StreamMap

// Expected values were computed independently with Python's arbitrary-precision integers (value = integer × 10^e,
// then printed with the same canonical rules: plain notation for a most-significant-digit exponent in -20...40,
// otherwise shortest scientific).

@Suite("DecimalArithmetic")
struct DecimalArithmeticTests {
    // MARK: multiply

    @Test("multiply: concrete vectors", arguments: [
        ("5", "6", "30"),
        ("0.1", "3", "0.3"),
        ("1.5", "-2", "-3"),
        ("-0", "5", "0"),
        ("-0.0", "-7", "0"),
        ("-3", "-4", "12"),
        ("12345678901234567890", "98765432109876543210", "1219326311370217952237463801111263526900"),
        ("1e400", "2", "2e400"),
        ("1E+2", "1", "100"),
        ("1.50e-3", "2", "0.003"),
        ("2.5", "4", "10"),
        ("1e20", "1e20", "1" + String(repeating: "0", count: 40)),  // 1e40: top exponent 40, still plain
        ("1e20", "1e21", "1e41"),
        ("1e-10", "1e-10", "0.00000000000000000001"),  // 1e-20: plain
        ("1e-10", "1e-11", "1e-21"),
        ("-1.5e200", "1e200", "-1.5e400"),
        ("2e-200", "-1e-200", "-2e-400"),
        ("123e-2", "1", "1.23"),
        ("1230", "1000", "1230000"),
        ("999999999", "999999999", "999999998000000001"),  // limb boundary
        ("1000000000", "1000000000", "1000000000000000000"),
        ("0.00001", "1", "0.00001"),
    ])
    func multiplyVectors(_ a: String, _ b: String, _ expected: String) {
        #expect(DecimalArithmetic.multiply(a, b) == expected)
        #expect(DecimalArithmetic.multiply(b, a) == expected)
    }

    @Test("multiply: 1000-digit operands are exact")
    func multiplyLarge() {
        // (10^1000 − 1)² = 10^2000 − 2·10^1000 + 1 = 9…(999)…98 0…(999)…0 1, an integer of 2000 digits; its top
        // exponent 1999 is beyond 40, so it prints in scientific form with every digit kept.
        let nines = String(repeating: "9", count: 1000)
        let digits = String(repeating: "9", count: 999) + "8" + String(repeating: "0", count: 999) + "1"
        let product = DecimalArithmetic.multiply(nines, nines)
        #expect(product == "9." + digits.dropFirst() + "e1999")
        #expect(NumberText.numericallyEqual(product ?? "", digits))

        // Plain integers with a top exponent of at most 40 keep plain form: (10^20 − 1)².
        let twentyNines = String(repeating: "9", count: 20)
        #expect(DecimalArithmetic.multiply(twentyNines, twentyNines)
            == String(repeating: "9", count: 19) + "8" + String(repeating: "0", count: 19) + "1")

        // 300-digit integer × 10^-300 = 1.xxx as a plain decimal
        let big = "1" + String(repeating: "0", count: 298) + "7"
        #expect(DecimalArithmetic.multiply(big, "1e-299") == "1." + String(repeating: "0", count: 298) + "7")
    }

    // MARK: add

    @Test("add: concrete vectors", arguments: [
        ("0.1", "0.2", "0.3"),
        ("1e-30", "1", "1.000000000000000000000000000001"),
        ("5", "-5", "0"),
        ("-1.25", "0.25", "-1"),
        ("-0", "-0", "0"),
        ("-0.0e5", "3", "3"),
        ("0", "-2.50", "-2.5"),
        ("999999999", "1", "1000000000"),
        ("1000000000", "-1", "999999999"),
        ("1e40", "1e40", "2" + String(repeating: "0", count: 40)),  // top exponent 40: plain
        ("5e40", "5e40", "1e41"),
        ("1.5e400", "0", "1.5e400"),
        ("1e400", "1e399", "1.1e400"),
        ("-1e-400", "-1e-400", "-2e-400"),
        ("1E+2", "-1e2", "0"),
        ("0.5", "0.5", "1"),
        ("-0.001", "0.0001", "-0.0009"),
        ("12345678901234567890", "98765432109876543210", "111111111011111111100"),
        ("1.50e-3", "1", "1.0015"),
        ("100000000000000000000000000000000000000001", "-1", "1e41"),
    ])
    func addVectors(_ a: String, _ b: String, _ expected: String) {
        #expect(DecimalArithmetic.add(a, b) == expected)
        #expect(DecimalArithmetic.add(b, a) == expected)
    }

    @Test("add: exponent gap bound")
    func addGapBound() {
        // Bridging a million-digit gap would materialize a million digits: refused.
        #expect(DecimalArithmetic.add("1e1000000", "1") == nil)
        #expect(DecimalArithmetic.add("1", "-1e-1000000") == nil)
        // Within the bound it is exact.
        let sum = DecimalArithmetic.add("1e1000", "1")
        #expect(sum == "1." + String(repeating: "0", count: 999) + "1e1000")
        // Just inside the bound: 10^99999 − 0.1 = 100 000 nines, "9.99…9e99998".
        let nearBound = DecimalArithmetic.add("1e99999", "-1e-1") ?? ""
        #expect(nearBound.hasPrefix("9.") && nearBound.hasSuffix("9e99998"))
        #expect(nearBound.count == 2 + 99_999 + 6)
        #expect(nearBound.dropFirst(2).dropLast(6).allSatisfy { $0 == "9" })
        // Just past it (gap 100 001 digits, short inputs): refused.
        #expect(DecimalArithmetic.add("1e100000", "-1e-1") == nil)
        // A caller who wrote the digits out may exceed the fixed bound: the inputs' length is allowed too.
        let writtenOut = "1" + String(repeating: "0", count: 150_000)
        #expect(DecimalArithmetic.add(writtenOut, "1") == "1." + String(repeating: "0", count: 149_999) + "1e150000")
        // Zero needs no alignment; equal exponents need none either.
        #expect(DecimalArithmetic.add("1e1000000", "0") == "1e1000000")
        #expect(DecimalArithmetic.add("1e1000000", "1e1000000") == "2e1000000")
        #expect(DecimalArithmetic.add("1e-999999999", "-1e-999999999") == "0")
    }

    // MARK: reciprocal

    @Test("reciprocal: terminating decimals", arguments: [
        ("1", "1"),
        ("-1", "-1"),
        ("2", "0.5"),
        ("8", "0.125"),
        ("1000", "0.001"),
        ("0.04", "25"),
        ("-1.6", "-0.625"),
        ("5", "0.2"),
        ("0.5", "2"),
        ("1.0", "1"),
        ("4e-3", "250"),
        ("1E+2", "0.01"),
        ("64", "0.015625"),
        ("-3125", "-0.00032"),
        ("1e400", "1e-400"),
        ("2e-400", "5e399"),
        ("1024", "0.0009765625"),
    ])
    func reciprocalVectors(_ a: String, _ expected: String) {
        #expect(DecimalArithmetic.reciprocal(a) == expected)
    }

    @Test("reciprocal: not terminating, zero, invalid → nil", arguments: [
        "0", "-0", "0.0", "0e10", "3", "6", "7", "9", "11", "12", "-15", "0.3", "1.2", "2.1", "21", "1e-999999999999999999999",
        "abc", "01", "1.", ".5", "NaN", "",
    ])
    func reciprocalNil(_ a: String) {
        #expect(DecimalArithmetic.reciprocal(a) == nil)
    }

    @Test("reciprocal: large powers of two and five round-trip")
    func reciprocalLarge() throws {
        // 2^1000 (302 digits): 1/2^1000 = 5^1000 × 10^-1000 (699 significant digits).
        let twoToThe1000 = "10715086071862673209484250490600018105614048117055336074437503883703510511249361224931983788156958581275946729175531468251871452856923140435984577574698574803934567774824230985421074605062371141877954182153046474983581941267398767559165543946077062914571196477686542167660429831652624386837205668069376"
        let inverse = try #require(DecimalArithmetic.reciprocal(twoToThe1000))
        #expect(inverse.hasPrefix("9.33263618503218878990089544723817169617"))
        #expect(inverse.hasSuffix("e-302"))
        #expect(DecimalArithmetic.multiply(inverse, twoToThe1000) == "1")
        let back = try #require(DecimalArithmetic.reciprocal(inverse))
        #expect(back == "1." + twoToThe1000.dropFirst() + "e301")
        #expect(NumberText.numericallyEqual(back, twoToThe1000))

        // 5^500 × 10^3 and its negation
        var fiveToThe500 = "1"
        for _ in 0..<500 { fiveToThe500 = try #require(DecimalArithmetic.multiply(fiveToThe500, "5")) }
        let scaled = try #require(DecimalArithmetic.multiply(fiveToThe500, "-1e3"))
        let inverseFive = try #require(DecimalArithmetic.reciprocal(scaled))
        #expect(inverseFive.hasPrefix("-"))
        #expect(DecimalArithmetic.multiply(inverseFive, scaled) == "1")

        // One more factor of 3 makes it non-terminating.
        let withThree = try #require(DecimalArithmetic.multiply(twoToThe1000, "3"))
        #expect(DecimalArithmetic.reciprocal(withThree) == nil)
    }

    // MARK: negate

    @Test("negate", arguments: [
        ("0", "0"),
        ("-0", "0"),
        ("-0.0e-0", "0"),
        ("5", "-5"),
        ("-5", "5"),
        ("1.50", "-1.5"),
        ("-1E+2", "100"),
        ("1e400", "-1e400"),
        ("-2.5e-400", "2.5e-400"),
        ("0.00001", "-0.00001"),
        ("123456789012345678901234567890", "-123456789012345678901234567890"),
    ])
    func negateVectors(_ a: String, _ expected: String) {
        #expect(DecimalArithmetic.negate(a) == expected)
    }

    // MARK: invalid input and overflow

    @Test("invalid lexemes give nil", arguments: [
        "abc", "01", "1.", ".5", "NaN", "Infinity", "-", "", " 1", "+1", "1e", "0x10", "1,000", "--1",
    ])
    func invalidInputs(_ bad: String) {
        #expect(DecimalArithmetic.multiply(bad, "1") == nil)
        #expect(DecimalArithmetic.multiply("1", bad) == nil)
        #expect(DecimalArithmetic.add(bad, "1") == nil)
        #expect(DecimalArithmetic.add("1", bad) == nil)
        #expect(DecimalArithmetic.reciprocal(bad) == nil)
        #expect(DecimalArithmetic.negate(bad) == nil)
    }

    @Test("exponents that overflow Int give nil, without trapping")
    func exponentOverflow() {
        let huge = "1e99999999999999999999"        // exponent does not fit Int64
        let hugeNegative = "1e-99999999999999999999"
        for text in [huge, hugeNegative, "1e9223372036854775808", "-5E+123456789012345678901234567890"] {
            #expect(DecimalArithmetic.negate(text) == nil)
            #expect(DecimalArithmetic.reciprocal(text) == nil)
            #expect(DecimalArithmetic.multiply(text, "1") == nil)
            #expect(DecimalArithmetic.add(text, "0") == nil)
        }
        // Exponents that fit but whose results overflow.
        let max = "1e9223372036854775807"   // Int64.max
        let min = "1e-9223372036854775808"  // Int64.min
        #expect(DecimalArithmetic.negate(max) == "-1e9223372036854775807")
        #expect(DecimalArithmetic.negate(min) == "-1e-9223372036854775808")
        #expect(DecimalArithmetic.multiply(max, max) == nil)
        #expect(DecimalArithmetic.multiply(min, min) == nil)
        #expect(DecimalArithmetic.multiply(max, min) == "0.1")
        #expect(DecimalArithmetic.multiply(max, "10") == nil)        // top exponent Int64.max + 1
        #expect(DecimalArithmetic.multiply("15e9223372036854775806", "1") == "1.5e9223372036854775807")
        #expect(DecimalArithmetic.multiply("15e9223372036854775807", "1") == nil)  // exponent fits, top does not
        #expect(DecimalArithmetic.reciprocal(min) == nil)            // 10^(Int64.max + 1)
        #expect(DecimalArithmetic.reciprocal(max) == "1e-9223372036854775807")
        #expect(DecimalArithmetic.add(max, min) == nil)              // gap overflows Int
        #expect(DecimalArithmetic.add(max, "1") == nil)              // gap too large to materialize
        // A zero mantissa is zero whatever its exponent.
        #expect(DecimalArithmetic.multiply("0e99999999999999999999", "7") == "0")
        #expect(DecimalArithmetic.multiply("0", max) == "0")
        #expect(DecimalArithmetic.multiply(min, "0.0") == "0")
    }

    // MARK: differential vectors (random lexemes, Python reference)

    static let randomProducts: [(String, String, String)] = [
        ("3555034910654912103503446.67872308E+19", "-0.7073028", "-2.514486146403969164561877645511534908624e43"),
        ("-850199204538e05", "70e-19", "-0.5951394431766"),
        ("1974992135577601432796224", "6", "11849952813465608596777344"),
        ("-0e05", "-259.06036", "0"),
        ("0.500115008332", "803.960262", "402.072593128726902984"),
        ("-909.695040600510", "8.919e-1", "-811.357006711594869"),
        ("-3418575545326952940756136", "0.46922578", "-1604083776744964848649591.70438608"),
        ("-202086046928.00080", "-4975921741678858717757819", "1005564354598973317079681860459904238.2552"),
        ("0.22855207044", "7.4001", "1.691308176463044"),
        ("-0", "170134306714", "0"),
        ("3.312650326e-21", "6.4205E-05", "2.1268871418083e-25"),
        ("6234632026874965100790688", "150660070730.6070e+19", "9.39310102148289924591719736821542187616e54"),
        ("195.0008380977E-41", "0.07765", "1.5141815078286405e-40"),
        ("-92.023400297033E2", "95673.35", "-880418698.480814217055"),
        ("0.980870020945", "694744947757E-0", "681454491457.841520770365"),
        ("6224370763576755439661871e19", "-0e+0", "0"),
        ("83619.905e+1", "-28576.029509815038E2", "-2389524872887.93004513139"),
        ("531.95046", "-1.14250060", "-607.753719720276"),
        ("9.01", "1", "9.01"),
        ("-1e-21", "0", "0"),
        ("-0.360068e0", "30983", "-11155.986844"),
        ("0.676511400e+21", "-63587E41", "-4.30173303918e66"),
        ("3.210190e+300", "-0", "0"),
        ("-5", "-3397297655685202714358850.0129e+60", "1.69864882784260135717942500645e85"),
        ("622790321408e300", "-0", "0"),
        ("4", "9514263678971057750818565.0892", "38057054715884231003274260.3568"),
        ("0E41", "376544185200", "0"),
        ("-92496.21300", "-88E300", "8.139666744e306"),
        ("5.33500362502", "99", "528.16535887698"),
        ("8763493180188585854157944.526394763700", "56.4000410E+19", "4.942613746658566299065280917643902548653117e45"),
        ("0E-300", "88531", "0"),
        ("13768", "0.168e05", "231302400"),
        ("7", "-18.35200034539", "-128.46400241773"),
        ("-0e-05", "3262846054998050358719144E2", "0"),
        ("-80e2", "-6.0570407E+1", "484563.256"),
        ("0E05", "-18.00284902609", "0"),
        ("-33962.805009e05", "0.50370460", "-1710722111.19363414"),
        ("0", "182876233977.68910330", "0"),
        ("60e+19", "15592E+60", "9.3552e84"),
        ("-8675605635541716280050236.40", "-0", "0"),
    ]
    static let randomSums: [(String, String, String)] = [
        ("964.184804e-0", "-0.1700940", "964.01471"),
        ("-9", "-0.73580007", "-9.73580007"),
        ("0", "0", "0"),
        ("37640", "9067694770381323887754109", "9067694770381323887791749"),
        ("994.420517137E-21", "0", "0.000000000000000000994420517137"),
        ("8.1", "-83587e-0", "-83578.9"),
        ("-4111353113209507490919749e41", "-1", "-4.11135311320950749091974900000000000000000000000000000000000000001e65"),
        ("551.48000814E40", "343.000856576043E+2", "5.5148000814000000000000000000000000000343000856576043e42"),
        ("22.768626413084e-1", "0.303580100e+40", "3035801000000000000000000000000000000002.2768626413084"),
        ("90.0081978E-19", "68046e-21", "0.00000000000000007704681978"),
        ("-0", "8294862437631072221202678.5048091880E300", "8.294862437631072221202678504809188e324"),
        ("-798", "-8.3978001094e-41", "-798.000000000000000000000000000000000000000083978001094"),
        ("558212831015E+40", "-5.58212831015E51", "0"),
        ("9.35901", "7", "16.35901"),
        ("-52428", "52428", "0"),
        ("42.00801900760", "0", "42.0080190076"),
        ("479", "0e300", "479"),
        ("-6E+60", "6e60", "0"),
        ("-754.0E1", "0.0660062", "-7539.9339938"),
        ("87E-21", "-0.000000000000000000087", "0"),
        ("-35574.606e-41", "-814969001357.531690e-1", "-81496900135.75316900000000000000000000000000000035574606"),
        ("-38120.0200", "93456.06900071E+05", "9345568780.051"),
        ("332e-19", "0.231160005e-60", "0.000000000000000033200000000000000000000000000000000000000000231160005"),
        ("-9", "690918540574", "690918540565"),
        ("6.304270036E-300", "35E41", "3.500000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000006304270036e42"),
        ("5.230090", "372.06000002", "377.29009002"),
        ("872.0080300609e+1", "723.044806518", "9443.125107127"),
        ("-8424397917566899255152374.7921970e0", "31", "-8424397917566899255152343.792197"),
        ("7.043350E-40", "0.3", "0.300000000000000000000000000000000000000704335"),
        ("8.04e+41", "4.3E21", "8.040000000000000000043e41"),
        ("64034E-21", "-0.000000000000000064034", "0"),
        ("-5.93000", "0.280076527", "-5.649923473"),
        ("4526289886888103088846679e-05", "-45262898868881030888.46679", "0"),
        ("-9261037927708038844620475.180", "0", "-9261037927708038844620475.18"),
        ("-0E+2", "9554227464641924485403077.17605350702", "9554227464641924485403077.17605350702"),
        ("903995561740", "-2", "903995561738"),
        ("36.23568e0", "32189", "32225.23568"),
        ("-332605352110e05", "-72.4083715680", "-33260535211000072.408371568"),
        ("9", "-9", "0"),
        ("0", "0", "0"),
    ]
    static let randomReciprocals: [(String, String?)] = [
        ("872415232e7", nil),
        ("-1953125e-15", "-512000000"),
        ("8", "0.125"),
        ("3814697265625", "0.000000000000262144"),
        ("3814697265625", "0.000000000000262144"),
        ("95367431640625e-11", "0.001048576"),
        ("3814697265625", "0.000000000000262144"),
        ("-390625", "-0.00000256"),
        ("2048", "0.00048828125"),
        ("65536", "0.0000152587890625"),
        ("-305175781.25", "-0.0000000032768"),
        ("-103079215104", nil),
        ("16", "0.0625"),
        ("-19531.25", "-0.0000512"),
        ("4294967296e-5", "0.000023283064365386962890625"),
        ("-8388608e20", "-1.1920928955078125e-27"),
        ("9765.625", "0.0001024"),
        ("-2048", "-0.00048828125"),
        ("-125", "-0.008"),
        ("762939453125", "0.00000000000131072"),
    ]

    @Test("multiply: random vectors against a reference")
    func randomProductsMatch() {
        for (a, b, expected) in Self.randomProducts {
            #expect(DecimalArithmetic.multiply(a, b) == expected, "\(a) × \(b)")
        }
    }

    @Test("add: random vectors against a reference")
    func randomSumsMatch() {
        for (a, b, expected) in Self.randomSums {
            #expect(DecimalArithmetic.add(a, b) == expected, "\(a) + \(b)")
        }
    }

    @Test("reciprocal: random vectors against a reference")
    func randomReciprocalsMatch() {
        for (a, expected) in Self.randomReciprocals {
            #expect(DecimalArithmetic.reciprocal(a) == expected, "1 / \(a)")
        }
    }

    @Test("results are always valid, canonical lexemes")
    func resultsAreCanonical() {
        var results: [String] = []
        for (a, b, _) in Self.randomProducts { results.append(contentsOf: [DecimalArithmetic.multiply(a, b)].compactMap { $0 }) }
        for (a, b, _) in Self.randomSums { results.append(contentsOf: [DecimalArithmetic.add(a, b)].compactMap { $0 }) }
        for (a, _) in Self.randomReciprocals { results.append(contentsOf: [DecimalArithmetic.reciprocal(a)].compactMap { $0 }) }
        #expect(!results.isEmpty)
        for result in results {
            #expect(NumberText.isValid(result), "\(result)")
            #expect(result != "-0")
            // Idempotent: a canonical lexeme re-canonicalizes to itself.
            #expect(DecimalArithmetic.multiply(result, "1") == result)
            #expect(DecimalArithmetic.add(result, "0") == result)
            #expect(DecimalArithmetic.negate(DecimalArithmetic.negate(result) ?? "") == result)
        }
    }

    @Test("works on substrings")
    func substrings() {
        let text = "[1.5,-2]"
        let a = text.dropFirst().prefix(3)
        let b = text.dropLast().suffix(2)
        #expect(DecimalArithmetic.multiply(a, b) == "-3")
        #expect(DecimalArithmetic.add(a, b) == "-0.5")
        #expect(DecimalArithmetic.reciprocal(b) == "-0.5")
        #expect(DecimalArithmetic.negate(a) == "-1.5")
    }
}
