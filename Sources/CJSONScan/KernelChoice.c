// The run-time choice between the kernels' AVX2 and portable code (KernelChoice.h).
#include "CJSONScan.h"
#include "KernelChoice.h"

#include <stdlib.h>
#include <string.h>

_Atomic int cjsonscan_kernel_choice = -1;

int cjsonscan_avx2_wanted(int cpu_has_avx2, const char *no_avx2) {
    if (!cpu_has_avx2) return 0;
    return no_avx2 == NULL || no_avx2[0] == 0 || strcmp(no_avx2, "0") == 0;
}

int cjsonscan_decide_kernels(void) {
#if defined(__x86_64__)
    int cpu = __builtin_cpu_supports("avx2");
#else
    int cpu = 0;
#endif
    // (Threads that decide at once decide alike: the CPU and the environment are the same for all.)
    int choice = cjsonscan_avx2_wanted(cpu, getenv("STREAMMAP_NO_AVX2"));
    atomic_store_explicit(&cjsonscan_kernel_choice, choice, memory_order_relaxed);
    return choice;
}

int cjsonscan_uses_avx2(void) { return cjsonscan_avx2_chosen(); }
