#ifndef CJSONSCAN_H
#define CJSONSCAN_H

#include <stddef.h>

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
/// Returns 0 when the CPU has no AVX2 (or is not x86-64).
size_t cjsonscan_plain_prefix(const unsigned char *p, size_t n);

/// 1 when `cjsonscan_plain_prefix` runs SIMD code on this CPU, 0 when it always returns 0.
int cjsonscan_accelerated(void);

#endif
