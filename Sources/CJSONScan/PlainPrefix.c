// The strict scanner's SIMD kernel: see include/CJSONScan.h for the contract.
//
// 32 bytes at a time (AVX2): the bytes that stop it (backslash, 0x0B, 0x0C) by comparison, and UTF-8 by the "lookup"
// algorithm of Keiser and Lemire ("Validating UTF-8 in less than one instruction per byte", 2021), as simdjson
// and simdutf run it: three table lookups (pshufb) classify each pair of adjacent bytes, and the bytes two and
// three after a 3- or 4-byte lead must be continuations. An error found at byte `e` means the bytes before `e`
// are valid, but for a character that `e` cuts short. A block of plain ASCII after a whole character skips the
// lookups.

#include "KernelChoice.h"
#include "CJSONScan.h"

#include <stdint.h>
#include <string.h>

#if defined(__x86_64__)
#include <immintrin.h>

/// The start of the last character before `pos` when `pos` cuts it; else `pos`. The bytes in [floor, pos) are
/// valid UTF-8 but for the last character, which may be incomplete.
static size_t character_boundary(const unsigned char *p, size_t floor, size_t pos) {
    size_t j = pos;
    while (j > floor && pos - j < 4) {
        j--;
        unsigned char b = p[j];
        if (b < 0x80) return pos;
        if (b >= 0xC0) {
            size_t length = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
            return j + length > pos ? j : pos;
        }
    }
    return pos;
}

/// The four hex digits at `p` as nibbles, the first in the lowest byte, or 0 with `*ok` cleared. Each byte is
/// checked by borrows that stay in its lane: a digit 30...39, a letter (folded to lower case) 61...66. The same
/// trick as `StrictJSONScanner.hexDigits`, which the Swift path (no AVX2) keeps: change both together.
static inline uint32_t hex_digits(const unsigned char *p, int *ok) {
    uint32_t w;
    memcpy(&w, p, 4);
    uint32_t folded = w | 0x20202020u;
    uint32_t digits = (w + 0x50505050u) & ~(w + 0x46464646u);
    uint32_t letters = (folded + 0x1F1F1F1Fu) & ~(folded + 0x19191919u);
    *ok = (w & 0x80808080u) == 0 && ((digits | letters) & 0x80808080u) == 0x80808080u;
    return (w & 0x0F0F0F0Fu) + ((w >> 6) & 0x01010101u) * 9;
}

/// The length of the escape at `p[k]` (a backslash) when the scanner accepts it whole, else 0 (also when it
/// would need bytes past `n`). A surrogate's digits are D, then 8...B (high) or C...F (low).
static inline size_t escape_length(const unsigned char *p, size_t k, size_t n) {
    if (k + 2 > n) return 0;
    unsigned char c = p[k + 1];
    if (c != 'u') return c < 0x80 ? 2 : 0;
    int ok;
    if (k + 6 > n) return 0;
    uint32_t v = hex_digits(p + k + 2, &ok);
    if (!ok) return 0;
    if ((v & 0x08FFu) != 0x080Du) return 6;
    if ((v & 0x0CFFu) != 0x080Du || k + 12 > n || p[k + 6] != '\\' || p[k + 7] != 'u') return 0;
    uint32_t w = hex_digits(p + k + 8, &ok);
    return ok && (w & 0x0CFFu) == 0x0C0Du ? 12 : 0;
}

#include "UTF8Lookup.h"

AVX2 static size_t plain_prefix_avx2(const unsigned char *p, size_t n) {
    const __m256i backslash = _mm256_set1_epi8('\\'), vertical_tab = _mm256_set1_epi8(0x0B);
    const __m256i form_feed = _mm256_set1_epi8(0x0C), zero = _mm256_setzero_si256();
    size_t i = 0;
    // Where the current run of checked bytes began (at the start, or after an escape), the 32 bytes before `i`,
    // and whether the character that they end with goes on at `i`.
    size_t floor = 0;
    __m256i previous = zero;
    int open = 0;
    while (i + 32 <= n) {
        __m256i input = _mm256_loadu_si256((const __m256i *)(p + i));
        __m256i stop_bytes = _mm256_or_si256(_mm256_cmpeq_epi8(input, backslash),
                                             _mm256_or_si256(_mm256_cmpeq_epi8(input, vertical_tab), _mm256_cmpeq_epi8(input, form_feed)));
        // Plain ASCII with nothing open: the common case, one test.
        __m256i marked = _mm256_or_si256(stop_bytes, input);
        if (_mm256_movemask_epi8(marked) == 0 && !open) {
            i += 32;
            previous = input;
            continue;
        }
        uint32_t stops = (uint32_t)_mm256_movemask_epi8(stop_bytes);
        __m256i bad = utf8_errors(input, previous);
        uint32_t errors = ~(uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(bad, zero));
        if ((stops | errors) == 0) {
            open = ends_inside_character(input);
            previous = input;
            i += 32;
            continue;
        }
        // The first stop, and the errors at or before it: a stop is ASCII, so a character it cuts short shows as
        // an error at the stop. (2 << 31 is 0 in 32 bits: all ones.)
        uint32_t upto = stops ? (2u << __builtin_ctz(stops)) - 1 : 0xFFFFFFFFu;
        if (errors & upto) return character_boundary(p, floor, i + (size_t)__builtin_ctz(errors));
        size_t k = i + (size_t)__builtin_ctz(stops);
        // A run of escapes.
        do {
            size_t length = p[k] == '\\' ? escape_length(p, k, n) : 0;
            if (length == 0) return k;
            k += length;
        } while (k < n && p[k] == '\\');
        i = floor = k;
        previous = zero;
        open = 0;
    }
    return character_boundary(p, floor, i);
}

size_t cjsonscan_plain_prefix(const unsigned char *p, size_t n) {
    if (!cjsonscan_avx2_chosen()) return 0;
    return plain_prefix_avx2(p, n);
}

int cjsonscan_accelerated(void) {
    return cjsonscan_avx2_chosen();
}

#else

size_t cjsonscan_plain_prefix(const unsigned char *p, size_t n) {
    (void)p;
    (void)n;
    return 0;
}

int cjsonscan_accelerated(void) {
    return 0;
}

#endif
