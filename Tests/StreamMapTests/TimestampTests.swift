import Testing
@testable import StreamMap

// Reference instants (checked with GNU `date -u -d <text> +%s`):
// 2014-08-31T00:29:15Z = 1409444955 (a Sunday)     2014-01-14T22:35:23Z = 1389738923
// 2000-02-29T00:00:00Z = 951782400                  2024-02-29T00:00:00Z = 1709164800
// 1900-01-01T00:00:00Z = -2208988800                1969-07-20T20:17:40Z = -14182940
// 1600-02-29T12:00:00Z = -11670955200               0000-01-01T00:00:00Z = -62167219200
// 9999-12-31T23:59:59Z = 253402300799

private let sunday20140831: Int64 = 1_409_444_955

private func ts(_ seconds: Int64, _ nanoseconds: Int32 = 0) -> Timestamp {
    Timestamp(seconds: seconds, nanoseconds: nanoseconds)
}

// MARK: - Timestamp

@Suite("Timestamp basics")
struct TimestampBasicsTests {
    @Test func initNormalizesNanoseconds() {
        #expect(Timestamp(seconds: 0, nanoseconds: -1) == ts(-1, 999_999_999))
        #expect(Timestamp(seconds: 5, nanoseconds: 2_000_000_001) == ts(7, 1))
        #expect(Timestamp(seconds: 5).nanoseconds == 0)
    }

    @Test func ordering() {
        #expect(ts(-1, 999_999_999) < ts(0))
        #expect(ts(0, 1) > ts(0))
        #expect(ts(1) > ts(0, 999_999_999))
        #expect([ts(3), ts(-2, 5), ts(0)].sorted() == [ts(-2, 5), ts(0), ts(3)])
    }

    @Test(arguments: [
        (ts(sunday20140831), "2014-08-31T00:29:15Z"),
        (ts(sunday20140831, 500_000_000), "2014-08-31T00:29:15.5Z"),
        (ts(-1, 123_456_789), "1969-12-31T23:59:59.123456789Z"),
        (ts(0, 1), "1970-01-01T00:00:00.000000001Z"),
        (ts(0), "1970-01-01T00:00:00Z"),
        (ts(951_782_400), "2000-02-29T00:00:00Z"),
        (ts(-62_167_219_200), "0000-01-01T00:00:00Z"),
        (ts(253_402_300_799, 999_999_999), "9999-12-31T23:59:59.999999999Z"),
    ])
    func rfc3339Property(instant: Timestamp, text: String) {
        #expect(instant.rfc3339 == text)
    }

    @Test(arguments: [ts(-62_167_219_201), ts(253_402_300_800), ts(.min), ts(.max, 999_999_999)])
    func rfc3339OutsideYearRangeIsNil(instant: Timestamp) {
        #expect(instant.rfc3339 == nil)
    }

    @Test func descriptionFallsBackToFields() {
        #expect(ts(0).description == "1970-01-01T00:00:00Z")
        #expect(ts(-62_167_219_201).description == "Timestamp(seconds: -62167219201, nanoseconds: 0)")
    }
}

// MARK: - Calendar

@Suite("Civil calendar")
struct CivilCalendarTests {
    @Test(arguments: [
        (Int64(1970), 1, 1, Int64(0)), (2000, 2, 29, 11_016), (2024, 2, 29, 19_782), (1900, 1, 1, -25_567),
        (0, 1, 1, -719_528), (9999, 12, 31, 2_932_896), (1969, 12, 31, -1), (1600, 2, 29, -135_081),
    ])
    func daysFromCivil(year: Int64, month: Int, day: Int, days: Int64) {
        #expect(TimestampSupport.daysFromCivil(year: year, month: month, day: day) == days)
        let civil = TimestampSupport.civilFromDays(days)
        #expect(civil.year == year && civil.month == month && civil.day == day)
    }

    @Test func civilRoundTripsOverFourCenturies() {
        var expected = (year: Int64(1600), month: 1, day: 1)
        for days in TimestampSupport.daysFromCivil(year: 1600, month: 1, day: 1)..<TimestampSupport.daysFromCivil(
            year: 2001, month: 1, day: 1)
        {
            let civil = TimestampSupport.civilFromDays(days)
            guard civil == expected else {
                Issue.record("day \(days): got \(civil), expected \(expected)")
                return
            }
            guard TimestampSupport.daysFromCivil(year: civil.year, month: civil.month, day: civil.day) == days else {
                Issue.record("day \(days) does not round-trip through \(civil)")
                return
            }
            expected.day += 1
            if expected.day > TimestampSupport.daysInMonth(year: expected.year, month: expected.month) {
                expected.day = 1
                expected.month += 1
                if expected.month > 12 { (expected.year, expected.month) = (expected.year + 1, 1) }
            }
        }
    }

    @Test(arguments: [(Int64(2000), true), (1900, false), (2024, true), (2023, false), (1600, true), (2100, false)])
    func leapYears(year: Int64, isLeap: Bool) {
        #expect(TimestampSupport.isLeapYear(year) == isLeap)
    }

    @Test(arguments: [
        ("2000-02-29T00:00:00Z", ts(951_782_400)), ("2024-02-29T00:00:00Z", ts(1_709_164_800)),
        ("1600-02-29T12:00:00Z", ts(-11_670_955_200)),
    ])
    func leapDaysParse(text: String, instant: Timestamp) {
        #expect(NamedDateFormat.iso8601.parse(text) == instant)
    }

    @Test(arguments: ["1900-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2100-02-29T00:00:00Z", "2024-02-30T00:00:00Z"])
    func nonLeapDaysRejected(text: String) throws {
        #expect(NamedDateFormat.iso8601.parse(text) == nil)
        let custom = try DateFormat(pattern: "yyyy-MM-dd'T'HH:mm:ssXXX")
        #expect(custom.parse(text) == nil)
    }

    @Test func weekdayOfKnownDates() throws {
        let format = try DateFormat(pattern: "EEEE")
        #expect(format.format(ts(sunday20140831)) == "Sunday")
        #expect(format.format(ts(0)) == "Thursday")
        #expect(format.format(ts(-2_208_988_800)) == "Monday")
        #expect(format.format(ts(-62_167_219_200)) == "Saturday")
        #expect(format.format(ts(-1)) == "Wednesday")
    }
}

