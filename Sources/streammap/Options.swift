import ArgumentParser
import StreamMap

/// The spec and the one-liner flags that build or amend it (shared by `map`, `check` and `explain`).
struct SpecOptions: ParsableArguments {
    @Option(name: [.short, .long], help: ArgumentHelp("The mapping spec (a JSON file; see README, \"Spec files\").", valueName: "file"),
            completion: .file(extensions: ["json"]))
    var spec: String?

    @Option(name: .customLong("field"),
            help: ArgumentHelp("Map the value at key path SRC to DST (default: SRC, in --key-style). Repeatable; output keys follow the order given. Absent: left out; null: written as null.",
                               valueName: "src[=dst]"))
    var fields: [String] = []

    @Option(name: .customLong("set"),
            help: ArgumentHelp("Write DST computed by EXPR from the record's paths: price * qty, first + \" \" + last, if code == 200 then \"ok\" else \"error\", coalesce(a, b), lower(name)… (docs/spec.md, \"Computed fields\"). Repeatable; written after the --field fields; the paths it reads count as read. Absent: left out; null: written as null.",
                               valueName: "dst=expr"))
    var computed: [String] = []

    @Option(help: ArgumentHelp("Rename keys the flags do not spell out (passed-through keys, nested ones too, and --field SRC without =DST): \(KeyStyle.specNames.joined(separator: ", ")).",
                               valueName: "style"),
            completion: .list(KeyStyle.specNames))
    var keyStyle: String?

    @Option(help: ArgumentHelp("When a key style gives two keys of one object the same name: fail (reject the record, naming both keys; the default) or warn (keep the later key's value, with a warning). Applies to --key-style and to the spec's \"unmapped\" key style.",
                               valueName: "fail|warn"))
    var keyCollisions: KeyCollisions?

    @Option(name: .customLong("require"),
            help: ArgumentHelp("Reject a record whose value at PATH is absent or null. Repeatable.", valueName: "path"))
    var required: [String] = []

    @Option(name: .customLong("type"),
            help: ArgumentHelp("Reject a record whose value at PATH is not of TYPE (string, integer, number, boolean, object, array, null, or a name from the spec's \"types\"); absent passes. Repeatable.",
                               valueName: "path=type"))
    var types: [String] = []

    @Option(name: .customLong("column"),
            help: ArgumentHelp("Give the field reading PATH this column type in Arrow output: timestamp (µs; also timestamp(s|ms|us|ns)) for date strings, decimal(P,S) for exact numbers. Repeatable.",
                               valueName: "path=column"))
    var columns: [String] = []

    @Option(name: .customLong("default"),
            help: ArgumentHelp("Write VALUE (JSON: 0, true, '\"text\"', …) when PATH is absent or null. Repeatable.", valueName: "path=value"))
    var defaults: [String] = []

    @Option(name: .customLong("where"),
            help: ArgumentHelp("Map only the records for which EXPR holds, over the input record's paths: PATH == JSON (also !=, <, <=, >, >=), PATH in [JSON, …], exists(PATH), PATH is TYPE, computed tests (contains(title, \"x\"), length(tags) > 2, price * qty > 100), !, &&, ||, parentheses (docs/cli.md, \"Keeping and dropping records\"). The others are counted as filtered. Replaces the spec's \"where\".",
                               valueName: "expr"))
    var filter: String?

    @Option(name: .customLong("explode"),
            help: ArgumentHelp("Write each mapped record once per element of the array at PATH of its output (a destination, dotted for nesting), with that element in the array's place and the other fields copied into each (jq's .items[] as $i, Miller's nest --explode). A record whose array is empty, null or absent gives no record (counted; see --explode-empty). Replaces the spec's \"explode\".",
                               valueName: "path"))
    var explode: String?

    @Option(name: .customLong("explode-empty"),
            help: ArgumentHelp("What a record whose array is empty, null or absent gives with --explode: drop (no record, the default; counted and reported) or null (the record once, with null in the array's place).",
                               valueName: "drop|null"))
    var explodeEmpty: RecordExplosion.Empty?

    @Flag(help: ArgumentHelp("Pass keys no field reads through (default without --spec and --field) or drop them (default with --field; with --spec, the spec decides)."))
    var unmappedChoice: UnmappedChoice?

    @Flag(help: "Apply the reverse mapping (model → original shape).")
    var reverse = false

