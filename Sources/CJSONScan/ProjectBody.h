// The record projector's body (see SkipValue.c, which includes it once per variant after SkipValueBody.h and
// defines `V(string_masks_at)`, and include/CJSONScan.h for the contract).
//
// One walk over the record with the skipper's grammar (SkipValueBody.h: brackets that balance and match, commas,
// colons, string keys, the number grammar, literals, escapes, no raw control byte in a string, whitespace of
// space, tab, LF and CR, the nesting limit), as a state machine whose states are labels. Strings, the most
// frequent token, are crossed with bit masks per 64-byte block of the record — its quotes, and its backslashes
// and control bytes (`V(string_masks_at)`), computed once per block however many strings the block holds — so a
// short string costs a few shifts and a count of trailing zeros, and no byte of it is read; first, a short string
// of ASCII ends at the first quote of the 64 bytes at hand without them (`ascii_string_end`: 32 bytes at a time
// with AVX2, a word at a time in the portable kernel).
//
// The objects the plan filters (the record and, inside it, the object values of keys with a child node) are
// walked member by member (`project`): each key is looked up in its node; a member whose key is not there has its
// value walked and nothing else; a member whose key is there is copied — from its key's opening quote to the end
// of its value — once its value has been walked, with a comma between kept members and the object's braces around
// them; a member whose key leads to another node, with an object value, is written as its key and the projection
// of that object. A container the plan does not read is walked by `walk_container`, a function of its own so that
// its walk, over most of a record's bytes, has the registers to itself.

#ifndef PROJECT_LEVELS
#define PROJECT_LEVELS 64
#define PROJECT_NONE ((size_t)-1)
#endif

/// `unicode_escape_length` for a surrogate (its first hex digit a `D`, its second 8 or more).
static size_t V(surrogate_escape_length)(const unsigned char *p, size_t i, size_t n) {
    long v = hex4(p + i + 2);
    if (v < 0xD800 || v >= 0xDC00 || i + 12 > n || p[i + 6] != '\\' || p[i + 7] != 'u') return 0;
    long low = hex4(p + i + 8);
    return low >= 0xDC00 && low < 0xE000 ? 12 : 0;
}

/// The length of the `\u` escape whose backslash is at `i` as the strict scanner accepts it: 6, or 12 for a high
/// surrogate and the low one right after it; 0 for bad digits, a lone or mismatched surrogate, or too few bytes.
static inline __attribute__((always_inline)) size_t V(unicode_escape_length)(const unsigned char *p, size_t i, size_t n) {
    if (i + 6 > n) return 0;
    if ((p[i + 2] | 0x20) == 'd' && p[i + 3] >= '8') return V(surrogate_escape_length)(p, i, n);
    return hex_digits[p[i + 2]] & hex_digits[p[i + 3]] & hex_digits[p[i + 4]] & hex_digits[p[i + 5]] ? 6 : 0;
}

/// The escape whose backslash is at `i`: the index just past it, or 0.
static size_t V(skip_escape)(const unsigned char *p, size_t i, size_t n) {
    if (i + 1 >= n) return 0;
    size_t length = escape_length[p[i + 1]];
    if (length == 6) length = V(unicode_escape_length)(p, i, n);
    if (length == 0 || i + length > n) return 0;
    return i + length;
}