// MARK: - ISO 8601 / RFC 3339

@Suite("ISO 8601 and RFC 3339")
struct ISO8601Tests {
    @Test(arguments: [
        ("2014-08-31T00:29:15Z", ts(sunday20140831)),
        ("2014-08-31T00:29:15.1Z", ts(sunday20140831, 100_000_000)),
        ("2014-08-31T00:29:15.123456789Z", ts(sunday20140831, 123_456_789)),
        ("2014-08-31T00:29:15.000000001Z", ts(sunday20140831, 1)),
        // Any fraction length, exact to the nanosecond: digits after the 9th are 0.
        ("2014-08-31T00:29:15.1234567890Z", ts(sunday20140831, 123_456_789)),
        ("2014-08-31T00:29:15.123456789000Z", ts(sunday20140831, 123_456_789)),
        ("2014-08-31T00:29:15.10000000000000000000+01:00", ts(sunday20140831 - 3600, 100_000_000)),
        // A calendar date alone: midnight UTC.
        ("2014-08-31", ts(sunday20140831 - 1755)),
        ("1969-12-31", ts(-86_400)),
        ("2016-02-29", ts(1_456_704_000)),
        ("2014-08-31T00:29:15.5+02:00", ts(sunday20140831 - 7200, 500_000_000)),
        ("2014-08-31T00:29:15-0530", ts(sunday20140831 + 19_800)),
        ("2014-08-31T00:29:15-05:30", ts(sunday20140831 + 19_800)),
        ("2014-08-31T00:29:15+05", ts(sunday20140831 - 18_000)),
        ("2014-08-31T00:29:15z", ts(sunday20140831)),
        ("2014-08-31t00:29:15Z", ts(sunday20140831)),
        ("2014-08-31 00:29:15Z", ts(sunday20140831)),
        ("2014-08-31T00:29:15+00:00", ts(sunday20140831)),
        ("1969-12-31T23:59:59.5Z", ts(-1, 500_000_000)),
        ("1969-07-20T20:17:40Z", ts(-14_182_940)),
        ("0000-01-01T00:00:00Z", ts(-62_167_219_200)),
        ("9999-12-31T23:59:59Z", ts(253_402_300_799)),
    ])
    func parsesValid(text: String, instant: Timestamp) {
        #expect(NamedDateFormat.iso8601.parse(text) == instant)
    }

    @Test func offsetInstantIsPreviousDay() {
        let parsed = NamedDateFormat.iso8601.parse("2014-08-31T00:29:15.5+02:00")
        #expect(parsed?.rfc3339 == "2014-08-30T22:29:15.5Z")
    }

    @Test(arguments: [
        "", "2014-02-30T00:00:00Z", "2014-13-01T00:00:00Z", "2014-00-01T00:00:00Z", "2014-08-00T00:00:00Z",
        "2014-08-31T00:29:15", "2014-08-31T00:29:15.1234567891Z", "2014-08-31T00:29:15Zjunk",
        "2014-08-31T00:29:15.0000000000001Z", "2014-08-31T", "2014-08-31Z", "2014-08-31 ", "2015-02-29", "2014-8-31",
        "2014-08-31T00:29:15Z ", " 2014-08-31T00:29:15Z", "2014-08-31T24:00:00Z", "2014-08-31T00:60:00Z",
        "2014-08-31T00:29:60Z", "2014-08-31T00:29:15.Z", "2014-08-31T00:29:15+2:00", "2014-08-31T00:29:15+02:0",
        "2014-08-31T00:29:15+24:00", "2014-08-31T00:29:15+02:60", "2014-08-31X00:29:15Z", "14-08-31T00:29:15Z",
        "2014-8-31T00:29:15Z", "2014-08-31T0:29:15Z", "+2014-08-31T00:29:15Z", "2014-08-31T00:29Z",
        "２０14-08-31T00:29:15Z",
    ])
    func rejectsInvalid(text: String) {
        #expect(NamedDateFormat.iso8601.parse(text) == nil)
    }

    /// A date alone is ISO 8601's, not RFC 3339's (whose formats keep their exact shape).
    @Test func aDateAloneIsOnlyISO8601() {
        #expect(NamedDateFormat.rfc3339.parse("2014-08-31") == nil)
        #expect(NamedDateFormat.rfc3339Milliseconds.parse("2014-08-31") == nil)
        #expect(NamedDateFormat.rfc3339.parse("2014-08-31T00:29:15.1234567890Z") == nil)
    }

    /// A fraction finer than a nanosecond, and an epoch number with a part finer than one, each get a message of
    /// their own (not "not a date", not "out of range"); a number that is out of range still says so.
    @Test func finerThanANanosecondHasItsOwnMessage() {
        let date = Mapper.stringToDate(.iso8601).map(.string("2014-08-31T00:29:15.1234567891Z"))
        #expect(date.errors.map(\.message) == [#"string "2014-08-31T00:29:15.1234567891Z" has a fraction of a second finer than a nanosecond (digits other than 0 after the 9th), which a date cannot keep exactly"#])
        let either = Mapper.stringToDate(.twitter, .iso8601).map(.string("2014-08-31T00:29:15.0000000000001+01:00"))
        #expect(either.errors.first?.message.contains("finer than a nanosecond") == true)
        let notADate = Mapper.stringToDate(.iso8601).map(.string("2014-08-31T00:29:15.1234567891"))
        #expect(notADate.errors.map(\.message) == [#"string "2014-08-31T00:29:15.1234567891" is not a date in format iso8601"#])
        let number = Mapper.numberToDate(.seconds).map(.number(JSONNumber(unchecked: "1.0000000001")))
        #expect(number.errors.map(\.message) == ["number 1.0000000001 has a part finer than a nanosecond (in s since 1970), which a date cannot keep exactly"])
        let exact = Mapper.numberToDate(.milliseconds).map(.number(JSONNumber(unchecked: "1.000001")))
        #expect(exact.value == .string("1970-01-01T00:00:00.001000001Z"))
        let far = Mapper.numberToDate(.seconds).map(.number(JSONNumber(unchecked: "1e30")))
        #expect(far.errors.map(\.message) == ["number 1e30 is not a time in s since 1970 within years 0-9999"])
        #expect(Mapper.stringToDate(.iso8601).map(.string("2014-08-31")).value == .string("2014-08-31T00:00:00Z"))
    }

