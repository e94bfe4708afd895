// Timestamps.swift
//
// Locale-free, Foundation-free instants, epoch numbers and date patterns for StreamMap.
//
// Everything here works on UTF-8 bytes and integer arithmetic only: no floating point, no locale,
// no system time zone database. Calendar math uses the proleptic Gregorian calendar through
// Howard Hinnant's `days_from_civil` / `civil_from_days` algorithms. Leap seconds are not modelled.

// MARK: - Timestamp

/// An instant: whole seconds since 1970-01-01T00:00:00Z plus nanoseconds in `0..<1_000_000_000`.
///
/// `seconds` is floored, so `nanoseconds` is never negative: half a second before the epoch is
/// `Timestamp(seconds: -1, nanoseconds: 500_000_000)`.
public struct Timestamp: Hashable, Comparable, Sendable {
    /// Whole seconds since the epoch (floored).
    public var seconds: Int64
    /// Nanoseconds after `seconds`, in `0..<1_000_000_000` for every value this module produces.
    public var nanoseconds: Int32

    /// Creates an instant. A `nanoseconds` value outside `0..<1_000_000_000` is carried into `seconds`
    /// (`Timestamp(seconds: 0, nanoseconds: -1)` is one nanosecond before the epoch).
    public init(seconds: Int64, nanoseconds: Int32 = 0) {
        if nanoseconds >= 0 && nanoseconds < 1_000_000_000 {
            self.seconds = seconds
            self.nanoseconds = nanoseconds
        } else {
            let carry = TimestampSupport.floorDiv(Int64(nanoseconds), TimestampSupport.nanosPerSecond)
            self.seconds = seconds + carry
            self.nanoseconds = Int32(Int64(nanoseconds) - carry * TimestampSupport.nanosPerSecond)
        }
    }

    public static func < (lhs: Timestamp, rhs: Timestamp) -> Bool {
        (lhs.seconds, lhs.nanoseconds) < (rhs.seconds, rhs.nanoseconds)
    }

    /// Canonical text: RFC 3339 in UTC with a `Z` suffix and a fraction only when non-zero, trailing zeros
    /// trimmed: `"2014-08-31T00:29:15Z"`, `"2014-08-31T00:29:15.5Z"`, `"1969-12-31T23:59:59.123456789Z"`.
    /// `nil` when the year is outside `0000...9999`.
    public var rfc3339: String? {
        guard let time = TimestampSupport.LocalTime(self, offsetSeconds: 0) else { return nil }
        var out = TimestampSupport.Writer()
        out.appendDateAndTime(time, separator: UInt8(ascii: "T"))
        if time.nanosecond != 0 {
            out.append(UInt8(ascii: "."))
            out.appendTrimmedFraction(time.nanosecond)
        }
        out.append(UInt8(ascii: "Z"))
        return out.string
    }

    /// The same instant with `nanoseconds` carried into range (a no-op for values made by this module).
    var normalized: Timestamp { Timestamp(seconds: seconds, nanoseconds: nanoseconds) }
}

extension Timestamp: CustomStringConvertible {
    /// The `rfc3339` text, or the raw fields when the year is outside `0000...9999`.
    public var description: String {
        rfc3339 ?? "Timestamp(seconds: \(seconds), nanoseconds: \(nanoseconds))"
    }
}

// MARK: - Epoch numbers

/// The unit of a number counting time since 1970-01-01T00:00:00Z.
public enum EpochUnit: String, Sendable, CaseIterable {
    /// The units; raw values are the spec-file names (`"ms"`, `"s"`, `"min"`, `"h"`).
    case milliseconds = "ms", seconds = "s", minutes = "min", hours = "h"

    /// The unit as `multiplier × 10^shift` nanoseconds.
    fileprivate var nanosecondFactor: (multiplier: UInt8, shift: Int) {
        switch self {
        case .milliseconds: (1, 6)
        case .seconds: (1, 9)
        case .minutes: (60, 9)
        case .hours: (36, 11)
        }
    }

    /// The most fraction digits an instant (a whole number of nanoseconds) can need in this unit
    /// when its value is a terminating decimal: 1 ns is 1e-9 s, 1e-6 ms, 1/(2^11·3·5^10) min, 1/(2^13·3^2·5^11) h.
    fileprivate var maxFractionDigits: Int {
        switch self {
        case .milliseconds: 6
        case .seconds: 9
        case .minutes: 11
        case .hours: 13
        }
    }
}

extension Timestamp {
    /// The largest accepted magnitude of `seconds` when reading epoch numbers (2^62).
    static let epochSecondsLimit: UInt64 = 1 << 62

    /// Reads a JSON number lexeme counting `unit`s since the epoch, with exact decimal arithmetic
    /// (no floating point): `"1409444955123"` ms, `"-1.5"` s, `"1.409444955123e12"` ms.
    ///
    /// Returns `nil` when `text` is not a JSON number (no surrounding whitespace, no `+`, no leading zeros),
    /// when the instant's `|seconds|` exceeds 2^62, or when the value has a non-zero part below one
    /// nanosecond (it is never rounded).
    public init?(epochNumber text: some StringProtocol, unit: EpochUnit) {
        let parsed = TimestampSupport.withUTF8(text) { bytes -> Timestamp? in
            var cursor = TimestampSupport.Cursor(bytes)
            guard let number = TimestampSupport.Decimal.parseJSON(&cursor) else { return nil }
            return number.timestamp(unit: unit)
        }
        guard let parsed else { return nil }
        self = parsed
    }

    /// The instant as a decimal number of `unit`s since the epoch, in JSON number grammar and shortest exact
    /// form: `"1409444955123"` (ms), `"1409444955.123"` (s), `"-0.5"` (s). No exponent, no trailing fraction
    /// zeros, `"0"` rather than `"-0"`.
    ///
    /// Every instant is exact in `.seconds` and `.milliseconds`. In `.minutes` and `.hours` an instant that is
    /// not a terminating decimal (e.g. one second is 0.01666… min) is rounded to the nearest 1e-11 min /
    /// 1e-13 h, which keeps distinct nanoseconds distinct but does not read back through
    /// `init?(epochNumber:unit:)`; use `exactEpochNumber(unit:)` to detect that case.
    public func epochNumber(unit: EpochUnit) -> String {
        // Rounding is always possible, so the non-exact path never returns nil.
        TimestampSupport.epochText(normalized, unit: unit, exactOnly: false) ?? "0"
    }

    /// Like `epochNumber(unit:)`, but `nil` when the instant has no exact terminating decimal form in `unit`
    /// (only possible for `.minutes` and `.hours`).
    public func exactEpochNumber(unit: EpochUnit) -> String? {
        TimestampSupport.epochText(normalized, unit: unit, exactOnly: true)
    }
}

// MARK: - DateFormat

