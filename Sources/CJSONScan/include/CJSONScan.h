#ifndef CJSONSCAN_H
#define CJSONSCAN_H

#include <stddef.h>
#include <stdint.h>

/// The SIMD kernel of StreamMap's strict scanner (Sources/StreamMap/JSON/StrictJSON.swift): how many leading
/// bytes of `p[0..<n]` are plainly fine, so that the scanner can skip them.
///
/// The prefix it returns is made of whole, valid UTF-8 characters (by Unicode's rules: no overlong form, no encoded
/// surrogate, nothing above U+10FFFF), holds no vertical tab (0x0B) or form feed (0x0C), and every backslash in it
/// starts a whole escape that the scanner accepts: a backslash and one ASCII byte other than `u`, `\u` and four
/// hex digits that are not a surrogate, or a high surrogate escape followed at once by a low one. It ends where
/// the scanner has nothing open (no character, escape or surrogate pair). It stops at the first byte that breaks
/// one of these rules (or at the start of the character or escape it is in), and it may stop short of the end by
/// up to 34 bytes (a last block of under 32, and a character that block's end cuts): the scanner goes on from
/// there by itself.
///
/// Returns 0 when the kernels run their portable code (`cjsonscan_uses_avx2`).
size_t cjsonscan_plain_prefix(const unsigned char *p, size_t n);

/// 1 when `cjsonscan_plain_prefix` runs SIMD code on this CPU, 0 when it always returns 0.
int cjsonscan_accelerated(void);

/// 1 when the kernels run their AVX2 code in this process, 0 when they run their portable code: the CPU has no
/// AVX2 (or is not x86-64), or the environment variable STREAMMAP_NO_AVX2 is set to anything but "" or "0" when
/// the first kernel runs (CI runs the engine tests so). Decided once per process.
int cjsonscan_uses_avx2(void);

/// The rule `cjsonscan_uses_avx2` decides by: the CPU's answer and STREAMMAP_NO_AVX2's value (NULL: not set).
int cjsonscan_avx2_wanted(int cpu_has_avx2, const char *no_avx2);

/// The validating skipper (SkipValue.c), for a value that no field reads. `p[0..<n]` starts with a JSON value
/// (after optional whitespace); returns the index just past its end when yajl 2.1 (with StreamMap's flags: no
/// comments, strings not UTF-8-checked) would accept it whole and it nests at most `max_depth` levels (the value
/// itself is level 1; never more than 4096). Returns 0 otherwise: any syntax error, or a value that the end of
/// the bytes cuts (a number or literal must have a byte after it) — the caller then leaves the value to yajl,
/// which reports an error exactly as without the skipper.
///
/// It checks what yajl checks in a value: brackets that balance and match, commas and colons, keys that are
/// strings, the number grammar (no leading zero, digits after `.` and after an exponent), the literals `true`,
/// `false` and `null`, escapes (`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`, `\u` and four hex digits),
/// no raw control byte (below 0x20) in a string, whitespace of space, tab, LF and CR only (yajl also takes
/// `\v` and `\f`: not here). It does not check UTF-8 or which code points `\u` escapes name: the strict scanner
/// (`cjsonscan_plain_prefix` and StrictJSON.swift) has checked every byte before yajl or this function sees it.
size_t cjsonscan_skip_value(const unsigned char *p, size_t n, size_t max_depth);

/// The index of the first `"`, `\\` or control byte (below 0x20) at or after `i` in `p[0..<n]`, or `n`: where a
/// string's plain run ends. 32 bytes at a time where the CPU has AVX2.
size_t cjsonscan_string_stop(const unsigned char *p, size_t i, size_t n);

/// `cjsonscan_string_stop` without SIMD (for the tests, which hold the two to each other).
size_t cjsonscan_string_stop_portable(const unsigned char *p, size_t i, size_t n);

/// `cjsonscan_skip_value` without SIMD (what it runs where the CPU has no AVX2), for the tests and the fuzz
/// target, which hold the two to each other.
size_t cjsonscan_skip_value_portable(const unsigned char *p, size_t n, size_t max_depth);

/// After an object's key (`p` points just past its closing quote): optional whitespace, the colon, and the
/// member's value as `cjsonscan_skip_value` skips it. Returns the index just past the value, or 0.
size_t cjsonscan_skip_member_value(const unsigned char *p, size_t n, size_t max_depth);

/// After a member's value: optional whitespace, a comma, optional whitespace and a key without escapes or
/// control bytes. Returns the index of the key's first byte (its length in `*key_length`), or 0 when the bytes
/// are anything else.
size_t cjsonscan_next_key(const unsigned char *p, size_t n, size_t *key_length);

