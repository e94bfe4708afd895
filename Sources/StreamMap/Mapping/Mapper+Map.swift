/// The tree engine's evaluation: the reference semantics of every mapper (README, "Semantics").
extension Mapper {
    /// Maps `source` (nil = absent). Never throws: failures are data in the result.
    public func map(_ source: JSONValue?) -> MapResult {
        switch kind {
        case .identity:
            return .success(source)

        case .notNull(let inner):
            let r = inner.map(source)
            guard r.errors.isEmpty else { return r }
            switch r.value {
            case nil: return .failure(MapError(.required, "value is required, found absent"))
            case .null?: return .failure(MapError(.required, "value is required, found null"))
            default: return r
            }

        case .nonFatal(let inner, let fallback, _):
            let r = inner.map(source)
            guard r.isFatal else { return r }
            return .success(fallback?.make(), warnings: source == nil ? r.errors.map(\.standingInForAbsent) : r.errors)

        case .policy(let inner, let policy):
            switch source {
            case nil where policy.missing != .passToMapper:
                return Self.apply(policy.missing, error: MapError(.required, "value is required, found absent"))
            case .null? where policy.null != .passToMapper:
                return Self.apply(policy.null, error: MapError(.required, "value is required, found null"))
            default:
                let r = inner.map(source)
                guard r.isFatal else { return r }
                return Self.apply(policy.invalid, errors: r.errors)
            }

        case .check(let types):
            guard let value = source, !types.contains(value) else { return .success(source) }
            return .failure(.typeMismatch(expected: types.description, found: value))

        case .object(let mapping):
            return mapping.map(source)

        case .arrayOf(let item):
            guard case .array(let elements)? = source else {
                return .failure(.typeMismatch(expected: "array", found: source))
            }
            var out: [JSONValue] = []
            out.reserveCapacity(elements.count)
            var errors: [MapError] = []
            for (i, element) in elements.enumerated() {
                let r = item.map(element)
                if !r.errors.isEmpty {
                    errors += r.prefixed(source: [.index(i)], destination: [.index(i)]).errors
                    if r.isFatal || r.value == nil { continue }
                }
                out.append(r.value ?? .null)
            }
            return errors.contains(where: \.isFatal) ? .failure(errors) : .success(.array(out), warnings: errors)

        case .first(let alternatives):
            var failures: [MapError] = []
            for m in alternatives {
                let r = m.map(source)
                if !r.isFatal, let value = r.value {
                    return .success(value, warnings: failures + r.errors)
                }
                failures += r.errors
            }
            if failures.isEmpty { return .success(nil) }
            if !failures.contains(where: \.isFatal) {
                failures.append(MapError(.value, "no alternative produced a value"))
            }
            return .failure(failures)

        case .thread(let stages):
            if let r = Self.dateToNumberShortcut(stages, source) { return r }
            var value = source
            var warnings: [MapError] = []
            for stage in stages {
                let r = stage.map(value)
                if r.isFatal { return .failure(warnings + r.errors) }
                warnings += r.errors
                value = r.value
            }
            return .success(value, warnings: warnings)

        case .split(let forward, _):
            return forward.map(source)

        case .forward(let path, let inner):
            guard let source else {
                return .failure(MapError(.read, "cannot read \(path) from an absent value"))
            }
            let found = path.read(from: source)
            let walked = found?.path ?? JSONPath(path.steps.map { .key($0) })
            return inner.map(found?.value).prefixed(source: walked, destination: .root)

        case .backward(let path, let inner):
            let r = inner.map(source)
            guard !r.isFatal else { return r.prefixed(source: .root, destination: path.destinationPath) }
            var builder = ObjectBuilder()
            if let value = r.value { _ = builder.insert(value, at: path) }
            return .success(.object(builder.object), warnings: r.prefixed(source: .root, destination: path.destinationPath).errors)

        case .enumTable(let table):
            guard let value = source else { return .failure(MapError(.required, "value is required, found absent")) }
            guard let mapped = table.map(value) else {
                return .failure(MapError(.value, "\(MapError.describe(value)) is not in the enum table"))
            }
            return .success(mapped)

        case .convert(let conversion):
            guard let value = source else { return .failure(MapError(.required, "value is required, found absent")) }
            if value.isNull && !conversion.acceptsNull {
                return .failure(MapError(.required, "value is required, found null"))
            }
            return conversion.apply(value)

        case .block(let block):
            return block.forward(source)

        case .postProcess(let inner, let post):
            return post.forward(source, inner.map(source))

        case .compute(let expression, let invalid, let then):
            return Self.finishComputing(expression, expression.evaluate(on: source), invalid: invalid, then: then)
        }
    }

    /// A computed value's result, from the expression's evaluation (both engines evaluate, each reading the
    /// paths its own way, and finish here). An error that `then` reports about a value read straight from a
    /// path (absent, null, or of the wrong type) is placed at that path.
    static func finishComputing(
        _ expression: ValueExpression, _ evaluation: ValueExpression.Evaluation, invalid: FieldPolicy.Action, then: Mapper
    ) -> MapResult {
        switch evaluation {
        case .failure(let error):
            return apply(invalid, errors: [error])
        case .value(let value, let origin):
            let r = then.map(value)
            return origin >= 0 && !r.errors.isEmpty ? r.prefixed(source: expression.pointer(origin), destination: .root) : r
        }
    }

