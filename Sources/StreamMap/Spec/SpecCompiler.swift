/// Compiles a spec document into mappers, collecting every problem with its location.
struct SpecCompiler {
    /// The first `SpecError.mostIssues` problems found; `moreIssues` counts the rest.
    private(set) var issues: [SpecIssue] = []
    private(set) var moreIssues = 0
    /// How many `compileMapper` calls are under way (see `deepestMapper`).
    private var mapperDepth = 0
    /// The custom types in force, the innermost definition of a name last: an object mapping's `types` are added
    /// when it is compiled and removed after, so it and the objects nested in it see them, and no nested object
    /// copies the table it inherits (a 1 MB spec with 50 000 types and 900 nested objects that each declared one
    /// took 6.7 s and 2.8 GB when each object's scope held a copy).
    private var typeDefinitions: [String: [Mapper]] = [:]
    /// What the "did you mean" hints of one spec may spend together (`Suggest`): a spec with thousands of unknown
    /// names against thousands of its own types costs no more than a few milliseconds, and later issues go without.
    private var suggestionBudget = 4 * Suggest.defaultBudget

    /// Settings inherited by nested object mappings.
    struct Scope {
        var delimiter = "."
        var nullToEmpty = false
        var nullToEmptyExcept: Set<String> = []
    }

    /// `$schema` names the spec's JSON Schema for editors (schema/streammap-spec.schema.json): accepted, not used.
    static let documentKeys = ["$schema", "streammap", "description", "fields", "unmapped", "delimiter", "types", "nullToEmpty", "mapper", "where", "explode"]
    static let objectKeys = ["description", "fields", "unmapped", "delimiter", "types", "nullToEmpty"]
    static let fieldKeys = [
        "from", "to", "via", "type", "required", "optional", "default", "reverseDefault", "missing", "null", "invalid",
        "literal", "column", "description", "expr",
    ]
    static let simpleMappers: [String: Mapper] = [
        "identity": .identity, "required": .required, "optional": .optionally(),
        "string": .string, "integer": .integer, "number": .number, "boolean": .boolean,
        "object": .objectValue, "array": .arrayValue, "null": .null,
        "url": .url(), "uuid": .uuid, "uuidToString": Mapper(.convert(.uuidToString(uppercase: false))),
        "toString": .toString, "stringToNumber": .stringToNumber, "numberToString": .numberToString,
        "urlToString": Mapper(.convert(.urlToString(schemes: nil))),
        "lower": stringFunction("lower"), "upper": stringFunction("upper"), "trim": stringFunction("trim"),
        "trimStart": stringFunction("trimStart"), "trimEnd": stringFunction("trimEnd"), "length": stringFunction("length"),
    ]

    /// A function of computed fields as a mapper of the value it is given (`"via": "lower"`, `{"replace": ["a",
    /// "b"]}`): `NAME(value, ARGUMENTS…)`, the arguments JSON literals. The same evaluation as in an expression:
    /// absent and null pass through (the field's policies decide), another type is a `type` error.
    static func stringFunction(_ name: String) -> Mapper {
        guard case .success(let e) = stringFunctionExpression(name, arguments: []) else { preconditionFailure("no function \(name)") }
        return Mapper.compute(e, then: .identity)
    }

    /// The expression of `stringFunction`, or why the arguments do not fit the function.
    static func stringFunctionExpression(_ name: String, arguments: [JSONValue]) -> Result<ValueExpression, ExpressionSyntaxError> {
        let text = name + "(" + (["value"] + arguments.map { JSONWriter.string($0) }).joined(separator: ", ") + ")"
        return Result { () throws(ExpressionSyntaxError) in
            let parsed = try ValueExpression(text)
            // `value` is the value mapped itself: a path of no steps.
            return ValueExpression(text: text, delimiter: ".", program: parsed.program, paths: [.root])
        }
    }
    static let jsonTypeNames = JSONType.allCases.map(\.rawValue)

    /// The custom type `name` in force, if any.
    func declaredType(_ name: String) -> Mapper? { typeDefinitions[name]?.last }

    /// `SpecError.mostIssues` issues are kept: later ones are only counted.
    var keepsNoMoreIssues: Bool { issues.count >= SpecError.mostIssues }

    mutating func issue(_ pointer: SpecPointer, _ message: String) {
        guard !keepsNoMoreIssues else {
            moreIssues += 1
            return
        }
        issues.append(SpecIssue(pointer: pointer.description, message: message))
    }

    /// ` (did you mean "x"?)` or nothing, out of the spec's budget; `candidates` is not even made once it is spent.
    mutating func hint(_ word: String, _ candidates: @autoclosure () -> [String]) -> String {
        guard suggestionBudget > 0, !keepsNoMoreIssues else { return "" }  // (no issue would show it)
        return Suggest.hint(word, candidates(), budget: &suggestionBudget)
    }

    // MARK: Document and object mappings

    mutating func compileDocument(_ doc: JSONValue) -> Mapper? {
        guard case .object(let o) = doc else {
            issue("", "a spec must be a JSON object, found \(MapError.describe(doc))")
            return nil
        }
        checkKeys(o, allowed: Self.documentKeys, at: "")
        if let schema = o["$schema"], schema.stringValue == nil {
            issue("/$schema", "expected the URI of a JSON Schema (a string), found \(MapError.describe(schema))")
        }
        if let version = o["streammap"], version != .number(JSONNumber(1)) {
            issue("/streammap", "unsupported spec version \(JSONWriter.string(version)) (this tool reads version 1)")
        }
        if let m = o["mapper"] {
            for k in Self.objectKeys where k != "description" && o[k] != nil {
                issue("/\(k)", "\"\(k)\" cannot be combined with \"mapper\"")
            }
            return compileMapper(m, at: "/mapper", scope: Scope())
        }
        return compileObject(o, at: "", scope: Scope(), allowedKeys: Self.documentKeys).map { Mapper(.object($0)) }
    }

