// Verbatim copies: see include/CJSONScan.h for the contract.
//
// The input has already been checked (the strict scanner, then `cjsonscan_skip_value`), so this walks it as
// valid JSON and only writes: whitespace between tokens is dropped, numbers and literals are copied as they are,
// strings are copied as they are up to a backslash, and each escape is decoded and written in StreamMap's
// canonical form (JSONWriter: `\"`, `\\`, `\b` `\f` `\n` `\r` `\t`, `\u00xx` with lowercase hex for the other
// control characters, every other character as raw UTF-8). Even so it reads nothing past `n` and answers -1 to
// anything it does not expect, so that a broken precondition costs a fallback, never memory safety.
//
// Duplicate keys: the tree keeps the last value at the first key's place, so an object with two equal keys
// is not a verbatim copy. Each object's keys (their canonical text in the output, which is one-to-one with
// the decoded key) are checked when it ends: pairwise by hash for a few, through an open-addressing table for
// more. A duplicate, or keys made to share a hash past a few probes, answer -1: the caller then maps the value
// through events, which decide (and stay linear on colliding keys).

#include "KernelChoice.h"
#include "CJSONScan.h"
#include "StringEscapes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_NESTING 4096

typedef struct {
    uint64_t hash;
    size_t offset;  // in the output, after the opening quote
    size_t length;
} key_entry;

struct cjsonscan_copier {
    key_entry *keys;
    size_t key_count, key_capacity;
    // The keys of the copied value's own object (when it is one), the first `top_keys` of `keys` after a copy.
    size_t top_keys;
    uint32_t *table;
    size_t table_capacity;
    // Per open container: 1 for an object, 0 for an array; and where an object's keys start in `keys`.
    unsigned char kinds[MAX_NESTING + 1];
    size_t first_key[MAX_NESTING + 1];
};

cjsonscan_copier *cjsonscan_copier_new(void) {
    cjsonscan_copier *c = calloc(1, sizeof *c);
    return c;
}

size_t cjsonscan_copier_top_keys(const cjsonscan_copier *c, size_t index, size_t *offset, size_t *length) {
    if (!c || index >= c->top_keys) return c ? c->top_keys : 0;
    *offset = c->keys[index].offset;
    *length = c->keys[index].length;
    return c->top_keys;
}

void cjsonscan_copier_free(cjsonscan_copier *c) {
    if (!c) return;
    free(c->keys);
    free(c->table);
    free(c);
}

/// Whether `b` ends a scalar's token: a delimiter, whitespace (or any byte up to a space: what follows a value
/// is checked after it).
static inline int ends_token(unsigned char b) { return b == ',' || b == '}' || b == ']' || b <= ' '; }

/// The end of the token at `i` (it runs to the first delimiter or whitespace, or `n`) when it is exactly `true`,
/// `false`, `null` or a number of RFC 8259's grammar (`-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?`), as yajl
/// reads them; else `i`. One pass: the grammar is read, then the next byte must end the token.
static inline size_t scalar_end(const unsigned char *p, size_t i, size_t n) {
    size_t k = i;
    switch (p[i]) {
    case 't': k = i + 4 <= n && memcmp(p + i, "true", 4) == 0 ? i + 4 : i; break;
    case 'f': k = i + 5 <= n && memcmp(p + i, "false", 5) == 0 ? i + 5 : i; break;
    case 'n': k = i + 4 <= n && memcmp(p + i, "null", 4) == 0 ? i + 4 : i; break;
    default:
        if (p[k] == '-') k++;
        if (k >= n) return i;
        if (p[k] == '0') {
            k++;
        } else if (p[k] >= '1' && p[k] <= '9') {
            do k++; while (k < n && p[k] >= '0' && p[k] <= '9');
        } else {
            return i;
        }
        if (k < n && p[k] == '.') {
            k++;
            if (k >= n || p[k] < '0' || p[k] > '9') return i;
            do k++; while (k < n && p[k] >= '0' && p[k] <= '9');
        }
        if (k < n && (p[k] == 'e' || p[k] == 'E')) {
            k++;
            if (k < n && (p[k] == '+' || p[k] == '-')) k++;
            if (k >= n || p[k] < '0' || p[k] > '9') return i;
            do k++; while (k < n && p[k] >= '0' && p[k] <= '9');
        }
    }
    return k > i && (k == n || ends_token(p[k])) ? k : i;
}

