// UTF-8 validation 32 bytes at a time (AVX2) by the "lookup" algorithm of Keiser and Lemire ("Validating UTF-8
// in less than one instruction per byte", 2021), as simdjson and simdutf run it: three table lookups (pshufb)
// classify each pair of adjacent bytes, and the bytes two and three after a 3- or 4-byte lead must be
// continuations. Shared by the strict scanner's kernel (PlainPrefix.c) and the record projector (ProjectBody.h).
// Include it inside `#if defined(__x86_64__)` after <immintrin.h>.
#ifndef CJSONSCAN_UTF8_LOOKUP_H
#define CJSONSCAN_UTF8_LOOKUP_H

// The error classes of the lookup tables (simdjson's names).
#define TOO_SHORT (1 << 0)  // 11______ 0_______ or 11______ 11______
#define TOO_LONG (1 << 1)   // 0_______ 10______
#define OVERLONG_3 (1 << 2) // 11100000 100_____
#define TOO_LARGE (1 << 3)  // 11110100 1001____ ... 11111___ 101_____
#define SURROGATE (1 << 4)  // 11101101 101_____
#define OVERLONG_2 (1 << 5) // 1100000_ 10______
#define TOO_LARGE_1000 (1 << 6) // 11110101 1000____ ... 11111___ 1000____
#define OVERLONG_4 (1 << 6) // 11110000 1000____
#define TWO_CONTS (1 << 7)  // 10______ 10______
#define CARRY (TOO_SHORT | TOO_LONG | TWO_CONTS)

static const unsigned char byte_1_high_table[16] = {
    TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG, TOO_LONG,  // 0_______ (ASCII)
    TWO_CONTS, TWO_CONTS, TWO_CONTS, TWO_CONTS,                                      // 10______
    TOO_SHORT | OVERLONG_2,                                                          // 1100____
    TOO_SHORT,                                                                       // 1101____
    TOO_SHORT | OVERLONG_3 | SURROGATE,                                              // 1110____
    TOO_SHORT | TOO_LARGE | TOO_LARGE_1000 | OVERLONG_4,                             // 1111____
};
static const unsigned char byte_1_low_table[16] = {
    CARRY | OVERLONG_3 | OVERLONG_2 | OVERLONG_4,  // ____0000
    CARRY | OVERLONG_2,                            // ____0001
    CARRY, CARRY,                                  // ____001_
    CARRY | TOO_LARGE,                             // ____0100
    CARRY | TOO_LARGE | TOO_LARGE_1000,            // ____0101
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,  // ____011_
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,  // ____1___
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000,
    CARRY | TOO_LARGE | TOO_LARGE_1000 | SURROGATE,  // ____1101
    CARRY | TOO_LARGE | TOO_LARGE_1000, CARRY | TOO_LARGE | TOO_LARGE_1000,
};
static const unsigned char byte_2_high_table[16] = {
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,  // ________ 0_______
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE_1000 | OVERLONG_4,            // ________ 1000____
    TOO_LONG | OVERLONG_2 | TWO_CONTS | OVERLONG_3 | TOO_LARGE,                              // ________ 1001____
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,                               // ________ 101_____
    TOO_LONG | OVERLONG_2 | TWO_CONTS | SURROGATE | TOO_LARGE,
    TOO_SHORT, TOO_SHORT, TOO_SHORT, TOO_SHORT,                                              // ________ 11______
};
/// Per byte, the largest value that does not start a character going on past the end of a 32-byte block.
static const unsigned char last_bytes_max[32] = {
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF,
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xF0 - 1, 0xE0 - 1, 0xC0 - 1,
};

#ifndef AVX2
#define AVX2 __attribute__((target("avx2")))
#endif

/// A 16-byte table in both lanes (vpshufb looks up within each 128-bit lane).
AVX2 static inline __m256i table(const unsigned char *t) {
    return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)t));
}

AVX2 static inline __m256i high_nibbles(__m256i v) {
    return _mm256_and_si256(_mm256_srli_epi16(v, 4), _mm256_set1_epi8(0x0F));
}

/// `input` moved `N` bytes later, the first `N` from the end of `previous`.
#define PREVIOUS(input, previous, N) \
    _mm256_alignr_epi8(input, _mm256_permute2x128_si256(previous, input, 0x21), 16 - (N))

/// Nonzero bytes where `input` (after `previous`, the 32 bytes before it) breaks UTF-8.
AVX2 static inline __m256i utf8_errors(__m256i input, __m256i previous) {
    __m256i prev1 = PREVIOUS(input, previous, 1);
    __m256i special_cases = _mm256_and_si256(
        _mm256_and_si256(_mm256_shuffle_epi8(table(byte_1_high_table), high_nibbles(prev1)),
                         _mm256_shuffle_epi8(table(byte_1_low_table), _mm256_and_si256(prev1, _mm256_set1_epi8(0x0F)))),
        _mm256_shuffle_epi8(table(byte_2_high_table), high_nibbles(input)));
    // The second and third bytes after a 3- or 4-byte lead must be continuations (TWO_CONTS marks them).
    __m256i third = _mm256_subs_epu8(PREVIOUS(input, previous, 2), _mm256_set1_epi8((char)(0xE0 - 0x80)));
    __m256i fourth = _mm256_subs_epu8(PREVIOUS(input, previous, 3), _mm256_set1_epi8((char)(0xF0 - 0x80)));
    __m256i must_continue = _mm256_and_si256(_mm256_or_si256(third, fourth), _mm256_set1_epi8((char)0x80));
    return _mm256_xor_si256(must_continue, special_cases);
}

/// Whether the last bytes of `block` start a character that goes on past it.
AVX2 static inline int ends_inside_character(__m256i block) {
    __m256i over = _mm256_subs_epu8(block, _mm256_loadu_si256((const __m256i *)last_bytes_max));
    return !_mm256_testz_si256(over, over);
}

#endif
