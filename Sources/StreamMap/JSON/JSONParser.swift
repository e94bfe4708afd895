internal import CJSONScan

/// Builds `JSONValue`s from parse events, without recursion. Open containers live in their own stacks and are
/// mutated in place (never popped and pushed back), so building stays linear: no copy-on-write of a growing array.
public struct JSONTreeBuilder: JSONEventHandler {
    private var isObject: [Bool] = []
    private var arrays: [[JSONValue]] = []
    private var objects: [JSONObject] = []
    private var pendingKeys: [String] = []
    /// Completed top-level values, in order.
    public var values: [JSONValue] = []
    /// The deepest nesting seen so far.
    public private(set) var maximumDepth = 0
    /// Reject objects that repeat a key (spec files), instead of "last wins" (records).
    public var rejectsDuplicateKeys = false

    /// An empty builder; with `rejectsDuplicateKeys`, an object that repeats a key throws a ``JSONSyntaxError``.
    public init(rejectsDuplicateKeys: Bool = false) { self.rejectsDuplicateKeys = rejectsDuplicateKeys }

    static func makeString(_ utf8: UnsafeRawBufferPointer) throws -> String {
        // Checked by the UTF-8 kernel (64 bytes at a time), then made by the standard library's contiguous path:
        // `String(validating:)` over a raw buffer takes its generic path, about twice as slow on short strings.
        let bytes = utf8.assumingMemoryBound(to: UInt8.self)
        guard let base = bytes.baseAddress else { return "" }
        guard cjsonscan_valid_utf8(base, bytes.count) != 0 else {
            throw JSONSyntaxError(byteOffset: 0, message: UTF8Validation.invalidStringMessage)
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    private mutating func add(_ value: JSONValue) {
        guard let top = isObject.last else {
            values.append(value)
            return
        }
        if top {
            objects[objects.count - 1][pendingKeys.removeLast()] = value
        } else {
            arrays[arrays.count - 1].append(value)
        }
    }

    private mutating func opened() { maximumDepth = max(maximumDepth, isObject.count) }

    public mutating func null() { add(.null) }
    public mutating func bool(_ value: Bool) { add(.bool(value)) }
    public mutating func number(_ text: UnsafeRawBufferPointer) {
        add(.number(JSONNumber(unchecked: String(decoding: text, as: UTF8.self))))
    }
    public mutating func string(_ utf8: UnsafeRawBufferPointer) throws { add(.string(try Self.makeString(utf8))) }
    public mutating func startObject() {
        isObject.append(true)
        objects.append(JSONObject())
        opened()
    }
    public mutating func key(_ utf8: UnsafeRawBufferPointer) throws {
        let key = try Self.makeString(utf8)
        if rejectsDuplicateKeys, let o = objects.last, o[key] != nil {
            throw JSONSyntaxError(byteOffset: 0, message: "duplicate key \(JSONWriter.string(.string(key)))")
        }
        pendingKeys.append(key)
    }
    public mutating func endObject() {
        guard isObject.last == true else { return }
        isObject.removeLast()
        add(.object(objects.removeLast()))
    }
    public mutating func startArray() {
        isObject.append(false)
        arrays.append([])
        opened()
    }
    public mutating func endArray() {
        guard isObject.last == false else { return }
        isObject.removeLast()
        add(.array(arrays.removeLast()))
    }
}

/// Parses complete JSON texts into `JSONValue`s through yajl.
public enum JSONParser {
    /// Parses exactly one JSON value (surrounding whitespace allowed; anything else after it is an error).
    public static func parse(
        _ bytes: UnsafeRawBufferPointer, options: JSONParserOptions = .init(), rejectingDuplicateKeys: Bool = false
    ) throws(JSONSyntaxError) -> JSONValue {
        try parseWithDepth(bytes, options: options, rejectingDuplicateKeys: rejectingDuplicateKeys).value
    }

    /// Parses one value and reports how deeply it is nested.
    static func parseWithDepth(
        _ bytes: UnsafeRawBufferPointer, options: JSONParserOptions = .init(), rejectingDuplicateKeys: Bool = false
    ) throws(JSONSyntaxError) -> (value: JSONValue, depth: Int) {
        var options = options
        options.allowMultipleValues = false
        let parser = JSONPushParser(handler: JSONTreeBuilder(rejectsDuplicateKeys: rejectingDuplicateKeys), options: options)
        do {
            try parser.feed(bytes)
            try parser.finish()
        } catch let e as JSONSyntaxError {
            throw e
        } catch {
            throw JSONSyntaxError(byteOffset: 0, message: "\(error)")
        }
        guard let value = parser.handler.values.first else {
            throw JSONSyntaxError(byteOffset: bytes.count, message: "no JSON value")
        }
        return (value, parser.handler.maximumDepth)
    }

    /// Parses exactly one JSON value from `text` (surrounding whitespace allowed).
    ///
    /// ```swift
    /// let value = try JSONParser.parse(#"{"id": 12345678901234567890, "tags": ["a"]}"#)
    /// value["id"]   // .number(12345678901234567890), exact
    /// ```
    ///
    /// - Throws: ``JSONSyntaxError`` for malformed JSON, a value nested deeper than `options.maximumDepth`, invalid
    ///   UTF-8, or anything but whitespace after the value.
    public static func parse(_ text: String, options: JSONParserOptions = .init()) throws(JSONSyntaxError) -> JSONValue {
        try parse(Array(text.utf8), options: options)
    }

    /// Parses exactly one JSON value from `bytes` (surrounding whitespace allowed; anything else after it is an
    /// error). With `rejectingDuplicateKeys`, an object that repeats a key is an error instead of "last wins".
    public static func parse(
        _ bytes: [UInt8], options: JSONParserOptions = .init(), rejectingDuplicateKeys: Bool = false
    ) throws(JSONSyntaxError) -> JSONValue {
        let result = bytes.withUnsafeBytes { buf -> Result<JSONValue, JSONSyntaxError> in
            do throws(JSONSyntaxError) {
                return .success(try parse(buf, options: options, rejectingDuplicateKeys: rejectingDuplicateKeys))
            } catch {
                return .failure(error)
            }
        }
        return try result.get()
    }
}
