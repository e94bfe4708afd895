#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import CIsal

/// Which inflate decompresses gzip input.
public enum Inflater: String, Sendable, CaseIterable {
    /// ISA-L's (Intel's Intelligent Storage Acceleration Library, `libisal.so.2`) where the machine has it — about
    /// 2.3× zlib's speed on `gzip -1` data and 1.7× on `gzip -6` on the benchmark corpus — else zlib's.
    case automatic
    /// zlib's, always.
    case zlib

    /// Whether ISA-L's inflate can be loaded here.
    public static var isalIsAvailable: Bool { IsalLibrary.shared != nil }
}

/// ISA-L's inflate, loaded at run time (dlopen): nothing links it, so every build runs where it is missing. The
/// copy installed with the binary comes first — `lib/streammap/libisal.so.2` beside its `bin/` (the release tarball
/// and the wheel carry one: `scripts/install.sh`) — then the system's (`libisal.so.2` on the library path).
struct IsalLibrary: @unchecked Sendable {
    // @unchecked: immutable C function pointers.
    let initialize: @convention(c) (UnsafeMutablePointer<inflate_state>?) -> Void
    let reset: @convention(c) (UnsafeMutablePointer<inflate_state>?) -> Void
    let inflate: @convention(c) (UnsafeMutablePointer<inflate_state>?) -> Int32

    /// The library, loaded once (nil: not installed, or without these functions).
    static let shared: IsalLibrary? = {
        let bundled = executableFolder().map { $0 + "/../lib/streammap/libisal.so.2" }
        guard let handle = bundled.flatMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }) ?? dlopen("libisal.so.2", RTLD_NOW | RTLD_LOCAL) else {
            return nil
        }
        guard let i = dlsym(handle, "isal_inflate_init"), let r = dlsym(handle, "isal_inflate_reset"),
              let f = dlsym(handle, "isal_inflate") else { return nil }
        return IsalLibrary(initialize: unsafeBitCast(i, to: (@convention(c) (UnsafeMutablePointer<inflate_state>?) -> Void).self),
                           reset: unsafeBitCast(r, to: (@convention(c) (UnsafeMutablePointer<inflate_state>?) -> Void).self),
                           inflate: unsafeBitCast(f, to: (@convention(c) (UnsafeMutablePointer<inflate_state>?) -> Int32).self))
    }()

    /// The folder of the running executable (`/proc/self/exe`), or nil.
    private static func executableFolder() -> String? {
        var path = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &path, path.count - 1)
        guard n > 0 else { return nil }
        let full = String(decoding: path[..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = full.lastIndex(of: "/") else { return nil }
        return String(full[..<slash])
    }
}

/// gzip through ISA-L's `isal_inflate` (gzip wrapper and CRC checked). As `GzipDecompressor`: after a member's
/// end the state is reset, so the next member goes on; bytes after a member that are not a gzip member are corrupt
/// data. Its messages name the fault as zlib's would (`incorrect header check`, `invalid block type`…).
final class IsalGzipDecompressor: Decompressor {
    private let library: IsalLibrary
    private let state: UnsafeMutablePointer<inflate_state>
    private var betweenMembers = true

    init(_ library: IsalLibrary) {
        self.library = library
        state = .allocate(capacity: 1)
        // Zeroed first: `isal_inflate_init` leaves some fields as it finds them, and a stale value there (from the
        // memory's last use) let a back-reference past a member's start pass in some runs and not in others.
        memset(state, 0, MemoryLayout<inflate_state>.size)
        library.initialize(state)
        state.pointee.crc_flag = UInt32(ISAL_GZIP)
    }

    deinit { state.deallocate() }

    var isInsideStream: Bool { !betweenMembers }

    func step(_ input: UnsafeRawBufferPointer, into room: UnsafeMutableRawBufferPointer) -> DecompressionStep {
        guard !room.isEmpty else { return DecompressionStep() }
        if betweenMembers {
            // A member starts here. zlib tells bytes that are no gzip member by its first two, consumed; ISA-L would
            // wait for a whole header first. So the magic is checked here, as zlib does (same message, same offset).
            guard input.count >= 2 else { return DecompressionStep() }
            if input[0] != 0x1F || input[1] != 0x8B { return DecompressionStep(consumed: 2, produced: 0, failure: "incorrect header check") }
            if state.pointee.block_state == ISAL_BLOCK_FINISH {
                library.reset(state)
                state.pointee.crc_flag = UInt32(ISAL_GZIP)
            }
        }
        state.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: UInt8.self))
        state.pointee.avail_in = UInt32(min(input.count, Int(UInt32.max)))
        state.pointee.next_out = room.baseAddress!.assumingMemoryBound(to: UInt8.self)
        state.pointee.avail_out = UInt32(min(room.count, Int(UInt32.max)))
        let availIn = Int(state.pointee.avail_in), availOut = Int(state.pointee.avail_out)
        let status = library.inflate(state)
        var result = DecompressionStep()
        result.consumed = availIn - Int(state.pointee.avail_in)
        result.produced = availOut - Int(state.pointee.avail_out)
        if result.consumed > 0 { betweenMembers = false }
        guard status >= 0 else {
            result.failure = Self.message(status)
            return result
        }
        if state.pointee.block_state == ISAL_BLOCK_FINISH { betweenMembers = true }  // the next step starts a member
        return result
    }

    /// zlib's words for ISA-L's fault codes.
    static func message(_ status: Int32) -> String {
        switch status {
        case ISAL_INVALID_BLOCK: return "invalid block type"
        case ISAL_INVALID_SYMBOL: return "invalid code"
        case ISAL_INVALID_LOOKBACK: return "invalid distance too far back"
        case ISAL_INVALID_WRAPPER: return "incorrect header check"
        case ISAL_UNSUPPORTED_METHOD: return "unknown compression method"
        case ISAL_INCORRECT_CHECKSUM: return "incorrect data check"
        default: return "ISA-L inflate error \(status)"
        }
    }
}