/// A locale-free date pattern (a subset of Unicode LDML, as `NSDateFormatter` uses) with a fixed time zone
/// offset.
///
/// Supported pattern letters (any other ASCII letter is an error):
///
/// | Letters | Formats | Parses |
/// |---|---|---|
/// | `yyyy` | 4-digit year | exactly 4 digits |
/// | `yy` | last 2 digits of the year | 2 digits: 70–99 → 1970–1999, 00–69 → 2000–2069 |
/// | `y` | unpadded year | 1–4 digits |
/// | `MM` / `M` | month, padded / unpadded | 2 / 1–2 digits, 1–12 |
/// | `MMM` / `MMMM` | `Jan` / `January` (English) | the name, ASCII case-insensitive |
/// | `dd` / `d` | day of month | 2 / 1–2 digits, valid for the month (leap years included) |
/// | `HH` / `H` | hour 0–23 | 2 / 1–2 digits |
/// | `hh` / `h` | hour 1–12 (requires `a`) | 2 / 1–2 digits, 1–12 |
/// | `a` … `aaa` | `AM` / `PM` (requires `h`) | `AM` / `PM`, case-insensitive |
/// | `mm` / `m`, `ss` / `s` | minute, second | 2 / 1–2 digits, 0–59 (a leap second 60 is rejected) |
/// | `S`…`SSSSSSSSS` | first n fraction digits (truncated) | exactly n digits |
/// | `EEE` (`E`, `EE`) / `EEEE` | `Mon` / `Monday` | a valid name, ignored (not checked against the date) |
/// | `Z` … `ZZZ` | `+HHMM`, e.g. `+0000` | `Z`, `+HHMM`, `-HHMM`, `+HH:MM` |
/// | `ZZZZZ`, `XXX` | `Z` for UTC, else `+HH:MM` | as `Z` |
/// | `z` … `zzz`, `ZZZZ` | `GMT`, else `GMT+HH:MM` | `GMT` `UTC` `UT` `Z`, `EST` `EDT` `CST` `CDT` `MST` `MDT` `PST` `PDT`, `+HHMM`, `+HH:MM`, `GMT+HH:MM`, `GMT+HHMM`, `GMT+HH` (names case-insensitive) |
///
/// `'text'` is a literal, `''` is a single quote (also inside a quoted literal); any other non-letter
/// character is a literal matched byte for byte. Each field may appear at most once.
///
/// Parsing is strict: the whole text must match, and a missing date field defaults to 1970-01-01, a missing
/// time field to 0. A zone field in the text overrides `timeZoneOffsetSeconds`; without one the text is local
/// time at `timeZoneOffsetSeconds`. Formatting always uses `timeZoneOffsetSeconds`, truncates to the
/// pattern's precision (LDML semantics) and returns `nil` when the local year is outside `0...9999`.
public struct DateFormat: Sendable, Hashable {
    /// The pattern this format was created from.
    public let pattern: String
    /// Seconds east of UTC used for formatting, and for parsing text without a zone field.
    public let timeZoneOffsetSeconds: Int
    private let tokens: [Token]

    /// Compiles `pattern`. Throws when it uses an unsupported letter or width, has an unterminated quote,
    /// repeats a field, or mixes `h`/`a` inconsistently; and when `timeZoneOffsetSeconds` is not a whole number
    /// of minutes within ±23:59.
    public init(pattern: String, timeZoneOffsetSeconds: Int = 0) throws(DateFormatError) {
        guard timeZoneOffsetSeconds % 60 == 0, abs(timeZoneOffsetSeconds) < 86_400 else {
            throw DateFormatError(
                message: "time zone offset \(timeZoneOffsetSeconds) s is not a whole number of minutes within ±23:59")
        }
        self.pattern = pattern
        self.timeZoneOffsetSeconds = timeZoneOffsetSeconds
        self.tokens = try Token.compile(pattern)
    }

    /// Parses `text`, which must match the whole pattern; `nil` on any mismatch or out-of-range field.
    public func parse(_ text: some StringProtocol) -> Timestamp? {
        TimestampSupport.withUTF8(text) { parse(bytes: $0) }
    }

    /// Formats `t` at `timeZoneOffsetSeconds`; `nil` when the local year is outside `0...9999`.
    public func format(_ t: Timestamp) -> String? {
        guard let time = TimestampSupport.LocalTime(t, offsetSeconds: timeZoneOffsetSeconds) else { return nil }
        var out = TimestampSupport.Writer()
        for token in tokens {
            token.write(time, offsetSeconds: timeZoneOffsetSeconds, to: &out)
        }
        return out.string
    }

    /// Parses a whole UTF-8 buffer.
    func parse(bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        var cursor = TimestampSupport.Cursor(bytes)
        var fields = TimestampSupport.Fields()
        for token in tokens {
            guard token.read(from: &cursor, into: &fields) else { return nil }
        }
        guard cursor.isAtEnd else { return nil }
        return fields.timestamp(defaultOffsetSeconds: timeZoneOffsetSeconds)
    }
}

/// Why a `DateFormat` pattern (or its time zone offset) was rejected.
public struct DateFormatError: Error, Equatable, Sendable, CustomStringConvertible {
    /// What is wrong with the pattern, e.g. an unsupported pattern letter or an unterminated quoted literal.
    public var message: String
    public var description: String { message }
    /// An error saying `message`.
    public init(message: String) { self.message = message }
}

extension DateFormat {
    /// How a zone field is written and read.
    enum ZoneStyle: Hashable, Sendable {
        /// `Z`…`ZZZ`: writes `+HHMM`.
        case basic
        /// `ZZZZZ`, `XXX`: writes `Z` or `+HH:MM`.
        case extended
        /// `z`…`zzz`, `ZZZZ`: writes `GMT` or `GMT+HH:MM`; reads zone names too.
        case gmt
    }

    /// One compiled pattern element.
    enum Token: Hashable, Sendable {
        case literal([UInt8])
        /// `digits`: 4 (`yyyy`), 2 (`yy`) or 0 (`y`, unpadded).
        case year(digits: Int)
        case monthNumber(padded: Bool)
        case monthName(full: Bool)
        case weekdayName(full: Bool)
        case day(padded: Bool)
        case hour24(padded: Bool)
        case hour12(padded: Bool)
        case amPm
        case minute(padded: Bool)
        case second(padded: Bool)
        case fraction(digits: Int)
        case zone(ZoneStyle)
    }
}

// MARK: Pattern compilation

extension DateFormat.Token {
    /// Splits a pattern into tokens, merging adjacent literals, and validates field combinations.
    static func compile(_ pattern: String) throws(DateFormatError) -> [Self] {
        let scalars = Array(pattern.unicodeScalars)
        var tokens: [Self] = []
        var literal: [UInt8] = []
        var index = 0

        func flushLiteral() {
            if !literal.isEmpty { tokens.append(.literal(literal)) }
            literal = []
        }

        while index < scalars.count {
            let scalar = scalars[index]
            if scalar == "'" {
                index = try readQuoted(scalars, from: index, into: &literal, pattern: pattern)
            } else if scalar.isASCII && scalar.properties.isAlphabetic {
                var count = 1
                while index + count < scalars.count && scalars[index + count] == scalar { count += 1 }
                flushLiteral()
                tokens.append(try field(letter: Character(scalar), count: count, pattern: pattern))
                index += count
            } else {
                UTF8.encode(scalar) { literal.append($0) }
                index += 1
            }
        }
        flushLiteral()
        try validate(tokens, pattern: pattern)
        return tokens
    }

    /// Reads a quote at `start` (`''` or `'…'`), appending its text; returns the index after it.
    private static func readQuoted(
        _ scalars: [Unicode.Scalar], from start: Int, into literal: inout [UInt8], pattern: String
    ) throws(DateFormatError) -> Int {
        let quote: Unicode.Scalar = "'"
        if start + 1 < scalars.count && scalars[start + 1] == quote {
            literal.append(UInt8(ascii: "'"))
            return start + 2
        }
        var index = start + 1
        while index < scalars.count {
            if scalars[index] == quote {
                guard index + 1 < scalars.count && scalars[index + 1] == quote else { return index + 1 }
                literal.append(UInt8(ascii: "'"))
                index += 2
            } else {
                UTF8.encode(scalars[index]) { literal.append($0) }
                index += 1
            }
        }
        throw DateFormatError(message: "unterminated quoted literal in date pattern \"\(pattern)\"")
    }

