#ifndef C_YAJL_SHIM_H
#define C_YAJL_SHIM_H

#include <yajl/yajl_parse.h>
#include <yajl/yajl_version.h>

/* yajl_config is a C variadic function, which Swift cannot call. This fixed-arity wrapper covers every option
   StreamMap sets. (StreamMap writes JSON itself: yajl's generator is not used.) */
static inline int cyajl_config_bool(yajl_handle handle, yajl_option option, int enabled) {
    return yajl_config(handle, option, enabled);
}

#endif