    /// The document's `where` (a string in the filter grammar, its paths split on the document's delimiter).
    mutating func compileFilter(_ doc: JSONValue) -> RecordFilter? {
        guard let w = doc.objectValue?["where"] else { return nil }
        guard case .string(let text) = w else {
            issue("/where", "expected a string (an expression such as \"type == \\\"PushEvent\\\"\"), found \(MapError.describe(w))")
            return nil
        }
        var delimiter = "."
        if case .string(let d)? = doc.objectValue?["delimiter"], !d.isEmpty { delimiter = d }
        do {
            return try RecordFilter(text, delimiter: delimiter)
        } catch {
            issue("/where", error.description)
            return nil
        }
    }

    /// The spec's `explode`: `"items"` or `{"path": "items", "empty": "null"}` — a destination of `mapper`'s output
    /// (when its fields are known and others are dropped, one of theirs).
    mutating func compileExplode(_ doc: JSONValue, mapper: Mapper?) -> RecordExplosion? {
        guard let e = doc.objectValue?["explode"] else { return nil }
        var delimiter = "."
        if case .string(let d)? = doc.objectValue?["delimiter"], !d.isEmpty { delimiter = d }
        let text: String
        var empty = RecordExplosion.Empty.drop
        var at: SpecPointer = "/explode"
        switch e {
        case .string(let s):
            text = s
        case .object(let o):
            checkKeys(o, allowed: ["path", "empty"], at: "/explode")
            if let v = o["empty"] {
                let names = RecordExplosion.Empty.allCases.map(\.rawValue)
                if case .string(let name) = v, let policy = RecordExplosion.Empty(rawValue: name) {
                    empty = policy
                } else if case .string(let name) = v {
                    issue("/explode/empty", "unknown policy \"\(name)\" (\"drop\" or \"null\")" + hint(name, names))
                } else {
                    issue("/explode/empty", "expected \"drop\" or \"null\", found \(MapError.describe(v))")
                }
            }
            guard case .string(let s)? = o["path"] else {
                issue(o["path"] == nil ? "/explode" : "/explode/path",
                      "expected a path (the output array to explode, such as \"items\"), found \(o["path"].map(MapError.describe) ?? "none")")
                return nil
            }
            text = s
            at = "/explode/path"
        default:
            issue("/explode", "expected a path (the output array to explode, such as \"items\") or {\"path\": …, \"empty\": \"drop\" or \"null\"}, found \(MapError.describe(e))")
            return nil
        }
        guard !text.isEmpty else {
            issue(at, "expected a path (the output array to explode, such as \"items\"), found an empty string")
            return nil
        }
        let explosion = RecordExplosion(text, delimiter: delimiter, empty: empty)
        if case .object(let mapping)? = mapper?.kind, case .drop = mapping.unmapped {
            let written = mapping.fields.flatMap { $0.destinations.map { $0.steps.joined(separator: delimiter) } }
            let writes = mapping.fields.contains { field in
                field.destinations.contains { d in
                    let n = min(d.steps.count, explosion.path.count)
                    return zip(d.steps.prefix(n), explosion.path.prefix(n)).allSatisfy { bytesEqual($0, $1) }
                }
            }
            if !writes {
                issue(at, "no field writes \"\(text)\": explode names an array of the output (a destination)" + hint(text, written))
            }
        }
        return explosion
    }

    mutating func compileObject(
        _ o: JSONObject, at pointer: SpecPointer, scope outer: Scope, allowedKeys: [String]? = nil
    ) -> ObjectMapping? {
        if allowedKeys == nil { checkKeys(o, allowed: Self.objectKeys, at: pointer) }
        var scope = outer
        if let d = o["delimiter"] {
            if case .string(let s) = d, !s.isEmpty { scope.delimiter = s } else {
                issue(pointer.appending("/delimiter"), "expected a non-empty string, found \(MapError.describe(d))")
            }
        }
        var declared: [String] = []
        defer {
            for name in declared {
                typeDefinitions[name]!.removeLast()
                if typeDefinitions[name]!.isEmpty { typeDefinitions[name] = nil }
            }
        }
        if let t = o["types"] {
            if case .object(let table) = t {
                for (name, expr) in table {
                    if let m = compileMapper(expr, at: pointer.appending("/types/" + escape(name)), scope: scope) {
                        typeDefinitions[name, default: []].append(m)
                        declared.append(name)
                    }
                }
            } else {
                issue(pointer.appending("/types"), "expected an object of type name → mapper, found \(MapError.describe(t))")
            }
        }
        if let n = o["nullToEmpty"] { compileNullToEmpty(n, at: pointer.appending("/nullToEmpty"), into: &scope) }

        var fields: [ObjectMapping.Field] = []
        switch o["fields"] {
        case nil:
            break
        case .object(let table)?:
            for (source, value) in table {
                if let f = compileField(value, source: source, at: pointer.appending("/fields/" + escape(source)), scope: scope) {
                    fields.append(f)
                }
            }
        case .array(let list)?:
            for (i, value) in list.enumerated() {
                if let f = compileField(value, source: nil, at: pointer.appending("/fields/\(i)"), scope: scope) { fields.append(f) }
            }
        case let other?:
            issue(pointer.appending("/fields"), "expected an object (source → destination) or an array of fields, found \(MapError.describe(other))")
        }
        checkDestinations(fields, at: pointer)
        let unmapped = compileUnmapped(o["unmapped"], at: pointer.appending("/unmapped"), scope: scope)
        if case .inPlace = unmapped {
            for f in fields where f.computed != nil {
                issue(pointer.appending("/unmapped"), "\"inPlace\" writes each field where it reads: the computed field \(f.destinations[0]) reads no single path")
            }
            for f in fields where f.computed == nil && (f.sources.count != 1 || f.destinations.count != 1 || f.sources[0].steps != f.destinations[0].steps) {
                let source = f.sources.map(\.description).joined(separator: ", ")
                issue(pointer.appending("/unmapped"), "\"inPlace\" writes each field where it reads: the field of \(source) must have one source and the same destination")
            }
        }
        return ObjectMapping(fields: fields, unmapped: unmapped)
    }