/// State for `cjsonscan_canonical_copy` (the keys of the open objects, a table for checking them): one per
/// thread, reused for every value. Free it with `cjsonscan_copier_free`. NULL when memory runs out.
typedef struct cjsonscan_copier cjsonscan_copier;
cjsonscan_copier *cjsonscan_copier_new(void);
void cjsonscan_copier_free(cjsonscan_copier *copier);
/// Verbatim copies (CanonicalCopy.c). `p[0..<n]` holds one JSON value, with optional whitespace around it, whose
/// UTF-8 has been checked (`cjsonscan_valid_utf8`, or the strict scanner). The copy checks the rest of what yajl
/// and the strict scanner check itself — the grammar (structure, every number and literal exact), every escape
/// (a `\u` surrogate must be paired), no raw control byte in a string, whitespace of space, tab, LF and CR only,
/// nothing but whitespace after the value, at most `max_depth` nested containers (and at most 4096) — and writes the value's
/// canonical text to `out` — what StreamMap's JSONWriter writes for it: no whitespace, numbers and literals as
/// they are, strings with each escape decoded and only `"`, `\\` and control characters escaped (`\b` `\f` `\n`
/// `\r` `\t`, else `\u00xx`, lowercase) — and returns its length, at most `n`. `out` needs room for `n + 32`
/// bytes (runs of a string are stored 32 bytes at a time).
///
/// Returns -1 for anything yajl would not accept as that one value, when an object holds two keys equal after
/// decoding (the tree keeps the last value at the first key's place: not a copy), or when keys collide in its
/// hash past a few probes; the caller then maps the value through yajl's events, which decide.
ptrdiff_t cjsonscan_canonical_copy(cjsonscan_copier *copier, const unsigned char *p, size_t n, unsigned char *out, size_t max_depth);
/// After a copy of an object: the number of its own keys (0 for anything else, or after a copy that answered -1);
/// for `index` below it, where key `index` (in input order) is in the copy's output, after its opening quote
/// (`*offset`), and the length of its canonical text (`*length`).
size_t cjsonscan_copier_top_keys(const cjsonscan_copier *copier, size_t index, size_t *offset, size_t *length);
/// `cjsonscan_canonical_copy` without SIMD, for the tests and the fuzz target.
ptrdiff_t cjsonscan_canonical_copy_portable(cjsonscan_copier *copier, const unsigned char *p, size_t n, unsigned char *out, size_t max_depth);

/// The inside of a JSON string for the raw text `p[0..<n]` (no quotes), as `JSONWriter` writes it: `"`, the
/// backslash and the control bytes escaped (two-byte escapes for `"`, backslash, b, f, n, r and t; `u00XX` in
/// lowercase hex for the other control bytes), every other byte as it is. Writes at `out` (`room` bytes) 32 input
/// bytes at a time while at least 224 bytes of room are left (a chunk's worst case and the copies' overrun), so it
/// may stop early: returns the bytes written and sets `*consumed` to the input bytes they stand for (some, unless
/// `room` < 224 or `n` is 0). AVX2 where chosen.
size_t cjsonscan_escape_text(const unsigned char *p, size_t n, unsigned char *out, size_t room, size_t *consumed);
/// `cjsonscan_escape_text` without SIMD, for the tests.
size_t cjsonscan_escape_text_portable(const unsigned char *p, size_t n, unsigned char *out, size_t room, size_t *consumed);

/// 1 when the `n` bytes at `p` are valid UTF-8 by Unicode's rules (no overlong form, no encoded surrogate, nothing
/// above U+10FFFF, no character cut by the end), else 0 — what the strict scanner asks of non-ASCII bytes, alone:
/// a verbatim copy needs nothing more of it, since `cjsonscan_canonical_copy` checks every escape (surrogate pairs
/// too), every control byte and every whitespace byte itself. 64 bytes at a time (AVX2: a block of ASCII is two
/// loads and a test; others the lookup algorithm of `UTF8Lookup.h`), byte by byte past a non-ASCII byte elsewhere.
int cjsonscan_valid_utf8(const unsigned char *p, size_t n);
/// `cjsonscan_valid_utf8` without SIMD, for the tests and the fuzz target.
int cjsonscan_valid_utf8_portable(const unsigned char *p, size_t n);
/// A projection plan (Project.c): which members of a record's objects a mapping reads. Node 0 (the first one
/// added) is the record itself; each node is an object of which only the members of its keys are kept: a key's member is kept whole
/// (`child` -1), or, when its value is an object, projected by node `child` (any other value is kept whole). Build
/// it with `cjsonscan_projection_add_node` and `_add_key`, then `_seal` it once; free it with `_free`. NULL when
/// memory runs out.
typedef struct cjsonscan_projection cjsonscan_projection;
cjsonscan_projection *cjsonscan_projection_new(void);
void cjsonscan_projection_free(cjsonscan_projection *plan);
/// A new node's index, or -1 (out of memory, or the plan is sealed).
int32_t cjsonscan_projection_add_node(cjsonscan_projection *plan);
/// Adds a key to `node` (of `length` bytes, as decoded: keys written with escapes in a record are not matched,
/// and such a record is not projected). With `lifted` (and `child` -1), a non-empty string or a number that is the
/// member's value is lifted out of the projection (see `cjsonscan_project`). A key added twice to a node keeps its first child.
/// Returns 0 when it cannot (out of memory, a bad node or child, or the plan is sealed): the plan then projects
/// nothing.
int cjsonscan_projection_add_key(cjsonscan_projection *plan, int32_t node, const unsigned char *key, size_t length,
                                 int32_t child, int lifted);
