// DecimalArithmetic.swift — exact arithmetic on JSON number lexemes, standard library only (no Foundation, no Double).
//
// A lexeme is parsed (with `NumberText.Lexeme`, so exactly the inputs `NumberText.isValid` accepts) into a
// sign, a run of significant decimal digits and a decimal exponent: ±digits × 10^exponent. Products and sums are
// computed exactly on base-10⁹ limbs, and the result is printed in one canonical lexeme form (see `Value.lexeme`).
//
// Bounds (every failure is a `nil`, never a trap or a runaway allocation):
// - Exponents, after folding in the position of the decimal point, must fit `Int` (64-bit on supported
//   platforms). `"1e99999999999999999999"` is therefore rejected, as is any result whose exponent would overflow.
//   A zero mantissa is zero whatever its exponent (`"0e99999999999999999999"` is `0`).
// - `add` materializes the digits between the two operands' exponents. It refuses (returns `nil`) when that gap
//   exceeds `maximumAlignmentGap` (100 000 digits) and also exceeds the combined UTF-8 length of the two inputs
//   (a caller who wrote out the digits has already paid for them). So `1e1000000 + 1` is `nil`, while
//   `1e1000000 + 0` and `1e1000000 + 1e1000000` are fine.

/// Exact arithmetic on JSON number lexemes (arbitrary size and precision; never through Double).
public enum DecimalArithmetic {
    /// The largest exponent gap (in decimal digits) `add` will bridge regardless of input size; see the file header.
    static let maximumAlignmentGap = 100_000

    /// a × b, exactly. nil when either is not a valid JSON number lexeme (NumberText.isValid).
    public static func multiply(_ a: some StringProtocol, _ b: some StringProtocol) -> String? {
        guard let left = Value(a), let right = Value(b) else { return nil }
        return left.multiplied(by: right)?.lexeme
    }

    /// a + b, exactly.
    ///
    /// `nil` also when the operands' exponents are so far apart that the exact sum would need more than
    /// `max(100_000, a.utf8.count + b.utf8.count)` digits of alignment (e.g. `1e1000000 + 1`).
    public static func add(_ a: some StringProtocol, _ b: some StringProtocol) -> String? {
        guard let left = Value(a), let right = Value(b) else { return nil }
        let gapLimit = max(maximumAlignmentGap, a.utf8.count + b.utf8.count)
        return left.adding(right, gapLimit: gapLimit)?.lexeme
    }

    /// The exact reciprocal 1/a when it is a terminating decimal (a = ±m·10^e with m's only prime factors 2 and 5,
    /// e.g. 2 → "0.5", 8 → "0.125", 1000 → "0.001", "0.04" → "25", "-1.6" → "-0.625"); nil for 0, for 3, 6, 7...,
    /// and for invalid lexemes.
    public static func reciprocal(_ a: some StringProtocol) -> String? {
        guard let value = Value(a) else { return nil }
        return value.reciprocal?.lexeme
    }

    /// a negated ("0" stays "0").
    public static func negate(_ a: some StringProtocol) -> String? {
        guard let value = Value(a) else { return nil }
        return value.negated.lexeme
    }
}

// MARK: - Value

extension DecimalArithmetic {
    /// ±digits × 10^exponent, normalized: `digits` are digit values 0...9, most significant first, with no leading
    /// and no trailing zeros (trailing zeros are folded into `exponent`). Zero is `digits == []`, positive, exponent 0.
    struct Value: Equatable {
        var isNegative: Bool
        var digits: [UInt8]
        var exponent: Int

        static let zero = Value(isNegative: false, digits: [], exponent: 0)

        var isZero: Bool { digits.isEmpty }

        /// Builds a normalized value from any digit run (leading/trailing zeros allowed); `nil` on exponent overflow.
        static func normalized(isNegative: Bool, digits: some Collection<UInt8>, exponent: Int) -> Value? {
            guard let first = digits.firstIndex(where: { $0 != 0 }) else { return .zero }
            var significant = Array(digits[first...])
            var trailingZeros = 0
            while significant.last == 0 {
                significant.removeLast()
                trailingZeros += 1
            }
            let (shifted, overflow) = exponent.addingReportingOverflow(trailingZeros)
            guard !overflow else { return nil }
            return Value(isNegative: isNegative, digits: significant, exponent: shifted)
        }