    mutating func compileNullToEmpty(_ n: JSONValue, at pointer: SpecPointer, into scope: inout Scope) {
        switch n {
        case .bool(let b): scope.nullToEmpty = b
        case .object(let o):
            checkKeys(o, allowed: ["except"], at: pointer)
            scope.nullToEmpty = true
            if let e = o["except"] {
                if case .array(let names) = e, names.allSatisfy({ $0.stringValue != nil }) {
                    scope.nullToEmptyExcept = Set(names.compactMap(\.stringValue))
                } else {
                    issue(pointer.appending("/except"), "expected an array of destination keys, found \(MapError.describe(e))")
                }
            }
        default:
            issue(pointer, "expected true, false or {\"except\": [...]}, found \(MapError.describe(n))")
        }
    }

    mutating func compileUnmapped(_ value: JSONValue?, at pointer: SpecPointer, scope: Scope) -> ObjectMapping.Unmapped {
        switch value {
        case nil, .string("drop")?: return .drop
        case .string("keep")?: return .keep
        case .string("inPlace")?: return .inPlace
        case .object(let o)?:
            checkKeys(o, allowed: ["keys", "values", "collisions"], at: pointer)
            let style = o["keys"].flatMap { keyStyle($0, at: pointer.appending("/keys")) }
            let values = o["values"].flatMap { compileMapper($0, at: pointer.appending("/values"), scope: scope) }
            return .keep(keyStyle: style, values: values, collisions: collisions(o["collisions"], at: pointer.appending("/collisions")))
        case let other?:
            issue(pointer, "expected \"drop\", \"keep\", \"inPlace\" or {\"keys\": STYLE, \"values\": MAPPER}, found \(MapError.describe(other))")
            return .drop
        }
    }

    /// Destinations must be distinct and none may be a prefix of another (`a` and `a.b`), so output is well defined.
    mutating func checkDestinations(_ fields: [ObjectMapping.Field], at pointer: SpecPointer) {
        let destinations = fields.flatMap(\.destinations)
        for (d, earlier) in zip(destinations, KeyPath.earlierOverlaps(destinations.map(\.steps))) {
            guard let earlier else { continue }
            issue(pointer.appending("/fields"), "destination \"\(d)\" overlaps destination \"\(destinations[earlier].steps.joined(separator: "."))\"")
        }
    }

    // MARK: Fields

    mutating func compileField(_ value: JSONValue, source: String?, at pointer: SpecPointer, scope: Scope) -> ObjectMapping.Field? {
        switch value {
        case .string(let destination):
            guard let source else {
                issue(pointer, "a field in a list needs \"from\" and \"to\"")
                return nil
            }
            var mapper = typeMapper(nil, destination: destination, scope: scope, base: .identity)
            mapper = Mapper(.notNull(mapper))
            return ObjectMapping.Field(
                sources: [KeyPath(source, delimiter: scope.delimiter)], destinations: [KeyPath(destination, delimiter: scope.delimiter)],
                mapper: mapper)
        case .array(let pair) where pair.count == 2:
            // Hydrant's `@[mapper, "dest"]`.
            guard let source else {
                issue(pointer, "a field in a list needs \"from\" and \"to\"")
                return nil
            }
            // Both halves are checked, so that a spec error lists every problem of the field.
            let m = compileMapper(pair[0], at: pointer.appending("/0"), scope: scope)
            guard case .string(let destination) = pair[1] else {
                issue(pointer.appending("/1"), "expected the destination key path, found \(MapError.describe(pair[1]))")
                return nil
            }
            guard let m else { return nil }
            return ObjectMapping.Field(
                sources: [KeyPath(source, delimiter: scope.delimiter)], destinations: [KeyPath(destination, delimiter: scope.delimiter)],
                mapper: m)
        case .object(let o):
            return compileFieldObject(o, source: source, at: pointer, scope: scope)
        default:
            issue(pointer, "expected a destination key path, [MAPPER, DESTINATION] or a field object, found \(MapError.describe(value))")
            return nil
        }
    }

