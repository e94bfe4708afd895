#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
internal import CJSONScan

/// An object mapping whose fields each read one scalar at a path of keys (or compute a value from scalars at such
/// paths) and write it at one destination, mapped straight from where the projector found the values
/// (`cjsonscan_slot`) — no events replayed, no sinks called.
///
/// It writes only what it is sure of, with the sinks' own routines: a string or number that passes its field's
/// type check copied as `CopySink` copies it, a date turned into an epoch number as `DateNumberSink` turns it,
/// any other scalar mapped by the field's `Mapper.map` (what the base sink does), a computed field's expression
/// evaluated on its paths' values and finished by `Mapper.finishComputing` (as `ObjectSink` does), and an absent value, `null`,
/// `true` and `false` as the field's mapper maps them (worked out once: spec mappers are deterministic). A
/// record whose fields fail is rejected here too, with the errors the tree engine gives it: each failing field's
/// errors from its mapper (`Mapper.map` on the value, or those worked out once for absent, `null`, `true` and
/// `false`), at its source and destination paths, in field order (`ObjectMapping.map`'s own steps) — a mixed
/// firehose rejects many records, and replaying each through the sinks cost more than mapping a valid one. A
/// record in which anything else comes — warnings without an error, a computed field's error, an object or array
/// where a field reads, a key met twice, an object on a path that is not one — is declined, and the engine maps it
/// the usual way, so its result and its errors are the sinks' by construction. The object is laid out by the same
/// `DestinationTree` as `ObjectSink`'s. (The differential tests hold the two ways to each other.)
final class ProjectedFields {
    /// What a field does with a string or a number.
    private enum Rule {
        /// Copies a value whose type is in the set (nil: any), as `CopySink` does.
        case copy(JSONTypeSet?)
        /// `thread(stringToDate, dateToNumber)` on a string, as `DateNumberSink` does (the formats: `dates[i]`).
        case dateNumber(Int, EpochUnit)
        /// The field's mapper on the value (`Mapper.map`, as the base sink maps a scalar).
        case map
    }

    /// What a field's mapper makes of a value known in advance (absent, `null`, `true`, `false`): nothing, the
    /// text `fixedTexts[start..<start + length]`, or errors or warnings (`fixedErrors[start..<start + count]`, at
    /// the field's paths; `fatal`: one of them is).
    private enum Fixed {
        case omit
        case text(start: Int, length: Int)
        case failure(start: Int, count: Int, fatal: Bool)
    }

    /// What became of a record.
    enum Outcome: Equatable {
        /// Mapped and written.
        case written
        /// Nothing written: the engine maps the record the usual way.
        case declined
        /// Rejected with these errors (at least one fatal), the tree engine's.
        case rejected([MapError])
    }

    /// A field, as plain values (read per record without reference counting).
    private struct Field {
        let rule: Rule
        /// The result check its value must pass (`checks[i]`: a `postProcess` that reads the result alone, as
        /// `ResultCheckSink` tests it), or -1.
        let check: Int
        /// The slot of the value it reads (a computed field: -1).
        let slot: Int
        /// A computed field's expression, its policy and mapper, and its paths' slots: `computations[i]`; or -1.
        let computed: Int
        let absent: Fixed, null: Fixed, isTrue: Fixed, isFalse: Fixed
    }

    /// A field's value for the record in progress: where its text is when the layout writes it.
    private enum Source: UInt8 { case omitted, record, scratch }
    private struct Value {
        var source = Source.omitted
        var start = 0
        var length = 0
    }

    private let fields: UnsafeMutablePointer<Field>
    private let fieldCount: Int
    /// Per field, its mapper (for `Rule.map`); the date formats of the `dateNumber` rules; the fixed results' texts.
    private let mappers: [Mapper]
    /// (The formats in memory of their own, not an array of arrays: lending an array out of one retained and
    /// released it for every date written.)
    private let dates: UnsafeMutableBufferPointer<UnsafeMutableBufferPointer<DateSyntax>>
    /// (Each check boxed, and lent to its calls unretained from memory of their own: a closure taken out of an
    /// array retained and released its context at every value checked — five pairs of atomic operations a tweet
    /// with `--to arrow`. `checkBoxes` owns them.)
    private let checkBoxes: [Check]
    private let checks: UnsafeMutablePointer<Unmanaged<Check>>