/// The hash of the key text `k[0..<n]` (its canonical text: in the output, or in the input when it has no escape).
/// A short key is read as one word masked to its length (no copy of a variable length, which is a call): 8 bytes
/// can be read at `k` (the output has 32 bytes of room past what is written; `copy_key` hashes a key in the input
/// only when 8 bytes of the input start there), and the bytes past the key do not reach the hash.
static inline uint64_t key_hash(const unsigned char *k, size_t n) {
    uint64_t a = 0, b = 0;
    if (n >= 8) {
        memcpy(&a, k, 8);
        memcpy(&b, k + n - 8, 8);
    } else {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        memcpy(&a, k, 8);
        a &= n ? ~0ull >> (64 - 8 * n) : 0;  // the first n bytes: the low ones
#else
        memcpy(&a, k, n);
#endif
    }
    // MurmurHash3's finalizer over the key's length and first and last 8 bytes: every input bit reaches the low
    // bits the table uses.
    uint64_t h = a ^ (b * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)n << 56);
    h ^= h >> 33;
    h *= 0xFF51AFD7ED558CCDull;
    h ^= h >> 33;
    h *= 0xC4CEB9FE1A85EC53ull;
    return h ^ (h >> 33);
}

/// 0 when the keys `c->keys[first..<c->key_count]` are all different (as text in `out`), -1 otherwise (or when
/// they collide past the probe limit).
static int check_keys(cjsonscan_copier *c, const unsigned char *out, size_t first) {
    size_t k = c->key_count - first;
    const key_entry *keys = c->keys + first;
    if (k < 2) return 0;
    if (k <= 8) {
        for (size_t i = 1; i < k; i++)
            for (size_t j = 0; j < i; j++)
                if (keys[i].hash == keys[j].hash) return -1;  // equal, or colliding: either way the events decide
        return 0;
    }
    size_t size = 16;
    while (size < 2 * k) size <<= 1;
    if (size > c->table_capacity) {
        uint32_t *t = realloc(c->table, size * sizeof *t);
        if (!t) return -1;
        c->table = t;
        c->table_capacity = size;
    }
    memset(c->table, 0, size * sizeof *c->table);
    size_t mask = size - 1;
    for (size_t i = 0; i < k; i++) {
        size_t slot = (size_t)keys[i].hash & mask;
        for (int probes = 0;; probes++) {
            uint32_t at = c->table[slot];
            if (!at) {
                c->table[slot] = (uint32_t)(i + 1);
                break;
            }
            if (keys[at - 1].hash == keys[i].hash || probes >= 16) return -1;
            slot = (slot + 1) & mask;
        }
    }
    return 0;
}

static inline int push_key(cjsonscan_copier *c, uint64_t hash, size_t offset, size_t length) {
    if (c->key_count == c->key_capacity) {
        size_t capacity = c->key_capacity ? 2 * c->key_capacity : 64;
        key_entry *k = realloc(c->keys, capacity * sizeof *k);
        if (!k) return -1;
        c->keys = k;
        c->key_capacity = capacity;
    }
    c->keys[c->key_count++] = (key_entry){hash, offset, length};
    return 0;
}

static inline int is_space(unsigned char b) { return b == ' ' || b == '\n' || b == '\r' || b == '\t'; }

static inline size_t skip_space(const unsigned char *p, size_t i, size_t n) {
    while (i < n && is_space(p[i])) i++;
    return i;
}

/// Writes the canonical form of code point `cp` at `out`; returns its length.
static inline size_t put_code_point(unsigned char *out, unsigned long cp) {
    static const char hex[] = "0123456789abcdef";
    if (cp < 0x80) {
        switch (cp) {
        case '"': out[0] = '\\'; out[1] = '"'; return 2;
        case '\\': out[0] = '\\'; out[1] = '\\'; return 2;
        case 0x08: out[0] = '\\'; out[1] = 'b'; return 2;
        case 0x0C: out[0] = '\\'; out[1] = 'f'; return 2;
        case 0x0A: out[0] = '\\'; out[1] = 'n'; return 2;
        case 0x0D: out[0] = '\\'; out[1] = 'r'; return 2;
        case 0x09: out[0] = '\\'; out[1] = 't'; return 2;
        default:
            if (cp < 0x20) {
                memcpy(out, "\\u00", 4);
                out[4] = (unsigned char)hex[cp >> 4];
                out[5] = (unsigned char)hex[cp & 15];
                return 6;
            }
            out[0] = (unsigned char)cp;
            return 1;
        }
    }
    return put_utf8(out, cp);
}

/// The first quote, backslash or control byte (below 0x20, which no JSON string holds raw) at or after `i` (`n`
/// when there is none), copying the bytes before it to `out + o` (and possibly up to 31 more: `out` has 32 bytes
/// of room past the input's length).
#define STRING_RUN(name)                                                                                          \
    static inline size_t name(const unsigned char *p, size_t i, size_t n, unsigned char *out, size_t *o)

