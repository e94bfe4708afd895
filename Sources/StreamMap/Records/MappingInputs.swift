// MappingInputs.swift — whole inputs through the record pipeline: a file, a file descriptor, an asynchronous
// sequence of bytes. What everyone would otherwise write by hand around `MappingFeed`.

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// How `Mapper.mapRecords(inFile:options:_:)` and its siblings map an input.
public struct MappingOptions: Sendable {
    /// The engine that maps: the stream engine (the default: constant memory per record) or the tree engine.
    public enum Engine: String, Sendable, CaseIterable {
        /// ``StreamEngine``: maps while yajl parses, never building the record.
        case stream
        /// ``TreeEngine``: parses each record into a ``JSONValue`` first.
        case tree

        /// An engine of this kind mapping with `mapper`, dropping what `filter` drops, exploding each record as
        /// `explode` says: the one engine factory of the front doors and the command line.
        public func make(mapper: Mapper, filter: RecordFilter? = nil, explode: RecordExplosion? = nil) -> any RecordEngine {
            switch self {
            case .stream: return StreamEngine(mapper: mapper, filter: filter, explode: explode)
            case .tree: return TreeEngine(mapper: mapper, filter: filter, explode: explode)
            }
        }
    }

    /// How the input is cut into records (`auto` decides from its start, as the command line does).
    public var framing: Framing
    /// Threads that map records, as the command line's `--jobs`; results come in input order whatever the number.
    /// 1 or less: every record is mapped on the calling thread.
    public var jobs: Int
    /// Which engine maps: ``StreamEngine`` (the default) or ``TreeEngine``; the results are the same.
    public var engine: Engine
    /// Records this predicate drops (a spec's `where`: ``Spec/filter``) give no result; they are counted in
    /// ``RecordCounts/recordsFiltered``.
    public var filter: RecordFilter?
    /// One record to many (a spec's `explode`: ``Spec/explode``): a result per element of the array it names, each
    /// with the input record's location; ``RecordCounts/recordsOut`` counts them.
    public var explode: RecordExplosion?

    /// Options for mapping a whole input; the defaults frame it as `auto` decides and map on the calling thread
    /// with the stream engine.
    public init(framing: Framing = .auto, jobs: Int = 1, engine: Engine = .stream, filter: RecordFilter? = nil,
                explode: RecordExplosion? = nil) {
        self.framing = framing
        self.jobs = jobs
        self.engine = engine
        self.filter = filter
        self.explode = explode
    }
}

/// An input that could not be opened or read. The records before the failure were all delivered.
public struct InputError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input's name (its path, or the name given with a file descriptor).
    public var input: String
    /// The system's error number.
    public var code: Int32
    /// Bytes read before the failure.
    public var bytesRead: Int

    public var description: String {
        "\(input): \(String(cString: strerror(code)))" + (bytesRead > 0 ? " (after \(bytesRead) byte\(bytesRead == 1 ? "" : "s"))" : "")
    }
}

extension Mapper {
    /// Maps the file at `path`, calling `body` with every record's result in input order, and returns the counts.
    /// Reads in 256 KiB pieces, so memory stays constant whatever the file's size; with `options.jobs` > 1,
    /// records are mapped on that many threads and still delivered in order. `body` always runs on the calling
    /// thread, one record at a time (the worker threads only map), so it needs no locking.
    ///
    /// ```swift
    /// let counts = try mapper.mapRecords(inFile: "events.ndjson", options: .init(jobs: 2)) { result in
    ///     if case .rejected(let r) = result { print(r) }   // line 7, byte 912: rejected: /id: …
    /// }
    /// ```
    ///
    /// A `body` that throws stops the run: no record after that one is mapped, and the error is rethrown.
    /// Throws `InputError` when the file cannot be opened or read, `CompressedInputError` when it is compressed and
    /// corrupt or cut short (after the records before the fault), `UnsupportedEncodingError` when it is UTF-16 or
    /// UTF-32 text.
    @discardableResult
    public func mapRecords(
        inFile path: String, options: MappingOptions = .init(), _ body: (RecordResult) throws -> Void
    ) throws -> RecordCounts {
        try mapRecords(inFile: path, options: options, stopRequested: { false }, afterRead: {}, body)
    }

