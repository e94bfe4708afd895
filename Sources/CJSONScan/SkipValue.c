// The validating skipper: see include/CJSONScan.h for the contract.
//
// A JSON value is walked by a small state machine with its nesting in a bit stack (1: object, 0: array)
// (SkipValueBody.h). Strings go 32 bytes at a time with AVX2 (compare and mask), else 8 bytes at a time (a word is
// searched for a quote, a backslash and a control byte at once, by the borrow tricks of "Bit Twiddling Hacks":
// the lowest flagged byte is always a real one); everything else byte by byte.
// It answers "yes, it ends here" only for what yajl 2.1 accepts with the flags StreamMap sets; anything else
// (an error, or a form it does not know, or the end of the bytes) is "no", and the caller lets yajl parse the
// value as before, so that yajl and the strict scanner say what is wrong exactly as they always did.

#include "KernelChoice.h"
#include "ProjectionPlan.h"
#include "StringEscapes.h"

#include <stdint.h>
#include <string.h>

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull

/// High bits where a byte of `w` is zero (exact for the lowest one).
static inline uint64_t zero_bytes(uint64_t w) { return (w - ONES) & ~w & HIGHS; }
#define LOWS 0x7F7F7F7F7F7F7F7Full

/// Per byte after a backslash: the escape's length (2, or 6 for `\u` and its four hex digits), 0 when invalid.
static const unsigned char escape_length[256] = {
    ['"'] = 2, ['\\'] = 2, ['/'] = 2, ['b'] = 2, ['f'] = 2, ['n'] = 2, ['r'] = 2, ['t'] = 2, ['u'] = 6,
};
/// 1 for a hex digit.
static const unsigned char hex_digits[256] = {
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1, ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1,
};
/// High bits exactly where a byte of `w` is zero.
static inline uint64_t exact_zero_bytes(uint64_t w) { return ~(((w & LOWS) + LOWS) | w) & HIGHS; }

#define STACK_WORDS 64

/// The first quote, backslash or control byte at or after `i` (`n` when there is none).
static inline size_t string_stop_portable(const unsigned char *p, size_t i, size_t n) {
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t stops = zero_bytes(w ^ (ONES * '"')) | zero_bytes(w ^ (ONES * '\\')) | ((w - ONES * 0x20) & ~w & HIGHS);
        if (stops) return i + ((size_t)__builtin_ctzll(stops) >> 3);
        i += 8;
    }
    while (i < n && p[i] != '"' && p[i] != '\\' && p[i] >= 0x20) i++;
    return i;
}


/// A 64-byte block's masks for the projector's string walk: bit k set where byte k is a quote, and where it is a
/// backslash or a control byte (below 0x20).
typedef struct {
    uint64_t quotes, stops;
    int invalid;  // the block's bytes are not valid UTF-8 (after the blocks before it)
} string_masks;

/// A byte's bit from each of 8 high bits (one per byte of a word).
static inline uint64_t gather_high_bits(uint64_t highs) { return (highs >> 7) * 0x0102040810204080ull >> 56; }

/// UTF-8 checked by a DFA whose state is a bit offset (Per Vognsen's shift-based DFA): `utf8_dfa[byte]` holds, at
/// offset 6·s, the offset of the state that byte leads to from state s, so a byte costs a load that waits on
/// nothing and a shift (no branch). The states (Unicode's table 3-7): 0 between characters; 6 one continuation byte
/// to come; 12 two; 18 after E0 (A0–BF next); 24 after ED (80–9F: no encoded surrogate); 30 after F0 (90–BF);
/// 36 after F1–F3; 42 after F4 (80–8F: nothing above U+10FFFF); 48 invalid, for good.
#define UTF8_INVALID 48
#define UTF8_FROM(s0, s1, s2, s3, s4, s5, s6, s7)                                                                 \
    ((uint64_t)(s0) | (uint64_t)(s1) << 6 | (uint64_t)(s2) << 12 | (uint64_t)(s3) << 18 | (uint64_t)(s4) << 24 |  \
     (uint64_t)(s5) << 30 | (uint64_t)(s6) << 36 | (uint64_t)(s7) << 42 | (uint64_t)UTF8_INVALID << 48)