    @Flag(help: "Print the spec the options add up to (the spec file amended by the flags) on standard output and exit.")
    var printSpec = false

    enum UnmappedChoice: String, EnumerableFlag {
        case keepUnmapped, dropUnmapped
    }

    /// What the flags do to the spec (`Spec/SpecAmendment`).
    var amendment: SpecAmendment {
        var a = SpecAmendment()
        a.fields = fields
        a.computed = computed
        a.keyStyle = keyStyle.flatMap(KeyStyle.init(specName:))
        a.keyCollisions = keyCollisions
        a.required = required
        a.types = types
        a.columns = columns
        a.defaults = defaults
        a.filter = filter
        a.explode = explode
        a.explodeEmpty = explodeEmpty
        switch unmappedChoice {
        case .keepUnmapped?: a.unmapped = .keep
        case .dropUnmapped?: a.unmapped = .drop
        case nil: break
        }
        return a
    }

    /// Whether any flag builds or amends the spec.
    var hasMappingFlags: Bool { amendment.amendsSpec }

    func validate() throws {
        if let keyStyle, KeyStyle(specName: keyStyle) == nil {
            throw ValidationError("--key-style \(keyStyle): unknown key style" + Suggest.hint(keyStyle, KeyStyle.specNames)
                                  + " (one of \(KeyStyle.specNames.joined(separator: ", ")))")
        }
        for f in fields {
            let (src, dst) = SpecAmendment.split(f)
            if src.isEmpty || dst?.isEmpty == true { throw ValidationError("--field \(f): expected SRC or SRC=DST with non-empty key paths") }
        }
        for c in computed {
            guard case (let dst, let expr?) = SpecAmendment.split(c), !dst.isEmpty, !expr.isEmpty else {
                throw ValidationError("--set \(c): expected DST=EXPR, e.g. --set 'total=price * qty'")
            }
        }
        for p in required where p.isEmpty { throw ValidationError("--require: expected a key path") }
        for t in types {
            guard case (let path, let type?) = SpecAmendment.split(t), !path.isEmpty, !type.isEmpty else {
                throw ValidationError("--type \(t): expected PATH=TYPE")
            }
        }
        for c in columns {
            guard case (let path, let column?) = SpecAmendment.split(c), !path.isEmpty else {
                throw ValidationError("--column \(c): expected PATH=COLUMN")
            }
            if case .failure(let e) = ColumnType.parse(column) { throw ValidationError("--column \(c): \(e.message)") }
        }
        for d in defaults {
            guard case (let path, let value?) = SpecAmendment.split(d), !path.isEmpty else {
                throw ValidationError("--default \(d): expected PATH=VALUE")
            }
            do {
                _ = try JSONParser.parse(value)
            } catch {
                throw ValidationError("--default \(d): \(value) is not JSON (a string is written with quotes: --default '\(path)=\"\(value)\"')")
            }
        }
        let requiredSet = Set(required)
        for d in defaults where requiredSet.contains(SpecAmendment.split(d).0) {
            throw ValidationError("--require and --default both given for \(SpecAmendment.split(d).0)")
        }
    }
}

/// An option whose values are an enum's raw strings. ArgumentParser's defaults for what such a type tells it (the
/// values listed by help and completions, each value's description, the default shown by help) print each case with
/// `"\(value)"`, by reflection, every time the options' definitions are built — a few times per run, ~1 M of the
/// ~20 M instructions of a start-up on this tool's enums. These give the same strings without it: a value is its raw
/// string, and no value has a description of its own.
protocol RawStringArgument: ExpressibleByArgument, CaseIterable, RawRepresentable where RawValue == String {}

extension RawStringArgument {
    // (Public: they stand for requirements of ArgumentParser's public protocol, and some of the enums are public.)
    public static var allValueStrings: [String] { allCases.map { $0.rawValue } }
    public static var allValueDescriptions: [String: String] { [:] }
    public var defaultValueDescription: String { rawValue }
}

/// The record engine (`--engine`).
extension MappingOptions.Engine: RawStringArgument {}

extension OnError: RawStringArgument {}

extension ByteRange: ExpressibleByArgument {
    package static var defaultCompletionKind: CompletionKind { .default }
}

extension Framing: RawStringArgument {}

extension KeyCollisions: RawStringArgument {}

extension RecordExplosion.Empty: RawStringArgument {}