    mutating func compileFieldObject(_ o: JSONObject, source: String?, at pointer: SpecPointer, scope: Scope) -> ObjectMapping.Field? {
        checkKeys(o, allowed: Self.fieldKeys, at: pointer)
        let literal: Bool
        switch o["literal"] {
        case nil: literal = false
        case .bool(let b)?: literal = b
        case let other?:
            issue(pointer.appending("/literal"), "expected true or false, found \(MapError.describe(other))")
            literal = false
        }
        func paths(_ v: JSONValue, at p: SpecPointer) -> [KeyPath]? {
            let make = { (s: String) in literal ? KeyPath.literal(s) : KeyPath(s, delimiter: scope.delimiter) }
            switch v {
            case .string(let s): return [make(s)]
            case .array(let list) where !list.isEmpty && list.allSatisfy({ $0.stringValue != nil }):
                return list.compactMap(\.stringValue).map(make)
            default:
                issue(p, "expected a key path or a non-empty array of key paths, found \(MapError.describe(v))")
                return nil
            }
        }
        var sources: [KeyPath]?
        var expression: ValueExpression?
        if let expr = o["expr"] {
            // A computed field: the key (or "to") names where it is written; its expression names what it reads.
            if o["from"] != nil { issue(pointer.appending("/from"), "a computed field reads the paths its \"expr\" names: \"from\" cannot be given with \"expr\"") }
            if case .string(let text) = expr {
                do {
                    expression = try ValueExpression(text, delimiter: scope.delimiter)
                } catch {
                    issue(pointer.appending("/expr"), "\(error.description) in \(error.quotedText())")
                }
            } else {
                issue(pointer.appending("/expr"), "expected an expression (a string such as \"price * qty\"), found \(MapError.describe(expr))")
            }
            if o["to"] == nil && source == nil { issue(pointer, "a computed field in a list needs \"to\"") }
            sources = [.root]
        } else if let from = o["from"] { sources = paths(from, at: pointer.appending("/from")) } else if let source {
            sources = [literal ? .literal(source) : KeyPath(source, delimiter: scope.delimiter)]
        } else {
            issue(pointer, "a field in a list needs \"from\"")
        }
        var destinations: [KeyPath]?
        if let to = o["to"] { destinations = paths(to, at: pointer.appending("/to")) } else if expression != nil, let source {
            destinations = [literal ? .literal(source) : KeyPath(source, delimiter: scope.delimiter)]
        } else if let sources, o["expr"] == nil { destinations = sources }
        if o["expr"] != nil, let d = destinations, d.count != 1 {
            issue(pointer.appending("/to"), "a computed field writes one destination, found \(d.count)")
        }

        // Every key of the field is checked even after a problem, so that a spec error lists them all; a field
        // with a broken mapper keeps its destinations (a later field writing one of them is reported too) and
        // stands in with the identity (the spec is refused anyway).
        var base = Mapper.identity
        var explicitMapper = false
        if let via = o["via"] {
            if let m = compileMapper(via, at: pointer.appending("/via"), scope: scope) { base = m }
            explicitMapper = true
        }
        let declaredType: String?
        switch o["type"] {
        case nil: declaredType = nil
        case .string(let t)?:
            if Self.jsonTypeNames.contains(t) || self.declaredType(t) != nil { declaredType = t } else {
                let typeNames = typeDefinitions.keys  // (a view: sorted only if the hint is sought)
                issue(pointer.appending("/type"), "unknown type \"\(t)\"" + hint(t, Self.jsonTypeNames + typeNames.sorted())
                      + " (declare custom types under \"types\")")
                declaredType = nil
            }
        case let other?:
            issue(pointer.appending("/type"), "expected a type name, found \(MapError.describe(other))")
            declaredType = nil
        }
        let destinationName = destinations?.count == 1 ? destinations![0].description : ""
        base = typeMapper(declaredType, destination: destinationName, scope: scope, base: base)

        var mapper = applyPresence(o, base: base, explicitMapper: explicitMapper, declaredType: declaredType,
                                   destination: destinationName, at: pointer, scope: scope)
        if let expression {
            // The policies apply to the computed value; "invalid" also to an error in computing it.
            let invalid: FieldPolicy.Action
            switch mapper.kind {
            case .policy(_, let p): invalid = p.invalid
            case .nonFatal(_, let fallback, _): invalid = fallback.map { .useDefault($0.make()) } ?? .omit
            default: invalid = .fail
            }
            mapper = .compute(expression, invalid: invalid, then: mapper)
        }
        var column: ColumnType?
        switch o["column"] {
        case nil: break
        case .string(let text)?:
            switch ColumnType.parse(text) {
            case .success(let c): column = c
            case .failure(let e): issue(pointer.appending("/column"), e.message)
            }
        case let other?:
            issue(pointer.appending("/column"), "expected a column type (\(ColumnType.spellings.joined(separator: ", "))), found \(MapError.describe(other))")
        }
        guard let sources, let destinations else { return nil }
        return ObjectMapping.Field(sources: sources, destinations: destinations, mapper: mapper, column: column)
    }

    /// ClassMapper's type-directed processor, then the field's own mapper, then the JSON type check.
    func typeMapper(_ type: String?, destination: String, scope: Scope, base: Mapper) -> Mapper {
        guard let type else { return base }
        var stages: [Mapper] = []
        if let processor = declaredType(type) { stages.append(processor) }
        if case .identity = base.kind {} else { stages.append(base) }
        if let json = JSONType(rawValue: type) { stages.append(.check(JSONTypeSet(json))) }
        return stages.count == 1 ? stages[0] : Mapper(.thread(stages))
    }

    /// Presence handling: Hydrant's `optional`, explicit policies, CYZBaseModel's null → empty, or required.
    mutating func applyPresence(
        _ o: JSONObject, base: Mapper, explicitMapper: Bool, declaredType: String?, destination: String, at pointer: SpecPointer,
        scope: Scope
    ) -> Mapper {
        let hasPolicy = ["missing", "null", "invalid"].contains { o[$0] != nil }
        let defaultValue = o["default"]
        let reverseDefault = o["reverseDefault"]
        var optional = false
        switch o["optional"] {
        case nil: break
        case .bool(let b)?: optional = b
        case let other?: issue(pointer.appending("/optional"), "expected true or false, found \(MapError.describe(other))")
        }
        var required: Bool? = nil
        switch o["required"] {
        case nil: break
        case .bool(let b)?: required = b
        case let other?: issue(pointer.appending("/required"), "expected true or false, found \(MapError.describe(other))")
        }
        if optional && hasPolicy { issue(pointer.appending("/optional"), "\"optional\" cannot be combined with \"missing\", \"null\" or \"invalid\"") }
        if optional && required == true { issue(pointer.appending("/required"), "a field cannot be both required and optional") }
        if reverseDefault != nil && !optional { issue(pointer.appending("/reverseDefault"), "\"reverseDefault\" needs \"optional\": true") }

        if optional {
            return Mapper(.nonFatal(.notNull(base), fallback: defaultValue.map(Fallback.value), reverseFallback: reverseDefault.map(Fallback.value)))
        }
        let emptyValue = declaredType.flatMap(Self.emptyValue)
        let nullToEmpty = scope.nullToEmpty && emptyValue != nil && !scope.nullToEmptyExcept.contains(destination)
        if hasPolicy || defaultValue != nil || nullToEmpty {
            var policy = FieldPolicy()
            let fallbackAction: FieldPolicy.Action? = defaultValue.map { .useDefault($0) }
            policy.missing = action(o["missing"], at: pointer.appending("/missing")) ?? fallbackAction ?? (required == false ? .omit : .fail)
            policy.null = action(o["null"], at: pointer.appending("/null")) ?? fallbackAction
                ?? (nullToEmpty ? .useDefault(emptyValue!) : (required == false ? .omit : .fail))
            policy.invalid = action(o["invalid"], at: pointer.appending("/invalid")) ?? .fail
            return Mapper(.policy(base, policy))
        }
        if required == true || (!explicitMapper && required == nil) { return Mapper(.notNull(base)) }
        if required == false { return Mapper(.policy(base, FieldPolicy(missing: .omit, null: .omit, invalid: .fail))) }
        return base
    }