#define UTF8_LEAD(to) UTF8_FROM(to, 48, 48, 48, 48, 48, 48, 48)
static const uint64_t utf8_dfa[256] = {
    [0x00 ... 0x7F] = UTF8_LEAD(0),
    [0x80 ... 0x8F] = UTF8_FROM(48, 0, 6, 48, 6, 48, 12, 12),
    [0x90 ... 0x9F] = UTF8_FROM(48, 0, 6, 48, 6, 12, 12, 48),
    [0xA0 ... 0xBF] = UTF8_FROM(48, 0, 6, 6, 48, 12, 12, 48),
    [0xC0 ... 0xC1] = UTF8_LEAD(48),
    [0xC2 ... 0xDF] = UTF8_LEAD(6),
    [0xE0] = UTF8_LEAD(18),
    [0xE1 ... 0xEC] = UTF8_LEAD(12),
    [0xED] = UTF8_LEAD(24),
    [0xEE ... 0xEF] = UTF8_LEAD(12),
    [0xF0] = UTF8_LEAD(30),
    [0xF1 ... 0xF3] = UTF8_LEAD(36),
    [0xF4] = UTF8_LEAD(42),
    [0xF5 ... 0xFF] = UTF8_LEAD(48),
};

/// The UTF-8 of the blocks the projector's string walk classifies (no SIMD): the DFA's state after the last
/// block checked.
typedef struct {
    size_t next;  // the block after the last one checked
    uint64_t state;
} utf8_state_portable;

/// Checks the UTF-8 of the 64 bytes at `b` (block `index`), after the state of the blocks before. 0 when invalid.
static inline int utf8_block_portable(const unsigned char *b, size_t index, utf8_state_portable *u) {
    if (index != u->next) {
        // Blocks in between hold no string (the walk read them: nothing but ASCII there in a valid record).
        if (u->state) return 0;
    }
    u->next = index + 1;
    uint64_t state = u->state;
    int k = 0;
    if (!state) {
        while (k < 64) {
            uint64_t w;
            memcpy(&w, b + k, 8);
            if (w & HIGHS) break;
            k += 8;
        }
    }
    for (; k < 64; k++) state = utf8_dfa[b[k]] >> (state & 63);
    u->state = state & 63;
    return u->state != UTF8_INVALID;
}

static inline int utf8_open_portable(const utf8_state_portable *u) { return u->state != 0; }

static inline string_masks string_masks_of_portable(const unsigned char *b, size_t index, utf8_state_portable *u) {
    string_masks m = {0, 0, 0};
    for (int k = 0; k < 64; k += 8) {
        uint64_t w;
        memcpy(&w, b + k, 8);
        // Exact per byte (no borrow between bytes).
        m.quotes |= gather_high_bits(exact_zero_bytes(w ^ (ONES * '"'))) << k;
        m.stops |= gather_high_bits(exact_zero_bytes(w ^ (ONES * '\\')) | (~(((w & LOWS) + ONES * 0x60) | w) & HIGHS)) << k;
    }
    m.invalid = !utf8_block_portable(b, index, u);
    return m;
}

/// The masks of the 64 bytes of `p` at `start` (bytes at or past `n` count as spaces), their UTF-8 checked.
#define STRING_MASKS_AT(variant)                                                                                    \
    static inline string_masks string_masks_at_##variant(const unsigned char *p, size_t n, size_t start,            \
                                                         utf8_state_##variant *u) {                                 \
        if (start + 64 <= n) return string_masks_of_##variant(p + start, start >> 6, u);                             \
        unsigned char tail[64];                                                                                      \
        memset(tail, ' ', 64);                                                                                       \
        memcpy(tail, p + start, n - start);                                                                          \
        return string_masks_of_##variant(tail, start >> 6, u);                                                      \
    }
STRING_MASKS_AT(portable)

int cjsonscan_valid_utf8_portable(const unsigned char *p, size_t n) {
    utf8_state_portable u = {0, 0};
    size_t start = 0;
    for (; start + 64 <= n; start += 64) {
        if (!utf8_block_portable(p + start, start >> 6, &u)) return 0;
    }
    if (start < n) {
        unsigned char tail[64];
        memset(tail, ' ', 64);  // (spaces: ASCII, which ends nothing and opens nothing)
        memcpy(tail, p + start, n - start);
        if (!utf8_block_portable(tail, start >> 6, &u)) return 0;
    }
    return !utf8_open_portable(&u);
}

/// The end of a short string of ASCII whose body starts at `i`, from the bytes at hand alone: the index just past
/// its closing quote, or 0 to go the usual way (`string_end`'s block masks). Up to 64 bytes, a word at a time:
/// when a quote comes before any backslash, control byte or byte of 0x80 or more, the string ends there — no
/// escape, and no UTF-8 to check — without the block masks (the blocks they are not made for hold nothing the
/// UTF-8 check would look at). The flags are the borrow tricks of `string_stop_portable`: a flag above a real one
/// may be false, so the lowest of each is real, and a stop flagged before the first quote means a real stop there.
static inline __attribute__((always_inline)) size_t ascii_string_end_portable(const unsigned char *p, size_t n, size_t i) {
    for (size_t k = 0; k < 8; k++, i += 8) {
        if (i + 8 > n) return 0;
        uint64_t w;
        memcpy(&w, p + i, 8);
        uint64_t quotes = zero_bytes(w ^ (ONES * '"'));
        // A backslash; a byte below 0x20 (its subtraction wraps) or of 0x80 or more.
        uint64_t stops = zero_bytes(w ^ (ONES * '\\')) | (((w - ONES * 0x20) | w) & HIGHS);
        if (quotes) {
            uint64_t upto = quotes ^ (quotes - 1);  // (the bits up to the first quote's)
            return stops & upto ? 0 : i + ((size_t)__builtin_ctzll(quotes) >> 3) + 1;
        }
        if (stops) return 0;
    }
    return 0;
}