    static func apply(_ action: FieldPolicy.Action, error: MapError) -> MapResult {
        switch action {
        case .fail, .passToMapper: return .failure(error)
        case .omit: return .success(nil)
        case .useDefault(let v): return .success(v)
        case .keepNull: return .success(.null)
        }
    }

    static func apply(_ action: FieldPolicy.Action, errors: [MapError]) -> MapResult {
        switch action {
        case .fail, .passToMapper: return .failure(errors)
        case .omit: return .success(nil, warnings: errors)
        case .useDefault(let v): return .success(v, warnings: errors)
        case .keepNull: return .success(.null, warnings: errors)
        }
    }
}

extension ObjectMapping {
    func map(_ source: JSONValue?) -> MapResult {
        guard let source else { return .success(nil) }
        guard case .object(let object) = source else { return .failure(.typeMismatch(expected: "object", found: source)) }
        if case .inPlace = unmapped { return mapInPlace(object) }
        var builder = ObjectBuilder()
        var errors: [MapError] = []
        for field in fields {
            let (r, sourcePaths) = mapField(field, of: source, errors: &errors)
            guard !r.isFatal, let value = r.value else { continue }
            if let error = field.write(value, into: &builder) {
                errors.append(error.prefixed(source: sourcePaths[0], destination: .root))
            }
        }
        if case .keep(let style, let values, let collisions) = unmapped {
            passThrough(object, style: style, values: values, collisions: collisions, into: &builder, errors: &errors)
        }
        return errors.contains(where: \.isFatal) ? .failure(errors) : .success(.object(builder.object), warnings: errors)
    }

    /// `field`'s mapper on what it reads from `source`, its errors added to `errors` at the field's source and
    /// destination paths; returns the result and the paths it read.
    private func mapField(_ field: Field, of source: JSONValue, errors: inout [MapError]) -> (MapResult, [JSONPath]) {
        let (input, sourcePaths, focus) = field.read(from: source)
        let r = field.mapper.map(input)
        let destinationPaths = field.destinations.map(\.destinationPath)
        errors += r.errors.map { e in
            var e = e
            e.sourcePath = Self.attach(e.sourcePath, to: sourcePaths, focus: focus)
            e.destinationPath = Self.attach(e.destinationPath, to: destinationPaths)
            return e
        }
        return (r, sourcePaths)
    }

    /// `unmapped: .inPlace`: the input object with each field's result written at its source path, in field order
    /// (errors in field order, as `map` gives them).
    private func mapInPlace(_ object: JSONObject) -> MapResult {
        var out = JSONValue.object(object)
        var errors: [MapError] = []
        for field in fields {
            let (r, sourcePaths) = mapField(field, of: .object(object), errors: &errors)
            guard !r.isFatal else { continue }
            let path = field.destinations[0]
            if !Self.replace(path.steps[...], with: r.value, in: &out) {
                errors.append(MapError(.write, "cannot write to \(path): a value on the way is not an object",
                                       sourcePath: sourcePaths[0], destinationPath: path.destinationPath))
            }
        }
        return errors.contains(where: \.isFatal) ? .failure(errors) : .success(out, warnings: errors)
    }

    /// Writes `value` at `steps` inside `container` in place (nil removes what is there): an object member is
    /// replaced where it is or appended, an array element (a canonical index within the array) replaced; objects
    /// missing on the way are added. False when a scalar or null is on the way, or an index is out of range.
    static func replace(_ steps: ArraySlice<String>, with value: JSONValue?, in container: inout JSONValue) -> Bool {
        guard let step = steps.first else { return false }
        let rest = steps.dropFirst()
        switch container {
        case .object(var o):
            container = .null  // `o` uniquely owned while it changes
            defer { container = .object(o) }
            if rest.isEmpty {
                o[step] = value
                return true
            }
            guard var child = o[step] else {
                guard let value else { return true }  // nothing to remove
                var made = JSONValue.object(JSONObject())
                guard replace(rest, with: value, in: &made) else { return false }
                o[step] = made
                return true
            }
            o[step] = .null
            defer { o[step] = child }
            return replace(rest, with: value, in: &child)
        case .array(var a):
            guard let i = KeyPath.arrayIndex(step), i < a.count else { return value == nil }
            container = .null
            defer { container = .array(a) }
            if rest.isEmpty {
                guard let value else { return true }  // an element stays: arrays keep their indexes
                a[i] = value
                return true
            }
            var child = a[i]
            a[i] = .null
            defer { a[i] = child }
            return replace(rest, with: value, in: &child)
        default:
            return value == nil
        }
    }

