// JSON string escapes, decoded: shared by the verbatim copy (CanonicalCopy.c) and the projector (SkipValue.c,
// ProjectBody.h), which each also check them their own way.
#ifndef CJSONSCAN_STRING_ESCAPES_H
#define CJSONSCAN_STRING_ESCAPES_H

#include <stddef.h>

/// Per byte: its value as a hex digit plus one, or 0.
static const unsigned char hex_digit_values[256] = {
    ['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5, ['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
    ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};

/// The code unit of `\uXXXX` whose `XXXX` starts at `p`, or -1 (four table lookups, no branch per digit).
static inline long hex4(const unsigned char *p) {
    int a = hex_digit_values[p[0]] - 1, b = hex_digit_values[p[1]] - 1, c = hex_digit_values[p[2]] - 1,
        d = hex_digit_values[p[3]] - 1;
    if ((a | b | c | d) < 0) return -1;
    return (long)((a << 12) | (b << 8) | (c << 4) | d);
}

/// The code point of the escape whose backslash is at `*at` (a surrogate pair's two `\u` escapes as one), with
/// `*at` moved just past it; -1, `*at` unchanged, for an escape the strict scanner rejects (a lone surrogate
/// among them) or one that the end at `n` cuts.
static inline __attribute__((always_inline)) long decode_escape(const unsigned char *p, size_t *at, size_t n) {
    size_t i = *at;
    if (i + 1 >= n) return -1;
    long cp;
    switch (p[i + 1]) {
    case '"': cp = '"'; i += 2; break;
    case '\\': cp = '\\'; i += 2; break;
    case '/': cp = '/'; i += 2; break;
    case 'b': cp = 0x08; i += 2; break;
    case 'f': cp = 0x0C; i += 2; break;
    case 'n': cp = 0x0A; i += 2; break;
    case 'r': cp = 0x0D; i += 2; break;
    case 't': cp = 0x09; i += 2; break;
    case 'u': {
        if (i + 6 > n) return -1;
        long u = hex4(p + i + 2);
        if (u < 0) return -1;
        i += 6;
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (i + 6 > n || p[i] != '\\' || p[i + 1] != 'u') return -1;
            long low = hex4(p + i + 2);
            if (low < 0xDC00 || low > 0xDFFF) return -1;
            i += 6;
            cp = 0x10000 + ((u - 0xD800) << 10) + (low - 0xDC00);
        } else if (u >= 0xDC00 && u <= 0xDFFF) {
            return -1;
        } else {
            cp = u;
        }
        break;
    }
    default:
        return -1;
    }
    *at = i;
    return cp;
}

/// Writes code point `cp` as UTF-8 at `out`; returns its length.
static inline size_t put_utf8(unsigned char *out, unsigned long cp) {
    if (cp < 0x80) {
        out[0] = (unsigned char)cp;
        return 1;
    }
    if (cp < 0x800) {
        out[0] = (unsigned char)(0xC0 | (cp >> 6));
        out[1] = (unsigned char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        out[0] = (unsigned char)(0xE0 | (cp >> 12));
        out[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        out[2] = (unsigned char)(0x80 | (cp & 0x3F));
        return 3;
    }
    out[0] = (unsigned char)(0xF0 | (cp >> 18));
    out[1] = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
    out[2] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
    out[3] = (unsigned char)(0x80 | (cp & 0x3F));
    return 4;
}

#endif
