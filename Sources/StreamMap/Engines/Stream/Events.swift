/// One parse event, with byte buffers borrowed from the parser (valid only during the call).
enum JSONEvent {
    case null
    case bool(Bool)
    case number(UnsafeRawBufferPointer)
    case string(UnsafeRawBufferPointer)
    case startObject
    case key(UnsafeRawBufferPointer)
    case endObject
    case startArray
    case endArray

    /// The event as a scalar value (strings validated strictly, exactly as the tree builder does), or nil for
    /// container events.
    func scalarValue() throws -> JSONValue? {
        switch self {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .number(let text): return .number(JSONNumber(unchecked: String(decoding: text, as: UTF8.self)))
        case .string(let utf8): return .string(try JSONTreeBuilder.makeString(utf8))
        default: return nil
        }
    }

    /// Feeds the event to a tree builder.
    func feed(_ builder: inout JSONTreeBuilder) throws {
        switch self {
        case .null: builder.null()
        case .bool(let b): builder.bool(b)
        case .number(let t): builder.number(t)
        case .string(let s): try builder.string(s)
        case .startObject: builder.startObject()
        case .key(let k): try builder.key(k)
        case .endObject: builder.endObject()
        case .startArray: builder.startArray()
        case .endArray: builder.endArray()
        }
    }
}

/// Consumes the events of one JSON value. `start` gets the value's first event; `next` the following ones
/// (containers only). Both return true when the value is complete.
class EventConsumer {
    func start(_ e: JSONEvent) throws -> Bool { fatalError("abstract") }
    func next(_ e: JSONEvent) throws -> Bool { fatalError("abstract") }
    /// Forget any value seen so far: what this consumer reads is absent again (a later duplicate key).
    func resetFound() {}
}

/// Skips a value without allocating, by counting depth. (Every string's UTF-8 was validated before yajl saw it,
/// by `StrictJSONScanner`, so a record with invalid UTF-8 is rejected whether or not the bad string is mapped.)
final class Skipper: EventConsumer {
    @exclusivity(unchecked) private var depth = 0

    override func start(_ e: JSONEvent) throws -> Bool {
        switch e {
        case .startObject, .startArray:
            depth = 1
            return false
        default:
            return true
        }
    }

    override func next(_ e: JSONEvent) throws -> Bool {
        switch e {
        case .startObject, .startArray: depth += 1
        case .endObject, .endArray: depth -= 1
        default: break
        }
        return depth == 0
    }
}

/// Gives the same value to several consumers (several fields reading one key).
final class FanOut: EventConsumer {
    let consumers: [EventConsumer]
    @exclusivity(unchecked) private var active: [Bool]

    init(_ consumers: [EventConsumer]) {
        self.consumers = consumers
        self.active = Array(repeating: false, count: consumers.count)
    }

    override func start(_ e: JSONEvent) throws -> Bool {
        var done = true
        for i in consumers.indices {
            active[i] = !(try consumers[i].start(e))
            if active[i] { done = false }
        }
        return done
    }

    override func next(_ e: JSONEvent) throws -> Bool {
        var done = true
        for i in consumers.indices where active[i] {
            active[i] = !(try consumers[i].next(e))
            if active[i] { done = false }
        }
        return done
    }

    override func resetFound() { for c in consumers { c.resetFound() } }
}

/// Walks one step of a key path (`b` in `a.b.c`): in an object, the value of that key (last wins); in an array,
/// the element at that index when the step is an index. Anything else leaves the target absent.
final class PathStep: EventConsumer {
    let key: [UInt8]
    let index: Int?
    let target: EventConsumer
    /// Whether the step last went through an array (the error path then says `/3`, not `/"3"`).
    @exclusivity(unchecked) private(set) var viaArray = false
    private let skipper = Skipper()
    @exclusivity(unchecked) private var inObject = false
    @exclusivity(unchecked) private var position = 0
    @exclusivity(unchecked) private var awaitingValue = false
    @exclusivity(unchecked) private var matchedKey = false
    @exclusivity(unchecked) private var current: EventConsumer?

    init(key: String, target: EventConsumer) {
        self.key = Array(key.utf8)
        self.index = KeyPath.arrayIndex(key)
        self.target = target
    }

    override func resetFound() { target.resetFound() }

    override func start(_ e: JSONEvent) throws -> Bool {
        current = nil
        awaitingValue = false
        position = 0
        switch e {
        case .startObject:
            inObject = true
            return false
        case .startArray:
            inObject = false
            return false
        default:
            return true
        }
    }

    override func next(_ e: JSONEvent) throws -> Bool {
        if let c = current {
            if try c.next(e) {
                current = nil
                if !inObject { position += 1 }
            }
            return false
        }
        if inObject {
            if awaitingValue {
                awaitingValue = false
                let consumer: EventConsumer = matchedKey ? target : skipper
                if !(try consumer.start(e)) { current = consumer }
                return false
            }
            switch e {
            case .key(let k):
                matchedKey = k.elementsEqual(key)
                if matchedKey {
                    target.resetFound()
                    viaArray = false
                }
                awaitingValue = true
                return false
            default:
                return true  // endObject
            }
        }
        if case .endArray = e { return true }
        let matched = position == index
        if matched {
            target.resetFound()
            viaArray = true
        }
        let consumer: EventConsumer = matched ? target : skipper
        if try consumer.start(e) { position += 1 } else { current = consumer }
        return false
    }
}