    /// The keys no field reads, in input order. Per key: a key whose output name a field's destination takes is
    /// left out with a warning (`shadowedKeyWarning`); one whose output name an earlier kept key has is a
    /// collision (an error, or under `.warn` a warning and the later value wins); then its value's errors.
    private func passThrough(
        _ object: JSONObject, style: KeyStyle?, values: Mapper?, collisions: KeyCollisions,
        into builder: inout ObjectBuilder, errors: inout [MapError]
    ) {
        let consumed = consumedSourceKeys
        let reserved = reservedDestinationKeys
        var passed = JSONObject()
        /// Output name → the first input key with that name (only with a key style: without one, names are the
        /// object's own keys, which are distinct).
        var firstKeyOfName: [ByteKey: String] = [:]
        for (key, value) in object where !consumed.contains(ByteKey(key)) {
            let outKey = style?.apply(key) ?? key
            guard !reserved.contains(ByteKey(outKey)) else {
                errors.append(Self.shadowedKeyWarning(key, name: outKey))
                continue
            }
            if let style {
                if let first = firstKeyOfName[ByteKey(outKey)] {
                    errors.append(Self.passThroughCollision(first, key, name: outKey, style: style, collisions: collisions))
                    if collisions == .fail { continue }
                } else {
                    firstKeyOfName[ByteKey(outKey)] = key
                }
            }
            var out: JSONValue? = value
            if let values {
                let r = values.map(value)
                errors += r.prefixed(source: [.key(key)], destination: [.key(outKey)]).errors
                guard !r.isFatal else { continue }
                out = r.value
            }
            if let out { passed[outKey] = out }
        }
        for (k, v) in passed { _ = builder.insert(v, at: .literal(k)) }
    }

    /// Two passed-through keys that `style` gives one name: the error (or under `.warn` the warning) at the later
    /// key, naming both (the tree's `passThrough` and the stream engine's `PassThroughMembers` report it alike).
    static func passThroughCollision(_ first: String, _ key: String, name: String, style: KeyStyle, collisions: KeyCollisions) -> MapError {
        var e = KeyRenaming.collisionError(first, key, name: name, style: style)
        e.sourcePath = [.key(key)]
        e.destinationPath = [.key(name)]
        return collisions == .warn ? e.nonFatal : e
    }

    /// `key "thisKey" is left out: a field writes "thisKey"` (a warning at the input key).
    static func shadowedKeyWarning(_ key: String, name: String) -> MapError {
        let message = bytesEqual(key, name)
            ? "key \(MapError.quoted(key)) is left out: a field writes it"
            : "key \(MapError.quoted(key)) is left out: a field writes \(MapError.quoted(name))"
        return MapError(.write, message, isFatal: false, sourcePath: [.key(key)], destinationPath: [.key(name)])
    }

    /// Relates an error path inside a field's value to the record: with several paths, a leading index picks one;
    /// an error about the whole value is placed at `paths[focus]` (a many-to-one field: its first missing source).
    static func attach(_ inner: JSONPath, to paths: [JSONPath], focus: Int = 0) -> JSONPath {
        if paths.count == 1 { return inner.prepending(paths[0]) }
        if case .index(let i)? = inner.components.first, i < paths.count {
            return JSONPath(paths[i].components + inner.components.dropFirst())
        }
        return paths.indices.contains(focus) ? inner.prepending(paths[focus]) : inner
    }
}

extension ObjectMapping.Field {
    /// The field's input (absent when any source is absent), the paths it came from, and the source that errors
    /// about the whole input name: the first missing one, else the first.
    func read(from source: JSONValue) -> (JSONValue?, [JSONPath], focus: Int) {
        if sources.count == 1 {
            let found = sources[0].read(from: source)
            return (found?.value, [found?.path ?? JSONPath(sources[0].steps.map { .key($0) })], 0)
        }
        var values: [JSONValue] = []
        var paths: [JSONPath] = []
        var missing: Int? = nil
        for (i, s) in sources.enumerated() {
            if let found = s.read(from: source) {
                values.append(found.value)
                paths.append(found.path)
            } else {
                if missing == nil { missing = i }
                paths.append(JSONPath(s.steps.map { .key($0) }))
            }
        }
        return (missing == nil ? .array(values) : nil, paths, missing ?? 0)
    }

    /// Writes a field's value at its destination(s); returns the error when it cannot.
    func write(_ value: JSONValue, into builder: inout ObjectBuilder) -> MapError? {
        if destinations.count == 1 {
            return builder.insert(value, at: destinations[0])
                ? nil
                : MapError(.write, "cannot write to \(destinations[0]): the destination is already taken",
                           destinationPath: destinations[0].destinationPath)
        }
        guard case .array(let parts) = value, parts.count == destinations.count else {
            return MapError(.write, "expected an array of \(destinations.count) values for \(destinations.count) destinations, found \(MapError.describe(value))")
        }
        for (part, destination) in zip(parts, destinations) where !builder.insert(part, at: destination) {
            return MapError(.write, "cannot write to \(destination): the destination is already taken",
                            destinationPath: destination.destinationPath)
        }
        return nil
    }
}