        /// Parses a JSON number lexeme; `nil` when invalid or when its exponent does not fit `Int`.
        init?(_ text: some StringProtocol) {
            guard let lexeme = NumberText.Lexeme(Array(text.utf8)) else { return nil }
            let zero = UInt8(ascii: "0")
            let fraction = lexeme.fractionDigits ?? []
            var mantissa: [UInt8] = []
            mantissa.reserveCapacity(lexeme.integerDigits.count + fraction.count)
            for byte in lexeme.integerDigits { mantissa.append(byte - zero) }
            for byte in fraction { mantissa.append(byte - zero) }
            guard mantissa.contains(where: { $0 != 0 }) else {
                self = .zero  // any zero, whatever its sign or exponent
                return
            }

            var written = 0
            for byte in lexeme.exponentDigits ?? [] {
                let digit = Int(byte - zero)
                let (shifted, overflowShift) = written.multipliedReportingOverflow(by: 10)
                let (next, overflowAdd) = lexeme.exponentIsNegative
                    ? shifted.subtractingReportingOverflow(digit)
                    : shifted.addingReportingOverflow(digit)
                guard !overflowShift && !overflowAdd else { return nil }
                written = next
            }
            let (exponent, overflow) = written.subtractingReportingOverflow(fraction.count)
            guard !overflow,
                  let value = Value.normalized(isNegative: lexeme.isNegative, digits: mantissa, exponent: exponent)
            else { return nil }
            self = value
        }

        init(isNegative: Bool, digits: [UInt8], exponent: Int) {
            self.isNegative = isNegative
            self.digits = digits
            self.exponent = exponent
        }

        var negated: Value {
            isZero ? self : Value(isNegative: !isNegative, digits: digits, exponent: exponent)
        }

        func multiplied(by other: Value) -> Value? {
            guard !isZero && !other.isZero else { return .zero }
            let (exponent, overflow) = exponent.addingReportingOverflow(other.exponent)
            guard !overflow else { return nil }
            let product = Limbs.multiply(Limbs(digits: digits), Limbs(digits: other.digits))
            return Value.normalized(isNegative: isNegative != other.isNegative, digits: product.digits,
                                    exponent: exponent)
        }

        /// `self + other`, or `nil` when aligning the exponents would exceed `gapLimit` digits (or overflow `Int`).
        func adding(_ other: Value, gapLimit: Int) -> Value? {
            if isZero { return other }
            if other.isZero { return self }
            let low = Swift.min(exponent, other.exponent)
            let (gapSelf, overflowSelf) = exponent.subtractingReportingOverflow(low)
            let (gapOther, overflowOther) = other.exponent.subtractingReportingOverflow(low)
            guard !overflowSelf, !overflowOther, gapSelf <= gapLimit, gapOther <= gapLimit else { return nil }

            let left = Limbs(digits: digits + repeatElement(0, count: gapSelf))
            let right = Limbs(digits: other.digits + repeatElement(0, count: gapOther))
            let sum: Limbs
            let sumIsNegative: Bool
            if isNegative == other.isNegative {
                sum = Limbs.add(left, right)
                sumIsNegative = isNegative
            } else {
                switch Limbs.compare(left, right) {
                case 0:
                    return .zero
                case 1:
                    sum = Limbs.subtract(left, right)
                    sumIsNegative = isNegative
                default:
                    sum = Limbs.subtract(right, left)
                    sumIsNegative = other.isNegative
                }
            }
            return Value.normalized(isNegative: sumIsNegative, digits: sum.digits, exponent: low)
        }

        /// `1 / self` when it is a terminating decimal, else `nil`.
        ///
        /// With `digits` normalized (not divisible by 10), the mantissa m is a power of two or a power of five or
        /// has another prime factor: 1/2^p = 5^p × 10^-p and 1/5^q = 2^q × 10^-q.
        var reciprocal: Value? {
            guard let last = digits.last else { return nil }  // 1/0
            let mantissa = Limbs(digits: digits)
            let factor: UInt32, inverse: UInt32
            switch last {
            case 1 where digits.count == 1: factor = 2; inverse = 5  // m = 1 = 2^0
            case 2, 4, 6, 8: factor = 2; inverse = 5
            case 5: factor = 5; inverse = 2
            default: return nil
            }
            guard let power = mantissa.exactPower(of: factor) else { return nil }
            let (negatedExponent, overflowNegate) = 0.subtractingReportingOverflow(exponent)
            let (resultExponent, overflow) = negatedExponent.subtractingReportingOverflow(power)
            guard !overflowNegate, !overflow else { return nil }
            return Value.normalized(isNegative: isNegative, digits: Limbs.power(inverse, power).digits,
                                    exponent: resultExponent)
        }

