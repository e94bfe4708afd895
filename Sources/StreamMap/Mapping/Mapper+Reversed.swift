extension Mapper {
    /// The mapper that undoes this one (model → JSON), built from the reverses of its parts (Hydrant's
    /// `reverseMapper`). Defaults swap with reverse defaults; object mappings swap sources and destinations.
    /// Lossy mappers (`first` of dates, `forward`) reverse to their first form. Throws for mappers with no reverse
    /// (`toString`, closures without a reverse, key styles without an inverse, enum tables that are not one-to-one).
    public func reversed() throws(NotReversibleError) -> Mapper {
        switch kind {
        case .identity: return self
        case .notNull(let m): return Mapper(.notNull(try m.reversed()))
        case .nonFatal(let m, let fallback, let reverseFallback):
            return Mapper(.nonFatal(try m.reversed(), fallback: reverseFallback, reverseFallback: fallback))
        case .policy(let m, let p): return Mapper(.policy(try m.reversed(), p))
        case .check: return self
        case .object(let mapping): return Mapper(.object(try mapping.reversed()))
        case .arrayOf(let m): return Mapper(.arrayOf(try m.reversed()))
        case .first(let ms):
            var out: [Mapper] = []
            for m in ms { out.append(try m.reversed()) }
            return Mapper(.first(out))
        case .thread(let ms):
            var out: [Mapper] = []
            for m in ms.reversed() { out.append(try m.reversed()) }
            return Mapper(.thread(out))
        case .split(let f, let r): return Mapper(.split(forward: r, reverse: f))
        case .forward(let p, let m): return Mapper(.backward(p, try m.reversed()))
        case .backward(let p, let m): return Mapper(.forward(p, try m.reversed()))
        case .enumTable(let t):
            guard let inverse = t.inverted else {
                throw NotReversibleError(mapper: "enum", reason: "the table is not one-to-one")
            }
            return Mapper(.enumTable(inverse))
        case .convert(let c): return Mapper(.convert(try c.reversed()))
        case .block(let b):
            guard let reverse = b.reverse else { throw NotReversibleError(mapper: b.name, reason: "no reverse closure") }
            return Mapper(.block(Block(name: b.name, forward: reverse, reverse: b.forward)))
        case .postProcess(let m, let p):
            guard let reverse = p.reverse else { throw NotReversibleError(mapper: p.name, reason: "no reverse closure") }
            return Mapper(.postProcess(try m.reversed(), PostProcessor(name: p.name, forward: reverse, reverse: p.forward)))
        case .compute(let e, _, _):
            throw NotReversibleError(mapper: "expr", reason: "a computed value (\(JSONWriter.string(.string(e.text)))) has no inverse")
        }
    }
}

extension ObjectMapping {
    /// Destinations become sources and the reverse mapper runs on each field; pass-through keys get the inverse
    /// key style and the reverse value mapper.
    public func reversed() throws(NotReversibleError) -> ObjectMapping {
        var out: [Field] = []
        for f in fields {
            out.append(Field(sources: f.destinations, destinations: f.sources, mapper: try f.mapper.reversed()))
        }
        switch unmapped {
        case .drop:
            return ObjectMapping(fields: out, unmapped: .drop)
        case .inPlace:
            return ObjectMapping(fields: out, unmapped: .inPlace)
        case .keep(let style, let values, let collisions):
            var backStyle: KeyStyle? = nil
            if let style {
                guard let back = style.reversed else {
                    throw NotReversibleError(mapper: "unmapped keys (\(style.rawValue))", reason: "the key style has no inverse")
                }
                backStyle = back
            }
            return ObjectMapping(fields: out, unmapped: .keep(keyStyle: backStyle, values: try values?.reversed(), collisions: collisions))
        }
    }
}
