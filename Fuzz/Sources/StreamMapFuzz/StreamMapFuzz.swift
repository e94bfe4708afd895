// libFuzzer entry point: arbitrary bytes → a generated mapper and records (see EngineFuzzing.swift for the input
// layout), mapped by the tree engine and the stream engine, whole and in pieces; and (CompressedFuzzing.swift) the
// records compressed, cut or changed, read back through a pipeline; and (ArrowFuzzing.swift) a typed spec's
// records, with the fuzz bytes as records and values, written as Arrow and read back. A divergence is a crash with
// a report; anything else (malformed JSON, specs the generator got wrong) is a normal run.
//
// Built by scripts/fuzz.sh with `-Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library`. Replay a crash:
// `Fuzz/.build/release/StreamMapFuzz CRASH_FILE`.

import StreamMapFuzzSupport

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzStreamMapEngines(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: start == nil ? 0 : count)
    if let divergence = EngineFuzzing.check(bytes) ?? CompressedFuzzing.check(bytes) ?? ArrowFuzzing.check(bytes) {
        fatalError("\n" + divergence + "\n")
    }
    return 0
}

/// libFuzzer's driver (compiler-rt, LLVM ≥ 11): parses the libFuzzer flags and runs the loop.
@_silgen_name("LLVMFuzzerRunDriver")
func LLVMFuzzerRunDriver(
    _ argc: UnsafeMutablePointer<CInt>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt
) -> CInt

/// SwiftPM links an executable target's entry point as `main` under the name `<module>_main`; with
/// -parse-as-library there is none, so this is it: it hands control to libFuzzer's driver, exactly as libFuzzer's
/// own `main` would.
@_cdecl("StreamMapFuzz_main")
public func streamMapFuzzMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    var argc = argc
    var argv = argv
    return LLVMFuzzerRunDriver(&argc, &argv) { data, size in fuzzStreamMapEngines(data, size) }
}
