/* glibc-compat.c — linked into the portable binary only (scripts/build-portable.sh), so that it runs on glibc 2.34.
 *
 * glibc 2.35 gave hypotf a new symbol version (hypotf@GLIBC_2.35), and the statically linked Swift runtime and
 * Foundation call it: that one symbol made the binary — and the wheel's manylinux tag — need glibc 2.35, leaving
 * out RHEL 9, Amazon Linux 2023 and EMR 7 (glibc 2.34), where everything else it needs is found. Defined here, the
 * executable's own hypotf satisfies those calls at link time and libm's is not asked for. (hypot got a new version
 * in 2.35 too, so this one does not call it.)
 *
 * The same result as glibc's: the squares of two floats are exact in double precision, so the double sum, its
 * square root and the rounding to float lose nothing a float can show except in the last-bit ties of double
 * rounding. An infinite argument gives +inf even beside a NaN (C11 F.10.4.3).
 */
#include <math.h>

float hypotf(float x, float y) {
    if (isinf(x) || isinf(y)) return INFINITY;
    double dx = x, dy = y;
    return (float)sqrt(dx * dx + dy * dy);
}
