#ifndef C_ZLIB_SHIM_H
#define C_ZLIB_SHIM_H

#include <zlib.h>

/* inflateInit2 and deflateInit2 are C macros (they pass the library's version and the stream's size), which Swift
   cannot call. These wrappers do exactly what the macros do. */
static inline int czlib_inflate_init(z_stream *stream, int window_bits) {
    return inflateInit2(stream, window_bits);
}

static inline int czlib_deflate_init(z_stream *stream, int level, int window_bits) {
    return deflateInit2(stream, level, Z_DEFLATED, window_bits, 8, Z_DEFAULT_STRATEGY);
}

#endif