    /// A field's result check.
    private final class Check: Sendable {
        let passes: @Sendable (UnsafeRawBufferPointer) -> Bool
        init(_ passes: @escaping @Sendable (UnsafeRawBufferPointer) -> Bool) { self.passes = passes }
    }
    private let fixedTexts: [UInt8]
    /// The errors of the fixed results that have some, at their fields' paths.
    private let fixedErrors: [MapError]
    /// Per field, the paths its errors are placed at (`ObjectMapping.attach`): its source as keys, its destination.
    private let errorPaths: [(source: [JSONPath], destination: [JSONPath])]
    /// The slots of the objects on the fields' paths (each must be one object or absent).
    private let objectSlots: [Int]
    /// (Each computed field boxed, and lent to its record's evaluation unretained from memory of their own: a
    /// tuple taken out of an array retained and released its expression's, its mapper's and its slots' storage at
    /// every record. `computationBoxes` owns them.)
    private let computationBoxes: [Computation]
    private let computations: UnsafeMutablePointer<Unmanaged<Computation>>

    /// A computed field: its expression, its policy and mapper, and its paths' slots.
    private final class Computation {
        let expression: ValueExpression
        let invalid: FieldPolicy.Action
        let then: Mapper
        let slots: [Int]
        init(_ c: (expression: ValueExpression, invalid: FieldPolicy.Action, then: Mapper, slots: [Int])) {
            (expression, invalid, then, slots) = c
        }
    }
    /// The computed fields' operand stack, its memory kept from record to record.
    @exclusivity(unchecked) private var expressionStack: [ValueExpression.Operand] = []
    private let destinations = DestinationTree()
    /// Where the projector writes the slots of a record.
    private let slots: UnsafeMutablePointer<cjsonscan_slot>
    @exclusivity(unchecked) private var values: UnsafeMutablePointer<Value>
    /// Texts made for the record in progress (mapped values, dates, fixed results), and the record's text.
    @exclusivity(unchecked) private var scratch: ByteBuffer
    @exclusivity(unchecked) private var output: ByteBuffer
    @exclusivity(unchecked) private var decoded: ByteBuffer
    /// Records written this way, and rejected (the tests check that the engine takes this path).
    @exclusivity(unchecked) private(set) var written = 0
    @exclusivity(unchecked) private(set) var rejected = 0