    @Test func parsesSubstrings() {
        let text = "[2014-08-31T00:29:15Z]"
        let inner = text.dropFirst().dropLast()
        #expect(NamedDateFormat.iso8601.parse(inner) == ts(sunday20140831))
    }

    @Test func rfc3339RejectsFractionAndFormatsBasicOffset() {
        #expect(NamedDateFormat.rfc3339.parse("2014-01-14T22:35:23+0000") == ts(1_389_738_923))
        #expect(NamedDateFormat.rfc3339.parse("2014-01-14T22:35:23Z") == ts(1_389_738_923))
        #expect(NamedDateFormat.rfc3339.parse("2014-01-14T22:35:23.5Z") == nil)
        #expect(NamedDateFormat.rfc3339.format(ts(1_389_738_923)) == "2014-01-14T22:35:23+0000")
        #expect(NamedDateFormat.rfc3339.format(ts(1_389_738_923, 1)) == nil)
    }

    @Test func rfc3339MillisecondsRequiresExactlyThreeDigits() {
        let format = NamedDateFormat.rfc3339Milliseconds
        #expect(format.parse("2014-01-14T22:35:23.120+0000") == ts(1_389_738_923, 120_000_000))
        #expect(format.parse("2014-01-14T22:35:23.12+0000") == nil)
        #expect(format.parse("2014-01-14T22:35:23.1200+0000") == nil)
        #expect(format.parse("2014-01-14T22:35:23+0000") == nil)
        #expect(format.format(ts(1_389_738_923, 120_000_000)) == "2014-01-14T22:35:23.120+0000")
        #expect(format.format(ts(1_389_738_923, 120_000_001)) == nil)
    }
}

// MARK: - RFC 822 and Twitter

@Suite("RFC 822 and Twitter")
struct RFC822Tests {
    @Test(arguments: [
        ("Sun, 31 Aug 2014 00:29:15 GMT", ts(sunday20140831)),
        ("Sun, 31 Aug 2014 00:29 GMT", ts(sunday20140831 - 15)),
        ("Sun, 31 Aug 2014 00:29:15", ts(sunday20140831)),
        ("Sun, 31 Aug 2014 00:29", ts(sunday20140831 - 15)),
        ("31 Aug 2014 00:29:15 GMT", ts(sunday20140831)),
        ("31 Aug 2014 00:29 GMT", ts(sunday20140831 - 15)),
        ("31 Aug 2014 00:29:15", ts(sunday20140831)),
        ("31 Aug 2014 00:29", ts(sunday20140831 - 15)),
        ("Sun, 31 Aug 2014 00:29:15 +0000", ts(sunday20140831)),
        ("Sun, 31 Aug 2014 02:29:15 +0200", ts(sunday20140831)),
        ("Sat, 30 Aug 2014 19:29:15 EST", ts(sunday20140831)),
        ("Sat, 30 Aug 2014 20:29:15 EDT", ts(sunday20140831)),
        ("Sat, 30 Aug 2014 16:29:15 PST", ts(sunday20140831)),
        ("Sun, 31 Aug 2014 00:29:15 UT", ts(sunday20140831)),
        ("Sun, 31 Aug 2014 00:29:15 UTC", ts(sunday20140831)),
        ("Sun, 31 Aug 2014 00:29:15 Z", ts(sunday20140831)),
        ("Sun, 31 Aug 2014 01:29:15 GMT+01:00", ts(sunday20140831)),
        ("sun, 31 aug 2014 00:29:15 gmt", ts(sunday20140831)),
        ("Mon, 1 Sep 2014 00:00:00 GMT", ts(1_409_529_600)),
        ("Mon, 01 Sep 2014 00:00:00 GMT", ts(1_409_529_600)),
        // The weekday is validated as a name but not checked against the date.
        ("Fri, 31 Aug 2014 00:29:15 GMT", ts(sunday20140831)),
    ])
    func parsesHydrantVariants(text: String, instant: Timestamp) {
        #expect(NamedDateFormat.rfc822.parse(text) == instant)
    }

    @Test(arguments: [
        "", "Sun, 31 Aug 2014", "Sun 31 Aug 2014 00:29:15 GMT", "Xyz, 31 Aug 2014 00:29:15 GMT",
        "Sun, 31 Foo 2014 00:29:15 GMT", "Sun, 32 Aug 2014 00:29:15 GMT", "Sun, 31 Aug 14 00:29:15 GMT",
        "Sun, 31 Aug 2014 00:29:15 XYZ", "Sun, 31 Aug 2014 00:29:15 GMT ", "Sun, 31 Aug 2014 24:00:00 GMT",
        "Sun, 31 Sep 2014 00:29:15 GMT",
    ])
    func rfc822RejectsInvalid(text: String) {
        #expect(NamedDateFormat.rfc822.parse(text) == nil)
    }

    @Test func estIsMinusFiveHours() throws {
        let est = NamedDateFormat.rfc822.parse("Sun, 31 Aug 2014 00:29:15 EST")
        let utc = NamedDateFormat.rfc822.parse("Sun, 31 Aug 2014 05:29:15 GMT")
        #expect(est != nil)
        #expect(est == utc)
        #expect(try DateFormat(pattern: "zzz").parse("EST") == ts(5 * 3600))
        #expect(try DateFormat(pattern: "zzz").parse("-0500") == ts(5 * 3600))
    }

    @Test func gmtEqualsTwitter() {
        let rfc822 = NamedDateFormat.rfc822.parse("Sun, 31 Aug 2014 00:29:15 GMT")
        let twitter = NamedDateFormat.twitter.parse("Sun Aug 31 00:29:15 +0000 2014")
        #expect(rfc822 != nil)
        #expect(rfc822 == twitter)
    }