    /// The token for a run of `count` copies of a pattern letter.
    private static func field(letter: Character, count: Int, pattern: String) throws(DateFormatError) -> Self {
        let token: Self?
        switch letter {
        case "y": token = [1: .year(digits: 0), 2: .year(digits: 2), 4: .year(digits: 4)][count]
        case "M": token = count <= 2 ? .monthNumber(padded: count == 2) : count <= 4 ? .monthName(full: count == 4) : nil
        case "d": token = count <= 2 ? .day(padded: count == 2) : nil
        case "H": token = count <= 2 ? .hour24(padded: count == 2) : nil
        case "h": token = count <= 2 ? .hour12(padded: count == 2) : nil
        case "m": token = count <= 2 ? .minute(padded: count == 2) : nil
        case "s": token = count <= 2 ? .second(padded: count == 2) : nil
        case "a": token = count <= 3 ? .amPm : nil
        case "S": token = count <= 9 ? .fraction(digits: count) : nil
        case "E": token = count <= 4 ? .weekdayName(full: count == 4) : nil
        case "Z": token = count <= 3 ? .zone(.basic) : count == 4 ? .zone(.gmt) : count == 5 ? .zone(.extended) : nil
        case "X": token = count == 3 ? .zone(.extended) : nil
        case "z": token = count <= 3 ? .zone(.gmt) : nil
        default:
            throw DateFormatError(message: "unsupported pattern letter '\(letter)' in date pattern \"\(pattern)\"")
        }
        guard let token else {
            throw DateFormatError(
                message: "unsupported width \(count) for pattern letter '\(letter)' in date pattern \"\(pattern)\"")
        }
        return token
    }

    /// Rejects repeated fields and `h` without `a` (or `a` without `h`).
    private static func validate(_ tokens: [Self], pattern: String) throws(DateFormatError) {
        var seen: Set<String> = []
        for token in tokens {
            guard let key = token.fieldKey else { continue }
            guard seen.insert(key).inserted else {
                throw DateFormatError(message: "the \(key) field appears more than once in date pattern \"\(pattern)\"")
            }
        }
        let hasHour12 = tokens.contains { if case .hour12 = $0 { true } else { false } }
        if hasHour12 != seen.contains("AM/PM") {
            throw DateFormatError(
                message: "pattern letters 'h' and 'a' must be used together in date pattern \"\(pattern)\"")
        }
    }

    /// The field a token sets, for duplicate detection; `nil` for literals.
    private var fieldKey: String? {
        switch self {
        case .literal: nil
        case .year: "year"
        case .monthNumber, .monthName: "month"
        case .weekdayName: "weekday"
        case .day: "day"
        case .hour24, .hour12: "hour"
        case .amPm: "AM/PM"
        case .minute: "minute"
        case .second: "second"
        case .fraction: "fraction"
        case .zone: "zone"
        }
    }
}

// MARK: Token reading and writing

extension DateFormat.Token {
    typealias Names = TimestampSupport.Names

    /// Reads this token's text into `fields`; `false` on mismatch or an out-of-range value.
    func read(from cursor: inout TimestampSupport.Cursor, into fields: inout TimestampSupport.Fields) -> Bool {
        switch self {
        case .literal(let bytes):
            return cursor.consume(bytes)
        case .year(let digits):
            return readYear(digits: digits, from: &cursor, into: &fields)
        case .monthNumber(let padded):
            return cursor.readField(padded: padded, in: 1...12, into: &fields.month)
        case .monthName(let full):
            guard let index = cursor.consumeName(in: full ? Names.months : Names.shortMonths) else { return false }
            fields.month = index + 1
            return true
        case .weekdayName(let full):
            return cursor.consumeName(in: full ? Names.weekdays : Names.shortWeekdays) != nil
        case .day(let padded):
            return cursor.readField(padded: padded, in: 1...31, into: &fields.day)
        case .hour24(let padded):
            return cursor.readField(padded: padded, in: 0...23, into: &fields.hour)
        case .hour12(let padded):
            return cursor.readField(padded: padded, in: 1...12, into: &fields.hour)
        case .amPm:
            guard let index = cursor.consumeName(in: Names.amPm) else { return false }
            fields.isPM = index == 1
            return true
        case .minute(let padded):
            return cursor.readField(padded: padded, in: 0...59, into: &fields.minute)
        case .second(let padded):
            return cursor.readField(padded: padded, in: 0...59, into: &fields.second)
        case .fraction(let digits):
            guard let value = cursor.digits(min: digits, max: digits)?.value else { return false }
            fields.nanosecond = value * TimestampSupport.powerOf10(9 - digits)
            return true
        case .zone(let style):
            guard let offset = cursor.zoneOffset(style) else { return false }
            fields.offsetSeconds = offset
            return true
        }
    }

    private func readYear(
        digits: Int, from cursor: inout TimestampSupport.Cursor, into fields: inout TimestampSupport.Fields
    ) -> Bool {
        switch digits {
        case 2:
            guard let value = cursor.digits(min: 2, max: 2)?.value else { return false }
            fields.year = value < 70 ? 2000 + value : 1900 + value
        case 4:
            guard let value = cursor.digits(min: 4, max: 4)?.value else { return false }
            fields.year = value
        default:
            guard let value = cursor.digits(min: 1, max: 4)?.value else { return false }
            fields.year = value
        }
        return true
    }

    /// Appends this token's text for `time`.
    func write(_ time: TimestampSupport.LocalTime, offsetSeconds: Int, to out: inout TimestampSupport.Writer) {
        switch self {
        case .literal(let bytes): out.append(bytes)
        case .year(let digits): out.appendNumber(digits == 2 ? time.year % 100 : time.year, width: digits)
        case .monthNumber(let padded): out.appendNumber(time.month, width: padded ? 2 : 0)
        case .monthName(let full): out.append((full ? Names.months : Names.shortMonths)[time.month - 1])
        case .weekdayName(let full): out.append((full ? Names.weekdays : Names.shortWeekdays)[time.weekday])
        case .day(let padded): out.appendNumber(time.day, width: padded ? 2 : 0)
        case .hour24(let padded): out.appendNumber(time.hour, width: padded ? 2 : 0)
        case .hour12(let padded): out.appendNumber(time.hour % 12 == 0 ? 12 : time.hour % 12, width: padded ? 2 : 0)
        case .amPm: out.append(Names.amPm[time.hour < 12 ? 0 : 1])
        case .minute(let padded): out.appendNumber(time.minute, width: padded ? 2 : 0)
        case .second(let padded): out.appendNumber(time.second, width: padded ? 2 : 0)
        case .fraction(let digits):
            out.appendNumber(time.nanosecond / TimestampSupport.powerOf10(9 - digits), width: digits)
        case .zone(let style): out.appendZone(offsetSeconds, style: style)
        }
    }
}

// MARK: - Named formats

