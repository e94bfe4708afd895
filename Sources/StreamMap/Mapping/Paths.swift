/// One step of a path through a JSON value.
public enum PathComponent: Hashable, Sendable {
    case key(String)
    case index(Int)
}

/// A location in a JSON value, rendered as an RFC 6901 JSON Pointer (`/user/tags/0`, `""` for the root).
public struct JSONPath: Hashable, Sendable, CustomStringConvertible, ExpressibleByArrayLiteral {
    public var components: [PathComponent]

    public init(_ components: [PathComponent] = []) { self.components = components }
    public init(arrayLiteral elements: PathComponent...) { self.components = elements }

    public static let root = JSONPath()
    public var isRoot: Bool { components.isEmpty }

    public func prepending(_ prefix: JSONPath) -> JSONPath { JSONPath(prefix.components + components) }
    public func prepending(_ c: PathComponent) -> JSONPath { JSONPath([c] + components) }

    /// RFC 6901: `~` → `~0`, `/` → `~1`.
    public var pointer: String {
        var out = ""
        for c in components {
            out.append("/")
            switch c {
            case .index(let i): out.append(String(i))
            case .key(let k):
                for ch in k.unicodeScalars {
                    switch ch {
                    case "~": out.append("~0")
                    case "/": out.append("~1")
                    default: out.unicodeScalars.append(ch)
                    }
                }
            }
        }
        return out
    }

    public var description: String { pointer }
}

/// A key path such as `user.name`, `items.0.id` or a literal key containing the delimiter.
///
/// Reading walks objects by key; a step that is a decimal index (`0`, `12`) walks into an array when the current
/// value is an array (and is an ordinary key on an object). A step that hits anything else — absent, null, a
/// scalar, an index past the end — makes the whole path *absent* (no error), as Hydrant's accessors do.
public struct KeyPath: Hashable, Sendable, CustomStringConvertible {
    public var steps: [String]

    public init(steps: [String]) { self.steps = steps }

    /// Splits `path` on `delimiter` (default `.`). Empty steps are kept as empty keys.
    public init(_ path: String, delimiter: String = ".") {
        if delimiter.isEmpty { steps = [path] } else { steps = path.split(separator: delimiter, omittingEmptySubsequences: false).map(String.init) }
    }

    /// A single literal key, never split.
    public static func literal(_ key: String) -> KeyPath { KeyPath(steps: [key]) }

    public var description: String { steps.joined(separator: ".") }

    /// The value at this path, or nil when it is absent. `trail` receives the path actually walked.
    public func read(from value: JSONValue) -> (value: JSONValue, path: JSONPath)? {
        var current = value
        var walked: [PathComponent] = []
        walked.reserveCapacity(steps.count)
        for step in steps {
            switch current {
            case .object(let o):
                guard let next = o[step] else { return nil }
                walked.append(.key(step))
                current = next
            case .array(let a):
                guard let i = Self.arrayIndex(step), i < a.count else { return nil }
                walked.append(.index(i))
                current = a[i]
            default:
                return nil
            }
        }
        return (current, JSONPath(walked))
    }

    /// The step as an array index: a canonical unsigned decimal ("0", "12"; not "01", "-1", "+1").
    static func arrayIndex(_ step: String) -> Int? {
        let u = step.utf8
        guard let first = u.first, first >= 0x30, first <= 0x39, u.count <= 18 else { return nil }
        if first == 0x30 && u.count > 1 { return nil }
        guard u.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        return Int(step)
    }

    /// The JSON Pointer a destination path writes to.
    public var destinationPath: JSONPath { JSONPath(steps.map { .key($0) }) }
}
