/// Strips one UTF-8 byte order mark (EF BB BF) at the very start of an input, as RFC 8259 §8.1 allows; a BOM
/// anywhere else is left in place (and rejected by the parser as invalid JSON). Works across chunk boundaries.
struct LeadingBOM: Sendable {
    private static let bom: [UInt8] = [0xEF, 0xBB, 0xBF]
    private var seen: [UInt8] = []
    private var decided = false

    /// A filter at the start of an input; `atInputStart: false` for bytes that continue an input from a line start
    /// (a BOM there is data).
    init(atInputStart: Bool = true) { decided = !atInputStart }

    /// Passes `chunk` on without a leading BOM. `skipped` is told how many bytes were dropped (before `body` gets
    /// the bytes that follow them), so that consumers keep absolute offsets.
    mutating func filter(
        _ chunk: UnsafeRawBufferPointer, skipped: (Int) -> Void, _ body: (UnsafeRawBufferPointer) -> Void
    ) {
        guard !decided else {
            body(chunk)
            return
        }
        var i = 0
        while i < chunk.count && seen.count < 3 {
            guard chunk[i] == Self.bom[seen.count] else {
                decided = true
                let held = seen
                seen = []
                if !held.isEmpty { held.withUnsafeBytes { body($0) } }
                body(UnsafeRawBufferPointer(rebasing: chunk[i...]))
                return
            }
            seen.append(chunk[i])
            i += 1
        }
        guard seen.count == 3 else { return }  // still undecided: the chunk ended inside a possible BOM
        decided = true
        seen = []
        skipped(3)
        if i < chunk.count { body(UnsafeRawBufferPointer(rebasing: chunk[i...])) }
    }

    /// At the end of input: the start of a BOM that never completed is data after all.
    mutating func finish(_ body: (UnsafeRawBufferPointer) -> Void) {
        decided = true
        let held = seen
        seen = []
        if !held.isEmpty { held.withUnsafeBytes { body($0) } }
    }
}