/// The date formats a mapping spec can name. Raw values are the spec-file names.
public enum NamedDateFormat: String, Sendable, CaseIterable {
    /// ISO 8601 / RFC 3339 date-time. Parses `YYYY-MM-DDTHH:MM:SS` (`T`, `t` or a space between date and
    /// time), an optional fraction of any number of digits — exact to the nanosecond, so digits after the 9th
    /// must be 0 (`.123456789000` is read, `.1234567891` is not: it would have to be rounded) — and a required
    /// zone: `Z`, `z`, `+HH:MM`, `+HHMM` or `+HH`; or a calendar date alone, `YYYY-MM-DD`, read as midnight UTC.
    /// Formats the canonical `Timestamp.rfc3339` text (UTC, trimmed fraction).
    case iso8601
    /// Hydrant's `HYDDateFormatRFC3339`, `yyyy'-'MM'-'dd'T'HH':'mm':'ssZ`. Parses like `iso8601` but without a
    /// fraction; formats `2014-01-14T22:35:23+0000` (`nil` when the instant has a fraction).
    case rfc3339
    /// `yyyy'-'MM'-'dd'T'HH':'mm':'ss.SSSZ`. Parses like `iso8601` with exactly 3 fraction digits; formats
    /// `2014-01-14T22:35:23.120+0000` (`nil` when the instant has a sub-millisecond part).
    case rfc3339Milliseconds
    /// RFC 822 / RFC 5322. Parses each of Hydrant's variants `[EEE, ]d MMM yyyy HH:mm[:ss][ zzz]` (zone names,
    /// or numeric `+0000`; no zone means UTC). Formats `EEE, dd MMM yyyy HH:mm:ss +0000`, e.g.
    /// `Sun, 31 Aug 2014 00:29:15 +0000` (`nil` when the instant has a fraction).
    case rfc822
    /// Twitter's `created_at`, `EEE MMM dd HH:mm:ss Z yyyy`, e.g. `Sun Aug 31 00:29:15 +0000 2014`; formats in
    /// UTC (`nil` when the instant has a fraction).
    case twitter
    /// .NET JSON dates: `/Date(1409444955123)/`, `/Date(1409444955123+0200)/`, `/Date(-5000)/`, milliseconds
    /// since the epoch. As in Hydrant, the `±HHMM` offset must be 4 digits but does not change the instant.
    /// Unlike Hydrant's unanchored regular expression, the whole text must match (no surrounding characters).
    /// Formats `/Date(<ms>)/` without an offset; `nil` when the instant has a sub-millisecond part.
    case dotnet

    /// The format with spec-file name `name` (case-sensitive), e.g. `"iso8601"`.
    public static func named(_ name: String) -> NamedDateFormat? { NamedDateFormat(rawValue: name) }

    /// Every spec-file name, in declaration order.
    public static var allNames: [String] { allCases.map(\.rawValue) }

    /// Parses `text`; `nil` when it does not match this format exactly.
    public func parse(_ text: some StringProtocol) -> Timestamp? {
        TimestampSupport.withUTF8(text) { parse(bytes: $0) }
    }

    /// Parses UTF-8 bytes; `nil` when they do not match this format exactly.
    func parse(bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        switch self {
        case .iso8601: TimestampSupport.parseISO(bytes, fraction: .any)
        case .rfc3339: TimestampSupport.parseISO(bytes, fraction: .none)
        case .rfc3339Milliseconds: TimestampSupport.parseISO(bytes, fraction: .exactly3)
        case .rfc822: Self.rfc822Inputs.lazy.compactMap { $0.parse(bytes: bytes) }.first
        case .twitter: Self.parseTwitter(bytes)
        case .dotnet: TimestampSupport.parseDotNet(bytes)
        }
    }

    /// `twitterFormat`'s parse, its tokens read one after another in code instead of through the token loop (a
    /// stream of tweets parses one such date per record): `EEE`, ` `, `MMM`, ` `, `dd`, ` `, `HH`, `:`, `mm`,
    /// `:`, `ss`, ` `, `Z`, ` `, `yyyy`, the end. The same reads, in the same order, so the same result.
    static func parseTwitter(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        if let t = parseTwitterCanonical(bytes) { return t }
        return parseTwitterByTokens(bytes)
    }

    /// `parseTwitter` for its usual text, 30 bytes with every token in its place (`Tue Feb 01 23:43:02 +0000
    /// 2022`), read at fixed offsets: what the token reads accept there, and the same fields; nil for anything
    /// else (which the token reads then decide).
    static func parseTwitterCanonical(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        guard bytes.count == 30, let b = bytes.baseAddress else { return nil }
        guard b[3] == 0x20, b[7] == 0x20, b[10] == 0x20, b[13] == 0x3A, b[16] == 0x3A, b[19] == 0x20, b[25] == 0x20,
              b[20] == 0x2B || b[20] == 0x2D else { return nil }
        // Each pair of digits as 0...99 (a non-digit makes it 100 or more, out of every range below).
        @inline(__always) func pair(_ i: Int) -> Int {
            let high = b[i] &- 0x30, low = b[i + 1] &- 0x30
            return high < 10 && low < 10 ? Int(high) * 10 + Int(low) : 100
        }
        typealias Cursor = TimestampSupport.Cursor
        typealias Names = TimestampSupport.Names
        guard Names.shortWeekdayKeys.contains(Cursor.shortNameKey(bytes, at: 0)),
              let monthIndex = Names.shortMonthKeys.firstIndex(of: Cursor.shortNameKey(bytes, at: 4))
        else { return nil }
        let month = monthIndex + 1
        let day = pair(8), hour = pair(11), minute = pair(14), second = pair(17)
        let offsetHours = pair(21), offsetMinutes = pair(23), century = pair(26), yearInCentury = pair(28)
        guard day >= 1 && day <= 31, hour <= 23, minute <= 59, second <= 59, offsetHours <= 23, offsetMinutes <= 59,
              century <= 99, yearInCentury <= 99 else { return nil }
        var f = TimestampSupport.Fields()
        f.year = century * 100 + yearInCentury
        f.month = month
        f.day = day
        f.hour = hour
        f.minute = minute
        f.second = second
        f.offsetSeconds = (b[20] == 0x2B ? 1 : -1) * (offsetHours * 3600 + offsetMinutes * 60)
        return f.timestamp(defaultOffsetSeconds: 0)  // (the offset is set: no default used)
    }

    /// `parseTwitter`'s token reads.
    static func parseTwitterByTokens(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        typealias Names = TimestampSupport.Names
        let space = UInt8(ascii: " "), colon = UInt8(ascii: ":")
        var c = TimestampSupport.Cursor(bytes)
        var f = TimestampSupport.Fields()
        guard c.consumeShortName(in: Names.shortWeekdayKeys) != nil, c.consume(space),
              let month = c.consumeShortName(in: Names.shortMonthKeys), c.consume(space),
              c.readField(padded: true, in: 1...31, into: &f.day), c.consume(space),
              c.readField(padded: true, in: 0...23, into: &f.hour), c.consume(colon),
              c.readField(padded: true, in: 0...59, into: &f.minute), c.consume(colon),
              c.readField(padded: true, in: 0...59, into: &f.second), c.consume(space),
              let offset = c.zoneOffset(.basic), c.consume(space),
              let year = c.digits(min: 4, max: 4)?.value, c.isAtEnd
        else { return nil }
        f.month = month + 1
        f.offsetSeconds = offset
        f.year = year
        return f.timestamp(defaultOffsetSeconds: twitterFormat.timeZoneOffsetSeconds)
    }

    /// Formats `t` in UTC; `nil` when the year is outside `0...9999` or the format cannot represent `t`
    /// exactly (named formats never truncate).
    public func format(_ t: Timestamp) -> String? {
        let t = t.normalized
        switch self {
        case .iso8601: return t.rfc3339
        case .rfc3339: return t.nanoseconds == 0 ? Self.rfc3339Output.format(t) : nil
        case .rfc3339Milliseconds:
            return t.nanoseconds % 1_000_000 == 0 ? Self.rfc3339MillisecondsOutput.format(t) : nil
        case .rfc822: return t.nanoseconds == 0 ? Self.rfc822Output.format(t) : nil
        case .twitter: return t.nanoseconds == 0 ? Self.twitterFormat.format(t) : nil
        case .dotnet: return TimestampSupport.formatDotNet(t)
        }
    }