    static func emptyValue(_ type: String) -> JSONValue? {
        switch type {
        case "string": return .string("")
        case "array": return .array([])
        case "object": return .object(JSONObject())
        case "integer", "number": return .number(JSONNumber(0))
        case "boolean": return .bool(false)
        default: return nil
        }
    }

    mutating func action(_ v: JSONValue?, at pointer: SpecPointer) -> FieldPolicy.Action? {
        switch v {
        case nil: return nil
        case .string("fail")?: return .fail
        case .string("omit")?: return .omit
        case .string("null")?: return .keepNull
        case .object(let o)? where o.count == 1 && o["default"] != nil: return .useDefault(o["default"]!)
        case let other?:
            issue(pointer, "expected \"fail\", \"omit\", \"null\" or {\"default\": VALUE}, found \(MapError.describe(other))")
            return nil
        }
    }

    // MARK: Mapper expressions

    /// The deepest nesting of mappers (and object mappings, each inside one) a spec may have. The compiler, and
    /// every walk of a mapper after it, recurses once per level: bounded, so that a hostile spec cannot run a
    /// thread out of stack (a spec's JSON may nest 10 000 deep; 2 000 levels overflowed a 512 KiB stack in a
    /// release build, and a debug build overflowed its 8 MiB at 4 900).
    static let deepestMapper = 1000

    mutating func compileMapper(_ expr: JSONValue, at pointer: SpecPointer, scope: Scope) -> Mapper? {
        guard mapperDepth < Self.deepestMapper else {
            issue(pointer, "mappers nested deeper than \(Self.deepestMapper) levels")
            return nil
        }
        mapperDepth += 1
        defer { mapperDepth -= 1 }
        switch expr {
        case .string(let name):
            if let m = Self.simpleMappers[name] { return m }
            let known = Self.simpleMappers.keys.sorted() + Self.parametricNames
            issue(pointer, "unknown mapper \"\(name)\"" + hint(name, known))
            return nil
        case .array(let stages):
            return compileList(stages, at: pointer, scope: scope).map { $0.count == 1 ? $0[0] : Mapper(.thread($0)) }
        case .object(let o):
            return compileParametric(o, at: pointer, scope: scope)
        default:
            issue(pointer, "expected a mapper name, an array (a pipeline) or an object, found \(MapError.describe(expr))")
            return nil
        }
    }

    mutating func compileList(_ list: [JSONValue], at pointer: SpecPointer, scope: Scope) -> [Mapper]? {
        guard !list.isEmpty else {
            issue(pointer, "expected at least one mapper")
            return nil
        }
        var out: [Mapper] = []
        var ok = true
        for (i, e) in list.enumerated() {
            if let m = compileMapper(e, at: pointer.appending("/\(i)"), scope: scope) { out.append(m) } else { ok = false }
        }
        return ok ? out : nil
    }

    /// A parametric mapper of the spec language (`{"NAME": ARG, OPTION: …}`): its name, the option keys it takes
    /// besides its own, and how it compiles. `parametricMappers` is the one list of them: the compiler, its "did
    /// you mean" hints and the key checks read it.
    struct ParametricMapper: Sendable {
        typealias Compile = @Sendable (_ c: inout SpecCompiler, _ arg: JSONValue, _ o: JSONObject, _ pointer: SpecPointer, _ at: SpecPointer,
                             _ scope: Scope) -> Mapper?
        let name: String
        let options: [String]
        let compile: Compile
        init(_ name: String, options: [String], compile: @escaping Compile) {
            self.name = name
            self.options = options
            self.compile = compile
        }
    }