    /// Nil unless `mapper` is an object mapping of such fields (at most 64, keys only on their paths) whose paths
    /// `projector` reads to the values.
    init?(_ mapper: Mapper, projector: RecordProjector) {
        guard case .object(let mapping) = mapper.kind, case .drop = mapping.unmapped, mapping.fields.count <= 64
        else { return nil }
        let destinationPaths = mapping.fields.flatMap { $0.destinations.map(\.steps) }
        guard !KeyPath.earlierOverlaps(destinationPaths).contains(where: { $0 != nil }) else { return nil }
        var fields: [Field] = []
        var objectSlots: Set<Int> = []
        var dates: [[DateSyntax]] = []
        var checks: [@Sendable (UnsafeRawBufferPointer) -> Bool] = []
        var fixedTexts: [UInt8] = []
        var fixedErrors: [MapError] = []
        var errorPaths: [(source: [JSONPath], destination: [JSONPath])] = []
        func fixed(_ result: MapResult) -> Fixed {
            guard result.errors.isEmpty else {
                let start = fixedErrors.count
                let fatal = Self.attach(result.errors, errorPaths[errorPaths.count - 1], to: &fixedErrors)
                return .failure(start: start, count: fixedErrors.count - start, fatal: fatal)
            }
            guard let value = result.value else { return .omit }
            var w = JSONWriter()
            w.write(value)
            fixedTexts += w.bytes
            return .text(start: fixedTexts.count - w.bytes.count, length: w.bytes.count)
        }
        var computations: [(expression: ValueExpression, invalid: FieldPolicy.Action, then: Mapper, slots: [Int])] = []
        /// The slots of a path of keys (and of the objects on the way), when the projection reads it that way.
        func slotsOf(_ path: KeyPath) -> (objects: [Int], value: Int)? {
            let steps = path.steps
            guard !steps.isEmpty, !steps.dropFirst().contains(where: { KeyPath.arrayIndex($0) != nil }) else { return nil }
            return projector.slots(along: steps.map { Array($0.utf8) })
        }
        for field in mapping.fields {
            guard field.destinations.count == 1, field.mapper.isDeterministic else { return nil }
            // (A computed field's errors name the paths they are about; its failures are declined.)
            errorPaths.append((field.computed == nil ? field.sources.map { JSONPath($0.steps.map { .key($0) }) } : [.root],
                               field.destinations.map(\.destinationPath)))
            if let expression = field.computed {
                // A computed field: its expression evaluated on the values at its paths, as `ObjectSink` does.
                guard case .compute(_, let invalid, let then) = field.mapper.kind else { return nil }
                var pathSlots: [Int] = []
                for path in expression.paths {
                    guard let (objects, slot) = slotsOf(path) else { return nil }
                    objectSlots.formUnion(objects)
                    pathSlots.append(slot)
                }
                computations.append((expression, invalid, then, pathSlots))
                fields.append(Field(rule: .map, check: -1, slot: -1, computed: computations.count - 1,
                                    absent: .omit, null: .omit, isTrue: .omit, isFalse: .omit))  // (not read)
                _ = destinations.addSlot(field.destinations[0].steps)
                continue
            }
            guard field.sources.count == 1, let (objects, slot) = slotsOf(field.sources[0]) else { return nil }
            objectSlots.formUnion(objects)
            let m = field.mapper
            let (rule, check) = Self.rule(m, dates: &dates)
            if let check { checks.append(check) }
            fields.append(Field(
                rule: rule, check: check == nil ? -1 : checks.count - 1, slot: slot, computed: -1,
                absent: fixed(m.map(nil)), null: fixed(m.map(.null)),
                isTrue: fixed(m.map(.bool(true))), isFalse: fixed(m.map(.bool(false)))))
            _ = destinations.addSlot(field.destinations[0].steps)
        }
        self.fields = .allocate(capacity: max(fields.count, 1))
        self.fields.initialize(from: fields, count: fields.count)
        fieldCount = fields.count
        mappers = mapping.fields.map(\.mapper)
        self.dates = .allocate(capacity: dates.count)
        _ = self.dates.initialize(from: dates.map { formats in
            let copy = UnsafeMutableBufferPointer<DateSyntax>.allocate(capacity: formats.count)
            _ = copy.initialize(from: formats)
            return copy
        })
        checkBoxes = checks.map(Check.init)
        self.checks = .allocate(capacity: max(checkBoxes.count, 1))
        self.checks.initialize(from: checkBoxes.map { Unmanaged.passUnretained($0) }, count: checkBoxes.count)
        self.fixedTexts = fixedTexts
        self.fixedErrors = fixedErrors
        self.errorPaths = errorPaths
        self.objectSlots = objectSlots.sorted()
        computationBoxes = computations.map(Computation.init)
        self.computations = .allocate(capacity: max(computationBoxes.count, 1))
        self.computations.initialize(from: computationBoxes.map { Unmanaged.passUnretained($0) }, count: computationBoxes.count)
        slots = projector.recordSlots()
        values = .allocate(capacity: max(fields.count, 1))
        // (Allocated last: a failable initializer that returns nil runs no deinit, so nothing may be held by then.)
        scratch = ByteBuffer(capacity: 256)
        output = ByteBuffer(capacity: 1024)
        decoded = ByteBuffer(capacity: 256)
        values.initialize(repeating: Value(), count: max(fields.count, 1))
    }

    deinit {
        checks.deallocate()
        computations.deallocate()
        for formats in dates {
            formats.deinitialize()
            formats.deallocate()
        }
        dates.deallocate()
        fields.deallocate()
        values.deallocate()
        scratch.deallocate()
        output.deallocate()
        decoded.deallocate()
    }

    /// A non-null string or number goes through the field's wrappers (`notNull`, `policy`, `nonFatal`, and one
    /// result check) unchanged when the mapper inside maps it without an error (and the check passes): the rule is
    /// that mapper's, with the check.
    private static func rule(
        _ mapper: Mapper, dates: inout [[DateSyntax]]
    ) -> (Rule, (@Sendable (UnsafeRawBufferPointer) -> Bool)?) {
        var inner = mapper
        var check: (@Sendable (UnsafeRawBufferPointer) -> Bool)?
        while true {
            switch inner.kind {
            case .notNull(let m), .policy(let m, _), .nonFatal(let m, _, _): inner = m
            case .postProcess(let m, let post) where post.unchangedWhen != nil && check == nil:
                check = post.unchangedWhen
                inner = m
            case .identity: return (.copy(nil), check)
            case .check(let types): return (.copy(types), check)
            case .thread(let stages):
                guard let (formats, unit) = Mapper.dateToNumberStages(stages) else { return (.map, nil) }
                dates.append(formats)
                return (.dateNumber(dates.count - 1, unit), check)
            default: return (.map, nil)  // (`Mapper.map` on the whole field's mapper: its checks included)
            }
        }
    }