#define V(name) name##_portable
#include "SkipValueBody.h"
#include "ProjectBody.h"
#undef V

#if defined(__x86_64__)
#include <immintrin.h>

/// `string_stop_portable`, 32 bytes at a time.
__attribute__((target("avx2"))) static inline size_t string_stop_avx2(const unsigned char *p, size_t i, size_t n) {
    const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\');
    const __m256i control_max = _mm256_set1_epi8(0x1F);
    while (i + 32 <= n) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        __m256i control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, control_max), v);  // v <= 0x1F
        __m256i stops = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)), control);
        uint32_t mask = (uint32_t)_mm256_movemask_epi8(stops);
        if (mask) return i + (size_t)__builtin_ctz(mask);
        i += 32;
    }
    return string_stop_portable(p, i, n);
}

#include "UTF8Lookup.h"

/// `utf8_state_portable` for the SIMD code: the last 32 bytes checked, and whether they end inside a character.
typedef struct {
    size_t next;
    int open;
    __m256i previous;
} utf8_state_avx2;

static inline int utf8_open_avx2(const utf8_state_avx2 *u) { return u->open; }

/// `string_masks_of_portable`, 32 bytes at a time, UTF-8 by the lookup algorithm.
__attribute__((target("avx2"))) static inline string_masks string_masks_of_avx2(const unsigned char *b, size_t index,
                                                                                  utf8_state_avx2 *u) {
    const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\'), control_max = _mm256_set1_epi8(0x1F);
    const __m256i v0 = _mm256_loadu_si256((const __m256i *)b), v1 = _mm256_loadu_si256((const __m256i *)(b + 32));
    uint32_t q0 = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v0, quote));
    uint32_t q1 = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v1, quote));
    uint32_t s0 = (uint32_t)_mm256_movemask_epi8(
        _mm256_or_si256(_mm256_cmpeq_epi8(v0, backslash), _mm256_cmpeq_epi8(_mm256_min_epu8(v0, control_max), v0)));
    uint32_t s1 = (uint32_t)_mm256_movemask_epi8(
        _mm256_or_si256(_mm256_cmpeq_epi8(v1, backslash), _mm256_cmpeq_epi8(_mm256_min_epu8(v1, control_max), v1)));
    // (Without this barrier clang rebuilds the masks bit by bit through vector inserts: 10x slower.)
    __asm__("" : "+r"(q0), "+r"(q1), "+r"(s0), "+r"(s1));
    string_masks m = {(uint64_t)q0 | (uint64_t)q1 << 32, (uint64_t)s0 | (uint64_t)s1 << 32, 0};
    if (index != u->next) {
        // Blocks in between hold no string (the walk read them: nothing but ASCII there in a valid record).
        if (u->open) m.invalid = 1;
        u->previous = _mm256_setzero_si256();
    }
    u->next = index + 1;
    __m256i any = _mm256_or_si256(v0, v1);
    if (_mm256_movemask_epi8(any) != 0 || u->open) {
        __m256i errors = _mm256_or_si256(utf8_errors(v0, u->previous), utf8_errors(v1, v0));
        if (!_mm256_testz_si256(errors, errors)) m.invalid = 1;
        u->open = ends_inside_character(v1);
    }
    u->previous = v1;
    return m;
}

/// The quotes (bit k: byte k is a quote) and the stops (a backslash, a control byte of 0x1F or less, or a byte of
/// 0x80 or more) of the 32 bytes at `p`.
__attribute__((target("avx2"), always_inline)) static inline void ascii_masks_avx2(const unsigned char *p, uint32_t *quotes,
                                                                                     uint32_t *stops) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)p);
    *quotes = (uint32_t)_mm256_movemask_epi8(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('"')));
    *stops = (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\')),
                                                            _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1F)), v))) |
             (uint32_t)_mm256_movemask_epi8(v);  // (the high bits)
}