STRING_RUN(string_run_portable) {
    size_t start = i;
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        memcpy(out + *o + (i - start), &w, 8);
        uint64_t q = w ^ (0x0101010101010101ull * '"'), b = w ^ (0x0101010101010101ull * '\\');
        // (A zero byte of q or b, or a byte of w below 0x20: the lowest flagged byte is always a true one.)
        uint64_t stops = ((q - 0x0101010101010101ull) & ~q) | ((b - 0x0101010101010101ull) & ~b)
                       | ((w - 0x2020202020202020ull) & ~w);
        stops &= 0x8080808080808080ull;
        if (stops) {
            i += (size_t)__builtin_ctzll(stops) >> 3;
            *o += i - start;
            return i;
        }
        i += 8;
    }
    while (i < n && p[i] != '"' && p[i] != '\\' && p[i] >= 0x20) out[*o + (i - start)] = p[i], i++;
    *o += i - start;
    return i;
}

#define V(name) name##_portable
#include "CanonicalCopyBody.h"
#undef V

#if defined(__x86_64__)
#include <immintrin.h>

__attribute__((target("avx2"))) STRING_RUN(string_run_avx2) {
    const __m256i quote = _mm256_set1_epi8('"'), backslash = _mm256_set1_epi8('\\'), control = _mm256_set1_epi8(0x1F);
    size_t start = i;
    while (i + 32 <= n) {
        __m256i v = _mm256_loadu_si256((const __m256i *)(p + i));
        _mm256_storeu_si256((__m256i *)(out + *o + (i - start)), v);
        __m256i low = _mm256_cmpeq_epi8(_mm256_max_epu8(v, control), control);  // bytes up to 0x1F
        uint32_t mask = (uint32_t)_mm256_movemask_epi8(
            _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(v, quote), _mm256_cmpeq_epi8(v, backslash)), low));
        if (mask) {
            i += (size_t)__builtin_ctz(mask);
            *o += i - start;
            return i;
        }
        i += 32;
    }
    *o += i - start;
    return string_run_portable(p, i, n, out, o);
}

#pragma clang attribute push(__attribute__((target("avx2"))), apply_to = function)
#define V(name) name##_avx2
#include "CanonicalCopyBody.h"
#undef V
#pragma clang attribute pop

static inline int avx2(void) { return cjsonscan_avx2_chosen(); }
#else
#define canonical_copy_avx2 canonical_copy_portable
#define copy_string_avx2 copy_string_portable
static inline int avx2(void) { return 0; }
#endif

ptrdiff_t cjsonscan_canonical_copy(cjsonscan_copier *c, const unsigned char *p, size_t n, unsigned char *out, size_t max_depth) {
    return avx2() ? canonical_copy_avx2(c, p, n, out, max_depth) : canonical_copy_portable(c, p, n, out, max_depth);
}

ptrdiff_t cjsonscan_canonical_copy_portable(cjsonscan_copier *c, const unsigned char *p, size_t n, unsigned char *out, size_t max_depth) {
    return canonical_copy_portable(c, p, n, out, max_depth);
}

ptrdiff_t cjsonscan_canonical_string(const unsigned char *p, size_t n, unsigned char *out) {
    size_t o = 0;
    if (n < 2 || p[0] != '"') return -1;
    size_t end = avx2() ? copy_string_avx2(p, 0, n, out, &o) : copy_string_portable(p, 0, n, out, &o);
    return end == n ? (ptrdiff_t)o : -1;
}

ptrdiff_t cjsonscan_canonical_string_portable(const unsigned char *p, size_t n, unsigned char *out) {
    size_t o = 0;
    if (n < 2 || p[0] != '"') return -1;
    size_t end = copy_string_portable(p, 0, n, out, &o);
    return end == n ? (ptrdiff_t)o : -1;
}

size_t cjsonscan_decode_string(const unsigned char *p, size_t n, unsigned char *out) {
    size_t o = 0, i = 0;
    while (i < n) {
        const unsigned char *backslash = memchr(p + i, '\\', n - i);
        size_t run = backslash ? (size_t)(backslash - (p + i)) : n - i;
        memcpy(out + o, p + i, run);
        o += run;
        i += run;
        if (i >= n) break;
        long cp = decode_escape(p, &i, n);
        if (cp < 0) {
            out[o++] = p[i++];  // (outside the contract: the backslash as it is, and on)
            continue;
        }
        o += put_utf8(out + o, (unsigned long)cp);
    }
    return o;
}
