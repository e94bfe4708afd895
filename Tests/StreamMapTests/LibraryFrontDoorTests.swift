// What a newcomer to the Swift library reaches for first, as the README's library guide shows it: date formats
// spelled as in specs, `Field("id")`, the silent optional, typed transforms, files and descriptors and async bytes
// as inputs (with --jobs-style parallelism), and models decoded in one pass.

import Foundation
import StreamMapTestSupport
import Testing

@testable import StreamMap

#if canImport(Glibc)
import Glibc
#endif

@Suite struct LibraryFrontDoorTests {
    static func mapOne(_ mapper: Mapper, _ json: String) -> RecordResult {
        let feed = MappingFeed(mapper: mapper, framing: .ndjson)
        let results = feed.feed(Array(json.utf8)) + feed.finish()
        return results[0]
    }

    static func output(_ result: RecordResult) -> String {
        switch result {
        case .mapped(let r): return r.text + r.warnings.map { " [\($0)]" }.joined()
        case .rejected(let r): return "rejected: \(r.failure)"
        }
    }

    // MARK: Spellings

    @Test func dateFormatsAreSpelledAsInSpecs() throws {
        let record = #"{"a":"2014-08-31T00:29:15+02:00","b":"Sun Aug 31 00:29:15 +0000 2014","c":"2014-08-31 10:00"}"#
        let swift = Mapper.object {
            Field("a", .stringToDate(.iso8601))
            Field("b", .stringToDate(.rfc822, .twitter))
            Field("c", .stringToDate("yyyy-MM-dd HH:mm"))
        }
        let spec = try Spec(json: #"""
            {"fields":{"a":{"to":"a","via":{"stringToDate":"iso8601"}},
                       "b":{"to":"b","via":{"stringToDate":["rfc822","twitter"]}},
                       "c":{"to":"c","via":{"stringToDate":{"pattern":"yyyy-MM-dd HH:mm"}}}}}
            """#).mapper
        #expect(Self.output(Self.mapOne(swift, record)) == Self.output(Self.mapOne(spec, record)))
        #expect(Self.output(Self.mapOne(swift, record))
                == #"{"a":"2014-08-30T22:29:15Z","b":"2014-08-31T00:29:15Z","c":"2014-08-31T10:00:00Z"}"#)
        // A string literal naming a format is that format; the throwing spelling reports a bad pattern.
        #expect(("twitter" as DateSyntax) == .twitter)
        #expect(throws: DateFormatError.self) { try DateSyntax.pattern("yyyy-QQ") }
    }

    @Test func aFieldThatKeepsItsName() {
        func same(_ a: Field, _ b: Field) -> Bool {
            a.sources == b.sources && a.destinations == b.destinations && describe(a.mapper) == describe(b.mapper)
        }
        #expect(same(Field("id"), Field("id", to: "id")))
        #expect(same(Field("age", .integer), Field("age", to: "age", .integer)))
        #expect(!same(Field("age"), Field("age", to: "age", .integer)))
    }

    @Test func omitWhenAbsentIsSilentButStillChecksTheValue() {
        let person = Mapper.object {
            Field("id", .integer)
            Field("age", .omitWhenAbsent(.integer))
        }
        #expect(Self.output(Self.mapOne(person, #"{"id":1}"#)) == #"{"id":1}"#)  // no warning
        #expect(Self.output(Self.mapOne(person, #"{"id":1,"age":null}"#)) == #"{"id":1}"#)
        #expect(Self.output(Self.mapOne(person, #"{"id":1,"age":"old"}"#))
                == #"rejected: /age: expected integer, found string "old""#)
        let keepsNull = Mapper.object { Field("age", .omitWhenAbsent(.integer, null: .keepNull)) }
        #expect(Self.output(Self.mapOne(keepsNull, #"{"age":null}"#)) == #"{"age":null}"#)
        // Hydrant's optionally, for comparison: a warning for the absent value.
        let hydrant = Mapper.object { Field("age", .optionally(.integer)) }
        #expect(Self.output(Self.mapOne(hydrant, "{}")) == "{} [/age: warning: value is required, found absent]")
    }

    @Test func aBuiltInDateConversionStreamsAClosureDoesNot() {
        let dates = MapperExplanation(.object { Field("created_at", to: "createdAt", .stringToDate(.iso8601)) })
        #expect(dates.streamsEverything)
        let dateToEpoch = MapperExplanation(.arrayOf(.thread(.stringToDate(.twitter), .dateToNumber(.milliseconds))))
        #expect(dateToEpoch.streamsEverything)
        let closure = MapperExplanation(.object { Field("v", .block { .success($0) }) })
        #expect(!closure.streamsEverything)
        let anything = MapperExplanation(.object { Field("v", .toString) })
        #expect(!anything.streamsEverything)  // toString takes objects and arrays too
    }

    // MARK: Typed transforms

    @Test func typedTransformsDecodeCallAndEncode() throws {
        let mapper = Mapper.object {
            Field("id", to: "ref", .transform(from: Int.self, to: String.self) { "#\($0)" })
            Field("tags", .transform(from: [String].self, to: Int.self) { $0.count })
        }
        #expect(Self.output(Self.mapOne(mapper, #"{"id":7,"tags":["a","b"]}"#)) == ##"{"ref":"#7","tags":2}"##)
        // The error's path is the record's: the field, then the place inside the value that did not decode.
        #expect(Self.output(Self.mapOne(mapper, #"{"id":"7","tags":["a"]}"#))
                == #"rejected: /id: expected Int, found string "7""#)
        #expect(Self.output(Self.mapOne(mapper, #"{"id":7,"tags":["a",3]}"#))
                == "rejected: /tags/1: expected String, found integer 3")
        #expect(Self.output(Self.mapOne(mapper, #"{"tags":[]}"#)) == "rejected: /id: value is required, found absent")
        #expect(Self.output(Self.mapOne(mapper, #"{"id":null,"tags":[]}"#)) == "rejected: /id: expected Int, found null")
        let optional = Mapper.object { Field("id", .transform(from: Int?.self, to: Bool.self) { $0 == nil }) }
        #expect(Self.output(Self.mapOne(optional, #"{"id":null}"#)) == #"{"id":true}"#)
    }

    @Test func aTypedTransformThatThrowsRejectsWithItsError() {
        struct TooBig: Error, CustomStringConvertible { var description: String { "too big" } }
        let mapper = Mapper.object {
            Field("n", .transform(from: Int.self, to: Int.self) { n in
                guard n < 10 else { throw TooBig() }
                return n * 2
            })
        }
        #expect(Self.output(Self.mapOne(mapper, #"{"n":4}"#)) == #"{"n":8}"#)
        guard case .rejected(let r) = Self.mapOne(mapper, #"{"n":12}"#) else { Issue.record("mapped"); return }
        #expect(r.failure.fatalErrors.map(\.code) == [.value])
        #expect(r.failure.description == "/n: too big")
    }

    @Test func aReversibleTypedTransform() throws {
        let cents = Mapper.object {
            Field("price", to: "cents", .transform(from: Double.self, to: Int.self, { Int(($0 * 100).rounded()) },
                                                    reverse: { Double($0) / 100 }))
        }
        #expect(Self.output(Self.mapOne(cents, #"{"price":12.5}"#)) == #"{"cents":1250}"#)
        let back = try cents.reversed()
        #expect(Self.output(Self.mapOne(back, #"{"cents":1250}"#)) == #"{"price":12.5}"#)
    }

    // MARK: Inputs

    static let ndjson = (0..<500).map { i in
        i % 7 == 3 ? #"{"id":"x\#(i)"}"# : #"{"id":\#(i),"name":"n\#(i)"}"#
    }.joined(separator: "\n") + "\n{bad\n"
    static let idMapper = Mapper.object {
        Field("id", .integer)
        Field("name", .omitWhenAbsent(.string))
    }

    static func viaFeed() -> [String] {
        let feed = MappingFeed(mapper: idMapper)
        return (feed.feed(Array(ndjson.utf8)) + feed.finish()).map(\.description)
    }

    static func temporaryFile(_ text: String) throws -> String {
        try TestScratch.file(Array(text.utf8), suffix: ".ndjson")
    }

    @Test(arguments: [1, 2]) func aFileMapsAsTheFeedMapsIt(jobs: Int) throws {
        let path = try Self.temporaryFile(Self.ndjson)
        defer { unlink(path) }
        var seen: [String] = []
        let counts = try Self.idMapper.mapRecords(inFile: path, options: MappingOptions(jobs: jobs)) {
            seen.append($0.description)
        }
        #expect(seen == Self.viaFeed())
        #expect(counts.recordsIn == 501 && counts.recordsRejected == 72 && counts.recordsOut == 429)
        let tree = try Self.idMapper.mapRecords(inFile: path, options: MappingOptions(engine: .tree)) { _ in }
        #expect(tree == counts)
    }

    @Test(arguments: [MappingOptions.Engine.stream, .tree]) func aFilterDropsRecordsAndCountsThem(engine: MappingOptions.Engine) throws {
        let path = try Self.temporaryFile(Self.ndjson)
        defer { unlink(path) }
        let keepEven = try RecordFilter("id is integer && (id == 0 || id == 2 || id == 4)")
        var seen: [String] = []
        let counts = try Self.idMapper.mapRecords(inFile: path, options: MappingOptions(jobs: 2, engine: engine, filter: keepEven)) {
            seen.append($0.description)
        }
        #expect(seen.count == 4)  // ids 0, 2, 4 and the broken last line (rejected whatever the filter says)
        #expect(counts.recordsFiltered == 497 && counts.recordsOut == 3 && counts.recordsRejected == 1)
        let models = ModelFeed(mapper: Self.idMapper, as: Person.self, filter: keepEven, engine: engine)
        let results = models.feed(Array(Self.ndjson.utf8)) + models.finish()
        #expect(results.compactMap { if case .decoded(let r) = $0 { return r.model.id } else { return nil } } == [0, 2, 4])
        #expect(models.counts == counts)
    }

    @Test func aThrowingBodyStopsTheRun() throws {
        struct Enough: Error {}
        let path = try Self.temporaryFile(Self.ndjson)
        defer { unlink(path) }
        var seen = 0
        #expect(throws: Enough.self) {
            try Self.idMapper.mapRecords(inFile: path, options: MappingOptions(jobs: 2)) { _ in
                seen += 1
                if seen == 10 { throw Enough() }
            }
        }
        #expect(seen == 10)
    }

    @Test func aMissingFileIsAnInputError() {
        #expect(throws: InputError(input: "/nonexistent/x.ndjson", code: ENOENT, bytesRead: 0)) {
            try Self.idMapper.mapRecords(inFile: "/nonexistent/x.ndjson") { _ in }
        }
        #expect(throws: InputError.self) { try Self.idMapper.mapRecords(inFile: "/") { _ in } }  // a directory: EISDIR
    }

    @Test func aFileDescriptorIsReadToItsEnd() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        let text = Array(Self.ndjson.utf8)
        let writeEnd = fds[1]
        let writer = Thread {
            text.withUnsafeBytes { bytes in
                var at = 0
                while at < bytes.count {
                    let n = write(writeEnd, bytes.baseAddress! + at, bytes.count - at)
                    guard n > 0 else { break }
                    at += n
                }
            }
            close(writeEnd)
        }
        writer.start()
        var seen: [String] = []
        try Self.idMapper.mapRecords(fromFileDescriptor: fds[0], name: "pipe") { seen.append($0.description) }
        close(fds[0])
        #expect(seen == Self.viaFeed())
    }

    @Test func anAsyncSequenceOfBytes() async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: UInt8.self)
        for byte in Self.ndjson.utf8 { continuation.yield(byte) }
        continuation.finish()
        var seen: [String] = []
        for try await result in stream.mappedRecords(mapper: Self.idMapper) { seen.append(result.description) }
        #expect(seen == Self.viaFeed())
        // Chunks of any size: the same records.
        var chunks: [[UInt8]] = []
        let (again, more) = AsyncStream.makeStream(of: UInt8.self)
        for byte in "abcdefg".utf8 { more.yield(byte) }
        more.finish()
        for try await chunk in again.chunked(bytes: 3) { chunks.append(chunk) }
        #expect(chunks == [Array("abc".utf8), Array("def".utf8), Array("g".utf8)])
    }

    // MARK: Models in one pass

    struct Person: Codable, Equatable {
        var id: Int
        var name: String?
    }

    @Test(arguments: [MappingOptions.Engine.stream, .tree]) func modelsDecodeWithoutText(engine: MappingOptions.Engine) {
        let feed = ModelFeed(mapper: Self.idMapper, as: Person.self, engine: engine)
        let results = feed.feed(Array(Self.ndjson.utf8)) + feed.finish()
        let expected = MappingFeed(mapper: Self.idMapper)
        let reference = expected.feed(Array(Self.ndjson.utf8)) + expected.finish()
        #expect(results.count == reference.count)
        for (got, want) in zip(results, reference) {
            switch (got, want) {
            case (.decoded(let m), .mapped(let r)):
                #expect(m.location == r.location && (try? r.decode(Person.self)) == m.model)
            case (.rejected(let a), .rejected(let b)):
                #expect(a == b)
            default:
                Issue.record("\(got.location): \(want)")
            }
        }
        #expect(feed.counts == expected.counts)
    }

    @Test(arguments: [MappingOptions.Engine.stream, .tree])
    func aRecordThatDoesNotDecodeIsRejectedAtItsPath(engine: MappingOptions.Engine) {
        struct Strict: Decodable { var id: Int; var name: String }
        let feed = ModelFeed(mapper: Self.idMapper, as: Strict.self, engine: engine)
        let results = feed.feed(Array(#"{"id":1}"#.utf8) + [0x0A] + Array(#"{"id":2,"name":"b"}"#.utf8)) + feed.finish()
        guard results.count == 2, case .rejected(let r) = results[0], case .decoded(let ok) = results[1] else {
            Issue.record("\(results.count)"); return
        }
        #expect(r.failure.fatalErrors.map(\.code) == [.required])
        #expect(r.failure.fatalErrors.first?.destinationPath.pointer == "/name")
        #expect(ok.model.name == "b")
    }

    /// The differential backbone: on generated mappers and records, a `ModelFeed` of `JSONValue`s gives exactly
    /// what mapping to JSON text and decoding that gives, with either engine, fed whole or in pieces.
    @Test func modelFeedEqualsDecodingTheMappedText() throws {
        for index in 0..<150 {
            let c = try GeneratedCase.make(seed: SplitMix64.derive(0x5EED_F00D, UInt64(index)), index: index)
            var input: [UInt8] = []
            for r in c.records where !r.contains(0x0A) { input += r + [0x0A] }
            let text = MappingFeed(engine: TreeEngine(mapper: c.mapper, filter: c.filter), framing: .ndjson)
            let mapped = text.feed(input) + text.finish()
            for engine in [MappingOptions.Engine.stream, .tree] {
            // Whole, and in 7-byte pieces (records across chunks stream through the engine in pieces).
            for piece in [input.count, 7] {
            let models = ModelFeed(mapper: c.mapper, as: JSONValue.self, filter: c.filter, framing: .ndjson, engine: engine)
            var decoded: [DecodedResult<JSONValue>] = []
            var at = 0
            while at < input.count {
                decoded += models.feed(input[at..<min(at + piece, input.count)])
                at += piece
            }
            decoded += models.finish()
            #expect(decoded.count == mapped.count && models.counts == text.counts, "case \(index)")
            for (got, want) in zip(decoded, mapped) {
                switch (got, want) {
                case (.decoded(let m), .mapped(let r)):
                    #expect(m.model == (try r.decode(JSONValue.self)) && m.warnings == r.warnings, "case \(index)")
                case (.rejected(let a), .rejected(let b)):
                    #expect(a == b, "case \(index)")
                default:
                    Issue.record("case \(index) \(got.location): \(want)")
                }
            }
            }
            }
        }
    }
}
