internal import CYajl
import Glibc

/// yajl's memory, recycled from one handle to the next.
///
/// A parser per record opens a yajl handle per record (yajl 2 cannot reset one), and every handle makes the same
/// few allocations: the handle, its lexer, two buffer headers, the nesting stack and, once a string has escapes,
/// a 2 KiB decoding buffer — which is above glibc's per-thread cache, so each record paid for its trip through
/// `malloc` and `free`. Here freed blocks wait in small free lists and the next record's handle takes them back.
///
/// Blocks are powers of two from 32 bytes to 8 KiB, with a 16-byte header that holds the size class; at most
/// `keptPerClass` free blocks are kept per class (under 64 KiB in all), and larger requests go straight to the
/// system allocator. Not thread-safe: one per compiled plan, which is used by one thread at a time. Every handle
/// made with `functions` must be freed before this object goes (a parser keeps its memory alive).
final class YajlMemory {
    static let classCount = 9
    static let header = 16
    static let keptPerClass = 4
    /// A block of class `k` is `32 << k` bytes, header included.
    @inline(__always) static func blockSize(_ k: Int) -> Int { 32 &<< k }

    /// The size class whose blocks hold `size` bytes after the header, or -1 when none does.
    @inline(__always) static func sizeClass(_ size: Int) -> Int {
        let total = size &+ header
        guard total <= blockSize(classCount - 1) else { return -1 }
        guard total > 32 else { return 0 }
        return (Int.bitWidth &- (total &- 1).leadingZeroBitCount) &- 5
    }

    /// `classCount` list heads (free blocks linked through their first word), then `classCount` list lengths.
    private let lists: UnsafeMutableRawPointer
    /// What `yajl_alloc` takes.
    let functions: yajl_alloc_funcs

    init() {
        lists = .allocate(byteCount: 2 * Self.classCount * 8, alignment: 8)
        lists.initializeMemory(as: Int.self, repeating: 0, count: 2 * Self.classCount)
        functions = yajl_alloc_funcs(
            malloc: { ctx, size in YajlMemory.allocate(ctx!, size) },
            realloc: { ctx, p, size in YajlMemory.reallocate(ctx!, p, size) },
            free: { ctx, p in YajlMemory.release(ctx!, p) },
            ctx: lists)
    }

    deinit {
        for k in 0..<Self.classCount {
            var next = Self.head(lists, k).pointee
            while let block = next {
                next = block.load(as: UnsafeMutableRawPointer?.self)
                free(block)
            }
        }
        lists.deallocate()
    }

    /// How many free blocks each class keeps now (for tests).
    var keptBlocks: [Int] { (0..<Self.classCount).map { Self.count(lists, $0).pointee } }

    @inline(__always)
    private static func head(_ lists: UnsafeMutableRawPointer, _ k: Int) -> UnsafeMutablePointer<UnsafeMutableRawPointer?> {
        lists.assumingMemoryBound(to: UnsafeMutableRawPointer?.self) + k
    }

    @inline(__always)
    private static func count(_ lists: UnsafeMutableRawPointer, _ k: Int) -> UnsafeMutablePointer<Int> {
        lists.assumingMemoryBound(to: Int.self) + classCount + k
    }

    private static func allocate(_ lists: UnsafeMutableRawPointer, _ size: Int) -> UnsafeMutableRawPointer? {
        let k = sizeClass(size)
        let block: UnsafeMutableRawPointer
        if k >= 0, let kept = head(lists, k).pointee {
            head(lists, k).pointee = kept.load(as: UnsafeMutableRawPointer?.self)
            count(lists, k).pointee &-= 1
            block = kept
        } else {
            guard let fresh = malloc(k >= 0 ? blockSize(k) : size &+ header) else { return nil }
            block = fresh
        }
        block.storeBytes(of: k, as: Int.self)
        return block + header
    }

    private static func release(_ lists: UnsafeMutableRawPointer, _ p: UnsafeMutableRawPointer?) {
        guard let p else { return }
        let block = p - header
        let k = block.load(as: Int.self)
        guard k >= 0, count(lists, k).pointee < keptPerClass else { return free(block) }
        block.storeBytes(of: head(lists, k).pointee, as: UnsafeMutableRawPointer?.self)
        head(lists, k).pointee = block
        count(lists, k).pointee &+= 1
    }

    private static func reallocate(_ lists: UnsafeMutableRawPointer, _ p: UnsafeMutableRawPointer?, _ size: Int) -> UnsafeMutableRawPointer? {
        guard let p else { return allocate(lists, size) }
        let block = p - header
        let k = block.load(as: Int.self)
        if k < 0 {
            // A large block stays with the system allocator, whatever its new size.
            guard let moved = realloc(block, size &+ header) else { return nil }
            return moved + header
        }
        let capacity = blockSize(k) &- header
        if size <= capacity { return p }
        guard let bigger = allocate(lists, size) else { return nil }
        bigger.copyMemory(from: p, byteCount: capacity)
        release(lists, p)
        return bigger
    }
}