    static let parametricMappers: [ParametricMapper] = [
        fallback("optional", required: true),
        fallback("nonFatal", required: false),
        ParametricMapper("required", options: []) { c, arg, o, pointer, at, scope in
            return c.compileMapper(arg, at: at, scope: scope).map { Mapper(.notNull($0)) }
        },
        ParametricMapper("policy", options: ["missing", "null", "invalid"]) { c, arg, o, pointer, at, scope in
            guard let inner = c.compileMapper(arg, at: at, scope: scope) else { return nil }
            return Mapper(.policy(inner, FieldPolicy(
                missing: c.action(o["missing"], at: pointer.appending("/missing")) ?? .fail,
                null: c.action(o["null"], at: pointer.appending("/null")) ?? .fail,
                invalid: c.action(o["invalid"], at: pointer.appending("/invalid")) ?? .fail)))
        },
        ParametricMapper("type", options: []) { c, arg, o, pointer, at, scope in
            return c.typeSet(arg, at: at).map { Mapper(.check($0)) }
        },
        ParametricMapper("object", options: []) { c, arg, o, pointer, at, scope in
            guard case .object(let spec) = arg else {
                c.issue(at, "expected an object mapping ({\"fields\": ...}), found \(MapError.describe(arg))")
                return nil
            }
            return c.compileObject(spec, at: at, scope: scope).map { Mapper(.object($0)) }
        },
        ParametricMapper("arrayOf", options: []) { c, arg, o, pointer, at, scope in
            return c.compileMapper(arg, at: at, scope: scope).map { Mapper(.arrayOf($0)) }
        },
        list("first") { Mapper(.first($0)) },
        list("thread") { Mapper(.thread($0)) },
        ParametricMapper("split", options: ["reverse"]) { c, arg, o, pointer, at, scope in
            guard let f = c.compileMapper(arg, at: at, scope: scope) else { return nil }
            guard let r = o["reverse"] else {
                c.issue(pointer, "\"split\" needs \"reverse\"")
                return nil
            }
            return c.compileMapper(r, at: pointer.appending("/reverse"), scope: scope).map { Mapper(.split(forward: f, reverse: $0)) }
        },
        walk("forward") { Mapper(.forward($0, $1)) },
        walk("backward") { Mapper(.backward($0, $1)) },
        ParametricMapper("enum", options: []) { c, arg, o, pointer, at, scope in
            return c.enumTable(arg, at: at).map { Mapper(.enumTable($0)) }
        },
        ParametricMapper("stringToDate", options: ["timeZone"]) { c, arg, o, pointer, at, scope in
            let zone = c.timeZone(o["timeZone"], at: pointer.appending("/timeZone"))
            let list: [JSONValue]
            if case .array(let l) = arg { list = l } else { list = [arg] }
            guard !list.isEmpty else {
                c.issue(at, "expected at least one date format")
                return nil
            }
            var formats: [DateSyntax] = []
            for (i, f) in list.enumerated() {
                if let s = c.dateSyntax(f, zone: zone, at: list.count == 1 && arg.arrayValue == nil ? at : at.appending("/\(i)")) { formats.append(s) }
            }
            return formats.count == list.count ? Mapper(.convert(.stringToDate(formats))) : nil
        },
        ParametricMapper("dateToString", options: ["timeZone"]) { c, arg, o, pointer, at, scope in
            let zone = c.timeZone(o["timeZone"], at: pointer.appending("/timeZone"))
            return c.dateSyntax(arg, zone: zone, at: at).map { Mapper(.convert(.dateToString($0))) }
        },
        epoch("numberToDate") { .numberToDate($0) },
        epoch("dateToNumber") { .dateToNumber($0) },
        url("url") { .stringToURL(schemes: $0) },
        url("urlToString") { .urlToString(schemes: $0) },
        stringFunction("replace", arguments: 2), stringFunction("replaceMatches", arguments: 2),
        stringFunction("substring", arguments: 1...2), stringFunction("matches", arguments: 1), stringFunction("contains", arguments: 1),
        stringFunction("startsWith", arguments: 1), stringFunction("endsWith", arguments: 1), stringFunction("join", arguments: 1),
        ParametricMapper("uuidToString", options: ["uppercase"]) { c, arg, o, pointer, at, scope in
            guard case .bool = arg else {
                c.issue(at, "expected true, found \(MapError.describe(arg))")
                return nil
            }
            let upper: Bool
            switch o["uppercase"] {
            case nil: upper = false
            case .bool(let b)?: upper = b
            case let other?:
                c.issue(pointer.appending("/uppercase"), "expected true or false, found \(MapError.describe(other))")
                upper = false
            }
            return Mapper(.convert(.uuidToString(uppercase: upper)))
        },
        ParametricMapper("base64", options: ["from", "to"]) { c, arg, o, pointer, at, scope in
            let alphabets = Base64Text.Alphabet.allCases.map(\.rawValue)
            func alphabet(_ v: JSONValue?, _ key: String) -> Base64Text.Alphabet? {
                guard let v else { return .standard }
                if case .string(let s) = v, let a = Base64Text.Alphabet(rawValue: s) { return a }
                c.issue(pointer.appending("/" + key), "expected \(alphabets.joined(separator: " or ")), found \(MapError.describe(v))")
                return nil
            }
            guard case .bool(true) = arg else {
                c.issue(at, "expected true (with \"from\" and \"to\" alphabets), found \(MapError.describe(arg))")
                return nil
            }
            guard let from = alphabet(o["from"], "from"), let to = alphabet(o["to"], "to") else { return nil }
            return Mapper(.convert(.base64(from: from, to: to)))
        },
        arithmetic("multiply") { .multiply($0) },
        arithmetic("add") { .add($0) },
        ParametricMapper("keys", options: ["deep", "collisions"]) { c, arg, o, pointer, at, scope in
            guard let style = c.keyStyle(arg, at: at) else { return nil }
            var deep = false
            if let d = o["deep"] {
                if case .bool(let b) = d { deep = b } else { c.issue(pointer.appending("/deep"), "expected true or false, found \(MapError.describe(d))") }
            }
            return Mapper(.convert(.keys(style, deep: deep, collisions: c.collisions(o["collisions"], at: pointer.appending("/collisions")))))
        },
    ]
    /// `optional` and `nonFatal`: a fallback (and a reverse one) for a value the inner mapper cannot map;
    /// `optional` also for absent and null.
    private static func fallback(_ name: String, required: Bool) -> ParametricMapper {
        ParametricMapper(name, options: ["default", "reverseDefault"]) { c, arg, o, pointer, at, scope in
            let inner: Mapper?
            if case .bool(true) = arg { inner = .identity } else { inner = c.compileMapper(arg, at: at, scope: scope) }
            guard let inner else { return nil }
            let d = o["default"].map(Fallback.value), r = o["reverseDefault"].map(Fallback.value)
            return Mapper(.nonFatal(required ? .notNull(inner) : inner, fallback: d, reverseFallback: r))
        }
    }

