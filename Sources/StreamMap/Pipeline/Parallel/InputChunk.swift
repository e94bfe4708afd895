/// A block of one input as read (`--jobs`). The reading thread fills it, then it is only read: by the reading
/// thread, which frames it, and by the workers, whose batches point at the records in it instead of holding
/// copies. A class, so that the batches share it; it is filled again only when no batch refers to it any more
/// (`ChunkPool`).
final class InputChunk: @unchecked Sendable {
    // @unchecked: the bytes and `count` are written only by the reading thread, and only while the pool holds the
    // one reference (isKnownUniquelyReferenced); from the moment a batch refers to the chunk they are only read.
    private let storage: UnsafeMutableRawBufferPointer
    /// How many bytes were read into it.
    private(set) var count = 0
    /// What holds the bytes of a chunk that lends them (nil: the chunk's own, freed with it).
    private let owner: AnyObject?

    init(capacity: Int) {
        storage = .allocate(byteCount: capacity, alignment: 64)
        owner = nil
    }

    /// A chunk of `bytes` that `owner` holds (kept alive as long as the chunk): text decompressed elsewhere,
    /// framed and mapped where it lies. It is never filled.
    init(lending bytes: UnsafeMutableRawBufferPointer, of owner: AnyObject) {
        storage = bytes
        count = bytes.count
        self.owner = owner
    }

    deinit { if owner == nil { storage.deallocate() } }

    /// How many bytes it holds at most.
    var capacity: Int { storage.count }

    /// The bytes read.
    var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: storage[..<count]) }

    /// Fills the chunk with `read` (given all of its room; returns the count read, or nil: nothing was read).
    func fill(_ read: (UnsafeMutableRawBufferPointer) -> Int?) -> Int? {
        let n = read(storage)
        count = n ?? 0
        return n
    }

    /// Reads more after the bytes read so far, with `read` (given the room left, at least one byte; returns the
    /// count read, or nil: nothing was read).
    func append(_ read: (UnsafeMutableRawBufferPointer) -> Int?) -> Int? {
        let n = read(UnsafeMutableRawBufferPointer(rebasing: storage[count...]))
        count += n ?? 0
        return n
    }

    /// Empties it (to be filled again by `append`).
    func clear() { count = 0 }

    /// Where `piece` starts in the chunk, if it lies inside the bytes read.
    func offset(of piece: UnsafeRawBufferPointer) -> Int? {
        guard let start = piece.baseAddress, let base = storage.baseAddress else { return nil }
        let offset = UnsafeRawPointer(base).distance(to: start)
        return offset >= 0 && offset + piece.count <= count ? offset : nil
    }
}

/// The reading thread's chunks: a chunk is filled again once no batch refers to it; a new one is made only when
/// every chunk is still referred to. How many exist is bounded by the batches that may refer to them (see
/// `ParallelMapping`).
struct ChunkPool {
    let chunkBytes: Int
    private var chunks: [InputChunk] = []

    init(chunkBytes: Int) { self.chunkBytes = chunkBytes }

    /// How many chunks were made.
    var count: Int { chunks.count }

    /// A chunk to read into, referred to by nothing but the pool (and, from now on, the caller).
    mutating func fresh() -> InputChunk {
        for i in chunks.indices where isKnownUniquelyReferenced(&chunks[i]) { return chunks[i] }
        let chunk = InputChunk(capacity: chunkBytes)
        chunks.append(chunk)
        return chunk
    }
}