/// The string whose body starts at `i`: the index just past its closing quote, or 0 (an invalid escape, a control
/// byte, the end of the bytes — or any escape when `plain` is set). `block`/`masks`: the block whose masks are
/// at hand. A short string of ASCII ends at the first quote of the bytes at hand where the kernel can
/// (`ascii_string_end`); else the usual string, with no backslash or control byte before its closing quote, ends
/// without a byte of it being read.
static inline __attribute__((always_inline)) size_t V(string_end)(const unsigned char *p, size_t n, size_t i,
                                                                  size_t *block, string_masks *masks,
                                                                  V(utf8_state) *utf8, int plain) {
    size_t quick = V(ascii_string_end)(p, n, i);
    if (__builtin_expect(quick != 0, 1)) return quick;
    for (;;) {
        size_t b = i >> 6;
        if (__builtin_expect(b != *block, 0)) {
            *block = b;
            *masks = V(string_masks_at)(p, n, b << 6, utf8);
            if (masks->invalid) return 0;
        }
        unsigned shift = (unsigned)(i & 63);
        uint64_t quotes = masks->quotes >> shift, stops = masks->stops >> shift;
        // The bits up to the first quote (all of them when there is none; no byte is both a quote and a stop).
        uint64_t upto = quotes ^ (quotes - 1);
        if (__builtin_expect(quotes && !(stops & upto), 1)) return i + (size_t)__builtin_ctzll(quotes) + 1;
        if (!(stops & upto)) {
            // Neither a quote nor a stop in the rest of the block (bytes past the end are spaces).
            i = (b + 1) << 6;
            if (i >= n) return 0;
            continue;
        }
        i += (size_t)__builtin_ctzll(stops);
        if (i >= n || p[i] != '\\' || plain) return 0;  // (a control byte, or an escape where none may be)
        if (i + 6 > n) {
            i = V(skip_escape)(p, i, n);  // (near the end: the slow way)
            if (i == 0) return 0;
            continue;
        }
        // An escape: its length (2, or 6 for `\u` and its four hex digits), 0 if invalid.
        size_t length = escape_length[p[i + 1]];
        if (length == 6) {
            length = V(unicode_escape_length)(p, i, n);
        }
        if (length == 0) return 0;
        i += length;
        // A run of `\u` escapes (text in another script, written escaped) is crossed here, six bytes at a time:
        // the masks would stop at each backslash again. A surrogate or anything else goes back to the masks.
        // (Five at a time with one 32-byte load took fewer instructions and more time: 1.01x on 100 MB of tweets.)
        while (i + 6 <= n && p[i] == '\\' && p[i + 1] == 'u' && !((p[i + 2] | 0x20) == 'd' && p[i + 3] >= '8') &&
               (hex_digits[p[i + 2]] & hex_digits[p[i + 3]] & hex_digits[p[i + 4]] & hex_digits[p[i + 5]]))
            i += 6;
    }
}

/// Writes a lifted member at `out + o` — a comma unless it is the object's first (`emitted` before it), its key as
/// it is (`key_start` up to the value at `start`), then `placeholder` — and notes where its value (`start..<end`)
/// is; returns the new end of the output.
static inline __attribute__((always_inline)) size_t V(write_lifted)(unsigned char *out, size_t o, uint32_t emitted,
                                                                    const unsigned char *p, size_t key_start,
                                                                    size_t start, size_t end, cjsonscan_lift *lifts,
                                                                    size_t *lift_count, const char *placeholder,
                                                                    size_t placeholder_length) {
    if (emitted) out[o++] = ',';
    memcpy(out + o, p + key_start, start - key_start);
    o += start - key_start;
    lifts[*lift_count] = (cjsonscan_lift){o, start, end - start};
    ++*lift_count;
    memcpy(out + o, placeholder, placeholder_length);
    return o + placeholder_length;
}

/// Notes a kept member's value, `start..<end` in the record, in its key's slot.
static inline __attribute__((always_inline)) void V(fill_slot)(cjsonscan_slot *slot, size_t start, size_t end) {
    slot->start = start;
    slot->length = end - start;
    slot->count++;
}

/// The container whose bracket is at `i`, inside `depth` others, walked to its end: the index just past its
/// closing bracket, or 0. Most of a record's bytes are in containers the plan does not read; this walk has a
/// function of its own so that it has the registers to itself — none of the projection's state is live in it —
/// and `block`, `masks` and the UTF-8 state go in and out through their pointers once per container.
static __attribute__((noinline)) size_t V(walk_container)(const unsigned char *p, size_t n, size_t i, size_t depth,
                                                          size_t limit, size_t *block_io, string_masks *masks_io,
                                                          V(utf8_state) *utf8) {
    uint64_t objects[STACK_WORDS];  // bit l % 64 of word l / 64: the container open at level l + 1 is an object
    size_t block = *block_io;
    string_masks masks = *masks_io;
    size_t level = 0;  // the containers open in this walk
    int in_object = 0; // whether the innermost of them is an object
    size_t end = 0;

open: {
        // At a bracket.
        if (depth + level >= limit) goto done;
        int object = p[i] == '{';
        i = V(skip_whitespace)(p, i + 1, n);
        if (i >= n) goto done;
        if (p[i] == (object ? '}' : ']')) {
            i++;
            goto after_value;
        }
        uint64_t bit = 1ull << (level & 63);
        objects[level >> 6] = object ? objects[level >> 6] | bit : objects[level >> 6] & ~bit;
        level++;
        in_object = object;
        if (object) goto key;
    }

value:
    if (i >= n) goto done;
    switch (p[i]) {
    case '"':
        i = V(string_end)(p, n, i + 1, &block, &masks, utf8, 0);
        if (i == 0) goto done;
        goto after_value;
    case '{':
    case '[':
        goto open;
    default:
        i = V(scalar_end)(p, i, n);
        break;
    }
    if (i == 0) goto done;

after_value:
    if (level == 0) {
        end = i;
        goto done;
    }
    if (__builtin_expect(i + 1 < n && p[i] == ',' && p[i + 1] > ' ', 1)) {
        i++;  // (compact JSON: the comma, then the next member or element)
        if (in_object) goto key;
        goto value;
    }
    i = V(skip_whitespace)(p, i, n);
    if (i >= n) goto done;
    if (p[i] == ',') {
        i = V(skip_whitespace)(p, i + 1, n);
        if (in_object) goto key;
        goto value;
    }
    if (p[i] != (in_object ? '}' : ']')) goto done;
    i++;
    level--;
    if (level) in_object = (int)(objects[(level - 1) >> 6] >> ((level - 1) & 63)) & 1;
    goto after_value;

key:
    if (i >= n || p[i] != '"') goto done;
    i = V(string_end)(p, n, i + 1, &block, &masks, utf8, 0);
    if (i == 0) goto done;
    if (__builtin_expect(i + 1 < n && p[i] == ':' && p[i + 1] > ' ', 1)) {
        i++;  // (compact JSON: the colon, then the value)
        goto value;
    }
    i = V(skip_whitespace)(p, i, n);
    if (i >= n || p[i] != ':') goto done;
    i = V(skip_whitespace)(p, i + 1, n);
    goto value;

done:
    *block_io = block;
    *masks_io = masks;
    return end;
}