        /// The canonical lexeme: `"0"` for zero; otherwise plain notation when the decimal exponent of the most
        /// significant digit is in -20...40 (`"1230000"`, `"-0.00001"`, `"1.5"`; integers have no fraction), else
        /// scientific with the shortest exact mantissa (`"1.5e400"`, `"-2e-400"`, `"1e41"`). `nil` only when that
        /// exponent overflows `Int`.
        var lexeme: String? {
            guard !isZero else { return "0" }
            let (top, overflow) = exponent.addingReportingOverflow(digits.count - 1)
            guard !overflow else { return nil }
            let zero = UInt8(ascii: "0")
            let dot = UInt8(ascii: ".")
            var out: [UInt8] = isNegative ? [UInt8(ascii: "-")] : []

            if top >= -20 && top <= 40 {
                if exponent >= 0 {
                    out.append(contentsOf: digits.lazy.map { $0 + zero })
                    out.append(contentsOf: repeatElement(zero, count: exponent))
                } else if top >= 0 {
                    out.append(contentsOf: digits[...top].lazy.map { $0 + zero })
                    out.append(dot)
                    out.append(contentsOf: digits[(top + 1)...].lazy.map { $0 + zero })
                } else {
                    out.append(zero)
                    out.append(dot)
                    out.append(contentsOf: repeatElement(zero, count: -top - 1))
                    out.append(contentsOf: digits.lazy.map { $0 + zero })
                }
                return String(decoding: out, as: UTF8.self)
            }

            out.append(digits[0] + zero)
            if digits.count > 1 {
                out.append(dot)
                out.append(contentsOf: digits.dropFirst().lazy.map { $0 + zero })
            }
            return String(decoding: out, as: UTF8.self) + "e" + String(top)
        }
    }
}

// MARK: - Limbs

extension DecimalArithmetic {
    /// A non-negative integer in base 10⁹, least significant limb first, no high zero limbs (zero is `[]`).
    struct Limbs: Equatable {
        static let base: UInt64 = 1_000_000_000
        static let digitsPerLimb = 9

        var limbs: [UInt32]

        init(limbs: [UInt32]) {
            var trimmed = limbs
            while trimmed.last == 0 { trimmed.removeLast() }
            self.limbs = trimmed
        }

        /// From digit values 0...9, most significant first.
        init(digits: [UInt8]) {
            var result: [UInt32] = []
            result.reserveCapacity(digits.count / Self.digitsPerLimb + 1)
            var end = digits.count
            while end > 0 {
                let start = Swift.max(0, end - Self.digitsPerLimb)
                var limb: UInt32 = 0
                for digit in digits[start..<end] { limb = limb * 10 + UInt32(digit) }
                result.append(limb)
                end = start
            }
            self.init(limbs: result)
        }

        /// Digit values 0...9, most significant first, no leading zeros (`[]` for zero).
        var digits: [UInt8] {
            guard let top = limbs.last else { return [] }
            var result: [UInt8] = []
            result.reserveCapacity(limbs.count * Self.digitsPerLimb)
            var head: [UInt8] = []
            var value = top
            while value > 0 {
                head.append(UInt8(value % 10))
                value /= 10
            }
            result.append(contentsOf: head.reversed())
            for limb in limbs.dropLast().reversed() {
                var value = limb
                var chunk = [UInt8](repeating: 0, count: Self.digitsPerLimb)
                for position in stride(from: Self.digitsPerLimb - 1, through: 0, by: -1) {
                    chunk[position] = UInt8(value % 10)
                    value /= 10
                }
                result.append(contentsOf: chunk)
            }
            return result
        }

        /// -1, 0 or 1.
        static func compare(_ a: Limbs, _ b: Limbs) -> Int {
            if a.limbs.count != b.limbs.count { return a.limbs.count < b.limbs.count ? -1 : 1 }
            for index in stride(from: a.limbs.count - 1, through: 0, by: -1) where a.limbs[index] != b.limbs[index] {
                return a.limbs[index] < b.limbs[index] ? -1 : 1
            }
            return 0
        }

        static func add(_ a: Limbs, _ b: Limbs) -> Limbs {
            let count = Swift.max(a.limbs.count, b.limbs.count)
            var result: [UInt32] = []
            result.reserveCapacity(count + 1)
            var carry: UInt64 = 0
            for index in 0..<count {
                let x = index < a.limbs.count ? UInt64(a.limbs[index]) : 0
                let y = index < b.limbs.count ? UInt64(b.limbs[index]) : 0
                let sum = x + y + carry
                result.append(UInt32(sum % base))
                carry = sum / base
            }
            if carry > 0 { result.append(UInt32(carry)) }
            return Limbs(limbs: result)
        }

