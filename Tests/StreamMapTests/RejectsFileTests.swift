import Foundation
import StreamMapTestSupport
import Testing

@testable import StreamMap

/// The rejects file (`--rejects`): each line is `RejectWriter`'s line for the record with the input's name first,
/// though the file copies an error's object from the last one written at the same place of a record's list when it
/// is the same error (`WrittenErrors`) — held here to the writer alone on a run that repeats its errors as real runs
/// do: copies of one error (the same storage), equal errors made anew, and errors that differ from the kept one in
/// one field only.
@Suite struct RejectsFileTests {
    static let paths: [JSONPath] = ConsoleRecordMessageTests.paths
    static let messages: [String] = ConsoleRecordMessageTests.messages
    static let codes: [MapError.Code] = [.required, .type, .value, .syntax]

    /// A run's failures: mostly the errors of the record before, some replaced.
    static func failures(count: Int, seed: UInt64) -> [RecordFailure] {
        var random = SplitMix64(seed: seed)
        func pick<T>(_ values: [T]) -> T { values[Int(random.next() % UInt64(values.count))] }
        var errors: [MapError] = []
        var failures: [RecordFailure] = []
        for _ in 0..<count {
            let wanted = Int(random.next() % (random.next() % 20 == 0 ? 40 : 7))
            while errors.count < wanted {
                errors.append(MapError(pick(codes), pick(messages), sourcePath: pick(paths), destinationPath: pick(paths)))
            }
            errors.removeLast(errors.count - wanted)
            for i in errors.indices where random.next() % 4 == 0 {
                var e = errors[i]
                switch random.next() % 7 {
                case 0:  // The same error, its text and paths made anew (equal, in other storage).
                    e.message = String(decoding: Array(e.message.utf8), as: UTF8.self)
                    e.sourcePath = JSONPath(Array(e.sourcePath.components))
                    e.destinationPath = JSONPath(Array(e.destinationPath.components))
                case 1: e.code = pick(codes)
                case 2: e.isFatal.toggle()
                case 3: e.standsInForAbsent.toggle()
                case 4: e.sourcePath = pick(paths)
                case 5: e.destinationPath = pick(paths)
                default: e.message = pick(messages)
                }
                errors[i] = e
            }
            let failure: RecordFailure = switch random.next() % 16 {
            case 0: .syntax(JSONSyntaxError(byteOffset: 0, message: pick(messages)))
            case 1: .noOutput(warnings: errors)
            default: .mapping(errors)
            }
            failures.append(failure)
        }
        return failures
    }

    @Test(arguments: [RejectWriter(), RejectWriter(maximumRecordBytes: 10), RejectWriter(redactRecord: true)])
    func keptErrorObjectsSayWhatEachRecordSays(format: RejectWriter) throws {
        let failures = Self.failures(count: 700, seed: 0xBAD_5EED)
        let records = (0..<failures.count).map { Array(#"{"n":\#($0),"s":"a\"b\\c","u":"é"}"#.utf8) }
        let names = (0..<failures.count).map { $0 % 50 == 49 ? "other\"name.ndjson" : "in.ndjson" }
        let path = try TestScratch.file([])
        let fd = open(path, O_WRONLY | O_TRUNC)
        #expect(fd >= 0)
        do {
            let file = RejectsFile(file: FileOutput(fd: fd, name: path), format: format)
            for (i, failure) in failures.enumerated() {
                let result = records[i].withUnsafeBytes {
                    file.add(input: names[i], location: RecordLocation(line: i + 1, byteOffset: 40 * i), record: $0,
                             totalBytes: $0.count, failure: failure)
                }
                #expect(result == .ok)
            }
            #expect(file.flush() == .ok)
        }
        close(fd)
        var expected: [UInt8] = []
        for (i, failure) in failures.enumerated() {
            var line = JSONWriter()
            records[i].withUnsafeBytes {
                format.write(record: $0, at: RecordLocation(line: i + 1, byteOffset: 40 * i), failure: failure, into: &line)
            }
            var name = JSONWriter()
            name.writeString(names[i])
            expected += Array(#"{"input":"#.utf8) + name.bytes + [UInt8(ascii: ",")] + line.bytes.dropFirst() + [0x0A]
        }
        let written = try TestScratch.read(path)
        #expect(written.count > 100_000)
        let lines = written.split(separator: 0x0A, omittingEmptySubsequences: false)
        let expectedLines = expected.split(separator: 0x0A, omittingEmptySubsequences: false)
        #expect(lines.count == expectedLines.count)
        if let i = lines.indices.first(where: { $0 < expectedLines.count && lines[$0] != expectedLines[$0] }) {
            Issue.record("line \(i + 1) differs:\n\(String(decoding: lines[i], as: UTF8.self))\nexpected\n\(String(decoding: expectedLines[i], as: UTF8.self))")
        }
        // Each line is JSON, and its errors are the failure's (all of them, in order).
        for (line, failure) in zip(lines.dropLast(), failures) {
            guard let value = try? JSONParser.parse(String(decoding: line, as: UTF8.self)),
                  let errors = value["errors"]?.arrayValue else {
                Issue.record("not a rejects line: \(String(decoding: line, as: UTF8.self))")
                continue
            }
            #expect(errors.count == failure.allErrors.count)
        }
    }
}
