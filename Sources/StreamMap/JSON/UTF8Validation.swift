/// Strict UTF-8 validation (Unicode §3.9, as Swift's `String(validating:)`): rejects overlong forms, UTF-16
/// surrogates (U+D800–U+DFFF) and code points above U+10FFFF. Allocation-free, with an ASCII fast path.
enum UTF8Validation {
    static func isValid(_ bytes: UnsafeRawBufferPointer) -> Bool {
        var i = 0
        let n = bytes.count
        while i < n {
            // ASCII fast path: 8 bytes at a time.
            while i + 8 <= n && bytes.loadUnaligned(fromByteOffset: i, as: UInt64.self) & 0x8080_8080_8080_8080 == 0 { i += 8 }
            guard i < n else { return true }
            let b0 = bytes[i]
            if b0 < 0x80 { i += 1; continue }
            switch b0 {
            case 0xC2...0xDF:
                guard i + 1 < n, isContinuation(bytes[i + 1]) else { return false }
                i += 2
            case 0xE0...0xEF:
                guard i + 2 < n else { return false }
                let b1 = bytes[i + 1]
                let lower: UInt8 = b0 == 0xE0 ? 0xA0 : 0x80  // no overlong forms
                let upper: UInt8 = b0 == 0xED ? 0x9F : 0xBF  // no surrogates
                guard b1 >= lower, b1 <= upper, isContinuation(bytes[i + 2]) else { return false }
                i += 3
            case 0xF0...0xF4:
                guard i + 3 < n else { return false }
                let b1 = bytes[i + 1]
                let lower: UInt8 = b0 == 0xF0 ? 0x90 : 0x80  // no overlong forms
                let upper: UInt8 = b0 == 0xF4 ? 0x8F : 0xBF  // nothing above U+10FFFF
                guard b1 >= lower, b1 <= upper, isContinuation(bytes[i + 2]), isContinuation(bytes[i + 3]) else { return false }
                i += 4
            default:
                return false
            }
        }
        return true
    }

    @inline(__always) private static func isContinuation(_ b: UInt8) -> Bool { b & 0xC0 == 0x80 }

    static let invalidStringMessage = "invalid UTF-8 in string"
}