    @Test func formats() {
        #expect(NamedDateFormat.rfc822.format(ts(sunday20140831)) == "Sun, 31 Aug 2014 00:29:15 +0000")
        #expect(NamedDateFormat.rfc822.format(ts(1_409_529_600)) == "Mon, 01 Sep 2014 00:00:00 +0000")
        #expect(NamedDateFormat.twitter.format(ts(sunday20140831)) == "Sun Aug 31 00:29:15 +0000 2014")
        #expect(NamedDateFormat.rfc822.format(ts(sunday20140831, 1)) == nil)
        #expect(NamedDateFormat.twitter.format(ts(sunday20140831, 1)) == nil)
    }

    @Test func twitterWithOffsetAndInvalid() {
        #expect(NamedDateFormat.twitter.parse("Sun Aug 31 02:29:15 +0200 2014") == ts(sunday20140831))
        #expect(NamedDateFormat.twitter.parse("Sun Aug 31 00:29:15 +0000 2014 ") == nil)
        #expect(NamedDateFormat.twitter.parse("Sun Aug 31 00:29:15 2014") == nil)
        #expect(NamedDateFormat.twitter.parse("Sun, 31 Aug 2014 00:29:15 GMT") == nil)
    }
}

// MARK: - .NET

@Suite(".NET JSON dates")
struct DotNetTests {
    @Test(arguments: [
        ("/Date(1409444955123)/", ts(sunday20140831, 123_000_000)),
        ("/Date(1409444955123+0200)/", ts(sunday20140831, 123_000_000)),
        ("/Date(1409444955123-0530)/", ts(sunday20140831, 123_000_000)),
        ("/Date(-5000)/", ts(-5)),
        ("/Date(-1)/", ts(-1, 999_000_000)),
        ("/Date(0)/", ts(0)),
        ("/Date(-9223372036854775808)/", ts(-9_223_372_036_854_776, 192_000_000)),
    ])
    func parses(text: String, instant: Timestamp) {
        #expect(NamedDateFormat.dotnet.parse(text) == instant)
    }

    @Test(arguments: [
        "", "/Date()/", "/Date(abc)/", "/Date(12)", "Date(12)/", "x/Date(12)/", "/Date(12)/x", "/Date(12+02)/",
        "/Date(12+020)/", "/Date(9223372036854775808)/", "/Date(1.5)/", "/date(12)/",
    ])
    func rejectsInvalid(text: String) {
        #expect(NamedDateFormat.dotnet.parse(text) == nil)
    }

    @Test func formats() {
        #expect(NamedDateFormat.dotnet.format(ts(sunday20140831, 123_000_000)) == "/Date(1409444955123)/")
        #expect(NamedDateFormat.dotnet.format(ts(-5)) == "/Date(-5000)/")
        #expect(NamedDateFormat.dotnet.format(ts(-1, 999_000_000)) == "/Date(-1)/")
        #expect(NamedDateFormat.dotnet.format(ts(sunday20140831, 123_000_001)) == nil)
        #expect(NamedDateFormat.dotnet.format(ts(.max)) == nil)
    }
}

// MARK: - Epoch numbers

@Suite("Epoch numbers")
struct EpochNumberTests {
    @Test(arguments: [
        ("1409444955123", EpochUnit.milliseconds, ts(sunday20140831, 123_000_000)),
        ("1.409444955123e12", .milliseconds, ts(sunday20140831, 123_000_000)),
        ("1409444955.5", .seconds, ts(sunday20140831, 500_000_000)),
        ("1409444955", .seconds, ts(sunday20140831)),
        ("1.5e3", .seconds, ts(1500)),
        ("1.5E+3", .seconds, ts(1500)),
        ("15e-1", .seconds, ts(1, 500_000_000)),
        ("-1", .milliseconds, ts(-1, 999_000_000)),
        ("-1.5", .seconds, ts(-2, 500_000_000)),
        ("-0.5", .seconds, ts(-1, 500_000_000)),
        ("-1", .seconds, ts(-1)),
        ("0", .seconds, ts(0)),
        ("-0", .seconds, ts(0)),
        ("-0.0e-7", .hours, ts(0)),
        ("0e999999999999999999999", .seconds, ts(0)),
        ("0.000000001", .seconds, ts(0, 1)),
        ("1e-9", .seconds, ts(0, 1)),
        ("0.000001", .milliseconds, ts(0, 1)),
        ("1.0000000000", .seconds, ts(1)),
        ("23491921", .minutes, ts(1_409_515_260)),
        ("0.5", .minutes, ts(30)),
        ("-0.25", .minutes, ts(-15)),
        ("1e-10", .hours, ts(0, 360)),
        ("391512", .hours, ts(1_409_443_200)),
        ("1.5", .hours, ts(5400)),
        ("4611686018427387904", .seconds, ts(1 << 62)),
        ("-4611686018427387904.5", .seconds, ts(-(1 << 62) - 1, 500_000_000)),
    ])
    func parses(text: String, unit: EpochUnit, instant: Timestamp) {
        #expect(Timestamp(epochNumber: text, unit: unit) == instant)
    }

    @Test(arguments: [
        ("0.0000000001", EpochUnit.seconds), ("1e-10", .seconds), ("0.0000001", .milliseconds),
        ("1e-12", .minutes), ("abc", .seconds), ("", .seconds), ("-", .seconds), ("+1", .seconds), ("01", .seconds),
        ("1.", .seconds), (".5", .seconds), ("1e", .seconds), ("1e+", .seconds), (" 1", .seconds), ("1 ", .seconds),
        ("0x10", .seconds), ("1_000", .seconds), ("NaN", .seconds), ("Infinity", .seconds), ("--1", .seconds),
        ("4611686018427387905", .seconds), ("1e19", .seconds), ("1e999999999999999999999", .seconds),
        ("4611686018427387905000", .milliseconds), ("9223372036854775807", .minutes),
    ])
    func rejects(text: String, unit: EpochUnit) {
        #expect(Timestamp(epochNumber: text, unit: unit) == nil)
    }

    @Test func parsesSubstring() {
        let text = "x1409444955123x"
        #expect(Timestamp(epochNumber: text.dropFirst().dropLast(), unit: .milliseconds) == ts(sunday20140831, 123_000_000))
    }