    /// `first` and `thread`: an array of mappers.
    private static func list(_ name: String, _ make: @escaping @Sendable ([Mapper]) -> Mapper) -> ParametricMapper {
        ParametricMapper(name, options: []) { c, arg, o, pointer, at, scope in
            guard case .array(let list) = arg else {
                c.issue(at, "expected an array of mappers, found \(MapError.describe(arg))")
                return nil
            }
            return c.compileList(list, at: at, scope: scope).map(make)
        }
    }

    /// `forward` and `backward`: a key path, and a mapper `via`.
    private static func walk(_ name: String, _ make: @escaping @Sendable (KeyPath, Mapper) -> Mapper) -> ParametricMapper {
        ParametricMapper(name, options: ["via"]) { c, arg, o, pointer, at, scope in
            guard case .string(let path) = arg else {
                c.issue(at, "expected a key path, found \(MapError.describe(arg))")
                return nil
            }
            let inner = o["via"].map { c.compileMapper($0, at: pointer.appending("/via"), scope: scope) } ?? .identity
            guard let inner else { return nil }
            return make(KeyPath(path, delimiter: scope.delimiter), inner)
        }
    }

    /// `numberToDate` and `dateToNumber`: an epoch unit.
    private static func epoch(_ name: String, _ make: @escaping @Sendable (EpochUnit) -> Conversion) -> ParametricMapper {
        ParametricMapper(name, options: []) { c, arg, o, pointer, at, scope in
            guard case .string(let u) = arg, let unit = EpochUnit(rawValue: u) else {
                let units = EpochUnit.allCases.map(\.rawValue)
                c.issue(at, "expected a unit (\(units.joined(separator: ", "))), found \(MapError.describe(arg))" + c.hint(arg.stringValue ?? "", units))
                return nil
            }
            return Mapper(.convert(make(unit)))
        }
    }

    /// `url` and `urlToString`: true, or the schemes allowed (as the value or under `schemes`).
    private static func url(_ name: String, _ make: @escaping @Sendable ([String]?) -> Conversion) -> ParametricMapper {
        ParametricMapper(name, options: ["schemes"]) { c, arg, o, pointer, at, scope in
            var schemes: JSONValue? = o["schemes"]
            if case .bool(true) = arg {} else if schemes == nil { schemes = arg } else {
                c.issue(at, "give the schemes either as the value or under \"schemes\"")
            }
            var list: [String]? = nil
            if let schemes {
                guard case .array(let l) = schemes, !l.isEmpty, l.allSatisfy({ $0.stringValue != nil }) else {
                    c.issue(at, "expected true or a non-empty array of URL schemes, found \(MapError.describe(schemes))")
                    return nil
                }
                list = l.compactMap(\.stringValue).map { $0.lowercased() }
            }
            return Mapper(.convert(make(list)))
        }
    }

    /// `multiply` and `add`: a number.
    private static func arithmetic(_ name: String, _ make: @escaping @Sendable (JSONNumber) -> Conversion) -> ParametricMapper {
        ParametricMapper(name, options: []) { c, arg, o, pointer, at, scope in
            guard case .number(let n) = arg else {
                c.issue(at, "expected a number, found \(MapError.describe(arg))")
                return nil
            }
            return Mapper(.convert(make(n)))
        }
    }

    /// `{"NAME": ARGUMENT}` or `{"NAME": [ARGUMENTS…]}` for a function of computed fields taking `count` arguments
    /// besides the value (`{"replace": ["-", "_"]}`, `{"substring": [0, 3]}`).
    static func stringFunction(_ name: String, arguments count: Int) -> ParametricMapper { stringFunction(name, arguments: count...count) }

    static func stringFunction(_ name: String, arguments counts: ClosedRange<Int>) -> ParametricMapper {
        ParametricMapper(name, options: []) { c, arg, o, pointer, at, scope in
            let arguments = counts.upperBound > 1 || arg.arrayValue != nil ? arg.arrayValue ?? [arg] : [arg]
            let scalars = arguments.allSatisfy { if case .string = $0 { true } else if case .number = $0 { true } else { false } }
            guard counts.contains(arguments.count), scalars else {
                let what = counts.count == 1 ? (counts.lowerBound == 1 ? "a string or number" : "an array of \(counts.lowerBound) strings or numbers")
                    : "a string or number, or an array of \(counts.lowerBound) to \(counts.upperBound)"
                c.issue(at, "expected \(what) (\(name)'s arguments after the value), found \(MapError.describe(arg))")
                return nil
            }
            switch stringFunctionExpression(name, arguments: arguments) {
            case .success(let e): return Mapper.compute(e, then: .identity)
            case .failure(let error):
                c.issue(at, "\(name): \(error.description)")
                return nil
            }
        }
    }

    static let parametricByName: [String: ParametricMapper] = Dictionary(uniqueKeysWithValues: parametricMappers.map { ($0.name, $0) })
    static let parametricNames = parametricMappers.map(\.name)

