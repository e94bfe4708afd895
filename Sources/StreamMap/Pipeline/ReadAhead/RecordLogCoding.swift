/// One thing that happened while an input was read ahead, as the run's output must see it again.
enum RecordEvent {
    /// A record was mapped: `payload` is its line without the newline (an exploded record: its `records` lines,
    /// the last without its newline).
    case mapped(RecordLocation, bytesIn: Int, payload: UnsafeRawBufferPointer, warnings: [MapError], records: Int)
    /// A record was rejected: `kept` is its first `keptRecordBytes` bytes, `totalBytes` its length.
    case rejected(RecordLocation, bytesIn: Int, failure: RecordFailure, kept: UnsafeRawBufferPointer, totalBytes: Int)
    /// A record was dropped by the engine's filter.
    case filtered(RecordLocation, bytesIn: Int)
    /// The input ended so (`bytesIn`: the text read from it, all told).
    case ended(ReadAheadEnd, bytesIn: Int)
}

/// Events in bytes: a tag, then unsigned LEB128 numbers, strings as a length and UTF-8, payloads as a length and
/// bytes. An event never straddles two blocks, so a block decodes on its own.
struct RecordLogEncoder {
    private(set) var block: [UInt8] = []

    /// A block is handed on once it holds this much (a larger event makes a larger block).
    static let blockBytes = 1 << 18

    var isFull: Bool { block.count >= Self.blockBytes }

    /// The block so far; the encoder starts a new one.
    mutating func take() -> [UInt8] {
        defer { block = []; block.reserveCapacity(Self.blockBytes + 4096) }
        return block
    }

    mutating func mapped(_ location: RecordLocation, bytesIn: Int, payload: UnsafeRawBufferPointer, warnings: [MapError], records: Int = 1) {
        guard records == 1 else {
            block.append(6)  // exploded: the count, the lines, the warnings
            header(location, bytesIn)
            number(records)
            bytes(payload)
            errors(warnings)
            return
        }
        block.append(warnings.isEmpty ? 1 : 2)
        header(location, bytesIn)
        bytes(payload)
        if !warnings.isEmpty { errors(warnings) }
    }

    mutating func rejected(_ location: RecordLocation, bytesIn: Int, failure: RecordFailure, kept: UnsafeRawBufferPointer, totalBytes: Int) {
        block.append(3)
        header(location, bytesIn)
        number(totalBytes)
        bytes(kept)
        switch failure {
        case .syntax(let e):
            block.append(0)
            number(e.byteOffset)
            string(e.message)
        case .mapping(let list):
            block.append(1)
            errors(list)
        case .noOutput(let warnings):
            block.append(2)
            errors(warnings)
        }
    }

    mutating func filtered(_ location: RecordLocation, bytesIn: Int) {
        block.append(4)
        header(location, bytesIn)
    }

    mutating func ended(_ end: ReadAheadEnd, bytesIn: Int) {
        block.append(5)
        number(bytesIn)
        switch end {
        case .cannotOpen(let code):
            block.append(0)
            number(Int(code))
        case .read(let inputEnd):
            switch inputEnd {
            case .ended: block.append(1)
            case .stopped: block.append(2)
            case .interrupted: block.append(3)
            case .failed(let code):
                block.append(4)
                number(Int(code))
            case .corrupt(let e):
                block.append(5)
                string(e.compression.rawValue)
                number(e.compressedOffset)
                string(e.reason)
                block.append(e.isTruncated ? 1 : 0)
            case .unsupportedEncoding(let e):
                block.append(6)
                string(e.encoding)
                e.byteOrderMark.withUnsafeBytes { bytes($0) }
            }
        }
    }

    // MARK: Pieces

    private mutating func header(_ location: RecordLocation, _ bytesIn: Int) {
        number(location.line)
        number(location.byteOffset)
        number(bytesIn)
    }

    private mutating func number(_ value: Int) {
        var v = UInt(bitPattern: value)
        while v >= 0x80 {
            block.append(UInt8(truncatingIfNeeded: v) | 0x80)
            v >>= 7
        }
        block.append(UInt8(v))
    }

    private mutating func bytes(_ raw: UnsafeRawBufferPointer) {
        number(raw.count)
        block.append(contentsOf: raw)
    }

    private mutating func string(_ s: String) {
        var s = s
        s.withUTF8 { bytes(UnsafeRawBufferPointer($0)) }
    }

    private mutating func errors(_ list: [MapError]) {
        number(list.count)
        for e in list {
            block.append(UInt8(MapError.Code.allCases.firstIndex(of: e.code)!))
            block.append((e.isFatal ? 1 : 0) | (e.standsInForAbsent ? 2 : 0))
            path(e.sourcePath)
            path(e.destinationPath)
            string(e.message)
        }
    }