    @Test(arguments: [
        (ts(sunday20140831, 123_000_000), EpochUnit.milliseconds, "1409444955123"),
        (ts(sunday20140831, 123_000_000), .seconds, "1409444955.123"),
        (ts(-1, 500_000_000), .seconds, "-0.5"),
        (ts(-1, 500_000_000), .milliseconds, "-500"),
        (ts(-1, 999_999_999), .milliseconds, "-0.000001"),
        (ts(0, 1), .milliseconds, "0.000001"),
        (ts(0), .seconds, "0"),
        (ts(0), .milliseconds, "0"),
        (ts(0), .hours, "0"),
        (ts(1500), .seconds, "1500"),
        (ts(5, 20_000_000), .milliseconds, "5020"),
        (ts(30), .minutes, "0.5"),
        (ts(-15), .minutes, "-0.25"),
        (ts(5400), .hours, "1.5"),
        (ts(0, 360), .hours, "0.0000000001"),
        (ts(0, 60), .minutes, "0.000000001"),
        (ts(1), .minutes, "0.01666666667"),
        (ts(-1), .minutes, "-0.01666666667"),
        (ts(1), .hours, "0.0002777777778"),
        (ts(3599, 999_999_999), .hours, "0.9999999999997"),
        (ts(.max), .seconds, "9223372036854775807"),
        (ts(.min), .seconds, "-9223372036854775808"),
        (ts(.max, 999_000_000), .milliseconds, "9223372036854775807999"),
        (ts(.min), .milliseconds, "-9223372036854775808000"),
    ])
    func formats(instant: Timestamp, unit: EpochUnit, text: String) {
        #expect(instant.epochNumber(unit: unit) == text)
    }

    @Test func exactFormIsNilOnlyWhenNotTerminating() {
        #expect(ts(1).exactEpochNumber(unit: .minutes) == nil)
        #expect(ts(1).exactEpochNumber(unit: .hours) == nil)
        #expect(ts(30).exactEpochNumber(unit: .minutes) == "0.5")
        #expect(ts(0, 1).exactEpochNumber(unit: .seconds) == "0.000000001")
        #expect(ts(1).epochNumber(unit: .minutes) == "0.01666666667")
        #expect(Timestamp(epochNumber: "0.01666666667", unit: .minutes) == nil)
    }

    static let roundTripInstants = [
        ts(0), ts(sunday20140831, 123_000_000), ts(-1, 999_000_000), ts(-5), ts(951_782_400), ts(-2_208_988_800),
        ts(1 << 40, 1_000_000), ts(-(1 << 40), 250_000_000), ts(1_409_443_200), ts(-14_182_940),
    ]

    @Test(arguments: EpochUnit.allCases, roundTripInstants)
    func roundTripsWhenExact(unit: EpochUnit, instant: Timestamp) throws {
        guard let text = instant.exactEpochNumber(unit: unit) else {
            // Only minutes and hours can be inexact; the seconds field decides it for these instants.
            #expect(unit == .minutes || unit == .hours)
            return
        }
        #expect(text == instant.epochNumber(unit: unit))
        #expect(Timestamp(epochNumber: text, unit: unit) == instant)
    }

    @Test(arguments: EpochUnit.allCases)
    func roundTripsNanosecondInstants(unit: EpochUnit) {
        let instants = unit == .minutes || unit == .hours
            ? [ts(3600, 360), ts(-3600 * 24, 720), ts(7200)]
            : [ts(sunday20140831, 123_456_789), ts(-1, 1), ts(1 << 50, 999_999_999)]
        for instant in instants {
            let text = instant.epochNumber(unit: unit)
            #expect(Timestamp(epochNumber: text, unit: unit) == instant, "\(unit) \(text)")
        }
    }

    @Test func unitRawValues() {
        #expect(EpochUnit.allCases.map(\.rawValue) == ["ms", "s", "min", "h"])
    }
}

// MARK: - Round trips through named formats

@Suite("Named formats")
struct NamedFormatTests {
    static let wholeSecondInstants = [
        ts(0), ts(sunday20140831), ts(-1), ts(-14_182_940), ts(951_782_400), ts(1_709_164_800),
        ts(-2_208_988_800), ts(-11_670_955_200), ts(-62_167_219_200), ts(253_402_300_799), ts(1_389_738_923),
    ]

    @Test(arguments: NamedDateFormat.allCases, wholeSecondInstants)
    func roundTripsWholeSeconds(format: NamedDateFormat, instant: Timestamp) throws {
        let text = try #require(format.format(instant))
        #expect(format.parse(text) == instant, "\(format) \(text)")
    }

    @Test(arguments: [
        (NamedDateFormat.iso8601, ts(-1, 123_456_789)), (.iso8601, ts(951_782_400, 1)),
        (.rfc3339Milliseconds, ts(-1, 123_000_000)), (.rfc3339Milliseconds, ts(1_709_164_800, 999_000_000)),
        (.dotnet, ts(-62_167_219_200, 1_000_000)), (.dotnet, ts(-1, 999_000_000)),
    ])
    func roundTripsFractions(format: NamedDateFormat, instant: Timestamp) throws {
        let text = try #require(format.format(instant))
        #expect(format.parse(text) == instant, "\(format) \(text)")
    }

    @Test(arguments: NamedDateFormat.allCases.filter { $0 != .dotnet })
    func yearOutsideRangeFormatsNil(format: NamedDateFormat) {
        #expect(format.format(ts(-62_167_219_201)) == nil)
        #expect(format.format(ts(253_402_300_800)) == nil)
    }

    @Test func namesLookUp() {
        #expect(NamedDateFormat.allNames == ["iso8601", "rfc3339", "rfc3339Milliseconds", "rfc822", "twitter", "dotnet"])
        for name in NamedDateFormat.allNames {
            #expect(NamedDateFormat.named(name)?.rawValue == name)
        }
        #expect(NamedDateFormat.named("ISO8601") == nil)
        #expect(NamedDateFormat.named("unix") == nil)
    }
}

// MARK: - Custom patterns

