// DateNumberFusion.swift — `thread(stringToDate, dateToNumber)` in one step, for both engines: the tree's
// `Mapper.map` takes it (`dateToNumberShortcut`), the stream engine's `DateNumberSink` too, on the string event's
// bytes. Everything it does not take goes the general way, so results and errors are those of the two stages.

extension Mapper {
    /// `thread(stringToDate(formats), dateToNumber(unit))`, the usual way to turn a date into epoch numbers, in one
    /// step: the date is parsed once instead of being written as canonical RFC 3339 text and parsed again. Only
    /// the plain success is taken here (canonical text parses back to the same instant: `TimestampTests`);
    /// anything else returns nil and goes the general way, so errors stay exactly as they are.
    static func dateToNumberShortcut(_ stages: [Mapper], _ source: JSONValue?) -> MapResult? {
        guard case .string(var text)? = source, let (formats, unit) = dateToNumberStages(stages) else { return nil }
        guard let number = text.withUTF8({ epochNumberText(formats, unit, utf8: $0) }) else { return nil }
        return .success(.number(JSONNumber(unchecked: number)))
    }

    /// The date syntaxes and the unit of `thread(stringToDate, dateToNumber)`, or nil for other stages.
    static func dateToNumberStages(_ stages: [Mapper]) -> ([DateSyntax], EpochUnit)? {
        guard stages.count == 2,
              case .convert(.stringToDate(let formats)) = stages[0].kind,
              case .convert(.dateToNumber(let unit)) = stages[1].kind
        else { return nil }
        return (formats, unit)
    }

    /// `thread(stringToDate(formats), dateToNumber(unit))` on a string's UTF-8 bytes in one step: the epoch
    /// number's text, or nil where the two stages must decide (no format parses, or the instant is not whole in
    /// the unit). Both engines take it: the tree through `dateToNumberShortcut`, the stream engine on the
    /// string event's bytes (`DateNumberSink`).
    static func epochNumberText(_ formats: [DateSyntax], _ unit: EpochUnit, utf8: UnsafeBufferPointer<UInt8>) -> String? {
        epochInstant(formats, utf8: utf8)?.exactEpochNumber(unit: unit)
    }

    /// The instant `stringToDate(formats)` reads from the bytes, or nil where it fails. (Any sequence of formats: the
    /// fields written from a projection keep theirs in memory of their own, which passing needs no reference count.)
    static func epochInstant<Formats: Sequence<DateSyntax>>(_ formats: Formats, utf8: UnsafeBufferPointer<UInt8>) -> Timestamp? {
        for format in formats {
            guard let t = format.parse(bytes: utf8) else { continue }
            // stringToDate takes the first format that parses to a date RFC 3339 can write.
            guard TimestampSupport.LocalTime(t, offsetSeconds: 0) != nil else { continue }
            return t
        }
        return nil
    }
}