    private mutating func path(_ p: JSONPath) {
        number(p.components.count)
        for c in p.components {
            switch c {
            case .key(let k):
                block.append(0)
                string(k)
            case .index(let i):
                block.append(1)
                number(i)
            }
        }
    }
}

/// Reads back the events of one block (`RecordLogEncoder`), in order. The block was written by this process, so it
/// is trusted: a malformed one is a bug (a trap), never input.
struct RecordLogDecoder {
    private let block: UnsafeRawBufferPointer
    private var at = 0

    init(_ block: UnsafeRawBufferPointer) { self.block = block }

    /// The next event when it is a record mapped into one line without warnings (most of any log), taken; else nil,
    /// and nothing is read (`next()` then reads it). No `RecordEvent` is made for it.
    mutating func nextPlainMapped() -> (location: RecordLocation, bytesIn: Int, payload: UnsafeRawBufferPointer)? {
        guard at < block.count, block[at] == 1 else { return nil }
        at += 1
        let (location, bytesIn) = header()
        return (location, bytesIn, bytes())
    }

    /// The next event, nil at the block's end. Payloads point into the block.
    mutating func next() -> RecordEvent? {
        guard at < block.count else { return nil }
        let tag = byte()
        switch tag {
        case 1, 2:
            let (location, bytesIn) = header()
            let payload = bytes()
            return .mapped(location, bytesIn: bytesIn, payload: payload, warnings: tag == 2 ? errors() : [], records: 1)
        case 6:
            let (location, bytesIn) = header()
            let records = number()
            let payload = bytes()
            return .mapped(location, bytesIn: bytesIn, payload: payload, warnings: errors(), records: records)
        case 3:
            let (location, bytesIn) = header()
            let total = number()
            let kept = bytes()
            let failure: RecordFailure
            switch byte() {
            case 0:
                let offset = number()
                failure = .syntax(JSONSyntaxError(byteOffset: offset, message: string()))
            case 1: failure = .mapping(errors())
            default: failure = .noOutput(warnings: errors())
            }
            return .rejected(location, bytesIn: bytesIn, failure: failure, kept: kept, totalBytes: total)
        case 4:
            let (location, bytesIn) = header()
            return .filtered(location, bytesIn: bytesIn)
        default:
            precondition(tag == 5, "record log: unknown event \(tag)")
            let bytesIn = number()
            let end: ReadAheadEnd
            switch byte() {
            case 0: end = .cannotOpen(errno: Int32(number()))
            case 1: end = .read(.ended)
            case 2: end = .read(.stopped)
            case 3: end = .read(.interrupted)
            case 4: end = .read(.failed(errno: Int32(number())))
            case 6:
                let encoding = string()
                end = .read(.unsupportedEncoding(UnsupportedEncodingError(encoding: encoding, byteOrderMark: Array(bytes()))))
            default:
                let compression = Compression(rawValue: string())!
                let offset = number()
                let reason = string()
                end = .read(.corrupt(CompressedInputError(compression: compression, compressedOffset: offset, reason: reason,
                                                          isTruncated: byte() == 1)))
            }
            return .ended(end, bytesIn: bytesIn)
        }
    }

    private mutating func byte() -> UInt8 {
        defer { at += 1 }
        return block[at]
    }

    private mutating func header() -> (RecordLocation, Int) {
        let line = number()
        let offset = number()
        return (RecordLocation(line: line, byteOffset: offset), number())
    }

    private mutating func number() -> Int {
        var value: UInt = 0
        var shift: UInt = 0
        while true {
            let b = byte()
            value |= UInt(b & 0x7F) &<< shift  // (at most 10 bytes for an Int: the shift stays under 64)
            if b < 0x80 { return Int(bitPattern: value) }
            shift += 7
        }
    }

    private mutating func bytes() -> UnsafeRawBufferPointer {
        let n = number()
        defer { at += n }
        return UnsafeRawBufferPointer(rebasing: block[at..<(at + n)])
    }

    private mutating func string() -> String { String(decoding: bytes(), as: UTF8.self) }

    private mutating func errors() -> [MapError] {
        (0..<number()).map { _ in
            let code = MapError.Code.allCases[Int(byte())]
            let flags = byte()
            let source = path()
            let destination = path()
            return MapError(code, string(), isFatal: flags & 1 != 0, standsInForAbsent: flags & 2 != 0,
                            sourcePath: source, destinationPath: destination)
        }
    }

    private mutating func path() -> JSONPath {
        JSONPath((0..<number()).map { _ in byte() == 0 ? .key(string()) : .index(number()) })
    }
}