@Suite("DateFormat patterns")
struct DateFormatTests {
    @Test func customPatternWithDefaultOffset() throws {
        let format = try DateFormat(pattern: "dd/MM/yyyy HH:mm", timeZoneOffsetSeconds: 3600)
        #expect(format.pattern == "dd/MM/yyyy HH:mm")
        #expect(format.parse("31/08/2014 01:29") == ts(sunday20140831 - 15))
        #expect(format.format(ts(sunday20140831)) == "31/08/2014 01:29")
        #expect(format.format(ts(sunday20140831 - 3600 * 2)) == "30/08/2014 23:29")
        #expect(format.parse("31/08/2014 1:29") == nil)
        #expect(format.parse("31/08/2014 01:29:00") == nil)
        #expect(format.parse("29/02/2014 01:29") == nil)
    }

    @Test(arguments: [
        ("yyyy-QQ", "'Q'"), ("yyyy-MM-dd G", "'G'"), ("hh:mm a k", "'k'"), ("YYYY", "'Y'"),
    ])
    func unsupportedLetterIsNamed(pattern: String, letter: String) {
        let error = #expect(throws: DateFormatError.self) { try DateFormat(pattern: pattern) }
        #expect(error?.message.contains("unsupported pattern letter \(letter)") == true, "\(String(describing: error))")
    }

    @Test(arguments: ["yyy", "MMMMM", "ddd", "SSSSSSSSSS", "EEEEE", "XX", "zzzz", "HHH"])
    func unsupportedWidthIsRejected(pattern: String) {
        #expect(throws: DateFormatError.self) { try DateFormat(pattern: pattern) }
    }

    @Test(arguments: ["yyyy-MM-dd'T", "'", "HH 'o''clock"])
    func unterminatedQuote(pattern: String) {
        #expect(throws: DateFormatError(message: "unterminated quoted literal in date pattern \"\(pattern)\"")) {
            try DateFormat(pattern: pattern)
        }
    }

    @Test(arguments: ["hh:mm", "HH:mm a", "yyyy MM yyyy", "MMM MM", "HH hh a", "Z XXX"])
    func inconsistentFieldsAreRejected(pattern: String) {
        #expect(throws: DateFormatError.self) { try DateFormat(pattern: pattern) }
    }

    @Test(arguments: [30, 86_400, -86_400, 3601])
    func badOffsetsAreRejected(offset: Int) {
        #expect(throws: DateFormatError.self) { try DateFormat(pattern: "HH", timeZoneOffsetSeconds: offset) }
    }

    @Test func errorDescriptionIsMessage() {
        let error = DateFormatError(message: "boom")
        #expect(error.description == "boom")
    }

    @Test func quotedLiterals() throws {
        let format = try DateFormat(pattern: "yyyy'-'MM'-'dd'T'HH 'o''clock' ''")
        #expect(format.format(ts(sunday20140831)) == "2014-08-31T00 o'clock '")
        #expect(format.parse("2014-08-31T00 o'clock '") == ts(sunday20140831 - 29 * 60 - 15))
        #expect(format.parse("2014-08-31t00 o'clock '") == nil)
    }

    @Test func twelveHourClock() throws {
        let format = try DateFormat(pattern: "yyyy-MM-dd hh:mm a")
        #expect(format.parse("2014-08-31 12:29 AM") == ts(sunday20140831 - 15))
        #expect(format.parse("2014-08-31 12:29 pm") == ts(sunday20140831 - 15 + 12 * 3600))
        #expect(format.parse("2014-08-31 01:29 PM") == ts(sunday20140831 - 15 + 13 * 3600))
        #expect(format.parse("2014-08-31 00:29 AM") == nil)
        #expect(format.parse("2014-08-31 13:29 PM") == nil)
        #expect(format.parse("2014-08-31 01:29 XM") == nil)
        #expect(format.format(ts(sunday20140831)) == "2014-08-31 12:29 AM")
        #expect(format.format(ts(sunday20140831 + 13 * 3600)) == "2014-08-31 01:29 PM")
        let unpadded = try DateFormat(pattern: "h a")
        #expect(unpadded.format(ts(sunday20140831 + 12 * 3600)) == "12 PM")
    }

    @Test func monthAndWeekdayNames() throws {
        let format = try DateFormat(pattern: "EEEE, MMMM d, yyyy")
        #expect(format.format(ts(sunday20140831)) == "Sunday, August 31, 2014")
        #expect(format.parse("Sunday, August 31, 2014") == ts(1_409_443_200))
        #expect(format.parse("monday, AUGUST 31, 2014") == ts(1_409_443_200))
        #expect(format.parse("Sun, August 31, 2014") == nil)
        #expect(format.parse("Sunday, Aug 31, 2014") == nil)
        let short = try DateFormat(pattern: "EEE MMM")
        #expect(short.format(ts(0)) == "Thu Jan")
        #expect(short.parse("thu jAN") == ts(0))
    }

    @Test func twoDigitYearsUse1970To2069Window() throws {
        let format = try DateFormat(pattern: "yy-MM-dd")
        #expect(format.parse("69-12-31") == ts(3_155_673_600))  // 2069-12-31
        #expect(format.parse("70-01-01") == ts(0))
        #expect(format.parse("99-12-31") == ts(946_598_400))
        #expect(format.parse("00-01-01") == ts(946_684_800))
        #expect(format.format(ts(sunday20140831)) == "14-08-31")
        #expect(format.format(ts(-2_208_988_800)) == "00-01-01")
    }

    @Test func unpaddedFields() throws {
        let format = try DateFormat(pattern: "y/M/d H:m:s")
        #expect(format.format(ts(-62_135_596_800 + 3 * 3600 + 4 * 60 + 5)) == "1/1/1 3:4:5")
        #expect(format.parse("2014/8/31 0:29:15") == ts(sunday20140831))
        #expect(format.parse("2014/08/31 00:29:15") == ts(sunday20140831))
        #expect(format.parse("2014/008/31 0:29:15") == nil)
    }

    @Test func fractionDigitsAreExactWhenParsingAndTruncatedWhenFormatting() throws {
        let format = try DateFormat(pattern: "HH:mm:ss.SS")
        #expect(format.parse("00:00:01.25") == ts(1, 250_000_000))
        #expect(format.parse("00:00:01.2") == nil)
        #expect(format.parse("00:00:01.250") == nil)
        #expect(format.format(ts(1, 259_999_999)) == "00:00:01.25")
        let nanos = try DateFormat(pattern: "ss.SSSSSSSSS")
        #expect(nanos.format(ts(-1, 1)) == "59.000000001")
        #expect(nanos.parse("59.000000001") == ts(59, 1))
    }

    @Test(arguments: [
        ("Z", "Z", 0), ("Z", "+0200", 7200), ("Z", "-05:30", -19_800), ("ZZZ", "-0000", 0),
        ("XXX", "Z", 0), ("XXX", "+02:00", 7200), ("ZZZZZ", "-0130", -5400),
        ("zzz", "GMT", 0), ("zzz", "UTC", 0), ("zzz", "UT", 0), ("zzz", "Z", 0), ("zzz", "CST", -6 * 3600),
        ("zzz", "CDT", -5 * 3600), ("zzz", "MST", -7 * 3600), ("zzz", "MDT", -6 * 3600), ("zzz", "PDT", -7 * 3600),
        ("zzz", "+0100", 3600), ("zzz", "GMT+01:00", 3600), ("zzz", "GMT-0230", -9000), ("zzz", "UTC+05", 18_000), ("zzz", "UT-01:00", -3600),
        ("ZZZZ", "GMT+01:00", 3600),
    ])
    func zoneFieldsParse(pattern: String, text: String, offset: Int) throws {
        let format = try DateFormat(pattern: "HH:mm " + pattern, timeZoneOffsetSeconds: 600)
        #expect(format.parse("12:00 " + text) == ts(Int64(12 * 3600 - offset)))
    }

    @Test(arguments: [("Z", "z"), ("Z", "+02"), ("Z", "GMT"), ("XXX", "+2:00"), ("zzz", "EET"), ("zzz", "Z+01:00")])
    func zoneFieldsReject(pattern: String, text: String) throws {
        let format = try DateFormat(pattern: "HH:mm " + pattern)
        #expect(format.parse("12:00 " + text) == nil)
    }

    @Test(arguments: [
        (0, ["+0000", "+0000", "Z", "Z", "GMT", "GMT"]),
        (7200, ["+0200", "+0200", "+02:00", "+02:00", "GMT+02:00", "GMT+02:00"]),
        (-19_800, ["-0530", "-0530", "-05:30", "-05:30", "GMT-05:30", "GMT-05:30"]),
    ])
    func zoneFieldsFormat(offset: Int, texts: [String]) throws {
        let patterns = ["Z", "ZZZ", "XXX", "ZZZZZ", "zzz", "ZZZZ"]
        for (pattern, text) in zip(patterns, texts) {
            let format = try DateFormat(pattern: pattern, timeZoneOffsetSeconds: offset)
            #expect(format.format(ts(sunday20140831)) == text, "\(pattern)")
            #expect(format.parse(text) == ts(Int64(-offset)), "\(pattern)")
        }
    }

    @Test func zoneInTextOverridesDefaultOffset() throws {
        let format = try DateFormat(pattern: "yyyy-MM-dd HH:mm:ss Z", timeZoneOffsetSeconds: -3600)
        #expect(format.parse("2014-08-31 00:29:15 +0000") == ts(sunday20140831))
        #expect(format.format(ts(sunday20140831)) == "2014-08-30 23:29:15 -0100")
        let noZone = try DateFormat(pattern: "yyyy-MM-dd HH:mm:ss", timeZoneOffsetSeconds: -3600)
        #expect(noZone.parse("2014-08-30 23:29:15") == ts(sunday20140831))
    }

    @Test func nonASCIILiteralsAndDefaults() throws {
        let format = try DateFormat(pattern: "HH時mm分")
        #expect(format.parse("00時29分") == ts(29 * 60))
        #expect(format.format(ts(sunday20140831)) == "00時29分")
        #expect(try DateFormat(pattern: "").parse("") == ts(0))
        #expect(try DateFormat(pattern: "").format(ts(5)) == "")
    }

    @Test func formatOutsideYearRangeIsNil() throws {
        let format = try DateFormat(pattern: "yyyy", timeZoneOffsetSeconds: 3600)
        #expect(format.format(ts(253_402_300_799)) == nil)  // 10000-01-01T00:59:59 local
        #expect(format.format(ts(-62_167_219_200 - 3600)) == "0000")
        #expect(format.format(ts(.max)) == nil)
    }

    @Test func formatsAreHashable() throws {
        let a = try DateFormat(pattern: "yyyy")
        let b = try DateFormat(pattern: "yyyy")
        let c = try DateFormat(pattern: "yyyy", timeZoneOffsetSeconds: 60)
        #expect(a == b)
        #expect(a != c)
        #expect(Set([a, b, c]).count == 2)
    }
}