/// The value at `i` (inside `depth` containers): the index just past it, or 0.
static inline __attribute__((always_inline)) size_t V(value_end)(const unsigned char *p, size_t n, size_t i,
                                                                 size_t depth, size_t limit, size_t *block,
                                                                 string_masks *masks, V(utf8_state) *utf8) {
    switch (p[i]) {
    case '"':
        return V(string_end)(p, n, i + 1, block, masks, utf8, 0);
    case '{':
    case '[':
        return V(walk_container)(p, n, i, depth, limit, block, masks, utf8);
    default:
        return V(scalar_end)(p, i, n);
    }
}

static ptrdiff_t V(project)(const cjsonscan_projection *plan, const unsigned char *p, size_t n, size_t max_depth,
                            unsigned char *out, cjsonscan_lift *lifts, size_t lift_capacity, size_t *lift_count,
                            cjsonscan_slot *slots) {
    *lift_count = 0;
    if (!plan || !plan->sealed || plan->failed || plan->node_count == 0) return -1;
    if (slots) memset(slots, 0, plan->key_count * sizeof *slots);
    struct {
        size_t member_start;  // the key's opening quote of the member in progress when it is kept, else NONE
        size_t value_start;   // where that member's value starts
        int32_t node;
        uint32_t emitted;     // members written so far
        uint32_t slot;        // that member's key's slot
    } levels[PROJECT_LEVELS];
    size_t limit = max_depth < STACK_WORDS * 64 ? max_depth : STACK_WORDS * 64;
    size_t depth = 0, o = 0;
    int top = 0;
    uint64_t signature;   // the signature of levels[top].node, in a register
    size_t block = PROJECT_NONE;
    string_masks masks = {0, 0, 0};
    V(utf8_state) utf8;
    memset(&utf8, 0, sizeof utf8);

    size_t i = V(skip_whitespace)(p, 0, n);
    if (i >= n || p[i] != '{' || limit < 1) return -1;
    depth = 1;
    levels[0].node = 0;
    signature = plan->nodes[0].signature;
    levels[0].emitted = 0;
    levels[0].member_start = PROJECT_NONE;
    out[o++] = '{';
    i = V(skip_whitespace)(p, i + 1, n);
    if (i >= n) return -1;
    if (p[i] == '}') goto filtered_close;

filtered_key: {
        // In a filtered object, at a member's key.
        if (i >= n || p[i] != '"') return -1;
        size_t key_start = i;
        size_t key_end = V(string_end)(p, n, i + 1, &block, &masks, &utf8, 1);  // (an escaped key: not projected)
        if (key_end == 0) return -1;
        if (__builtin_expect(key_end + 1 < n && p[key_end] == ':' && p[key_end + 1] > ' ', 1)) {
            i = key_end + 1;  // (compact JSON: the colon, then the value)
        } else {
            i = V(skip_whitespace)(p, key_end, n);
            if (i >= n || p[i] != ':') return -1;
            i = V(skip_whitespace)(p, i + 1, n);
            if (i >= n) return -1;
        }
        const unsigned char *key = p + key_start + 1;
        size_t key_length = key_end - key_start - 2;
        // The key's first 8 bytes (the bytes after a short key are in the record: at least its quote, a colon
        // and a value follow it), then its bit in the node's signature: most keys are turned down there.
        uint64_t prefix;
        if (key + 8 <= p + n) {
            memcpy(&prefix, key, 8);
            if (key_length < 8) prefix &= (1ull << (8 * key_length)) - 1;
        } else {
            prefix = plan_prefix(key, key_length);
        }
        unsigned bit = plan_signature_bit(prefix, key_length);
        int32_t k = (signature >> bit) & 1 ? plan_lookup(plan, levels[top].node, key, key_length, prefix, bit) : -1;
        if (k < 0) {
            // A member the plan does not read: its value, then the next member.
            i = V(value_end)(p, n, i, depth, limit, &block, &masks, &utf8);
            if (i == 0) return -1;
            goto filtered_next;
        }
        if (plan->keys[k].child >= 0 && p[i] == '{') {
            // Descend: the key as it is, then the projection of its object.
            if (depth >= limit || top + 1 >= PROJECT_LEVELS) return -1;
            if (slots) slots[plan->keys[k].id].count++;
            if (levels[top].emitted++) out[o++] = ',';
            memcpy(out + o, p + key_start, i - key_start);
            o += i - key_start;
            out[o++] = '{';
            levels[top].member_start = PROJECT_NONE;
            depth++;
            top++;
            levels[top].node = plan->keys[k].child;
            signature = plan->nodes[levels[top].node].signature;
            levels[top].emitted = 0;
            levels[top].member_start = PROJECT_NONE;
            i = V(skip_whitespace)(p, i + 1, n);
            if (i >= n) return -1;
            if (p[i] == '}') goto filtered_close;
            goto filtered_key;
        }
        if (plan->keys[k].lifted && p[i] == '"' && i + 1 < n && p[i + 1] != '"' && *lift_count < lift_capacity) {
            // Lifted: the key as it is and an empty string in the projection; where the string is, on the side.
            size_t end = V(string_end)(p, n, i + 1, &block, &masks, &utf8, 0);
            if (end == 0) return -1;
            if (slots) V(fill_slot)(&slots[plan->keys[k].id], i, end);
            o = V(write_lifted)(out, o, levels[top].emitted++, p, key_start, i, end, lifts, lift_count, "\"\"", 2);
            levels[top].member_start = PROJECT_NONE;
            i = end;
            goto filtered_after;
        }
        if (plan->keys[k].lifted && (p[i] == '-' || (p[i] >= '0' && p[i] <= '9')) && *lift_count < lift_capacity) {
            // A number, lifted the same way: `0` in the projection.
            size_t end = V(skip_number)(p, i, n);
            if (end == 0) return -1;
            if (slots) V(fill_slot)(&slots[plan->keys[k].id], i, end);
            o = V(write_lifted)(out, o, levels[top].emitted++, p, key_start, i, end, lifts, lift_count, "0", 1);
            levels[top].member_start = PROJECT_NONE;
            i = end;
            goto filtered_after;
        }
        levels[top].member_start = key_start;
        levels[top].value_start = i;
        levels[top].slot = plan->keys[k].id;
        goto value;
    }

filtered_after: {
        // A filtered object's member has its value (which ends just before `i`).
        size_t start = levels[top].member_start;
        if (start != PROJECT_NONE) {
            if (slots) V(fill_slot)(&slots[levels[top].slot], levels[top].value_start, i);
            if (levels[top].emitted++) out[o++] = ',';
            memcpy(out + o, p + start, i - start);
            o += i - start;
        }
    filtered_next:
        if (__builtin_expect(i + 1 < n && p[i] == ',' && p[i + 1] > ' ', 1)) {
            i++;  // (compact JSON)
            goto filtered_key;
        }
        i = V(skip_whitespace)(p, i, n);
        if (i >= n) return -1;
        if (p[i] == ',') {
            i = V(skip_whitespace)(p, i + 1, n);
            goto filtered_key;
        }
        if (p[i] != '}') return -1;
    }
filtered_close:
    out[o++] = '}';
    depth--;
    i++;
    if (top == 0) {
        while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t')) i++;
        return i == n && !V(utf8_open)(&utf8) ? (ptrdiff_t)o : -1;
    }
    top--;
    signature = plan->nodes[levels[top].node].signature;
    levels[top].member_start = PROJECT_NONE;  // (written as it went)
    goto filtered_after;

value:
    // A kept member's value.
    i = V(value_end)(p, n, i, depth, limit, &block, &masks, &utf8);
    if (i == 0) return -1;
    goto filtered_after;
}