    private static let rfc3339Output = compiled("yyyy'-'MM'-'dd'T'HH':'mm':'ssZ")
    private static let rfc3339MillisecondsOutput = compiled("yyyy'-'MM'-'dd'T'HH':'mm':'ss.SSSZ")
    private static let rfc822Output = compiled("EEE, dd MMM yyyy HH:mm:ss Z")
    /// What `parseTwitter` reads, and what `format` writes.
    static let twitterFormat = compiled("EEE MMM dd HH:mm:ss Z yyyy")
    /// Hydrant's RFC 822 variants, most specific first.
    private static let rfc822Inputs = [
        "EEE, d MMM yyyy HH:mm:ss zzz", "EEE, d MMM yyyy HH:mm zzz", "EEE, d MMM yyyy HH:mm:ss", "EEE, d MMM yyyy HH:mm",
        "d MMM yyyy HH:mm:ss zzz", "d MMM yyyy HH:mm zzz", "d MMM yyyy HH:mm:ss", "d MMM yyyy HH:mm",
    ].map(compiled)

    /// Compiles a built-in pattern (covered by tests, so it cannot throw).
    private static func compiled(_ pattern: String) -> DateFormat {
        do { return try DateFormat(pattern: pattern) } catch { fatalError("built-in date pattern: \(error)") }
    }
}

// MARK: - Implementation support

/// Internal helpers shared by the types above: calendar math, byte scanning and writing, exact decimals.
enum TimestampSupport {
    static let nanosPerSecond: Int64 = 1_000_000_000

    /// `a / b` rounded toward negative infinity (`b > 0`).
    static func floorDiv(_ a: Int64, _ b: Int64) -> Int64 {
        let quotient = a / b
        return a % b < 0 ? quotient - 1 : quotient
    }

    /// `a mod b` in `0..<b` (`b > 0`).
    static func floorMod(_ a: Int64, _ b: Int64) -> Int64 {
        let remainder = a % b
        return remainder < 0 ? remainder + b : remainder
    }

    /// 10^exponent for `exponent` in `0...18`.
    static func powerOf10(_ exponent: Int) -> Int {
        var result = 1
        for _ in 0..<exponent { result *= 10 }
        return result
    }

    /// Calls `body` with the UTF-8 bytes of `text`, copying only when they are not contiguous.
    static func withUTF8<S: StringProtocol, R>(_ text: S, _ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
        if let result = text.utf8.withContiguousStorageIfAvailable(body) { return result }
        var copy = String(text)
        return copy.withUTF8(body)
    }
}

// MARK: Calendar

extension TimestampSupport {
    static func isLeapYear(_ year: Int64) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    static func daysInMonth(year: Int64, month: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's `days_from_civil`).
    static func daysFromCivil(year: Int64, month: Int, day: Int) -> Int64 {
        let month = Int64(month), day = Int64(day)
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    /// The proleptic Gregorian date `days` after 1970-01-01 (Hinnant's `civil_from_days`).
    static func civilFromDays(_ days: Int64) -> (year: Int64, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return (year, Int(month), Int(day))
    }

    /// The broken-down local time of an instant at a fixed offset, for years `0...9999` only.
    struct LocalTime {
        var year, month, day, hour, minute, second, nanosecond: Int
        /// 0 = Sunday … 6 = Saturday.
        var weekday: Int

        init?(_ t: Timestamp, offsetSeconds: Int) {
            let t = t.normalized
            let (local, overflow) = t.seconds.addingReportingOverflow(Int64(offsetSeconds))
            guard !overflow else { return nil }
            let days = TimestampSupport.floorDiv(local, 86_400)
            let secondOfDay = Int(TimestampSupport.floorMod(local, 86_400))
            let date = TimestampSupport.civilFromDays(days)
            guard (0...9999).contains(date.year) else { return nil }
            (year, month, day) = (Int(date.year), date.month, date.day)
            (hour, minute, second) = (secondOfDay / 3600, secondOfDay / 60 % 60, secondOfDay % 60)
            nanosecond = Int(t.nanoseconds)
            weekday = Int(TimestampSupport.floorMod(days + 4, 7))  // 1970-01-01 was a Thursday
        }
    }

    /// Fields collected while parsing a pattern, with LDML defaults.
    struct Fields {
        var year = 1970, month = 1, day = 1, hour = 0, minute = 0, second = 0, nanosecond = 0
        /// Set by `a`; then `hour` holds a 12-hour clock value.
        var isPM: Bool?
        var offsetSeconds: Int?

        /// The instant, or `nil` when the day does not exist in the month.
        func timestamp(defaultOffsetSeconds: Int) -> Timestamp? {
            guard day <= TimestampSupport.daysInMonth(year: Int64(year), month: month) else { return nil }
            let hour24 = isPM.map { (hour % 12) + ($0 ? 12 : 0) } ?? hour
            let days = TimestampSupport.daysFromCivil(year: Int64(year), month: month, day: day)
            let secondOfDay = hour24 * 3600 + minute * 60 + second - (offsetSeconds ?? defaultOffsetSeconds)
            return Timestamp(seconds: days * 86_400 + Int64(secondOfDay), nanoseconds: Int32(nanosecond))
        }
    }
}

// MARK: Names

extension TimestampSupport {
    /// English month, weekday and AM/PM names as ASCII bytes.
    enum Names {
        static let months = bytes(
            "January", "February", "March", "April", "May", "June",
            "July", "August", "September", "October", "November", "December")
        static let shortMonths = months.map { Array($0.prefix(3)) }
        /// Sunday first, matching `LocalTime.weekday`.
        static let weekdays = bytes("Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday")
        static let shortWeekdays = weekdays.map { Array($0.prefix(3)) }
        /// `shortMonths` and `shortWeekdays` as `Cursor.consumeShortName` compares them.
        static let shortMonthKeys = shortMonths.map(Cursor.shortNameKey)
        static let shortWeekdayKeys = shortWeekdays.map(Cursor.shortNameKey)
        static let amPm = bytes("AM", "PM")
        /// Names accepted by `zzz`, longest first where one is a prefix of another, with their offsets in hours.
        static let zones: [(name: [UInt8], hours: Int)] = [
            ("UTC", 0), ("GMT", 0), ("UT", 0), ("Z", 0),
            ("EST", -5), ("EDT", -4), ("CST", -6), ("CDT", -5),
            ("MST", -7), ("MDT", -6), ("PST", -8), ("PDT", -7),
        ].map { (Array($0.0.utf8), $0.1) }

        private static func bytes(_ names: String...) -> [[UInt8]] { names.map { Array($0.utf8) } }
    }
}

// MARK: Reading bytes

extension TimestampSupport {
    /// A forward-only position in a UTF-8 buffer. Every `consume…` method advances only on success.
    struct Cursor {
        let bytes: UnsafeBufferPointer<UInt8>
        var position = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var isAtEnd: Bool { position >= bytes.count }
        var current: UInt8? { position < bytes.count ? bytes[position] : nil }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard current == byte else { return false }
            position += 1
            return true
        }

        mutating func consume(_ literal: [UInt8]) -> Bool {
            guard bytes.count - position >= literal.count else { return false }
            for (offset, byte) in literal.enumerated() where bytes[position + offset] != byte { return false }
            position += literal.count
            return true
        }

        /// Consumes `word` (ASCII letters) ignoring ASCII case.
        mutating func consumeIgnoringCase(_ word: [UInt8]) -> Bool {
            guard bytes.count - position >= word.count else { return false }
            for (offset, byte) in word.enumerated() where bytes[position + offset] | 0x20 != byte | 0x20 {
                return false
            }
            position += word.count
            return true
        }

        /// Consumes the first of `names` that matches (ignoring case) and returns its index.
        mutating func consumeName(in names: [[UInt8]]) -> Int? {
            names.firstIndex { consumeIgnoringCase($0) }
        }

        /// A 3-byte name as one word, each byte with bit 5 set: two such keys are equal exactly when
        /// `consumeIgnoringCase` would match the bytes.
        static func shortNameKey(_ name: [UInt8]) -> UInt32 {
            name.withUnsafeBufferPointer { shortNameKey($0, at: 0) }
        }

        /// The `shortNameKey` of the 3 bytes at `i` (which must be there).
        static func shortNameKey(_ bytes: UnsafeBufferPointer<UInt8>, at i: Int) -> UInt32 {
            (UInt32(bytes[i]) | UInt32(bytes[i + 1]) << 8 | UInt32(bytes[i + 2]) << 16) | 0x20_2020
        }

        /// `consumeName` for 3-byte names given as `shortNameKey`s: the 3 bytes here compared with all of them
        /// as words.
        mutating func consumeShortName(in keys: [UInt32]) -> Int? {
            guard bytes.count - position >= 3 else { return nil }
            guard let index = keys.firstIndex(of: Self.shortNameKey(bytes, at: position)) else { return nil }
            position += 3
            return index
        }

        /// Reads `min...max` ASCII digits, as many as available (`max <= 18`).
        mutating func digits(min: Int, max: Int) -> (value: Int, count: Int)? {
            var value = 0, count = 0
            while count < max, let byte = current, byte &- UInt8(ascii: "0") < 10 {
                value = value * 10 + Int(byte &- UInt8(ascii: "0"))
                count += 1
                position += 1
            }
            guard count >= min else {
                position -= count
                return nil
            }
            return (value, count)
        }

        /// Reads a 2-digit (`padded`) or 1–2-digit number within `range` into `field`.
        mutating func readField(padded: Bool, in range: ClosedRange<Int>, into field: inout Int) -> Bool {
            guard let value = digits(min: padded ? 2 : 1, max: 2)?.value, range.contains(value) else { return false }
            field = value
            return true
        }

        /// Reads `+HH:MM`, `+HHMM` or, when `hourOnly` is allowed, `+HH` (either sign); seconds east of UTC.
        mutating func numericOffset(allowHourOnly: Bool) -> Int? {
            let sign: Int
            if consume(UInt8(ascii: "+")) {
                sign = 1
            } else if consume(UInt8(ascii: "-")) {
                sign = -1
            } else {
                return nil
            }
            guard let hours = digits(min: 2, max: 2)?.value, hours <= 23 else { return nil }
            var minutes = 0
            if consume(UInt8(ascii: ":")) || !allowHourOnly || current.map({ $0 &- UInt8(ascii: "0") < 10 }) == true {
                guard let value = digits(min: 2, max: 2)?.value, value <= 59 else { return nil }
                minutes = value
            }
            return sign * (hours * 3600 + minutes * 60)
        }

        /// Reads a zone field in `style`; seconds east of UTC.
        mutating func zoneOffset(_ style: DateFormat.ZoneStyle) -> Int? {
            switch style {
            case .basic, .extended:
                return consume(UInt8(ascii: "Z")) ? 0 : numericOffset(allowHourOnly: false)
            case .gmt:
                return namedZoneOffset()
            }
        }

        /// `GMT`, `UTC`, `UT`, `Z` (each optionally followed by a numeric offset, except `Z`), a US zone
        /// abbreviation, or a bare numeric offset.
        private mutating func namedZoneOffset() -> Int? {
            guard let index = Names.zones.firstIndex(where: { consumeIgnoringCase($0.name) }) else {
                return numericOffset(allowHourOnly: false)
            }
            let isUniversal = index < 3  // UTC, GMT, UT
            if isUniversal, current == UInt8(ascii: "+") || current == UInt8(ascii: "-") {
                return numericOffset(allowHourOnly: true)
            }
            return Names.zones[index].hours * 3600
        }
    }
}

// MARK: Writing bytes

extension TimestampSupport {
    /// An ASCII output buffer.
    struct Writer {
        var bytes: [UInt8] = []

