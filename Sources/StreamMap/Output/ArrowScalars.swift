// ArrowScalars.swift — the values of timestamp and decimal128 columns, from the JSON text a mapping writes. The
// schema's checks (`ArrowValueCheck`) and the writer (`ColumnBuilder`) read values with these same functions, so
// a record whose value passes the check is one the writer can write, and one that does not is rejected with the
// message given here. Nothing is ever rounded or truncated to fit.

enum ArrowScalars {
    /// A date string's instant in `unit`s since the epoch: ISO 8601 with a zone (what `stringToDate` and
    /// `numberToDate` write: `2014-08-31T00:29:15Z`, also `…+02:00`, a fraction to the nanosecond, or a calendar
    /// date alone, midnight UTC). A message otherwise: not a date, finer than the unit, or beyond int64's range of
    /// the unit.
    static func timestamp(_ text: UnsafeBufferPointer<UInt8>, _ unit: ColumnType.TimeUnit) -> Result<Int64, ArrowScalarError> {
        let column = ArrowType.timestamp(unit)
        switch TimestampSupport.readISO(text, fraction: .any) {
        case .invalid:
            return .failure(ArrowScalarError("\(quoted(text)) is not a date with a zone (ISO 8601, as stringToDate writes it: 2014-08-31T00:29:15Z), and the column is \(column); map it with stringToDate"))
        case .finerThanNanoseconds:
            return .failure(ArrowScalarError("\(quoted(text)) is finer than a nanosecond, and the column is \(column)"))
        case .instant(let t):
            let nanosPerUnit = Int32(1_000_000_000 / unit.perSecond)
            guard t.nanoseconds % nanosPerUnit == 0 else {
                let finer = ColumnType.TimeUnit.allCases.first { t.nanoseconds % Int32(1_000_000_000 / $0.perSecond) == 0 }!
                return .failure(ArrowScalarError("\(quoted(text)) is finer than the \(column) column's unit; declare \"column\": \"timestamp(\(finer.rawValue))\" to keep it (it is never truncated)"))
            }
            // (Before the epoch, from the next second down, so that the earliest instant int64 holds is reached.)
            var seconds = t.seconds, part = Int64(t.nanoseconds / nanosPerUnit)
            if seconds < 0 && part > 0 {
                seconds += 1
                part -= unit.perSecond
            }
            let (whole, o1) = seconds.multipliedReportingOverflow(by: unit.perSecond)
            let (value, o2) = whole.addingReportingOverflow(part)
            guard !o1, !o2 else {
                return .failure(ArrowScalarError("\(quoted(text)) is beyond the range of the \(column) column (int64 \(unit.name) since 1970)"))
            }
            return .success(value)
        }
    }

    /// `timestamp(_:_:)` of a JSON string's text as the engines write it (`raw`: quotes included), unescaped first
    /// when it has an escape.
    static func timestamp(jsonString raw: UnsafeRawBufferPointer, _ unit: ColumnType.TimeUnit) -> Result<Int64, ArrowScalarError> {
        let inner = UnsafeRawBufferPointer(rebasing: raw[1..<(raw.count - 1)])
        guard inner.firstIndex(of: UInt8(ascii: "\\")) != nil else { return timestamp(inner.assumingMemoryBound(to: UInt8.self), unit) }
        var text: [UInt8] = []
        CompactJSONScanner.unescape(inner, appendingTo: &text)
        return text.withUnsafeBufferPointer { timestamp($0, unit) }
    }

    /// A JSON number's value as a decimal128 of `precision` digits, `scale` after the point: the unscaled integer
    /// (`12.5` in decimal(5,2) is 1250). A message when it has more digits after the point than `scale` or more
    /// before it than `precision − scale`.
    static func decimal(_ text: UnsafeBufferPointer<UInt8>, precision: Int, scale: Int) -> Result<Int128, ArrowScalarError> {
        let column = ArrowType.decimal128(precision: precision, scale: scale)
        // (Quoted in messages up to 64 bytes: a value may be megabytes long.)
        let number = String(decoding: text.prefix(64), as: UTF8.self) + (text.count > 64 ? "…" : "")
        var cursor = TimestampSupport.Cursor(text)
        guard let d = TimestampSupport.Decimal.parseJSON(&cursor) else {
            return .failure(ArrowScalarError("\(number) is not a number, and the column is \(column)"))
        }
        if d.digits.isEmpty { return .success(0) }
        guard d.exponent + scale >= 0 else {
            return .failure(ArrowScalarError("\(number) has more than \(scale) digit\(scale == 1 ? "" : "s") after the point, and the column is \(column); a larger scale keeps them (it is never rounded)"))
        }
        // Digits of the unscaled integer; `exponent` is clamped while reading, so this cannot overflow.
        guard d.digits.count + d.exponent + scale <= precision else {
            return .failure(ArrowScalarError("\(number) has more than \(precision - scale) digit\(precision - scale == 1 ? "" : "s") before the point, and the column is \(column)"))
        }
        var v: Int128 = 0
        for digit in d.digits { v = v * 10 + Int128(digit) }
        for _ in 0..<(d.exponent + scale) { v *= 10 }
        return .success(d.negative ? -v : v)
    }

    private static func quoted(_ text: UnsafeBufferPointer<UInt8>) -> String {
        let s = String(decoding: text.prefix(64), as: UTF8.self)
        return JSONWriter.string(.string(text.count > 64 ? s + "…" : s))
    }
}

/// What keeps a value from a timestamp or decimal column.
struct ArrowScalarError: Error {
    var message: String
    init(_ message: String) { self.message = message }
}

extension ColumnType.TimeUnit {
    /// `seconds`, `microseconds`, …
    var name: String {
        switch self {
        case .seconds: return "seconds"
        case .milliseconds: return "milliseconds"
        case .microseconds: return "microseconds"
        case .nanoseconds: return "nanoseconds"
        }
    }
}

extension ColumnType {
    /// The Arrow column of this type.
    var arrowType: ArrowType {
        switch self {
        case .timestamp(let unit): return .timestamp(unit)
        case .decimal(let p, let s): return .decimal128(precision: p, scale: s)
        }
    }
}
