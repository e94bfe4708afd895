#ifndef C_LZMA_SHIM_H
#define C_LZMA_SHIM_H

#include <lzma.h>

#endif
