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
            // The member's header goes to ISA-L whole: ISA-L before 2.31 (Debian 12 ships 2.30) resumes a header cut
            // after its first 10 bytes with flags read from an uninitialised variable, and so may take the deflate
            // data for a file name or a header CRC (upstream commit 0e6bc4a). A header longer than the bytes a read
            // holds (a name or comment of more than `wholeHeaderLimit` bytes) still goes in pieces.
            if !Self.holdsWholeHeader(input) && input.count < Self.wholeHeaderLimit { return DecompressionStep() }
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

    /// Header bytes above which a member's header is handed to ISA-L before it is whole (the input buffer holds at
    /// least twice this).
    static let wholeHeaderLimit = 1 << 16

    /// Whether `input`, the start of a gzip member (its magic checked), holds the member's whole header (RFC 1952
    /// §2.3: 10 bytes; then, as its flags say, the extra field, the NUL-ended name and comment, the header CRC).
    static func holdsWholeHeader(_ input: UnsafeRawBufferPointer) -> Bool {
        guard input.count >= 10 else { return false }
        let flags = input[3]
        var end = 10
        if flags & 0x04 != 0 {  // FEXTRA: a 2-byte length, then that many bytes
            guard input.count >= end + 2 else { return false }
            end += 2 + Int(input[end]) + Int(input[end + 1]) << 8
        }
        for flag: UInt8 in [0x08, 0x10] where flags & flag != 0 {  // FNAME, FCOMMENT: up to a NUL
            guard end < input.count, let nul = input[end...].firstIndex(of: 0) else { return false }
            end = nul + 1
        }
        if flags & 0x02 != 0 { end += 2 }  // FHCRC
        return end <= input.count
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