    /// Writes the mapped record (the projection of which just filled `slots`), or rejects it with its errors, or
    /// declines it with nothing written when the record must be mapped the usual way.
    func write(_ record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> Outcome {
        for s in objectSlots {
            let slot = slots[s]
            if slot.count > 1 || (slot.count == 1 && slot.length != 0) { return .declined }
        }
        scratch.reset(keeping: 1 << 20)
        var filled: UInt64 = 0
        /// The fields whose values did not map cleanly (their errors are worked out once all fields are read).
        var failed: UInt64 = 0
        for f in 0..<fieldCount {
            if fields[f].computed >= 0 {
                guard let value = computedValue(fields[f].computed, record) else { return .declined }
                if value.source != .omitted { filled |= 1 << UInt64(f) }
                values[f] = value
                continue
            }
            let slot = slots[fields[f].slot]
            let fixed: Fixed
            if slot.count == 0 {
                fixed = fields[f].absent
            } else if slot.count > 1 {
                return .declined
            } else {
                let raw = UnsafeRawBufferPointer(rebasing: record[slot.start..<(slot.start + slot.length)])
                switch raw[0] {
                case UInt8(ascii: "n"): fixed = fields[f].null
                case UInt8(ascii: "t"): fixed = fields[f].isTrue
                case UInt8(ascii: "f"): fixed = fields[f].isFalse
                case UInt8(ascii: "{"), UInt8(ascii: "["): return .declined
                default:
                    guard let value = scalar(raw, at: slot.start, field: f),
                          fields[f].check < 0 || value.source == .omitted
                            || checks[fields[f].check]._withUnsafeGuaranteedRef({ passes(value, $0.passes, record) })
                    else {
                        failed |= 1 << UInt64(f)
                        continue
                    }
                    if value.source != .omitted { filled |= 1 << UInt64(f) }
                    values[f] = value
                    continue
                }
            }
            switch fixed {
            case .failure: failed |= 1 << UInt64(f)
            case .omit: values[f] = Value()
            case .text(let start, let length):
                let at = scratch.count
                fixedTexts.withUnsafeBytes { scratch.append(UnsafeRawBufferPointer(rebasing: $0[start..<(start + length)])) }
                values[f] = Value(source: .scratch, start: at, length: length)
                filled |= 1 << UInt64(f)
            }
        }
        if failed != 0 { return rejection(failed, record) }
        output.reset(keeping: 1 << 20)
        destinations.withLayout(mask: filled) { layout in
            layout.write(to: &output) { f, output in
                let value = values[f]
                switch value.source {
                case .omitted: break
                case .record:
                    output.append(UnsafeRawBufferPointer(rebasing: record[value.start..<(value.start + value.length)]))
                case .scratch:
                    output.append(UnsafeRawBufferPointer(start: scratch.base + value.start, count: value.length))
                }
            }
        }
        output.append(UInt8(ascii: "}"))
        writer.writeReleasing(output.bytes)
        written &+= 1
        return .written
    }

    /// The record's errors, as `ObjectMapping.map` gives them, when the fields in `failed` fail it (each of the others
    /// mapped without an error or a warning); `.declined` when none of their errors is fatal, or when a field
    /// turns out to map cleanly after all (what the quick reading turned down, the mapper may still take).
    private func rejection(_ failed: UInt64, _ record: UnsafeRawBufferPointer) -> Outcome {
        var errors: [MapError] = []
        errors.reserveCapacity(failed.nonzeroBitCount + 2)
        var fatal = false
        var rest = failed
        while rest != 0 {
            let f = rest.trailingZeroBitCount
            rest &= rest - 1
            // (The slot as the filter reads it; `null`, `true`, `false` and absent have their errors ready.)
            let fixed: Fixed
            switch SlotRead(slots[fields[f].slot], in: record, decodingInto: &decoded) {
            case .decline: return .declined
            case .absent: fixed = fields[f].absent
            case .value(.null): fixed = fields[f].null
            case .value(.bool(let b)): fixed = b ? fields[f].isTrue : fields[f].isFalse
            case .value(let value):
                let result = mappers[f].map(value)
                guard !result.errors.isEmpty else { return .declined }
                fatal = Self.attach(result.errors, errorPaths[f], to: &errors) || fatal
                continue
            }
            guard case .failure(let start, let count, let isFatal) = fixed else { return .declined }
            fatal = fatal || isFatal
            // (One by one from the list's memory: a slice of it would retain the whole list, field after field.)
            fixedErrors.withUnsafeBufferPointer { list in for i in start..<(start + count) { errors.append(list[i]) } }
        }
        guard fatal else { return .declined }
        rejected &+= 1
        return .rejected(errors)
    }

    /// A field's errors placed at its paths, as `ObjectMapping.map` places them (one source: focus 0), added to
    /// `all`; whether one of them is fatal.
    private static func attach(_ errors: [MapError], _ paths: (source: [JSONPath], destination: [JSONPath]),
                               to all: inout [MapError]) -> Bool {
        var fatal = false
        for var e in errors {
            fatal = fatal || e.isFatal
            e.sourcePath = ObjectMapping.attach(e.sourcePath, to: paths.source)
            e.destinationPath = ObjectMapping.attach(e.destinationPath, to: paths.destination)
            all.append(e)
        }
        return fatal
    }

    /// A computed field's value: its expression on the scalars at its paths (nil: decline the record).
    private func computedValue(_ c: Int, _ record: UnsafeRawBufferPointer) -> Value? {
        computations[c]._withUnsafeGuaranteedRef { computedValue($0, record) }
    }

    private func computedValue(_ computation: Computation, _ record: UnsafeRawBufferPointer) -> Value? {
        var declined = false
        let evaluation = computation.expression.evaluate(stack: &expressionStack) { i in
            SlotRead(slots[computation.slots[i]], in: record, decodingInto: &decoded).value(declined: &declined)
        }
        if declined { return nil }
        let result = Mapper.finishComputing(computation.expression, evaluation, invalid: computation.invalid, then: computation.then)
        guard result.errors.isEmpty else { return nil }
        guard let mapped = result.value else { return Value() }
        let start = scratch.count
        scratch.write(mapped)
        return Value(source: .scratch, start: start, length: scratch.count - start)
    }

    /// Whether a value's text passes a field's result check.
    private func passes(_ value: Value, _ check: (UnsafeRawBufferPointer) -> Bool, _ record: UnsafeRawBufferPointer) -> Bool {
        switch value.source {
        case .omitted: return true
        case .record: return check(UnsafeRawBufferPointer(rebasing: record[value.start..<(value.start + value.length)]))
        case .scratch: return check(UnsafeRawBufferPointer(start: scratch.base + value.start, count: value.length))
        }
    }

    /// A string's or a number's value for `field` (its text `raw`, validated by the projector), or nil to decline.
    private func scalar(_ raw: UnsafeRawBufferPointer, at start: Int, field f: Int) -> Value? {
        let isString = raw[0] == UInt8(ascii: "\"")
        switch fields[f].rule {
        case .copy(let allowed):
            if let allowed {
                let type: JSONType = isString ? .string : JSONNumber.isIntegerLexeme(raw) ? .integer : .number
                guard allowed.contains(JSONTypeSet(type)) else { return nil }
            }
            guard isString, memchr(raw.baseAddress! + 1, 0x5C, raw.count - 2) != nil else {
                return Value(source: .record, start: start, length: raw.count)
            }
            // A string with escapes: its canonical text, as `CopySink` writes it.
            let at = scratch.count
            scratch.reserve(raw.count + 32)
            let count = cjsonscan_canonical_string(raw.baseAddress!.assumingMemoryBound(to: UInt8.self), raw.count, scratch.end)
            guard count >= 0 else { return nil }  // (not one string: never so after the projector)
            scratch.end += count
            return Value(source: .scratch, start: at, length: count)
        case .dateNumber(let formats, let unit):
            guard isString, case .string(let utf8, _) = LiftedStrings.event(raw, decodingInto: &decoded),
                  let t = Mapper.epochInstant(dates[formats], utf8: utf8.assumingMemoryBound(to: UInt8.self))
            else { return nil }
            let start = scratch.count
            if let whole = TimestampSupport.wholeEpochValue(t, unit: unit) {
                scratch.appendDecimal(whole)
            } else if var number = t.exactEpochNumber(unit: unit) {
                number.withUTF8 { scratch.append(UnsafeRawBufferPointer($0)) }
            } else {
                return nil
            }
            return Value(source: .scratch, start: start, length: scratch.count - start)
        case .map:
            guard let value = try? LiftedStrings.event(raw, decodingInto: &decoded).scalarValue() else { return nil }
            let result = mappers[f].map(value)
            guard result.errors.isEmpty else { return nil }
            guard let mapped = result.value else { return Value() }
            let start = scratch.count
            scratch.write(mapped)
            return Value(source: .scratch, start: start, length: scratch.count - start)
        }
    }
}