        /// `a - b`, requiring `a >= b`.
        static func subtract(_ a: Limbs, _ b: Limbs) -> Limbs {
            var result: [UInt32] = []
            result.reserveCapacity(a.limbs.count)
            var borrow: Int64 = 0
            for index in 0..<a.limbs.count {
                var difference = Int64(a.limbs[index]) - borrow
                    - (index < b.limbs.count ? Int64(b.limbs[index]) : 0)
                borrow = 0
                if difference < 0 {
                    difference += Int64(base)
                    borrow = 1
                }
                result.append(UInt32(difference))
            }
            precondition(borrow == 0, "DecimalArithmetic.Limbs.subtract requires a >= b")
            return Limbs(limbs: result)
        }

        /// Schoolbook product. Each step stays below 10⁹ + (10⁹−1)² + 10⁹ < 2⁶⁴.
        static func multiply(_ a: Limbs, _ b: Limbs) -> Limbs {
            guard !a.limbs.isEmpty && !b.limbs.isEmpty else { return Limbs(limbs: []) }
            var result = [UInt64](repeating: 0, count: a.limbs.count + b.limbs.count)
            for (i, x) in a.limbs.enumerated() where x != 0 {
                let left = UInt64(x)
                var carry: UInt64 = 0
                for (j, y) in b.limbs.enumerated() {
                    let step = result[i + j] + left * UInt64(y) + carry
                    result[i + j] = step % base
                    carry = step / base
                }
                var k = i + b.limbs.count
                while carry > 0 {
                    let step = result[k] + carry
                    result[k] = step % base
                    carry = step / base
                    k += 1
                }
            }
            return Limbs(limbs: result.map { UInt32($0) })
        }

        /// `self × factor` for `factor < 2³²`.
        func multiplied(bySmall factor: UInt32) -> Limbs {
            var result: [UInt32] = []
            result.reserveCapacity(limbs.count + 2)
            var carry: UInt64 = 0
            for limb in limbs {
                let step = UInt64(limb) * UInt64(factor) + carry
                result.append(UInt32(step % Self.base))
                carry = step / Self.base
            }
            while carry > 0 {
                result.append(UInt32(carry % Self.base))
                carry /= Self.base
            }
            return Limbs(limbs: result)
        }

        /// `(self / divisor, self % divisor)` for `0 < divisor < 2³²`.
        func divided(bySmall divisor: UInt32) -> (quotient: Limbs, remainder: UInt32) {
            var quotient = [UInt32](repeating: 0, count: limbs.count)
            var remainder: UInt64 = 0
            let d = UInt64(divisor)
            for index in stride(from: limbs.count - 1, through: 0, by: -1) {
                let current = remainder * Self.base + UInt64(limbs[index])
                quotient[index] = UInt32(current / d)
                remainder = current % d
            }
            return (Limbs(limbs: quotient), UInt32(remainder))
        }

        /// `p` when `self == factor^p` (`factor` is 2 or 5), else `nil`. Divides by a large power of `factor` at a
        /// time, so a 1000-digit power of two takes about a hundred passes rather than thousands.
        func exactPower(of factor: UInt32) -> Int? {
            let (chunk, chunkExponent) = Self.largestPower(of: factor)
            var value = self
            var power = 0
            while value.limbs != [1] {
                guard !value.limbs.isEmpty else { return nil }
                let (bigQuotient, bigRemainder) = value.divided(bySmall: chunk)
                if bigRemainder == 0 {
                    value = bigQuotient
                    power += chunkExponent
                    continue
                }
                let (quotient, remainder) = value.divided(bySmall: factor)
                guard remainder == 0 else { return nil }
                value = quotient
                power += 1
            }
            return power
        }

        /// `factor^exponent` (`factor` is 2 or 5, `exponent >= 0`).
        static func power(_ factor: UInt32, _ exponent: Int) -> Limbs {
            let (chunk, chunkExponent) = largestPower(of: factor)
            var result = Limbs(limbs: [1])
            var remaining = exponent
            while remaining >= chunkExponent {
                result = result.multiplied(bySmall: chunk)
                remaining -= chunkExponent
            }
            while remaining > 0 {
                result = result.multiplied(bySmall: factor)
                remaining -= 1
            }
            return result
        }

        /// The largest power of `factor` below the limb base, with its exponent (2²⁹, 5¹²).
        static func largestPower(of factor: UInt32) -> (value: UInt32, exponent: Int) {
            var value: UInt64 = 1
            var exponent = 0
            while value * UInt64(factor) < base {
                value *= UInt64(factor)
                exponent += 1
            }
            return (UInt32(value), exponent)
        }
    }
}

