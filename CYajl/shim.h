#ifndef C_YAJL_SHIM_H
#define C_YAJL_SHIM_H

#include <yajl/yajl_parse.h>
#include <yajl/yajl_gen.h>
#include <yajl/yajl_version.h>

/* yajl_config and yajl_gen_config are C variadic functions, which Swift cannot call.
   These fixed-arity wrappers cover every option StreamMap sets. */
static inline int cyajl_config_bool(yajl_handle handle, yajl_option option, int enabled) {
    return yajl_config(handle, option, enabled);
}

static inline int cyajl_gen_config_bool(yajl_gen gen, yajl_gen_option option, int enabled) {
    return yajl_gen_config(gen, option, enabled);
}

#endif
