/* What other bindings need from kl.cuda objects. */
#ifndef KL_LUA_CUDA_H
#define KL_LUA_CUDA_H

#include <cuda.h>
#include <lua.h>

/* The CUcontext of the kl.Context at stack index i, made current; raises
 * when i is not an open context. *ordinal (if not NULL) gets its device. */
CUcontext kl_check_cuda_context(lua_State *L, int i, int *ordinal);

#endif
