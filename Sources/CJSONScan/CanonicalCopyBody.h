// The verbatim copy's body (see CanonicalCopy.c), compiled once per variant: CanonicalCopy.c defines `V(name)`
// (the variant's name for `name`) and `V(string_run)` before it includes this file.

/// Copies the rest of a string, from `i` in its body on (its opening quote written), to `out + *o` in canonical
/// form; returns the index just past its closing quote, or 0.
static inline __attribute__((always_inline)) size_t V(copy_string_body)(const unsigned char *p, size_t i, size_t n, unsigned char *out, size_t *o) {
    for (;;) {
        i = V(string_run)(p, i, n, out, o);
        if (i >= n) return 0;
        if (p[i] == '"') {
            out[(*o)++] = '"';
            return i + 1;
        }
        if (p[i] < 0x20) return 0;  // a raw control byte: not JSON
        // A backslash: this escape, and those right after it (text in a script written all as `\u` escapes is
        // a run of them), without going back to the run copy in between.
    escape: {
        long cp = decode_escape(p, &i, n);
        if (cp < 0) return 0;
        *o += put_code_point(out + *o, (unsigned long)cp);
    }
        if (i < n && p[i] == '\\') goto escape;
    }
}

/// Copies the string whose opening quote is at `i` to `out + *o` in canonical form; returns the index just past
/// its closing quote, or 0.
static size_t V(copy_string)(const unsigned char *p, size_t i, size_t n, unsigned char *out, size_t *o) {
    out[(*o)++] = '"';
    return V(copy_string_body)(p, i + 1, n, out, o);
}

/// The end of the number or literal that starts at `i` (the first delimiter or whitespace after it, or `n`),
/// copied to `out + *o`; `i` itself when that token is not exactly `true`, `false`, `null` or a JSON number.
static inline size_t V(copy_scalar)(const unsigned char *p, size_t i, size_t n, unsigned char *out, size_t *o) {
    size_t start = i;
    i = scalar_end(p, i, n);
    if (i == start) return start;
    memcpy(out + *o, p + start, i - start);
    *o += i - start;
    return i;
}

/// Copies the key whose opening quote is at `i`, notes it for the duplicate check, and copies the colon after
/// it; returns the index of the member's value (whitespace skipped), or 0.
static inline __attribute__((always_inline)) size_t V(copy_key)(cjsonscan_copier *c, const unsigned char *p, size_t i, size_t n, unsigned char *out, size_t *o) {
    if (i >= n || p[i] != '"') return 0;
    out[(*o)++] = '"';
    size_t start = *o, key = i + 1;
    i = V(string_run)(p, key, n, out, o);
    const unsigned char *text;
    size_t length;
    if (i < n && p[i] == '"' && key + 8 <= n) {
        // No escape: the key's text in the output is its text in the input, and the hash reads the input, not
        // the bytes just stored (a load from them waits on the stores).
        out[(*o)++] = '"';
        text = p + key;
        length = i - key;
        i++;
    } else {
        i = V(copy_string_body)(p, i, n, out, o);
        if (!i) return 0;
        text = out + start;
        length = *o - 1 - start;
    }
    if (push_key(c, key_hash(text, length), start, length)) return 0;
    i = skip_space(p, i, n);
    if (i >= n || p[i] != ':') return 0;
    out[(*o)++] = ':';
    return skip_space(p, i + 1, n);
}

static ptrdiff_t V(canonical_copy)(cjsonscan_copier *c, const unsigned char *p, size_t n, unsigned char *out, size_t max_depth) {
    if (!c) return -1;
    if (max_depth > MAX_NESTING) max_depth = MAX_NESTING;
    size_t i = skip_space(p, 0, n), o = 0, depth = 0;
    c->key_count = 0;
    c->top_keys = 0;
    for (;;) {
        // A value starts at `i`.
        if (i >= n) return -1;
        unsigned char b = p[i];
        if (b == '{' || b == '[') {
            if (depth >= max_depth) return -1;
            out[o++] = b;
            i = skip_space(p, i + 1, n);
            if (i >= n) return -1;
            if (p[i] == (b == '{' ? '}' : ']')) {
                out[o++] = p[i++];
            } else {
                depth++;
                c->kinds[depth] = b == '{';
                if (b == '{') {
                    c->first_key[depth] = c->key_count;
                    i = V(copy_key)(c, p, i, n, out, &o);
                    if (!i) return -1;
                }
                continue;
            }
        } else if (b == '"') {
            out[o++] = '"';
            i = V(copy_string_body)(p, i + 1, n, out, &o);
            if (!i) return -1;
        } else {
            size_t end = V(copy_scalar)(p, i, n, out, &o);
            if (end == i) return -1;
            i = end;
        }
        // After a value: a comma and the next member or element, or the ends of containers.
        for (;;) {
            i = skip_space(p, i, n);
            if (depth == 0) return i == n ? (ptrdiff_t)o : -1;
            if (i >= n) return -1;
            unsigned char d = p[i];
            if (d == ',') {
                out[o++] = ',';
                i = skip_space(p, i + 1, n);
                if (c->kinds[depth]) {
                    i = V(copy_key)(c, p, i, n, out, &o);
                    if (!i) return -1;
                }
                break;
            }
            if (d != (c->kinds[depth] ? '}' : ']')) return -1;
            if (c->kinds[depth]) {
                if (check_keys(c, out, c->first_key[depth])) return -1;
                if (depth == 1) c->top_keys = c->key_count;  // (the root's keys: first in `keys`, kept there)
                c->key_count = c->first_key[depth];
            }
            out[o++] = d;
            i++;
            depth--;
        }
    }
}