    mutating func compileParametric(_ o: JSONObject, at pointer: SpecPointer, scope: Scope) -> Mapper? {
        let names = o.keys.filter { Self.parametricByName[$0] != nil }
        guard names.count == 1, let name = names.first, let mapper = Self.parametricByName[name] else {
            if names.isEmpty {
                let unknown = o.keys.first ?? ""
                issue(pointer, o.isEmpty ? "empty mapper object" : "unknown mapper \"\(unknown)\"" + hint(unknown, Self.parametricNames))
            } else {
                issue(pointer, "one mapper per object, found \(names.map { "\"\($0)\"" }.joined(separator: ", ")) (use an array for a pipeline)")
            }
            return nil
        }
        checkKeys(o, allowed: [name] + mapper.options, at: pointer)
        return mapper.compile(&self, o[name]!, o, pointer, pointer.appending("/" + name), scope)
    }

    mutating func typeSet(_ v: JSONValue, at pointer: SpecPointer) -> JSONTypeSet? {
        let names: [JSONValue]
        if case .array(let l) = v { names = l } else { names = [v] }
        var set: JSONTypeSet = []
        for (i, n) in names.enumerated() {
            guard case .string(let s) = n, let t = JSONType(rawValue: s) else {
                issue(names.count == 1 && v.arrayValue == nil ? pointer : pointer.appending("/\(i)"),
                      "unknown type \(JSONWriter.string(n))" + hint(n.stringValue ?? "", Self.jsonTypeNames))
                return nil
            }
            set.formUnion(JSONTypeSet(t))
        }
        if set.isEmpty { issue(pointer, "expected at least one type") }
        return set.isEmpty ? nil : set
    }

    mutating func enumTable(_ v: JSONValue, at pointer: SpecPointer) -> EnumTable? {
        var pairs: [(from: JSONValue, to: JSONValue)] = []
        switch v {
        case .object(let o):
            for (k, value) in o { pairs.append((.string(k), value)) }
        case .array(let list):
            for (i, p) in list.enumerated() {
                guard case .array(let pair) = p, pair.count == 2 else {
                    issue(pointer.appending("/\(i)"), "expected a [from, to] pair, found \(MapError.describe(p))")
                    return nil
                }
                for (j, side) in pair.enumerated() where side.arrayValue != nil || side.objectValue != nil {
                    issue(pointer.appending("/\(i)/\(j)"), "enum values must be strings, numbers, booleans or null")
                }
                pairs.append((pair[0], pair[1]))
            }
        default:
            issue(pointer, "expected an object {\"from\": to, ...} or an array of [from, to] pairs, found \(MapError.describe(v))")
            return nil
        }
        if pairs.isEmpty { issue(pointer, "an enum table needs at least one entry") }
        let table = EnumTable(pairs)
        // Duplicate sources would make the later entry unreachable.
        var seen = Set<EnumTable.MatchKey>()
        for (i, p) in pairs.enumerated() {
            if let k = EnumTable.matchKey(p.from), !seen.insert(k).inserted {
                issue(pointer.appending(v.arrayValue != nil ? "/\(i)" : ""), "duplicate enum entry \(JSONWriter.string(p.from))")
            }
        }
        return table
    }

    mutating func timeZone(_ v: JSONValue?, at pointer: SpecPointer) -> Int {
        guard let v else { return 0 }
        if case .string(let s) = v, let seconds = Self.parseOffset(s) { return seconds }
        issue(pointer, "expected a UTC offset such as \"+02:00\", \"-0530\" or \"Z\", found \(MapError.describe(v))")
        return 0
    }

    static func parseOffset(_ s: String) -> Int? {
        if s == "Z" || s == "UTC" { return 0 }
        let u = Array(s.utf8)
        guard u.count == 6 || u.count == 5, u[0] == UInt8(ascii: "+") || u[0] == UInt8(ascii: "-") else { return nil }
        let digits = u.count == 6 ? [u[1], u[2], u[4], u[5]] : [u[1], u[2], u[3], u[4]]
        if u.count == 6 && u[3] != UInt8(ascii: ":") { return nil }
        guard digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let d = digits.map { Int($0 - 0x30) }
        let hours = d[0] * 10 + d[1], minutes = d[2] * 10 + d[3]
        guard hours < 24, minutes < 60 else { return nil }
        return (u[0] == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    mutating func dateSyntax(_ v: JSONValue, zone: Int, at pointer: SpecPointer) -> DateSyntax? {
        switch v {
        case .string(let name):
            if let named = NamedDateFormat(rawValue: name) { return .named(named) }
            let names = NamedDateFormat.allCases.map(\.rawValue)
            issue(pointer, "unknown date format \"\(name)\"" + hint(name, names)
                  + " (named formats: \(names.joined(separator: ", ")); or {\"pattern\": \"yyyy-MM-dd\"})")
            return nil
        case .object(let o):
            checkKeys(o, allowed: ["pattern"], at: pointer)
            guard case .string(let pattern)? = o["pattern"] else {
                issue(pointer, "expected {\"pattern\": \"LDML pattern\"}")
                return nil
            }
            do {
                return .pattern(try DateFormat(pattern: pattern, timeZoneOffsetSeconds: zone))
            } catch {
                issue(pointer.appending("/pattern"), error.message)
                return nil
            }
        default:
            issue(pointer, "expected a date format name or {\"pattern\": ...}, found \(MapError.describe(v))")
            return nil
        }
    }

    /// `"collisions": "fail"` (the default) or `"warn"`.
    mutating func collisions(_ v: JSONValue?, at pointer: SpecPointer) -> KeyCollisions {
        guard let v else { return .fail }
        if case .string(let s) = v, let c = KeyCollisions(rawValue: s) { return c }
        issue(pointer, "expected \"fail\" or \"warn\", found \(MapError.describe(v))")
        return .fail
    }

    mutating func keyStyle(_ v: JSONValue, at pointer: SpecPointer) -> KeyStyle? {
        if case .string(let s) = v, let style = KeyStyle(specName: s) { return style }
        let name = v.stringValue ?? ""
        issue(pointer, "unknown key style \(JSONWriter.string(v))" + hint(name, KeyStyle.specNames)
              + " (styles: \(KeyStyle.specNames.joined(separator: ", ")))")
        return nil
    }

    mutating func checkKeys(_ o: JSONObject, allowed: [String], at pointer: SpecPointer) {
        for key in o.keys where !allowed.contains(key) {
            issue(pointer.appending("/" + escape(key)), "unknown key \"\(key)\"" + hint(key, allowed))
        }
    }

    func escape(_ key: String) -> String { JSONPath([.key(key)]).pointer.dropFirst().description }
}
