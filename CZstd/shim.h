#ifndef C_ZSTD_SHIM_H
#define C_ZSTD_SHIM_H

#include <zstd.h>

#endif
