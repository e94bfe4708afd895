internal import CJSONScan

/// Holds the C escaper behind `JSONWriter.writeString` (`cjsonscan_escape_text`, Sources/CJSONScan/EscapeText.c),
/// its AVX2 and its portable code, to the rule it implements, applied byte by byte. For the fuzz target (Fuzz/,
/// through EngineFuzzing) and the tests; not part of the library's API.
@_spi(Fuzzing) public enum EscapeTextCheck {
    /// The first difference between what the escapers write for `text` and the rule — with room for all of it, and
    /// with a room that holds one chunk at a time — or nil when they agree. Also a difference: an escaper that
    /// consumes nothing while room is left, or writes past the room it is given or into the last 32 bytes of it.
    public static func divergence(_ text: UnsafeRawBufferPointer) -> String? {
        let expected = reference(text)
        for portable in [false, true] {
            for room in [224, 6 * text.count + 256] {
                switch escaped(text, room: room, portable: portable) {
                case .failure(let problem):
                    return "\(portable ? "portable" : "AVX2") escaper, room \(room): \(problem)"
                case .success(let bytes) where bytes != expected:
                    let at = zip(bytes, expected).enumerated().first { $0.element.0 != $0.element.1 }?.offset ?? min(bytes.count, expected.count)
                    return "\(portable ? "portable" : "AVX2") escaper, room \(room): output differs from byte \(at) (\(bytes.count) bytes, \(expected.count) expected)"
                case .success:
                    continue
                }
            }
        }
        return nil
    }

    /// The rule: `"`, the backslash and the control bytes escaped (the two-byte escapes `\"` `\\` `\b` `\f` `\n`
    /// `\r` `\t`, else `\u00XX` in lowercase hex), every other byte as it is.
    static func reference(_ text: UnsafeRawBufferPointer) -> [UInt8] {
        let hex = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.count)
        for b in text {
            switch b {
            case 0x22: out += [0x5C, 0x22]
            case 0x5C: out += [0x5C, 0x5C]
            case 0x08: out += [0x5C, UInt8(ascii: "b")]
            case 0x0C: out += [0x5C, UInt8(ascii: "f")]
            case 0x0A: out += [0x5C, UInt8(ascii: "n")]
            case 0x0D: out += [0x5C, UInt8(ascii: "r")]
            case 0x09: out += [0x5C, UInt8(ascii: "t")]
            case ..<0x20: out += [0x5C, UInt8(ascii: "u"), 0x30, 0x30, hex[Int(b >> 4)], hex[Int(b & 15)]]
            default: out.append(b)
            }
        }
        return out
    }

    struct Problem: Error, CustomStringConvertible {
        let description: String
    }

    /// The whole text through one escaper, `room` bytes at a time, each piece in a buffer of exactly that size with
    /// guard bytes after it.
    static func escaped(_ text: UnsafeRawBufferPointer, room: Int, portable: Bool) -> Result<[UInt8], Problem> {
        var out: [UInt8] = []
        var i = 0
        let guardBytes = 48
        var buffer = [UInt8](repeating: 0, count: room + guardBytes)
        while i < text.count {
            for k in buffer.indices { buffer[k] = 0xEE }
            var consumed = 0
            let written = buffer.withUnsafeMutableBufferPointer { b in
                let p = text.baseAddress!.assumingMemoryBound(to: UInt8.self) + i
                return portable
                    ? cjsonscan_escape_text_portable(p, text.count - i, b.baseAddress, room, &consumed)
                    : cjsonscan_escape_text(p, text.count - i, b.baseAddress, room, &consumed)
            }
            guard consumed > 0, consumed <= text.count - i else {
                return .failure(Problem(description: "consumed \(consumed) of the \(text.count - i) bytes left at \(i)"))
            }
            guard written <= room - 32, buffer[room...].allSatisfy({ $0 == 0xEE }) else {
                return .failure(Problem(description: "wrote \(written) bytes, or past its room of \(room), at \(i)"))
            }
            out += buffer[..<written]
            i += consumed
        }
        return .success(out)
    }
}
