// AsyncMappedRecords.swift — maps an asynchronous sequence of byte chunks into an asynchronous sequence of records.

extension AsyncSequence where Element == [UInt8] {
    /// The records of this stream of chunks, mapped by `engine`: an asynchronous sequence of `RecordResult`s, in
    /// input order. Chunks may split records anywhere; a chunk is pulled only when every record of the previous
    /// ones has been consumed, so a slow consumer slows the producer down. An error thrown by this sequence ends
    /// the iteration and is rethrown.
    ///
    /// ```swift
    /// for try await result in chunks.mappedRecords(engine: TreeEngine(mapper: mapper)) {
    ///     if case .mapped(let record) = result { print(try record.decode(Person.self)) }
    /// }
    /// ```
    public func mappedRecords<E: RecordEngine>(engine: E, framing: Framing = .auto) -> AsyncMappedRecords<Self, E> {
        AsyncMappedRecords(base: self, engine: engine, framing: framing)
    }

    /// The records of this stream of chunks, mapped by `mapper` with the stream engine (the records `filter` drops
    /// give no result; with an `explode`, a record gives a result per element).
    public func mappedRecords(mapper: Mapper, filter: RecordFilter? = nil, explode: RecordExplosion? = nil,
                              framing: Framing = .auto) -> AsyncMappedRecords<Self, StreamEngine> {
        AsyncMappedRecords(base: self, engine: StreamEngine(mapper: mapper, filter: filter, explode: explode), framing: framing)
    }
}

/// An asynchronous sequence of mapped and rejected records read from an asynchronous sequence of byte chunks
/// (see `AsyncSequence.mappedRecords(engine:framing:)`). Each iterator frames and maps on its own, with its own copy
/// of the engine, through a `MappingFeed`. The sequence is `Sendable` when its base and engine are; its iterator is not.
public struct AsyncMappedRecords<Base: AsyncSequence, E: RecordEngine>: AsyncSequence where Base.Element == [UInt8] {
    public typealias Element = RecordResult
    @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
    public typealias Failure = Base.Failure

    let base: Base
    let engine: E
    let framing: Framing

    init(base: Base, engine: E, framing: Framing) {
        self.base = base
        self.engine = engine
        self.framing = framing
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), feed: MappingFeed(engine: engine, framing: framing))
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        /// nil once the base has ended (or thrown) and the feed is finished.
        private var base: Base.AsyncIterator?
        private let feed: MappingFeed<E>
        private var buffered: [RecordResult] = []
        private var position = 0

        init(base: Base.AsyncIterator, feed: MappingFeed<E>) {
            self.base = base
            self.feed = feed
        }

        public mutating func next() async throws -> RecordResult? {
            while position == buffered.count {
                guard base != nil else { return nil }
                let chunk: [UInt8]?
                do {
                    chunk = try await base!.next()
                } catch {
                    base = nil
                    throw error
                }
                refill(with: chunk)
            }
            return take()
        }

        @available(macOS 15.0, iOS 18.0, tvOS 18.0, watchOS 11.0, visionOS 2.0, *)
        public mutating func next(isolation actor: isolated (any Actor)?) async throws(Base.Failure) -> RecordResult? {
            while position == buffered.count {
                guard base != nil else { return nil }
                let chunk: [UInt8]?
                do {
                    chunk = try await base!.next(isolation: actor)
                } catch {
                    base = nil
                    throw error
                }
                refill(with: chunk)
            }
            return take()
        }

        private mutating func refill(with chunk: [UInt8]?) {
            if let chunk {
                buffered = feed.feed(chunk)
            } else {
                buffered = feed.finish()
                base = nil
            }
            position = 0
        }

        private mutating func take() -> RecordResult {
            let result = buffered[position]
            position += 1
            if position == buffered.count {
                buffered.removeAll(keepingCapacity: true)
                position = 0
            }
            return result
        }
    }
}

extension AsyncMappedRecords: Sendable where Base: Sendable, E: Sendable {}

@available(*, unavailable, message: "an iterator of AsyncMappedRecords is used from one task at a time")
extension AsyncMappedRecords.AsyncIterator: Sendable {}