        init() { bytes.reserveCapacity(40) }

        var string: String { String(decoding: bytes, as: UTF8.self) }

        mutating func append(_ byte: UInt8) { bytes.append(byte) }
        mutating func append(_ other: [UInt8]) { bytes.append(contentsOf: other) }

        /// Appends a non-negative number, zero-padded to `width` digits (`0`: unpadded).
        mutating func appendNumber(_ value: Int, width: Int) {
            var divisor = 1, digitCount = 1
            while value / divisor >= 10 {
                divisor *= 10
                digitCount += 1
            }
            for _ in digitCount..<max(width, digitCount) { bytes.append(UInt8(ascii: "0")) }
            while divisor > 0 {
                bytes.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }

        /// Appends `yyyy-MM-dd<separator>HH:mm:ss`.
        mutating func appendDateAndTime(_ time: LocalTime, separator: UInt8) {
            appendNumber(time.year, width: 4)
            append(UInt8(ascii: "-"))
            appendNumber(time.month, width: 2)
            append(UInt8(ascii: "-"))
            appendNumber(time.day, width: 2)
            append(separator)
            appendNumber(time.hour, width: 2)
            append(UInt8(ascii: ":"))
            appendNumber(time.minute, width: 2)
            append(UInt8(ascii: ":"))
            appendNumber(time.second, width: 2)
        }

        /// Appends the 9-digit fraction of `nanoseconds` (non-zero) without trailing zeros.
        mutating func appendTrimmedFraction(_ nanoseconds: Int) {
            var value = nanoseconds, width = 9
            while value % 10 == 0 && width > 1 {
                value /= 10
                width -= 1
            }
            appendNumber(value, width: width)
        }

        /// Appends a zone offset in `style`.
        mutating func appendZone(_ offsetSeconds: Int, style: DateFormat.ZoneStyle) {
            switch style {
            case .basic:
                appendOffset(offsetSeconds, colon: false)
            case .extended:
                if offsetSeconds == 0 { append(UInt8(ascii: "Z")) } else { appendOffset(offsetSeconds, colon: true) }
            case .gmt:
                append(Array("GMT".utf8))
                if offsetSeconds != 0 { appendOffset(offsetSeconds, colon: true) }
            }
        }

        /// Appends `+HHMM` or `+HH:MM`.
        private mutating func appendOffset(_ offsetSeconds: Int, colon: Bool) {
            append(offsetSeconds < 0 ? UInt8(ascii: "-") : UInt8(ascii: "+"))
            let minutes = abs(offsetSeconds) / 60
            appendNumber(minutes / 60, width: 2)
            if colon { append(UInt8(ascii: ":")) }
            appendNumber(minutes % 60, width: 2)
        }
    }
}

// MARK: Fixed-syntax formats

extension TimestampSupport {
    /// What an ISO 8601 parse accepts after the seconds.
    enum FractionRule {
        /// `none`: no fraction (rfc3339); `any`: any number of digits, exact to the nanosecond, and a date alone
        /// (iso8601); `exactly3`: three digits (rfc3339Milliseconds).
        case none, any, exactly3
    }

    /// `YYYY-MM-DD[Tt ]HH:MM:SS[.fraction](Z|z|±HH:MM|±HHMM|±HH)`, the whole buffer; with `.any`, also
    /// `YYYY-MM-DD` alone (midnight UTC).
    static func parseISO(_ bytes: UnsafeBufferPointer<UInt8>, fraction rule: FractionRule) -> Timestamp? {
        if case .instant(let t) = readISO(bytes, fraction: rule) { return t }
        return nil
    }

    /// What `parseISO` read: an instant, a date-time whose fraction needs more than nanoseconds (digits other
    /// than 0 after the 9th: it would have to be rounded, and never is), or no ISO 8601 date.
    enum ISOReading: Equatable {
        case instant(Timestamp), finerThanNanoseconds, invalid
    }