/// `ascii_string_end_portable` for the 64 bytes at `i`, 32 at a time: when a quote comes before any backslash,
/// control byte or byte of 0x80 or more, the string ends there — no escape, and no UTF-8 to check — without the
/// block masks (the blocks they are not made for hold nothing the UTF-8 check would look at).
__attribute__((target("avx2"), always_inline)) static inline size_t ascii_string_end_avx2(const unsigned char *p,
                                                                                            size_t n, size_t i) {
    for (size_t k = 0; k < 2; k++, i += 32) {
        if (i + 32 > n) return 0;
        uint32_t quotes, stops;
        ascii_masks_avx2(p + i, &quotes, &stops);
        if (quotes) return stops & (quotes ^ (quotes - 1)) ? 0 : i + (size_t)__builtin_ctz(quotes) + 1;
        if (stops) return 0;
    }
    return 0;
}

#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
STRING_MASKS_AT(avx2)
#define V(name) name##_avx2
#include "SkipValueBody.h"
#include "ProjectBody.h"
#undef V
#pragma clang attribute pop

static inline int avx2(void) { return cjsonscan_avx2_chosen(); }

/// `cjsonscan_valid_utf8_portable`, 64 bytes at a time by the lookup algorithm; a block of ASCII after a whole
/// character is two loads and a test.
__attribute__((target("avx2"))) static int valid_utf8_avx2(const unsigned char *p, size_t n) {
    __m256i previous = _mm256_setzero_si256(), errors = _mm256_setzero_si256();
    int open = 0;
    unsigned char tail[64];
    for (size_t start = 0; start < n; start += 64) {
        const unsigned char *b = p + start;
        if (start + 64 > n) {
            memset(tail, ' ', 64);
            memcpy(tail, b, n - start);
            b = tail;
        }
        __m256i v0 = _mm256_loadu_si256((const __m256i *)b), v1 = _mm256_loadu_si256((const __m256i *)(b + 32));
        if (_mm256_movemask_epi8(_mm256_or_si256(v0, v1)) != 0 || open) {
            errors = _mm256_or_si256(errors, _mm256_or_si256(utf8_errors(v0, previous), utf8_errors(v1, v0)));
            open = ends_inside_character(v1);
        }
        previous = v1;
    }
    return _mm256_testz_si256(errors, errors) && !open;
}
#else
#define skip_value_avx2 skip_value_portable
#define skip_member_value_avx2 skip_member_value_portable
#define next_key_avx2 next_key_portable
#define project_avx2 project_portable
#define valid_utf8_avx2 cjsonscan_valid_utf8_portable
#define string_stop_avx2 string_stop_portable
static inline int avx2(void) { return 0; }
#endif

int cjsonscan_valid_utf8(const unsigned char *p, size_t n) {
    return avx2() ? valid_utf8_avx2(p, n) : cjsonscan_valid_utf8_portable(p, n);
}

size_t cjsonscan_string_stop(const unsigned char *p, size_t i, size_t n) {
    return avx2() ? string_stop_avx2(p, i, n) : string_stop_portable(p, i, n);
}

size_t cjsonscan_string_stop_portable(const unsigned char *p, size_t i, size_t n) {
    return string_stop_portable(p, i, n);
}

size_t cjsonscan_skip_value(const unsigned char *p, size_t n, size_t max_depth) {
    return avx2() ? skip_value_avx2(p, n, max_depth) : skip_value_portable(p, n, max_depth);
}

size_t cjsonscan_skip_value_portable(const unsigned char *p, size_t n, size_t max_depth) {
    return skip_value_portable(p, n, max_depth);
}

size_t cjsonscan_skip_member_value(const unsigned char *p, size_t n, size_t max_depth) {
    return avx2() ? skip_member_value_avx2(p, n, max_depth) : skip_member_value_portable(p, n, max_depth);
}

size_t cjsonscan_next_key(const unsigned char *p, size_t n, size_t *key_length) {
    return avx2() ? next_key_avx2(p, n, key_length) : next_key_portable(p, n, key_length);
}

ptrdiff_t cjsonscan_project(const cjsonscan_projection *plan, const unsigned char *p, size_t n, size_t max_depth,
                            unsigned char *out, cjsonscan_lift *lifts, size_t lift_capacity, size_t *lift_count,
                            cjsonscan_slot *slots) {
    return avx2() ? project_avx2(plan, p, n, max_depth, out, lifts, lift_capacity, lift_count, slots)
                  : project_portable(plan, p, n, max_depth, out, lifts, lift_capacity, lift_count, slots);
}

ptrdiff_t cjsonscan_project_portable(const cjsonscan_projection *plan, const unsigned char *p, size_t n,
                                     size_t max_depth, unsigned char *out, cjsonscan_lift *lifts,
                                     size_t lift_capacity, size_t *lift_count, cjsonscan_slot *slots) {
    return project_portable(plan, p, n, max_depth, out, lifts, lift_capacity, lift_count, slots);
}
