#ifndef C_ISAL_SHIM_H
#define C_ISAL_SHIM_H

// ISA-L's inflate (Debian: libisal-dev), for its declarations only: nothing links it. StreamMap loads
// libisal.so.2 at run time when the machine has it (IsalInflate.swift) and inflates with zlib otherwise, so no
// binary — the portable one included — needs ISA-L to run.
#include <isa-l/igzip_lib.h>

#endif
