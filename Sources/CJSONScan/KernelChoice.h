// Which code the kernels run: AVX2 where the CPU has it, unless the environment variable STREAMMAP_NO_AVX2 is set
// (to anything but "" or "0"), which makes the whole binary run its portable code — the code a machine without
// AVX2 runs (CI runs the engine tests so). Decided once per process, at the first kernel call (KernelChoice.c).
#ifndef CJSONSCAN_KERNEL_CHOICE_H
#define CJSONSCAN_KERNEL_CHOICE_H

#include <stdatomic.h>

/// -1 until decided, then 1 (AVX2) or 0 (portable).
extern _Atomic int cjsonscan_kernel_choice;
int cjsonscan_decide_kernels(void);

static inline int cjsonscan_avx2_chosen(void) {
    int choice = atomic_load_explicit(&cjsonscan_kernel_choice, memory_order_relaxed);
    return choice >= 0 ? choice : cjsonscan_decide_kernels();
}

#endif
