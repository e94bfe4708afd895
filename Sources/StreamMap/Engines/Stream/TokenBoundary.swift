/// Finds where a piece of JSON text can be cut without splitting a token, across pieces.
///
/// yajl rescans a token it has buffered from the token's start on every parse call, so a 40 MB string fed in
/// 64 KiB pieces costs hundreds of full scans. The stream engine therefore feeds yajl only up to the last token
/// boundary of each piece and holds the incomplete token back until it is complete: every token is then scanned
/// once, and memory stays bounded by the largest token, not the record.
struct TokenBoundaryScanner {
    private var inString = false
    private var escaped = false

    /// The offset just after the last token boundary in `part` (0 when there is none), carrying string state over.
    mutating func lastBoundary(in part: UnsafeRawBufferPointer) -> Int {
        var last = 0
        var i = 0
        let n = part.count
        while i < n {
            let b = part[i]
            if inString {
                if escaped {
                    escaped = false
                } else if b == UInt8(ascii: "\\") {
                    escaped = true
                } else if b == UInt8(ascii: "\"") {
                    inString = false
                    last = i + 1
                }
            } else {
                switch b {
                case UInt8(ascii: "\""): inString = true
                case UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ","),
                    UInt8(ascii: ":"), 0x20, 0x09, 0x0A, 0x0D:
                    last = i + 1
                default: break
                }
            }
            i += 1
        }
        return last
    }
}