    /// `mapRecords(inFile:options:_:)`, asking `stopRequested` between reads (true ends the input there, after the
    /// records read so far) and calling `afterRead` after each read.
    @discardableResult
    func mapRecords(
        inFile path: String, options: MappingOptions, stopRequested: () -> Bool, afterRead: () -> Void,
        _ body: (RecordResult) throws -> Void
    ) throws -> RecordCounts {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw InputError(input: path, code: errno, bytesRead: 0) }
        defer { close(fd) }
        return try mapRecords(fromFileDescriptor: fd, name: path, options: options, stopRequested: stopRequested,
                              afterRead: afterRead, body)
    }

    /// Maps what can be read from `fd` (a file, a pipe, a socket; Foundation's `FileHandle.fileDescriptor`) to
    /// its end, as `mapRecords(inFile:)` does; `fd` is not closed. `name` names the input in `InputError`.
    @discardableResult
    public func mapRecords(
        fromFileDescriptor fd: Int32, name: String = "", options: MappingOptions = .init(),
        _ body: (RecordResult) throws -> Void
    ) throws -> RecordCounts {
        try mapRecords(fromFileDescriptor: fd, name: name, options: options, stopRequested: { false }, afterRead: {}, body)
    }

    @discardableResult
    func mapRecords(
        fromFileDescriptor fd: Int32, name: String, options: MappingOptions, stopRequested: () -> Bool,
        afterRead: () -> Void, _ body: (RecordResult) throws -> Void
    ) throws -> RecordCounts {
        try withoutActuallyEscaping(body) { body in
            let output = ResultCollector()
            var thrown: (any Error)?
            output.deliver = { result in
                do {
                    try body(result)
                    return true
                } catch {
                    thrown = error
                    return false
                }
            }
            defer { output.deliver = nil }
            var pipeline = options.pipeline(mapping: self, into: output)
            let end = pipeline.read(name, fileDescriptor: fd, stopRequested: stopRequested, afterRead: { _ in afterRead() })
            pipeline.finish()
            if let thrown { throw thrown }
            try end.check(input: name, bytesIn: pipeline.bytesIn)
            return output.counts
        }
    }
}

extension MappingOptions {
    /// A record pipeline mapping with `mapper` as these options say (with `jobs` > 1, an engine per worker), into
    /// `output`; rejected records keep their first `MappingFeed.rejectedRecordBytes` bytes.
    func pipeline(mapping mapper: Mapper, into output: any RecordPipelineOutput) -> RecordPipeline {
        let (filter, explode, engine) = (self.filter, self.explode, self.engine)
        let makeEngine: @Sendable () -> any RecordEngine = { engine.make(mapper: mapper, filter: filter, explode: explode) }
        return RecordPipeline(
            engine: makeEngine(),
            settings: RecordPipelineSettings(framing: framing, jobs: jobs, keptRecordBytes: MappingFeed<StreamEngine>.rejectedRecordBytes),
            output: output, makeEngine: jobs > 1 ? makeEngine : nil)
    }
}

extension InputEnd {
    /// Throws what this end says went wrong with the input `name` (after the records before it were handed on):
    /// `InputError`, `CompressedInputError` or `UnsupportedEncodingError`.
    func check(input name: String, bytesIn: Int) throws {
        switch self {
        case .failed(let code): throw InputError(input: name, code: code, bytesRead: bytesIn)
        case .corrupt(let error): throw error
        case .unsupportedEncoding(let error): throw error
        case .ended, .stopped, .interrupted: break
        }
    }
}

// MARK: Asynchronous sequences of bytes

extension AsyncSequence where Element == UInt8 {
    /// The records of this stream of bytes (`URL.resourceBytes`, `FileHandle.bytes` where Foundation has them, or
    /// any sequence of your own), mapped by `mapper` with the stream engine, in input order. The bytes are
    /// gathered into 64 KiB chunks on the way (`chunked(bytes:)`).
    public func mappedRecords(mapper: Mapper, framing: Framing = .auto)
        -> AsyncMappedRecords<AsyncByteChunks<Self>, StreamEngine> {
        chunked().mappedRecords(mapper: mapper, framing: framing)
    }

    /// The records of this stream of bytes, mapped by `engine`.
    public func mappedRecords<E: RecordEngine>(engine: E, framing: Framing = .auto)
        -> AsyncMappedRecords<AsyncByteChunks<Self>, E> {
        chunked().mappedRecords(engine: engine, framing: framing)
    }

    /// These bytes in chunks of up to `bytes` bytes (the last one shorter): what the record pipeline is fed.
    public func chunked(bytes: Int = 1 << 16) -> AsyncByteChunks<Self> { AsyncByteChunks(base: self, size: bytes) }
}

/// An asynchronous sequence of bytes gathered into arrays of up to `size` bytes (see `chunked(bytes:)`).
public struct AsyncByteChunks<Base: AsyncSequence>: AsyncSequence where Base.Element == UInt8 {
    public typealias Element = [UInt8]
    let base: Base
    let size: Int

    init(base: Base, size: Int) {
        precondition(size > 0, "a chunk holds at least one byte")
        self.base = base
        self.size = size
    }

    public func makeAsyncIterator() -> AsyncIterator { AsyncIterator(base: base.makeAsyncIterator(), size: size) }

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: Base.AsyncIterator
        let size: Int
        var ended = false

        public mutating func next() async throws -> [UInt8]? {
            guard !ended else { return nil }
            var chunk: [UInt8] = []
            chunk.reserveCapacity(size)
            while chunk.count < size {
                guard let byte = try await base.next() else {
                    ended = true
                    break
                }
                chunk.append(byte)
            }
            return chunk.isEmpty ? nil : chunk
        }
    }
}

extension AsyncByteChunks: Sendable where Base: Sendable {}