@Suite("Date to epoch number in one step")
struct DateToNumberShortcutTests {
    /// The shortcut relies on canonical text parsing back to the very same instant.
    @Test func canonicalTextParsesBackToTheSameInstant() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<20_000 {
            // Years 0000 to 9999, any nanosecond.
            let t = Timestamp(seconds: Int64.random(in: -62_167_219_200...253_402_300_799, using: &rng),
                              nanoseconds: Bool.random(using: &rng) ? 0 : Int32.random(in: 0..<1_000_000_000, using: &rng))
            guard let text = t.rfc3339 else { Issue.record("no canonical text for \(t)"); continue }
            #expect(NamedDateFormat.iso8601.parse(text) == t, "\(text)")
        }
    }

    /// `thread(stringToDate, dateToNumber)` gives what the two stages give one after the other, for dates that
    /// convert, dates that do not divide into the unit, dates out of range and text that is no date.
    @Test func shortcutMatchesTheStages() {
        let inputs: [JSONValue?] = [
            .string("Sun Aug 31 00:29:15 +0000 2014"), .string("Sun Aug 31 00:29:15 +0530 2014"),
            .string("2014-08-31T00:29:15.123456789Z"), .string("2014-08-31T00:29:15.5+02:00"),
            .string("0000-01-01T00:00:00Z"), .string("9999-12-31T23:59:59.999999999Z"), .string("10000-01-01T00:00:00Z"),
            .string("Mon, 31 Aug 2014 00:29:15 GMT"), .string("not a date"), .string(""), .number(JSONNumber(unchecked: "12")), .null, nil,
        ]
        let formatSets: [[DateSyntax]] = [
            [.named(.twitter)], [.named(.iso8601)], [.named(.rfc822)], [.named(.twitter), .named(.iso8601)], [.named(.rfc3339Milliseconds), .named(.iso8601)],
        ]
        for formats in formatSets {
            for unit in EpochUnit.allCases {
                let thread = Mapper.thread(.stringToDate(formats), .dateToNumber(unit))
                for input in inputs {
                    let first = Mapper.stringToDate(formats).map(input)
                    let expected = first.isFatal ? MapResult.failure(first.errors) : Mapper.dateToNumber(unit).map(first.value)
                    let actual = thread.map(input)
                    #expect(actual.value == expected.value, "\(formats) \(unit) \(String(describing: input))")
                    #expect(actual.errors == expected.errors, "\(formats) \(unit) \(String(describing: input))")
                }
                // The stream engine writes the number from the string event's bytes (`DateNumberSink`): as a
                // field's value, required, optional, and as array elements.
                let fields = [
                    Field("d", to: "d", thread), Field("d", to: "r", .notNull(thread)), Field("d", to: "o", .optionally(thread)),
                    Field("l", to: "l", .arrayOf(.optionally(thread))),
                ]
                let mapper = Mapper.object(ObjectMapping(fields: fields))
                var stream = StreamEngine(mapper: mapper)
                let tree = TreeEngine(mapper: mapper)
                for input in inputs {
                    guard let input else { continue }
                    let text = JSONWriter.string(input)
                    let record = Array(#"{"d":\#(text),"l":[\#(text),"2014-08-31T00:29:15Z"]}"#.utf8)
                    expectSameMapping(&stream, tree, record)
                }
            }
        }
    }
}

