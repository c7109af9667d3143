/* The arguments of the input generator as Lua passes them, read the same
 * way by kl.randgen (into strings) and kl.emu (into a buffer in place). */
#ifndef KL_RANDGEN_ARGS_H
#define KL_RANDGEN_ARGS_H

#include <lua.h>

#include "core/randgen.h"

/* A buffer type name ("f32", "i32", ...) at index i; raises on another. */
kl_dtype kl_check_dtype(lua_State *L, int i);

/* An init at index i: "uniform" | "normal" | "zeros" | { "int", lo, hi }
 * with integer bounds; raises on another. */
kl_init kl_check_init(lua_State *L, int i);

#endif
