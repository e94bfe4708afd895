import Testing

@testable import StreamMap

private let kidSpec = #"""
    {"fields": {
      "name": "fullName",
      "age": {"to": "years", "via": "integer"},
      "home": {"to": "homepage", "via": {"nonFatal": "url"}}
    }}
    """#

private func kidMapper() throws -> Mapper { try Spec(json: kidSpec).mapper }

/// NDJSON: a mapped record, a blank line, a mapping failure (CRLF), a syntax failure, a record with a warning, and
/// a last record without a newline.
private let kidsInput = Array((
    #"{"name":"Ann","age":6,"home":"http://a.example"}"# + "\n"
    + "\n"
    + #"{"name":"Bob","age":"six","home":"http://b.example"}"# + "\r\n"
    + #"{"name":"Cy","# + "\n"
    + #"{"name":"Di","age":7,"home":"not a url"}"# + "\n"
    + #"{"name":"Ed","age":8,"home":"http://e.example"}"#
).utf8)

/// A result reduced to what the tests compare: kind, location, output or raw text, error codes.
private struct Summary: Equatable, CustomStringConvertible {
    var mapped: Bool
    var line: Int
    var offset: Int
    var text: String
    var codes: [String]

    init(_ mapped: Bool, _ line: Int, _ offset: Int, _ text: String, _ codes: [String] = []) {
        self.mapped = mapped
        self.line = line
        self.offset = offset
        self.text = text
        self.codes = codes
    }

    init(_ result: RecordResult) {
        switch result {
        case .mapped(let r):
            self.init(true, r.location.line, r.location.byteOffset, String(decoding: r.bytes, as: UTF8.self),
                      r.warnings.map { "\($0.code.rawValue)\($0.sourcePath.pointer)" })
        case .rejected(let r):
            self.init(false, r.location.line, r.location.byteOffset, String(decoding: r.raw, as: UTF8.self),
                      r.failure.allErrors.map { "\($0.code.rawValue)\($0.sourcePath.pointer)" })
        }
    }

    var description: String { "(\(mapped ? "mapped" : "rejected") \(line), \(offset), \(text.debugDescription), \(codes))" }
}

/// Feeds `input` in chunks of `size` bytes; returns every result (feeds then finish), and checks the counts invariant
/// after every call.
private func run<E: RecordEngine>(
    _ feed: MappingFeed<E>, _ input: [UInt8], chunkSize size: Int, sourceLocation: SourceLocation = #_sourceLocation
) -> [RecordResult] {
    var results: [RecordResult] = []
    var i = 0
    while i < input.count {
        let end = size >= input.count - i ? input.count : i + size
        results += input[i..<end].withUnsafeBytes { feed.feed($0) }
        let c = feed.counts
        #expect(c.recordsIn == c.recordsOut + c.recordsRejected, sourceLocation: sourceLocation)
        #expect(c.recordsIn == results.count, sourceLocation: sourceLocation)
        i = end
    }
    results += feed.finish()
    let c = feed.counts
    #expect(c.recordsIn == c.recordsOut + c.recordsRejected, sourceLocation: sourceLocation)
    #expect(c.recordsIn == results.count, sourceLocation: sourceLocation)
    return results
}

private struct Kid: Decodable, Equatable {
    var fullName: String
    var years: Int
    var homepage: String?
}

/// An asynchronous sequence of chunks that counts how many have been pulled (one iteration at a time).
private final class PullCounter {
    var pulls = 0
}

private struct CountingChunks: AsyncSequence {
    typealias Element = [UInt8]
    let chunks: [[UInt8]]
    let counter: PullCounter

    struct AsyncIterator: AsyncIteratorProtocol {
        var chunks: ArraySlice<[UInt8]>
        let counter: PullCounter
        mutating func next() async -> [UInt8]? {
            guard let chunk = chunks.popFirst() else { return nil }
            counter.pulls += 1
            return chunk
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(chunks: chunks[...], counter: counter) }
}

private struct ReadFailure: Error, Equatable {}

@Suite("Mapping feed")
struct MappingFeedTests {
    fileprivate static let expectedKids = [
        Summary(true, 1, 0, #"{"fullName":"Ann","years":6,"homepage":"http://a.example"}"#),
        Summary(false, 3, 50, #"{"name":"Bob","age":"six","home":"http://b.example"}"#, ["type/age"]),
        Summary(false, 4, 104, #"{"name":"Cy","#, ["syntax"]),
        Summary(true, 5, 118, #"{"fullName":"Di","years":7}"#, ["value/home"]),
        Summary(true, 6, 159, #"{"fullName":"Ed","years":8,"homepage":"http://e.example"}"#),
    ]

    @Test func mapsAndRejectsWithLocations() throws {
        let feed = MappingFeed(mapper: try kidMapper(), framing: .ndjson)
        let results = run(feed, kidsInput, chunkSize: Int.max)
        #expect(results.map(Summary.init) == Self.expectedKids)
        #expect(feed.counts == RecordCounts(recordsIn: 5, recordsOut: 3, recordsRejected: 2))
        #expect(feed.framing == .ndjson)
    }

    @Test func failureKindsAreSyntaxOrMapping() throws {
        let results = run(MappingFeed(mapper: try kidMapper()), kidsInput, chunkSize: 4096)
        guard results.count == 5, case .rejected(let bob) = results[1], case .rejected(let cy) = results[2] else {
            Issue.record("expected rejects at 1 and 2: \(results.map(Summary.init))")
            return
        }
        guard case .mapping(let errors) = bob.failure else {
            Issue.record("expected a mapping failure, got \(bob.failure)")
            return
        }
        #expect(errors.map(\.code) == [.type])
        #expect(errors.map(\.sourcePath.pointer) == ["/age"])
        #expect(errors.map(\.destinationPath.pointer) == ["/years"])
        guard case .syntax = cy.failure else {
            Issue.record("expected a syntax failure, got \(cy.failure)")
            return
        }
        #expect(cy.raw == Array(#"{"name":"Cy","#.utf8))
    }

    @Test(arguments: [1, 2, 7, 4096])
    func everyChunkingGivesTheSameResults(chunkSize: Int) throws {
        let whole = run(MappingFeed(mapper: try kidMapper()), kidsInput, chunkSize: Int.max)
        let feed = MappingFeed(mapper: try kidMapper())
        let chunked = run(feed, kidsInput, chunkSize: chunkSize)
        #expect(chunked == whole)
        #expect(chunked.map(Summary.init) == Self.expectedKids)
        #expect(feed.counts == RecordCounts(recordsIn: 5, recordsOut: 3, recordsRejected: 2))
    }

    @Test func finishDeliversTheLastUnterminatedRecord() throws {
        let feed = MappingFeed(mapper: try kidMapper())
        let fed = feed.feed(kidsInput)
        #expect(fed.map(Summary.init) == Array(Self.expectedKids.dropLast()))
        #expect(feed.counts == RecordCounts(recordsIn: 4, recordsOut: 2, recordsRejected: 2))
        let last = feed.finish()
        #expect(last.map(Summary.init) == [Self.expectedKids.last!])
        #expect(feed.counts == RecordCounts(recordsIn: 5, recordsOut: 3, recordsRejected: 2))
    }

    @Test func mappedRecordsDecodeAndParse() throws {
        let results = MappingFeed(mapper: try kidMapper()).feed(kidsInput)
        let kids = try results.compactMap { result -> Kid? in
            guard case .mapped(let record) = result else { return nil }
            return try record.decode(Kid.self)
        }
        #expect(kids == [
            Kid(fullName: "Ann", years: 6, homepage: "http://a.example"), Kid(fullName: "Di", years: 7, homepage: nil),
        ])
        guard case .mapped(let ann) = results.first else {
            Issue.record("expected Ann first")
            return
        }
        #expect(try ann.value() == ["fullName": "Ann", "years": 6, "homepage": "http://a.example"])
        #expect(throws: DecodingError.self) { try ann.decode([Int].self) }
    }

    /// (A missing `home` is a warning: its mapper is non-fatal.)
    @Test func arrayFramingRejectsElementsOneByOne() throws {
        let input = Array((
            "[\n" + #"  {"name":"A","age":1},"# + "\n" + #"  {"name":},"# + "\n" + #"  {"name":"B","age":"x"}, 3,"#
            + "\n" + #"  {"name":"C","age":2}"# + "\n] tail"
        ).utf8)
        for size in [1, 7, Int.max] {
            let feed = MappingFeed(mapper: try kidMapper())
            let results = run(feed, input, chunkSize: size)
            #expect(results.map(Summary.init) == [
                Summary(true, 2, 4, #"{"fullName":"A","years":1}"#, ["required/home"]),
                Summary(false, 3, 28, #"{"name":}"#, ["syntax"]),
                Summary(false, 4, 41, #"{"name":"B","age":"x"}"#, ["type/age", "required/home"]),
                Summary(false, 4, 65, "3", ["type"]),
                Summary(true, 5, 70, #"{"fullName":"C","years":2}"#, ["required/home"]),
                Summary(false, 6, 93, "tail", ["syntax"]),
            ])
            #expect(feed.framing == .array)
            #expect(feed.counts == RecordCounts(recordsIn: 6, recordsOut: 2, recordsRejected: 4))
        }
    }

    @Test func framingErrorsAreRejectedWithoutTheEngine() throws {
        // `3` is a valid record, but the array is never closed: the input was cut short.
        let feed = MappingFeed(mapper: try Spec(json: #"{"mapper":"identity"}"#).mapper, framing: .array)
        let results = run(feed, Array("[1, 2, 3".utf8), chunkSize: 2)
        #expect(results.map(Summary.init) == [
            Summary(true, 1, 1, "1"), Summary(true, 1, 4, "2"), Summary(false, 1, 7, "3", ["syntax"]),
        ])
        guard case .rejected(let tail) = results.last, case .syntax(let error) = tail.failure else {
            Issue.record("expected a syntax reject last")
            return
        }
        #expect(error.message == "the input ends inside the top-level array (no closing ']')")
        #expect(feed.counts == RecordCounts(recordsIn: 3, recordsOut: 2, recordsRejected: 1))
    }

    @Test func autoFramingThroughTheFeed() throws {
        let identity = try Spec(json: #"{"mapper":"identity"}"#).mapper
        let concat = MappingFeed(mapper: identity)
        #expect(run(concat, Array(#"{"a": 1} {"b": [2, 3]}"#.utf8), chunkSize: 3).map(Summary.init) == [
            Summary(true, 1, 0, #"{"a":1}"#), Summary(true, 1, 9, #"{"b":[2,3]}"#),
        ])
        #expect(concat.framing == .concat)
        let seq = MappingFeed(mapper: identity)
        #expect(run(seq, Array("\u{1E}{\"a\": 1}\n\u{1E}[\n".utf8), chunkSize: 1).map(Summary.init) == [
            Summary(true, 1, 1, #"{"a":1}"#), Summary(false, 2, 11, "[", ["syntax"]),
        ])
        #expect(seq.framing == .seq)
    }

    @Test func sequencesOfBytesOfAnyKind() throws {
        let feed = MappingFeed(mapper: try kidMapper())
        // Contiguous (an array slice) and not (a lazily mapped sequence): the same records.
        let half = kidsInput.count / 2
        var results = feed.feed(kidsInput[..<half])
        results += feed.feed(kidsInput[half...].lazy.map { $0 })
        results += feed.finish()
        #expect(results.map(Summary.init) == Self.expectedKids)
    }

    @Test func feedingAfterFinishIsAPreconditionFailure() async {
        await #expect(processExitsWith: .failure) {
            let feed = MappingFeed(mapper: try! Spec(json: #"{"mapper":"identity"}"#).mapper)
            _ = feed.finish()
            _ = feed.feed([UInt8(ascii: "1")])
        }
    }

    // MARK: AsyncMappedRecords

    @Test func asyncRecordsOverAnAsyncStream() async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        var i = 0
        while i < kidsInput.count {
            continuation.yield(Array(kidsInput[i..<min(i + 5, kidsInput.count)]))
            i += 5
        }
        continuation.finish()
        var results: [RecordResult] = []
        for try await result in stream.mappedRecords(engine: TreeEngine(mapper: try kidMapper())) {
            results.append(result)
        }
        #expect(results.map(Summary.init) == Self.expectedKids)
        #expect(results == run(MappingFeed(mapper: try kidMapper()), kidsInput, chunkSize: 5))
    }

    @Test @MainActor func asyncRecordsOnTheMainActor() async throws {
        let (stream, continuation) = AsyncStream.makeStream(of: [UInt8].self)
        continuation.yield(Array("[1, {\"a\"".utf8))
        continuation.yield(Array(": 2}]".utf8))
        continuation.finish()
        var texts: [String] = []
        for try await result in stream.mappedRecords(mapper: try Spec(json: #"{"mapper":"identity"}"#).mapper) {
            guard case .mapped(let record) = result else { continue }
            texts.append(String(decoding: record.bytes, as: UTF8.self))
        }
        #expect(texts == ["1", #"{"a":2}"#])
    }

    @Test func asyncRecordsPullAChunkOnlyWhenNothingIsBuffered() async throws {
        let counter = PullCounter()
        let chunks = (1...4).map { Array(#"{"name":"K\#($0)","age":\#($0)}"#.utf8) + [0x0A] }
        let records = CountingChunks(chunks: chunks, counter: counter)
            .mappedRecords(engine: TreeEngine(mapper: try kidMapper()), framing: .ndjson)
        var iterator = records.makeAsyncIterator()
        var pullsAfterEach: [Int] = []
        var names: [String] = []
        while let result = try await iterator.next() {
            pullsAfterEach.append(counter.pulls)
            if case .mapped(let r) = result { names.append(try r.decode(Kid.self).fullName) }
        }
        #expect(names == ["K1", "K2", "K3", "K4"])
        #expect(pullsAfterEach == [1, 2, 3, 4])
        #expect(try await iterator.next() == nil)
    }

    @Test func asyncRecordsRethrowAndEnd() async throws {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: [UInt8].self)
        continuation.yield(Array("1\n2".utf8))
        continuation.finish(throwing: ReadFailure())
        var iterator = stream.mappedRecords(mapper: try Spec(json: #"{"mapper":"identity"}"#).mapper).makeAsyncIterator()
        #expect(try await iterator.next().map(Summary.init) == Summary(true, 1, 0, "1"))
        await #expect(throws: ReadFailure.self) { try await iterator.next() }
        #expect(try await iterator.next() == nil)
    }
}
