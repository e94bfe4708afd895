#ifndef C_BZIP2_SHIM_H
#define C_BZIP2_SHIM_H

#include <bzlib.h>

#endif
