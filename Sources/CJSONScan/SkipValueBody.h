// The validating skipper's body (see SkipValue.c), compiled once per variant: SkipValue.c defines `V(name)`
// (the variant's name for `name`) and `V(string_stop)` (the first quote, backslash or control byte at or after
// `i`, or `n`) before it includes this file.

/// Index just past the closing quote of the string whose body starts at `i`, or 0.
static size_t V(skip_string)(const unsigned char *p, size_t i, size_t n) {
    for (;;) {
        i = V(string_stop)(p, i, n);
        if (i >= n) return 0;
        if (p[i] == '"') return i + 1;
        if (p[i] != '\\') return 0;  // a control byte
        if (i + 1 >= n) return 0;
        switch (p[i + 1]) {
        case '"': case '\\': case '/': case 'b': case 'f': case 'n': case 'r': case 't':
            i += 2;
            break;
        case 'u':
            if (i + 6 > n) return 0;
            for (size_t k = i + 2; k < i + 6; k++) {
                unsigned char c = p[k];
                if (!((c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'f'))) return 0;
            }
            i += 6;
            break;
        default:
            return 0;
        }
    }
}

/// Index just past the digits at `i` (none: `i`), 8 at a time while 8 bytes are there.
static inline size_t V(skip_digits)(const unsigned char *p, size_t i, size_t n) {
    while (i + 8 <= n) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        // Per byte, exactly (no carry between bytes): its high bit set where the byte is not '0'...'9'.
        uint64_t low7 = w & LOWS;
        uint64_t at_least_0 = low7 + ONES * (0x80 - '0'), above_9 = low7 + ONES * (0x80 - '9' - 1);
        uint64_t other = (~at_least_0 | above_9 | w) & HIGHS;
        if (other) return i + ((size_t)__builtin_ctzll(other) >> 3);
        i += 8;
    }
    while (i < n && p[i] >= '0' && p[i] <= '9') i++;
    return i;
}

/// Index just past the number that starts at `i`, or 0. The byte after it must be there (a number's end is
/// known only from what follows it).
static inline size_t V(skip_number)(const unsigned char *p, size_t i, size_t n) {
    if (p[i] == '-') i++;
    if (i >= n) return 0;
    if (p[i] == '0') {
        i++;
    } else if (p[i] >= '1' && p[i] <= '9') {
        i = V(skip_digits)(p, i + 1, n);
    } else {
        return 0;
    }
    if (i < n && p[i] == '.') {
        i++;
        if (i >= n || p[i] < '0' || p[i] > '9') return 0;
        i = V(skip_digits)(p, i + 1, n);
    }
    if (i < n && (p[i] == 'e' || p[i] == 'E')) {
        i++;
        if (i < n && (p[i] == '+' || p[i] == '-')) i++;
        if (i >= n || p[i] < '0' || p[i] > '9') return 0;
        i = V(skip_digits)(p, i + 1, n);
    }
    return i < n ? i : 0;
}

static inline size_t V(skip_whitespace)(const unsigned char *p, size_t i, size_t n) {
    if (__builtin_expect(i < n && p[i] > ' ', 1)) return i;
    while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')) i++;
    return i;
}

/// Index just past the literal `word` (of `length` bytes) at `i`, or 0.
static inline size_t V(skip_literal)(const unsigned char *p, size_t i, size_t n, const char *word, size_t length) {
    return i + length < n && memcmp(p + i, word, length) == 0 ? i + length : 0;
}

