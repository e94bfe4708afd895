/// The stream engine: yajl's events drive a state machine compiled from the mapper, so a record is mapped while
/// it is parsed, without building its tree. Unread subtrees are skipped by depth counting; scalars and the few
/// subtrees a mapper needs whole are evaluated with the tree engine's own `Mapper.map`. The output and the errors
/// are identical to `TreeEngine`'s for every mapper and every record (differential tests guard this).
public struct StreamEngine: RecordEngine {
    public let mapper: Mapper
    public var parserOptions: JSONParserOptions
    private let root: ValueSink

    public init(mapper: Mapper, parserOptions: JSONParserOptions = .init()) {
        self.mapper = mapper
        self.parserOptions = parserOptions
        self.parserOptions.allowMultipleValues = false
        self.root = StreamCompiler.compile(mapper)
    }

    public mutating func map(record: UnsafeRawBufferPointer, into writer: inout JSONWriter) -> RecordOutcome {
        let parser = YajlParserCore(handler: StreamEventHandler(root: root), options: parserOptions)
        do {
            try parser.feed(record)
            try parser.finish()
        } catch let error as JSONSyntaxError {
            return .rejected(.syntax(error))
        } catch {
            return .rejected(.syntax(JSONSyntaxError(byteOffset: 0, message: "\(error)")))
        }
        guard parser.handler.completed else {
            return .rejected(.syntax(JSONSyntaxError(byteOffset: record.count, message: "no JSON value")))
        }
        if root.isFatal { return .rejected(.mapping(root.errors)) }
        guard root.kind != .absent else { return .rejected(.noOutput) }
        writer.writeRaw(root.output.bytes)
        return .mapped(warnings: root.errors)
    }
}

/// Forwards yajl's callbacks to the compiled root consumer.
struct StreamEventHandler: JSONEventHandler {
    let root: EventConsumer
    private var started = false
    private(set) var completed = false

    init(root: EventConsumer) { self.root = root }

    @inline(__always)
    private mutating func dispatch(_ e: JSONEvent) throws {
        if started {
            completed = try root.next(e)
        } else {
            started = true
            completed = try root.start(e)
        }
    }

    mutating func null() throws { try dispatch(.null) }
    mutating func bool(_ value: Bool) throws { try dispatch(.bool(value)) }
    mutating func number(_ text: UnsafeRawBufferPointer) throws { try dispatch(.number(text)) }
    mutating func string(_ utf8: UnsafeRawBufferPointer) throws { try dispatch(.string(utf8)) }
    mutating func startObject() throws { try dispatch(.startObject) }
    mutating func key(_ utf8: UnsafeRawBufferPointer) throws { try dispatch(.key(utf8)) }
    mutating func endObject() throws { try dispatch(.endObject) }
    mutating func startArray() throws { try dispatch(.startArray) }
    mutating func endArray() throws { try dispatch(.endArray) }
}

/// Compiles a mapper into sinks: streaming ones where the container logic is reproduced, the exact
/// materializing base sink everywhere else.
enum StreamCompiler {
    static func compile(_ mapper: Mapper) -> ValueSink {
        switch mapper.kind {
        case .identity:
            return CopySink(mapper, allowed: nil)
        case .check(let types):
            return CopySink(mapper, allowed: types)
        case .notNull(let inner):
            return NotNullSink(mapper, inner: compile(inner))
        case .nonFatal(let inner, let fallback, _):
            return NonFatalSink(mapper, inner: compile(inner), fallback: fallback)
        case .policy(let inner, let policy):
            return PolicySink(mapper, inner: compile(inner), policy: policy)
        case .arrayOf(let item):
            return ArraySink(mapper, item: compile(item))
        case .object(let mapping):
            return ObjectSink(mapper, mapping: mapping, compile: compile) ?? ValueSink(mapper)
        case .split(let forward, _):
            return compile(forward)
        default:
            return ValueSink(mapper)
        }
    }
}