/// Builds the lookup tables. Returns 0 when the plan is unusable (then `cjsonscan_project` always answers -1).
int cjsonscan_projection_seal(cjsonscan_projection *plan);

/// A string or number lifted out of a projection: the offset in the projection of the `""` or `0` that stands in
/// its place, and where the value (a string's quotes included) is in the record.
typedef struct {
    size_t placeholder;
    size_t start;
    size_t length;
} cjsonscan_lift;

/// Where a plan key's member value is in a projected record (see `cjsonscan_project`).
typedef struct {
    size_t start;
    size_t length;
    size_t count;
} cjsonscan_slot;

/// The number of keys added to `plan` (the entries `cjsonscan_project` writes to its `slots`).
size_t cjsonscan_projection_key_count(const cjsonscan_projection *plan);

/// The record projector. `p[0..<n]` is one record whose bytes the strict scanner has accepted. When yajl 2.1
/// (with StreamMap's flags) would accept it whole — one object, optional whitespace around it, nesting at most
/// `max_depth` levels (never more than 4096) — writes to `out` the record with only the members `plan` keeps, in
/// their order (duplicates too), each as its bytes in the record, and returns the projection's length (at most
/// `n`; `out` needs room for `n + 64` bytes). The projection is valid JSON and yields exactly the events of the
/// record's kept members — but for the non-empty strings and the numbers that are values of lifted keys, up to
/// `lift_capacity` of them, which are written as `""` and `0` and listed in `lifts` (`*lift_count` of them, in the
/// projection's order). Returns -1
/// otherwise: any syntax error (what `cjsonscan_skip_value` checks), a root that is not an object, a key written
/// with an escape in an object the plan filters, nesting deeper than the limits, or filtered objects nested more
/// than 64 deep — the caller then parses the record as before.
///
/// With `slots` (room for `cjsonscan_projection_key_count` entries; NULL: none are written), each key of the plan
/// says where its member's value is in the record, by the key's index in the order keys were added: `count`, how
/// many times the key's member was met (0: never; a key that leads to a node counts the objects it descended into
/// too), and for the last member met whose value was not an object projected by the key's node, the value's
/// `start` and `length` in the record (`length` 0: there was none). Only an accepted record's slots mean anything.
ptrdiff_t cjsonscan_project(const cjsonscan_projection *plan, const unsigned char *p, size_t n, size_t max_depth,
                            unsigned char *out, cjsonscan_lift *lifts, size_t lift_capacity, size_t *lift_count,
                            cjsonscan_slot *slots);
/// `cjsonscan_project` without SIMD, for the tests and the fuzz target.
ptrdiff_t cjsonscan_project_portable(const cjsonscan_projection *plan, const unsigned char *p, size_t n,
                                     size_t max_depth, unsigned char *out, cjsonscan_lift *lifts,
                                     size_t lift_capacity, size_t *lift_count, cjsonscan_slot *slots);
/// The canonical text of one string value, `p[0..<n]` from its opening to its closing quote, that the strict
/// scanner and the skipper have accepted: what `cjsonscan_canonical_copy` writes for it (and JSONWriter for its
/// decoded text). `out` needs room for `n + 32` bytes. Returns its length, or -1 when the bytes are not one string.
ptrdiff_t cjsonscan_canonical_string(const unsigned char *p, size_t n, unsigned char *out);
/// `cjsonscan_canonical_string` without SIMD, for the tests.
ptrdiff_t cjsonscan_canonical_string_portable(const unsigned char *p, size_t n, unsigned char *out);
/// The decoded UTF-8 of the body of a string (between its quotes) that the strict scanner and the skipper have
/// accepted, written to `out` (room for `n` bytes), as yajl decodes it; returns its length.
size_t cjsonscan_decode_string(const unsigned char *p, size_t n, unsigned char *out);
#endif