/// The number at `i`: the index just past it, or 0. The usual numbers are read here a word at a time: an integer
/// (a minus sign or not) of digits up to a byte that is not a digit, or a lone `0`, unless that byte goes on with a
/// fraction or an exponent (then, and for anything else, `skip_number`).
static inline __attribute__((always_inline)) size_t V(number_end)(const unsigned char *p, size_t i, size_t n) {
    size_t j = i + (p[i] == '-');
    if (j + 8 <= n && (unsigned)(p[j] - '1') < 9u) {
        do {
            uint64_t w;
            memcpy(&w, p + j, 8);
            uint64_t low7 = w & LOWS;
            uint64_t other = (~(low7 + ONES * (0x80 - '0')) | (low7 + ONES * (0x80 - '9' - 1)) | w) & HIGHS;
            if (other) {
                j += (size_t)__builtin_ctzll(other) >> 3;
                unsigned char c = p[j];
                if (c != '.' && (c | 0x20) != 'e') return j;
                break;
            }
            j += 8;
        } while (j + 8 <= n);
    } else if (j + 1 < n && p[j] == '0') {
        unsigned char c = p[j + 1];
        if (c != '.' && (c | 0x20) != 'e') return j + 1;
    }
    return V(skip_number)(p, i, n);
}

/// The literal or number at `i` (anything else: 0): the index just past it, or 0.
static inline __attribute__((always_inline)) size_t V(scalar_end)(const unsigned char *p, size_t i, size_t n) {
    switch (p[i]) {
    case 't':
        return V(skip_literal)(p, i, n, "true", 4);
    case 'f':
        return V(skip_literal)(p, i, n, "false", 5);
    case 'n':
        return V(skip_literal)(p, i, n, "null", 4);
    default:
        return V(number_end)(p, i, n);
    }
}

static size_t V(skip_value)(const unsigned char *p, size_t n, size_t max_depth) {
    uint64_t objects[STACK_WORDS];  // bit d % 64 of word d / 64: the container at depth d + 1 is an object
    size_t depth = 0;
    size_t limit = max_depth < STACK_WORDS * 64 ? max_depth : STACK_WORDS * 64;
    size_t i = V(skip_whitespace)(p, 0, n);

value:
    if (i >= n) return 0;
    switch (p[i]) {
    case '"':
        i = V(skip_string)(p, i + 1, n);
        if (i == 0) return 0;
        goto after_value;
    case '{':
    case '[': {
        if (depth >= limit) return 0;
        int object = p[i] == '{';
        uint64_t bit = 1ull << (depth & 63);
        objects[depth >> 6] = object ? objects[depth >> 6] | bit : objects[depth >> 6] & ~bit;
        depth++;
        i = V(skip_whitespace)(p, i + 1, n);
        if (i >= n) return 0;
        if (p[i] == (object ? '}' : ']')) {
            i++;
            depth--;
            goto after_value;
        }
        if (object) goto key;
        goto value;
    }
    default:
        i = V(scalar_end)(p, i, n);
        break;
    }
    if (i == 0) return 0;

after_value:
    if (depth == 0) return i;
    i = V(skip_whitespace)(p, i, n);
    if (i >= n) return 0;
    {
        int object = (objects[(depth - 1) >> 6] >> ((depth - 1) & 63)) & 1;
        if (p[i] == ',') {
            i = V(skip_whitespace)(p, i + 1, n);
            if (object) goto key;
            goto value;
        }
        if (p[i] != (object ? '}' : ']')) return 0;
        i++;
        depth--;
        goto after_value;
    }

key:
    if (i >= n || p[i] != '"') return 0;
    i = V(skip_string)(p, i + 1, n);
    if (i == 0) return 0;
    i = V(skip_whitespace)(p, i, n);
    if (i >= n || p[i] != ':') return 0;
    i = V(skip_whitespace)(p, i + 1, n);
    goto value;
}

static size_t V(skip_member_value)(const unsigned char *p, size_t n, size_t max_depth) {
    size_t i = V(skip_whitespace)(p, 0, n);
    if (i >= n || p[i] != ':') return 0;
    i++;
    size_t length = V(skip_value)(p + i, n - i, max_depth);
    return length == 0 ? 0 : i + length;
}

static size_t V(next_key)(const unsigned char *p, size_t n, size_t *key_length) {
    size_t i = V(skip_whitespace)(p, 0, n);
    if (i >= n || p[i] != ',') return 0;
    i = V(skip_whitespace)(p, i + 1, n);
    if (i >= n || p[i] != '"') return 0;
    size_t start = ++i;
    i = V(string_stop)(p, i, n);
    if (i >= n || p[i] != '"') return 0;
    *key_length = i - start;
    return start;
}
