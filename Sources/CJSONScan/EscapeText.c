// Raw text written as the inside of a JSON string, with the canonical escapes (see include/CJSONScan.h): 32 bytes
// at a time, a mask of the bytes to escape per chunk (AVX2: three compares; else four words, each with exact
// per-byte tests), then each escape written after the run of bytes before it, runs moved by fixed 16-byte copies.

#include "KernelChoice.h"

#include <stdint.h>
#include <string.h>

#define ONES 0x0101010101010101ull
#define HIGHS 0x8080808080808080ull
#define LOWS 0x7F7F7F7F7F7F7F7Full

/// The second byte of the two-byte escapes (`\"` `\\` `\b` `\f` `\n` `\r` `\t`); 0 for the other control bytes,
/// which are written `\u00XX`.
static const unsigned char short_escape[256] = {
    ['"'] = '"', ['\\'] = '\\', [0x08] = 'b', [0x0C] = 'f', [0x0A] = 'n', [0x0D] = 'r', [0x09] = 't',
};

/// Writes the escape of `b` (a byte that needs one) at `o`; its length, 2 or 6.
static inline size_t store_escape(unsigned char b, unsigned char *o) {
    unsigned char k = short_escape[b];
    o[0] = '\\';
    if (k) {
        o[1] = k;
        return 2;
    }
    static const char hex[] = "0123456789abcdef";
    o[1] = 'u';
    o[2] = '0';
    o[3] = '0';
    o[4] = (unsigned char)hex[b >> 4];
    o[5] = (unsigned char)hex[b & 15];
    return 6;
}

static inline void copy16(unsigned char *to, const unsigned char *from) { memcpy(to, from, 16); }

/// The `count` (≤ 32) bytes at `c`, of which those marked in `mask` are escaped, written at `out`. Reads up to 64
/// bytes at `c` and writes up to 32 bytes past what it returns.
static inline size_t escape_chunk(const unsigned char *c, uint32_t mask, unsigned count, unsigned char *out) {
    size_t o = 0;
    unsigned done = 0;
    while (mask) {
        unsigned j = (unsigned)__builtin_ctz(mask);
        copy16(out + o, c + done);
        if (j - done > 16) copy16(out + o + 16, c + done + 16);
        o += j - done;
        o += store_escape(c[j], out + o);
        done = j + 1;
        mask &= mask - 1;
    }
    copy16(out + o, c + done);
    if (count - done > 16) copy16(out + o + 16, c + done + 16);
    return o + (count - done);
}

/// The high bit of each byte of `w` that needs escaping (a control byte, `"`, `\`), exactly.
static inline uint64_t escape_bytes(uint64_t w) {
    uint64_t q = w ^ (ONES * '"'), b = w ^ (ONES * '\\');
    uint64_t control = ~(((w & LOWS) + ONES * 0x60) | w);
    uint64_t quote = ~(((q & LOWS) + LOWS) | q), backslash = ~(((b & LOWS) + LOWS) | b);
    return (control | quote | backslash) & HIGHS;
}

/// One bit per byte from the high bits of a word's bytes.
static inline uint32_t gather_high_bits(uint64_t highs) { return (uint32_t)((highs >> 7) * 0x0102040810204080ull >> 56); }

static inline uint32_t chunk_mask_portable(const unsigned char *c) {
    uint32_t mask = 0;
    for (int k = 0; k < 32; k += 8) {
        uint64_t w;
        memcpy(&w, c + k, 8);
        mask |= gather_high_bits(escape_bytes(w)) << k;
    }
    return mask;
}

/// Room kept free at the end of `out` for one more chunk: 32 escapes of 6 bytes, and the copies' overrun.
#define CHUNK_ROOM (32 * 6 + 32)

#define ESCAPE_TEXT(variant, chunk_mask)                                                                           \
    static size_t escape_text_##variant(const unsigned char *p, size_t n, unsigned char *out, size_t room,          \
                                        size_t *consumed) {                                                         \
        size_t i = 0, o = 0;                                                                                        \
        while (i < n && o + CHUNK_ROOM <= room) {                                                                   \
            if (i + 64 <= n) {                                                                                      \
                uint32_t mask = chunk_mask(p + i);                                                                  \
                if (mask == 0) {                                                                                    \
                    memcpy(out + o, p + i, 32);                                                                     \
                    o += 32;                                                                                        \
                } else {                                                                                            \
                    o += escape_chunk(p + i, mask, 32, out + o);                                                    \
                }                                                                                                   \
                i += 32;                                                                                            \
            } else {                                                                                                \
                /* The last bytes, in a chunk of their own padded with spaces (nothing to escape). */              \
                unsigned char c[64];                                                                                \
                memset(c, ' ', 64);                                                                                 \
                unsigned count = (unsigned)(n - i < 32 ? n - i : 32);                                               \
                memcpy(c, p + i, count);                                                                            \
                o += escape_chunk(c, chunk_mask(c), count, out + o);                                                \
                i += count;                                                                                         \
            }                                                                                                       \
        }                                                                                                           \
        *consumed = i;                                                                                              \
        return o;                                                                                                   \
    }

ESCAPE_TEXT(portable, chunk_mask_portable)

size_t cjsonscan_escape_text_portable(const unsigned char *p, size_t n, unsigned char *out, size_t room, size_t *consumed) {
    return escape_text_portable(p, n, out, room, consumed);
}

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2"))) static inline uint32_t chunk_mask_avx2(const unsigned char *c) {
    const __m256i v = _mm256_loadu_si256((const __m256i *)c);
    const __m256i control = _mm256_cmpeq_epi8(_mm256_min_epu8(v, _mm256_set1_epi8(0x1F)), v);  // v <= 0x1F
    const __m256i quote = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('"'));
    const __m256i backslash = _mm256_cmpeq_epi8(v, _mm256_set1_epi8('\\'));
    return (uint32_t)_mm256_movemask_epi8(_mm256_or_si256(_mm256_or_si256(quote, backslash), control));
}

__attribute__((target("avx2"))) ESCAPE_TEXT(avx2, chunk_mask_avx2)

size_t cjsonscan_escape_text(const unsigned char *p, size_t n, unsigned char *out, size_t room, size_t *consumed) {
    return cjsonscan_avx2_chosen() ? escape_text_avx2(p, n, out, room, consumed)
                                   : escape_text_portable(p, n, out, room, consumed);
}
#else
size_t cjsonscan_escape_text(const unsigned char *p, size_t n, unsigned char *out, size_t room, size_t *consumed) {
    return escape_text_portable(p, n, out, room, consumed);
}
#endif
