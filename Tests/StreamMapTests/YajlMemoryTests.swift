import Testing
@testable import StreamMap

/// `YajlMemory`: the blocks yajl's handles allocate are recycled, and none of yajl's reallocations loses bytes.
@Suite("yajl memory")
struct YajlMemoryTests {
    let memory = YajlMemory()

    func allocate(_ size: Int) -> UnsafeMutableRawPointer {
        memory.functions.malloc!(memory.functions.ctx, size)!
    }

    func reallocate(_ p: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer {
        memory.functions.realloc!(memory.functions.ctx, p, size)!
    }

    func free(_ p: UnsafeMutableRawPointer?) { memory.functions.free!(memory.functions.ctx, p) }

    func fill(_ p: UnsafeMutableRawPointer, _ count: Int) {
        for i in 0..<count { p.storeBytes(of: UInt8(truncatingIfNeeded: i &* 31 &+ 7), toByteOffset: i, as: UInt8.self) }
    }

    func holdsPattern(_ p: UnsafeMutableRawPointer, _ count: Int) -> Bool {
        (0..<count).allSatisfy { p.load(fromByteOffset: $0, as: UInt8.self) == UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
    }

    @Test func sizeClassesAreTheSmallestBlockThatHoldsTheRequestAndItsHeader() {
        #expect(YajlMemory.sizeClass(0) == 0)
        #expect(YajlMemory.sizeClass(16) == 0)   // 32-byte block
        #expect(YajlMemory.sizeClass(17) == 1)
        #expect(YajlMemory.sizeClass(48) == 1)   // 64
        #expect(YajlMemory.sizeClass(49) == 2)
        #expect(YajlMemory.sizeClass(2048) == 7) // yajl's decoding buffer: a 4 KiB block
        #expect(YajlMemory.sizeClass(8176) == 8) // the largest class, 8 KiB
        #expect(YajlMemory.sizeClass(8177) == -1)
        for size in [0, 1, 15, 16, 17, 100, 128, 1000, 2048, 4080, 4081, 8176] {
            let k = YajlMemory.sizeClass(size)
            #expect(YajlMemory.blockSize(k) - YajlMemory.header >= size)
            #expect(k == 0 || YajlMemory.blockSize(k - 1) - YajlMemory.header < size)
        }
    }

    @Test func aFreedBlockIsTheNextOfItsClass() {
        let a = allocate(100)
        free(a)
        #expect(memory.keptBlocks[YajlMemory.sizeClass(100)] == 1)
        let b = allocate(110)  // the same class: 128-byte blocks, header included
        #expect(b == a)
        #expect(memory.keptBlocks[YajlMemory.sizeClass(100)] == 0)
        free(b)
    }

    @Test func eachClassKeepsAFewBlocksAndLargeOnesGoBack() {
        let blocks = (0..<10).map { _ in allocate(2048) }
        blocks.forEach(free)
        #expect(memory.keptBlocks[YajlMemory.sizeClass(2048)] == YajlMemory.keptPerClass)
        free(allocate(100_000))
        #expect(memory.keptBlocks.reduce(0, +) == YajlMemory.keptPerClass)
        free(nil)
    }

    @Test func reallocationKeepsTheBytesAcrossClassesAndIntoLargeBlocks() {
        var p = reallocate(nil, 10)  // realloc(NULL) allocates, as yajl's stack expects
        fill(p, 10)
        p = reallocate(p, 12)        // fits: the same block
        #expect(holdsPattern(p, 10))
        fill(p, 12)
        p = reallocate(p, 3000)      // a larger class
        #expect(holdsPattern(p, 12))
        fill(p, 3000)
        p = reallocate(p, 50_000)    // a large block
        #expect(holdsPattern(p, 3000))
        fill(p, 50_000)
        p = reallocate(p, 200_000)   // still large
        #expect(holdsPattern(p, 50_000))
        free(p)
    }

    /// Records that make yajl grow its decoding buffer past the largest class (long escaped strings) and its
    /// nesting stack through several classes (deep arrays), one after another through one engine: the stream
    /// engine, whose handles use the recycled memory, maps them exactly as the tree engine does.
    @Test func recordsThatGrowYajlsBuffersMapAsTheTreeEngineMapsThem() throws {
        let mapper = try Spec(json: #"{"fields":{"s":"s","deep":"deep","t":"t"}}"#).mapper
        var stream = StreamEngine(mapper: mapper)
        let tree = TreeEngine(mapper: mapper)
        var records: [String] = []
        for n in [1, 10, 300, 3_000, 20_000, 5, 70_000, 2] {
            let text = String(repeating: "a\\\"\\u00e9\\n", count: n)
            let depth = min(n, 900)
            let deep = String(repeating: "[", count: depth) + "1" + String(repeating: "]", count: depth)
            records.append(#"{"s":"\#(text)","deep":\#(deep),"skipped":"\#(text)","t":"é\u00e9"}"#)
        }
        for record in records {
            var a = JSONWriter(), b = JSONWriter()
            let bytes = Array(record.utf8)
            let fromStream = bytes.withUnsafeBytes { stream.map(record: $0, into: &a) }
            let fromTree = bytes.withUnsafeBytes { tree.map(record: $0, into: &b) }
            #expect(fromStream == fromTree)
            #expect(a.bytes == b.bytes)
            #expect(!a.bytes.isEmpty)
        }
    }
}