@Suite("Epoch numbers")
struct EpochTextTests {
    /// Whole milliseconds and seconds take a shortcut; it must write what the digit-by-digit path writes.
    @Test func wholeNumbersMatchTheGeneralPath() {
        var rng = SystemRandomNumberGenerator()
        var checked = 0
        for i in 0..<50_000 {
            let seconds = i % 3 == 0 ? Int64.random(in: -5...5, using: &rng) : Int64.random(in: -(1 << 49)...(1 << 49), using: &rng)
            let nanos: Int32 = [0, Int32.random(in: 0..<1000, using: &rng) * 1_000_000, Int32.random(in: 0..<1_000_000_000, using: &rng)][i % 3]
            let t = Timestamp(seconds: seconds, nanoseconds: nanos)
            for unit in [EpochUnit.milliseconds, .seconds] {
                guard let fast = TimestampSupport.wholeEpochText(t, unit: unit) else { continue }
                checked += 1
                #expect(fast == TimestampSupport.decimalEpochText(t, unit: unit, exactOnly: true), "\(t) \(unit)")
            }
        }
        #expect(checked > 30_000)
    }
}

@Suite("Twitter dates")
struct TwitterDateTests {
    /// The named `twitter` format reads its tokens in code (`NamedDateFormat.parseTwitter`) instead of through the
    /// pattern's token loop: both must agree on every input — well-formed dates of every month, weekday, zone and
    /// day-of-month edge, and each of them with one byte changed, dropped or added.
    @Test func unrolledReadMatchesThePattern() {
        var rng = SystemRandomNumberGenerator()
        let weekdays = ["Sun", "Mon", "tue", "WED", "Thu", "Fri", "Sat", "Xyz"]
        let months = ["Jan", "Feb", "mar", "APR", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec", "Foo"]
        let zones = ["+0000", "-0500", "+2359", "+2400", "-0060", "Z", "+05", "+05:30"]
        let alphabet = Array("0123456789 :+-ZaAjJn\u{00}x".utf8)
        var inputs: [[UInt8]] = []
        for _ in 0..<3000 {
            let day = Int.random(in: 0...32, using: &rng), year = Int.random(in: 0...9999, using: &rng)
            func padded(_ n: Int, _ width: Int) -> String {
                String(repeating: "0", count: max(0, width - String(n).count)) + String(n)
            }
            let time = [Int.random(in: 0...24, using: &rng), Int.random(in: 0...60, using: &rng),
                        Int.random(in: 0...60, using: &rng)].map { padded($0, 2) }.joined(separator: ":")
            let text = "\(weekdays.randomElement(using: &rng)!) \(months.randomElement(using: &rng)!) \(padded(day, 2)) "
                + "\(time) \(zones.randomElement(using: &rng)!) \(padded(year, 4))"
            let bytes = Array(text.utf8)
            inputs.append(bytes)
            var changed = bytes
            let i = Int.random(in: 0..<changed.count, using: &rng)
            switch Int.random(in: 0..<3, using: &rng) {
            case 0: changed[i] = alphabet.randomElement(using: &rng)!
            case 1: changed.remove(at: i)
            default: changed.insert(alphabet.randomElement(using: &rng)!, at: i)
            }
            inputs.append(changed)
        }
        inputs += ["", "Tue", "Tue Feb 29 12:00:00 +0000 2024", "Tue Feb 29 12:00:00 +0000 2023",
                   "Tue Feb 01 23:43:02 +0000 2022 ", " Tue Feb 01 23:43:02 +0000 2022"].map { Array($0.utf8) }
        var parsed = 0, canonical = 0
        for input in inputs {
            let (fast, pattern, fixed) = input.withUnsafeBufferPointer {
                (NamedDateFormat.parseTwitter($0), NamedDateFormat.twitterFormat.parse(bytes: $0),
                 NamedDateFormat.parseTwitterCanonical($0))
            }
            #expect(fast == pattern, "\(String(decoding: input, as: UTF8.self))")
            if fast != nil { parsed += 1 }
            // The fixed-offset read answers only what the token reads answer the same.
            if let fixed {
                #expect(fixed == pattern, "\(String(decoding: input, as: UTF8.self))")
                canonical += 1
            }
        }
        #expect(parsed > 500, "the inputs must include many valid dates")
        #expect(canonical > 300, "many valid dates take the fixed-offset read")
    }
}
