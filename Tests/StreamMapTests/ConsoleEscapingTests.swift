import Testing

@testable import StreamMap

/// The console's escaping (`Console.appendEscaped`), which finds what to rewrite a word at a time — the last 1–7
/// bytes of a text in a word of their own — held to a byte-by-byte reading of its rule at every length and offset.
@Suite struct ConsoleEscapingTests {
    /// The rule, a byte at a time: U+0000–U+001F and U+007F–U+009F as `\u00XX`; as a pointer step, `~` → `~0`
    /// and `/` → `~1`; everything else as it is.
    static func reference(_ bytes: [UInt8], pointerStep: Bool) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        func hex(_ v: UInt8) { out += Array("\\u00".utf8) + [Array("0123456789abcdef".utf8)[Int(v >> 4)], Array("0123456789abcdef".utf8)[Int(v & 15)]] }
        while i < bytes.count {
            let b = bytes[i]
            if b < 0x20 || b == 0x7F {
                hex(b)
            } else if b == 0xC2, i + 1 < bytes.count, bytes[i + 1] < 0xA0 {
                hex(bytes[i + 1])
                i += 1
            } else if pointerStep, b == UInt8(ascii: "~") || b == UInt8(ascii: "/") {
                out += [UInt8(ascii: "~"), b == UInt8(ascii: "~") ? UInt8(ascii: "0") : UInt8(ascii: "1")]
            } else {
                out.append(b)
            }
            i += 1
        }
        return out
    }

    static func escaped(_ bytes: [UInt8], pointerStep: Bool) -> [UInt8] {
        var buffer = ByteBuffer(capacity: 16)
        defer { buffer.deallocate() }
        bytes.withUnsafeBufferPointer { Console.appendEscaped($0, to: &buffer, pointerStep: pointerStep) }
        return Array(buffer.bytes)
    }

    @Test func everyLengthAndOffset() {
        // What must be rewritten (a control byte, DEL, U+0080 and U+009F, `~` and `/`), and what must not
        // (U+00A0 and `é`, which start like U+0080–U+009F or not, a space, a letter).
        let marks: [[UInt8]] = [[0x00], [0x1F], [0x7F], [0xC2, 0x80], [0xC2, 0x9F], [UInt8(ascii: "~")], [UInt8(ascii: "/")],
                                [0xC2, 0xA0], [0xC3, 0xA9], [0x20], [UInt8(ascii: "z")]]
        var checked = 0
        for length in 0...24 {
            for offset in 0...length {
                for mark in marks {
                    let text = Array(repeating: UInt8(ascii: "a"), count: offset) + mark
                        + Array(repeating: UInt8(ascii: "b"), count: length - offset)
                    for pointerStep in [false, true] {
                        #expect(Self.escaped(text, pointerStep: pointerStep) == Self.reference(text, pointerStep: pointerStep),
                                "\(text) pointerStep \(pointerStep)")
                        checked += 1
                    }
                }
            }
        }
        #expect(checked == 2 * 11 * (1...25).reduce(0, +))
        // Two marks in a short tail, and a text that is nothing but marks.
        for text: [UInt8] in [[0x61, 0x01, 0x62, 0x7F], Array("x/~".utf8), [0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x1B, 0x1B]] {
            #expect(Self.escaped(text, pointerStep: true) == Self.reference(text, pointerStep: true), "\(text)")
        }
    }
}