    static func readISO(_ bytes: UnsafeBufferPointer<UInt8>, fraction rule: FractionRule) -> ISOReading {
        var cursor = Cursor(bytes)
        var fields = Fields()
        guard let year = cursor.digits(min: 4, max: 4)?.value, cursor.consume(UInt8(ascii: "-")),
            cursor.readField(padded: true, in: 1...12, into: &fields.month), cursor.consume(UInt8(ascii: "-")),
            cursor.readField(padded: true, in: 1...31, into: &fields.day)
        else { return .invalid }
        fields.year = year
        if rule == .any && cursor.isAtEnd {
            // A calendar date alone: midnight UTC of that day.
            fields.offsetSeconds = 0
            return fields.timestamp(defaultOffsetSeconds: 0).map(ISOReading.instant) ?? .invalid
        }
        var finer = false
        guard cursor.consume(UInt8(ascii: "T")) || cursor.consume(UInt8(ascii: "t")) || cursor.consume(UInt8(ascii: " ")),
            cursor.readField(padded: true, in: 0...23, into: &fields.hour), cursor.consume(UInt8(ascii: ":")),
            cursor.readField(padded: true, in: 0...59, into: &fields.minute), cursor.consume(UInt8(ascii: ":")),
            cursor.readField(padded: true, in: 0...59, into: &fields.second),
            let nanosecond = isoFraction(&cursor, rule: rule, finer: &finer)
        else { return .invalid }
        fields.nanosecond = nanosecond
        if cursor.consume(UInt8(ascii: "Z")) || cursor.consume(UInt8(ascii: "z")) {
            fields.offsetSeconds = 0
        } else {
            guard let offset = cursor.numericOffset(allowHourOnly: true) else { return .invalid }
            fields.offsetSeconds = offset
        }
        guard cursor.isAtEnd, let t = fields.timestamp(defaultOffsetSeconds: 0) else { return .invalid }
        return finer ? .finerThanNanoseconds : .instant(t)
    }

    /// The nanoseconds of an optional `.digits` fraction, or `nil` when it breaks `rule`. With `.any`, digits
    /// after the 9th must be 0 to be exact; `finer` is set when one is not.
    private static func isoFraction(_ cursor: inout Cursor, rule: FractionRule, finer: inout Bool) -> Int? {
        guard cursor.consume(UInt8(ascii: ".")) else { return rule == .exactly3 ? nil : 0 }
        let allowed = switch rule {
        case .none: 0...0
        case .any: 1...9
        case .exactly3: 3...3
        }
        // A digit beyond `allowed` is left for the zone, which then fails.
        guard let (value, count) = cursor.digits(min: allowed.lowerBound, max: allowed.upperBound), count > 0
        else { return nil }
        if rule == .any {
            while let byte = cursor.current, byte &- UInt8(ascii: "0") < 10 {
                if byte != UInt8(ascii: "0") { finer = true }
                cursor.position += 1
            }
        }
        return value * powerOf10(9 - count)
    }

    /// `/Date(<ms>[±HHMM])/`, the whole buffer; the offset does not change the instant.
    static func parseDotNet(_ bytes: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        var cursor = Cursor(bytes)
        guard cursor.consume(Array("/Date(".utf8)) else { return nil }
        let negative = cursor.consume(UInt8(ascii: "-"))
        var magnitude: UInt64 = 0
        var digitCount = 0
        while let byte = cursor.current, byte &- UInt8(ascii: "0") < 10 {
            let (times10, overflow1) = magnitude.multipliedReportingOverflow(by: 10)
            let (sum, overflow2) = times10.addingReportingOverflow(UInt64(byte &- UInt8(ascii: "0")))
            guard !overflow1, !overflow2 else { return nil }
            magnitude = sum
            digitCount += 1
            cursor.position += 1
        }
        guard digitCount > 0, magnitude <= (negative ? 1 << 63 : UInt64(Int64.max)) else { return nil }
        if cursor.consume(UInt8(ascii: "+")) || cursor.consume(UInt8(ascii: "-")) {
            guard cursor.digits(min: 4, max: 4) != nil else { return nil }
        }
        guard cursor.consume(Array(")/".utf8)), cursor.isAtEnd else { return nil }
        let milliseconds = Int64(bitPattern: negative ? 0 &- magnitude : magnitude)
        return Timestamp(
            seconds: floorDiv(milliseconds, 1000),
            nanoseconds: Int32(floorMod(milliseconds, 1000) * 1_000_000))
    }

    /// `/Date(<ms>)/`, or `nil` when `t` has a sub-millisecond part or its milliseconds overflow `Int64`.
    static func formatDotNet(_ t: Timestamp) -> String? {
        guard t.nanoseconds % 1_000_000 == 0 else { return nil }
        let (scaled, overflow1) = t.seconds.multipliedReportingOverflow(by: 1000)
        let (milliseconds, overflow2) = scaled.addingReportingOverflow(Int64(t.nanoseconds / 1_000_000))
        guard !overflow1, !overflow2 else { return nil }
        return "/Date(\(milliseconds))/"
    }
}

// MARK: Exact decimals

extension TimestampSupport {
    /// A decimal `±digits × 10^exponent` with no leading or trailing zero digits (zero has no digits).
    struct Decimal {
        var negative: Bool
        var digits: [UInt8]
        var exponent: Int

        /// Exponents are clamped to this magnitude while reading; anything near it is out of range anyway.
        private static let exponentClamp = 1 << 50

        /// Reads a complete JSON number (RFC 8259 grammar); `nil` on any syntax error or trailing bytes.
        static func parseJSON(_ cursor: inout Cursor) -> Decimal? {
            let negative = cursor.consume(UInt8(ascii: "-"))
            var digits: [UInt8] = []
            guard let first = cursor.current, first &- UInt8(ascii: "0") < 10 else { return nil }
            if first == UInt8(ascii: "0") {
                cursor.position += 1  // a leading zero stands alone; a following digit fails below
            } else {
                readDigits(&cursor, into: &digits)
            }
            var exponent = 0
            if cursor.consume(UInt8(ascii: ".")) {
                let integerCount = digits.count
                readDigits(&cursor, into: &digits)
                guard digits.count > integerCount else { return nil }
                exponent = -(digits.count - integerCount)
            }
            if cursor.consume(UInt8(ascii: "e")) || cursor.consume(UInt8(ascii: "E")) {
                guard let value = readExponent(&cursor) else { return nil }
                exponent += value
            }
            guard cursor.isAtEnd else { return nil }
            return Decimal(negative: negative, digits: digits, exponent: exponent).normalized()
        }

        private static func readDigits(_ cursor: inout Cursor, into digits: inout [UInt8]) {
            while let byte = cursor.current, byte &- UInt8(ascii: "0") < 10 {
                digits.append(byte &- UInt8(ascii: "0"))
                cursor.position += 1
            }
        }

        /// `[+-]digits`, clamped to `±exponentClamp`.
        private static func readExponent(_ cursor: inout Cursor) -> Int? {
            let negative = cursor.consume(UInt8(ascii: "-"))
            if !negative { _ = cursor.consume(UInt8(ascii: "+")) }
            var value = 0, count = 0
            while let byte = cursor.current, byte &- UInt8(ascii: "0") < 10 {
                value = min(value * 10 + Int(byte &- UInt8(ascii: "0")), exponentClamp)
                count += 1
                cursor.position += 1
            }
            guard count > 0 else { return nil }
            return negative ? -value : value
        }