// MARK: - Division

extension DecimalArithmetic {
    /// A canonical lexeme with an integer of at most 20 trailing zeros written in plain digits, however long
    /// (`1.2345678901234567890123456789012345678901e40` → `12345678901234567890123456789012345678901`; `2e400`
    /// stays): what exact arithmetic on integers writes, so that integers stay integers.
    public static func plainInteger(_ lexeme: String) -> String {
        guard lexeme.utf8.contains(UInt8(ascii: "e")), let v = Value(lexeme), v.exponent >= 0, v.exponent <= 20 else { return lexeme }
        var out: [UInt8] = v.isNegative ? [UInt8(ascii: "-")] : []
        out.reserveCapacity(v.digits.count + v.exponent + 1)
        for d in v.digits { out.append(d + UInt8(ascii: "0")) }
        out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: v.exponent))
        return String(decoding: out, as: UTF8.self)
    }

    /// The number of significant digits of a lexeme (0 for zero); nil when it is invalid or its exponent does not
    /// fit `Int`.
    public static func significantDigits(_ a: some StringProtocol) -> Int? {
        Value(a)?.digits.count
    }

    /// a ÷ b. Exact when the quotient has at most `p` significant digits, `p` being the larger of `digits` and
    /// a's significant digits; otherwise rounded to `p` significant digits, half to even (`1 / 3` with 34 digits:
    /// `0.3333333333333333333333333333333333`; `10 / 4`: `2.5`; `6 / 3`: `2`). nil when b is zero, a lexeme is
    /// invalid, or the result's exponent overflows. Takes time proportional to (p + b's digits) × b's digits.
    public static func divide(_ a: some StringProtocol, _ b: some StringProtocol, digits: Int) -> String? {
        guard let x = Value(a), let y = Value(b), !y.isZero else { return nil }
        return x.divided(by: y, precision: Swift.max(digits, x.digits.count, 1))?.lexeme
    }
}

extension DecimalArithmetic.Value {
    /// `self / other` (other non-zero) to `precision` significant digits, as `DecimalArithmetic.divide` says.
    func divided(by other: Self, precision: Int) -> Self? {
        typealias Limbs = DecimalArithmetic.Limbs
        if isZero { return .zero }
        // The integer quotient of (m_a · 10^k) / m_b has at least precision + 1 digits.
        let k = Swift.max(0, precision + 1 + other.digits.count - digits.count)
        let divisor = Limbs(digits: other.digits)
        var remainder = Limbs(limbs: [])
        var quotient: [UInt8] = []
        quotient.reserveCapacity(digits.count + k)
        for i in 0..<(digits.count + k) {
            let digit = i < digits.count ? digits[i] : 0
            remainder = Limbs.add(remainder.multiplied(bySmall: 10), Limbs(limbs: [UInt32(digit)]))
            var q: UInt8 = 0
            while Limbs.compare(remainder, divisor) >= 0 {
                remainder = Limbs.subtract(remainder, divisor)
                q += 1
            }
            quotient.append(q)
        }
        let first = quotient.firstIndex { $0 != 0 } ?? quotient.count
        var q = Array(quotient[first...])
        let (e1, o1) = exponent.subtractingReportingOverflow(other.exponent)
        let (e2, o2) = e1.subtractingReportingOverflow(k)
        guard !o1 && !o2 else { return nil }
        var resultExponent = e2
        let negative = isNegative != other.isNegative
        let exact = remainder.limbs.isEmpty
        let trailingZeros = q.reversed().prefix { $0 == 0 }.count
        if exact && q.count - trailingZeros <= precision {
            return Self.normalized(isNegative: negative, digits: q, exponent: resultExponent)
        }
        // Round to `precision` digits, half to even; the remainder is a sticky digit.
        let dropped = q.count - precision
        let firstDropped = q[precision]
        let restNonZero = !exact || q[(precision + 1)...].contains { $0 != 0 }
        q.removeLast(dropped)
        if firstDropped > 5 || (firstDropped == 5 && (restNonZero || q[precision - 1] % 2 == 1)) {
            var i = q.count - 1
            while i >= 0 && q[i] == 9 {
                q[i] = 0
                i -= 1
            }
            if i >= 0 { q[i] += 1 } else { q.insert(1, at: 0) }
        }
        let (e3, o3) = resultExponent.addingReportingOverflow(dropped)
        guard !o3 else { return nil }
        resultExponent = e3
        return Self.normalized(isNegative: negative, digits: q, exponent: resultExponent)
    }
}
