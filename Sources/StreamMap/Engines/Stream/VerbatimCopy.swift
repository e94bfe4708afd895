internal import CJSONScan

/// Verbatim copies: a record that passes through unchanged (the `identity` mapper at the root, or a type check
/// it passes) is checked and copied by two C kernels instead of being parsed by yajl and written back event by
/// event. `cjsonscan_valid_utf8` checks its UTF-8 as the strict scanner would, and `cjsonscan_canonical_copy`
/// checks everything else yajl and the strict scanner check (grammar, every number and literal, escapes and
/// surrogate pairs, control bytes, whitespace, nesting limit) as it writes the canonical text — exactly the bytes the events would have written. Whatever one of them does not vouch for (an
/// error, a duplicate key, a value nested deeper than the copy goes) is mapped through events as before, so
/// errors and duplicate keys are decided where they always were.
final class VerbatimCopier {
    /// The C kernel's state (allocated at the first copy: most plans never copy).
    private var copierState: OpaquePointer?
    private var copier: OpaquePointer? {
        if copierState == nil { copierState = cjsonscan_copier_new() }
        return copierState
    }
    /// The C kernel's state, which after a copy of an object knows its keys (`cjsonscan_copier_top_keys`).
    var kernel: OpaquePointer? { copierState }
    @exclusivity(unchecked) private var text = ByteBuffer(capacity: 1 << 12)
    /// Records and values copied so far (the tests check that the engine takes this path).
    @exclusivity(unchecked) private(set) var copies = 0
    /// Back to this size after a huge record.
    private static let keptCapacity = 1 << 20

    init() {}

    deinit {
        cjsonscan_copier_free(copierState)
        text.deallocate()
    }

    /// The canonical text of the one JSON value in `record` (whitespace around it allowed), valid until the next
    /// call; nil when the record is not known to be valid JSON that nests at most `maximumDepth` levels, or an
    /// object in it repeats a key — or, with `allowed`, when its type is not in the set (then the events report it).
    func copy(
        _ record: UnsafeRawBufferPointer, maximumDepth: Int, allowed: JSONTypeSet? = nil, portable: Bool = false
    ) -> UnsafeRawBufferPointer? {
        guard let copier, let p = record.baseAddress?.assumingMemoryBound(to: UInt8.self), record.count > 0,
              maximumDepth > 0 else { return nil }
        if let allowed {
            guard let type = Self.leadingType(record), allowed.contains(type) else { return nil }
        }
        // The strict scanner's rules: UTF-8 here (a pass that reads a block of ASCII as two loads and a test); its
        // escapes, surrogate pairs, control bytes and whitespace the copy checks itself. The copy checks the grammar
        // and the depth too (one pass over the record, not a validating skip first), and answers -1 to anything
        // yajl and the strict scanner would not accept.
        guard (portable ? cjsonscan_valid_utf8_portable(p, record.count) : cjsonscan_valid_utf8(p, record.count)) != 0 else {
            return nil
        }
        text.reset(keeping: Self.keptCapacity)
        text.reserve(record.count + 32)
        let count = portable ? cjsonscan_canonical_copy_portable(copier, p, record.count, text.base, maximumDepth)
                             : cjsonscan_canonical_copy(copier, p, record.count, text.base, maximumDepth)
        guard count >= 0 else { return nil }
        copies &+= 1
        return UnsafeRawBufferPointer(start: text.base, count: count)
    }

    /// The canonical text of `value`, one JSON value that the strict scanner and the skipper have accepted
    /// (`YajlParserBase.copiesAhead`), valid until the next call; nil when an object in it repeats a key.
    func canonicalText(of value: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer? {
        guard let copier, let p = value.baseAddress?.assumingMemoryBound(to: UInt8.self), value.count > 0 else { return nil }
        text.reset(keeping: Self.keptCapacity)
        text.reserve(value.count + 32)
        let count = cjsonscan_canonical_copy(copier, p, value.count, text.base, Int.max)
        guard count >= 2 else { return nil }
        copies &+= 1
        return UnsafeRawBufferPointer(start: text.base, count: count)
    }

    /// The type of the value that starts the record (after whitespace), as its first byte tells it; nil for a
    /// number (integer or not: that takes the whole token) and for anything else.
    private static func leadingType(_ record: UnsafeRawBufferPointer) -> JSONTypeSet? {
        for b in record {
            switch b {
            case UInt8(ascii: " "), UInt8(ascii: "\t"), UInt8(ascii: "\n"), UInt8(ascii: "\r"): continue
            case UInt8(ascii: "{"): return .object
            case UInt8(ascii: "["): return .array
            case UInt8(ascii: "\""): return .string
            case UInt8(ascii: "t"), UInt8(ascii: "f"): return .boolean
            case UInt8(ascii: "n"): return .null
            default: return nil
            }
        }
        return nil
    }
}

/// Holds verbatim copies (`VerbatimCopier`) to what the events write: the tree engine's `identity`. For the fuzz
/// target (Fuzz/, through EngineFuzzing) and the tests; not part of the library's API.
@_spi(Fuzzing) public enum VerbatimCopyCheck {
    /// The verbatim copy of the record `bytes` (nil: not copied, left to the events), by the SIMD or the portable
    /// code.
    public static func copy(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int, portable: Bool = false) -> [UInt8]? {
        let copier = VerbatimCopier()
        return withExtendedLifetime(copier) {  // the text lives in the copier
            copier.copy(bytes, maximumDepth: maximumDepth, portable: portable).map { Array($0) }
        }
    }

    /// nil when the verbatim copy of the record `bytes` agrees with the tree engine's `identity`, else what
    /// differs: both code paths copy the same records to the same bytes, and a record copied is one the tree
    /// maps, to exactly those bytes.
    public static func divergence(_ bytes: UnsafeRawBufferPointer, maximumDepth: Int) -> String? {
        let copied = copy(bytes, maximumDepth: maximumDepth)
        let portable = copy(bytes, maximumDepth: maximumDepth, portable: true)
        if copied != portable {
            return "the copy gives \(describe(copied)), its portable code \(describe(portable))"
        }
        guard let copied else { return nil }
        let tree = TreeEngine(mapper: .identity, parserOptions: JSONParserOptions(maximumDepth: maximumDepth))
        var writer = JSONWriter()
        let outcome = tree.map(record: bytes, into: &writer)
        guard case .mapped(let warnings, _) = outcome, warnings.isEmpty else {
            return "copied as \(describe(copied)), but the tree engine says \(outcome)"
        }
        return writer.bytes == copied ? nil : "copied as \(describe(copied)), the tree writes \(describe(writer.bytes))"
    }

    private static func describe(_ bytes: [UInt8]?) -> String {
        bytes.map { String(decoding: $0, as: UTF8.self).debugDescription } ?? "no copy"
    }
}