        /// Drops leading zero digits and moves trailing zero digits into the exponent.
        func normalized() -> Decimal {
            guard let first = digits.firstIndex(where: { $0 != 0 }) else {
                return Decimal(negative: negative, digits: [], exponent: 0)
            }
            let last = digits.lastIndex { $0 != 0 }!
            return Decimal(
                negative: negative, digits: Array(digits[first...last]),
                exponent: exponent + (digits.count - 1 - last))
        }

        /// Multiplies by a small factor.
        func multiplied(by factor: UInt8) -> Decimal {
            guard factor != 1 else { return self }
            var product: [UInt8] = []
            product.reserveCapacity(digits.count + 3)
            var carry = 0
            for digit in digits.reversed() {
                let value = Int(digit) * Int(factor) + carry
                product.append(UInt8(value % 10))
                carry = value / 10
            }
            while carry > 0 {
                product.append(UInt8(carry % 10))
                carry /= 10
            }
            return Decimal(negative: negative, digits: product.reversed(), exponent: exponent).normalized()
        }

        /// This number of `unit`s as an instant; `nil` below nanosecond precision or beyond ±2^62 s.
        func timestamp(unit: EpochUnit) -> Timestamp? {
            guard !digits.isEmpty else { return Timestamp(seconds: 0) }
            let factor = unit.nanosecondFactor
            let nanos = multiplied(by: factor.multiplier)
            let exponent = nanos.exponent + factor.shift
            guard exponent >= 0 else { return nil }  // no trailing zeros, so a non-zero sub-nanosecond part
            let totalDigits = nanos.digits.count + exponent
            let secondDigits = totalDigits - 9
            guard secondDigits <= 19 else { return nil }
            var seconds: UInt64 = 0, nanoseconds: UInt64 = 0
            for index in 0..<totalDigits {
                let digit = UInt64(index < nanos.digits.count ? nanos.digits[index] : 0)
                if index < secondDigits {
                    seconds = seconds * 10 + digit
                } else {
                    nanoseconds = nanoseconds * 10 + digit
                }
            }
            guard seconds <= Timestamp.epochSecondsLimit else { return nil }
            guard negative else { return Timestamp(seconds: Int64(seconds), nanoseconds: Int32(nanoseconds)) }
            guard nanoseconds > 0 else { return Timestamp(seconds: -Int64(seconds)) }
            return Timestamp(seconds: -Int64(seconds) - 1, nanoseconds: Int32(1_000_000_000 - nanoseconds))
        }
    }

    /// Whether a JSON number of `unit`s has a non-zero part below one nanosecond (`1.0000000001` s): a reason
    /// of its own for `init?(epochNumber:unit:)` to fail, apart from a number out of range.
    static func epochNumberIsFinerThanNanoseconds(_ text: String, unit: EpochUnit) -> Bool {
        withUTF8(text) { bytes in
            var cursor = Cursor(bytes)
            guard let number = Decimal.parseJSON(&cursor), !number.digits.isEmpty else { return false }
            return number.multiplied(by: unit.nanosecondFactor.multiplier).exponent + unit.nanosecondFactor.shift < 0
        }
    }

    /// The decimal text of `t` (normalized) in `unit`; `nil` only when `exactOnly` and it does not terminate.
    static func epochText(_ t: Timestamp, unit: EpochUnit, exactOnly: Bool) -> String? {
        wholeEpochText(t, unit: unit) ?? decimalEpochText(t, unit: unit, exactOnly: exactOnly)
    }

    /// The usual case in one step: a whole number of milliseconds or seconds, far from Int64's limits.
    static func wholeEpochText(_ t: Timestamp, unit: EpochUnit) -> String? {
        wholeEpochValue(t, unit: unit).map { String($0) }
    }

    /// `wholeEpochText`'s number, as a number.
    static func wholeEpochValue(_ t: Timestamp, unit: EpochUnit) -> Int64? {
        guard t.seconds.magnitude < 1 << 50 else { return nil }
        switch unit {
        case .milliseconds where t.nanoseconds % 1_000_000 == 0:
            return t.seconds * 1000 + Int64(t.nanoseconds / 1_000_000)
        case .seconds where t.nanoseconds == 0:
            return t.seconds
        default:
            return nil
        }
    }

    /// Any instant in any unit, digit by digit.
    static func decimalEpochText(_ t: Timestamp, unit: EpochUnit, exactOnly: Bool) -> String? {
        // Sign and magnitude: |t| = wholeSeconds + fractionNanos / 1e9.
        let negative = t.seconds < 0
        let wholeSeconds = negative && t.nanoseconds > 0 ? (t.seconds + 1).magnitude : t.seconds.magnitude
        let fractionNanos = UInt64(negative && t.nanoseconds > 0 ? 1_000_000_000 - t.nanoseconds : t.nanoseconds)

        // |t| in units = integer + remainder / divisor.
        var integer: [UInt8]
        var remainder: UInt64
        let divisor: UInt64
        switch unit {
        case .milliseconds:
            let head = wholeSeconds == 0 ? "" : String(wholeSeconds)
            let millis = String(fractionNanos / 1_000_000)
            let padding = head.isEmpty ? "" : String(repeating: "0", count: 3 - millis.utf8.count)
            integer = asciiDigits(head + padding + millis)
            (remainder, divisor) = (fractionNanos % 1_000_000, 1_000_000)
        case .seconds:
            integer = asciiDigits(String(wholeSeconds))
            (remainder, divisor) = (fractionNanos, 1_000_000_000)
        case .minutes:
            integer = asciiDigits(String(wholeSeconds / 60))
            (remainder, divisor) = (wholeSeconds % 60 * 1_000_000_000 + fractionNanos, 60_000_000_000)
        case .hours:
            integer = asciiDigits(String(wholeSeconds / 3600))
            (remainder, divisor) = (wholeSeconds % 3600 * 1_000_000_000 + fractionNanos, 3_600_000_000_000)
        }

        var fraction: [UInt8] = []
        while remainder != 0 && fraction.count < unit.maxFractionDigits {
            remainder *= 10
            fraction.append(UInt8(remainder / divisor))
            remainder %= divisor
        }
        if remainder != 0 {
            // Non-terminating (a factor of 3 in the divisor), so never exactly half: round half up.
            guard !exactOnly else { return nil }
            if remainder * 10 / divisor >= 5 { incrementDecimal(&integer, &fraction) }
            while fraction.last == 0 { fraction.removeLast() }
        }
        return decimalText(negative: negative, integer: integer, fraction: fraction)
    }

    private static func asciiDigits(_ text: String) -> [UInt8] {
        text.utf8.map { $0 - UInt8(ascii: "0") }
    }

    /// Adds one unit in the last place of `integer.fraction`.
    private static func incrementDecimal(_ integer: inout [UInt8], _ fraction: inout [UInt8]) {
        for index in fraction.indices.reversed() {
            if fraction[index] < 9 {
                fraction[index] += 1
                return
            }
            fraction[index] = 0
        }
        for index in integer.indices.reversed() {
            if integer[index] < 9 {
                integer[index] += 1
                return
            }
            integer[index] = 0
        }
        integer.insert(1, at: 0)
    }

    /// `[-]integer[.fraction]`. `negative` implies a non-zero magnitude, and rounding never rounds a non-zero
    /// value to zero (one nanosecond is ≥ 2e-13 h), so this never writes `-0`.
    private static func decimalText(negative: Bool, integer: [UInt8], fraction: [UInt8]) -> String {
        var out = Writer()
        if negative { out.append(UInt8(ascii: "-")) }
        out.append(integer.isEmpty ? [UInt8(ascii: "0")] : integer.map { $0 + UInt8(ascii: "0") })
        if !fraction.isEmpty {
            out.append(UInt8(ascii: "."))
            out.append(fraction.map { $0 + UInt8(ascii: "0") })
        }
        return out.string
    }
}
