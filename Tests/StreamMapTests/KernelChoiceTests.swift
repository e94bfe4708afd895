import CJSONScan
import Foundation
import Testing

@testable import StreamMap

/// Which code the C kernels (Sources/CJSONScan) run: chosen once per process (KernelChoice.c).
@Suite struct KernelChoiceTests {
    /// The kernels run their AVX2 code where the CPU has it, unless STREAMMAP_NO_AVX2 is set (to anything but "" or
    /// "0"): then every kernel runs its portable code, as on a machine without AVX2. CI runs the engine tests so
    /// (`.ci/run`), and this test holds the process to its environment in both runs.
    @Test func theEnvironmentCanSwitchAVX2Off() throws {
        #expect(cjsonscan_avx2_wanted(1, nil) == 1)
        #expect(cjsonscan_avx2_wanted(1, "") == 1)
        #expect(cjsonscan_avx2_wanted(1, "0") == 1)
        #expect(cjsonscan_avx2_wanted(1, "1") == 0)
        #expect(cjsonscan_avx2_wanted(1, "yes") == 0)
        #expect(cjsonscan_avx2_wanted(0, nil) == 0)
        #expect(cjsonscan_avx2_wanted(0, "0") == 0)
        #if arch(x86_64)
        let flags = try String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8)
            .split(separator: "\n").first { $0.hasPrefix("flags") }?.split(separator: " ") ?? []
        let cpu: Int32 = flags.contains("avx2") ? 1 : 0
        #else
        let cpu: Int32 = 0
        #endif
        let expected = cjsonscan_avx2_wanted(cpu, getenv("STREAMMAP_NO_AVX2"))
        #expect(cjsonscan_uses_avx2() == expected)
        #expect(StrictJSONScanner.kernelAvailable == (expected == 1))
    }
}
