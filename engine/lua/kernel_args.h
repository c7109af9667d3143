/* The one packer of kernel arguments, shared by kl.cuda (arguments tagged
 * by the worker protocol's type names) and kl.emu (arguments typed by the
 * compiled kernel's signature).
 *
 * Type names are klineage's one vocabulary (lua/klineage/base/types.lua): bool,
 * i8, u8, i16, u16, i32, u32, i64, u64, f16, bf16, f32, f64. Integers must
 * be Lua integers or floats with an integer value; f16 and bf16 round
 * through f32 to nearest even, as engine/core/randgen.h does. */
#ifndef KL_KERNEL_ARGS_H
#define KL_KERNEL_ARGS_H

#include <lua.h>

/* Whether `type` names a scalar kl_pack_scalar can pack. */
int kl_scalar_known(const char *type);

/* Packs the Lua value at index idx as `type` into the 8-byte slot (zeroed
 * first; the value in its low bytes, as a kernel parameter buffer wants).
 * Raises a Lua error "<who>: argument <argi> ..." when the value does not
 * fit the type or the type is unknown. */
void kl_pack_scalar(lua_State *L, int idx, const char *type, int argi, const char *who, void *slot);

#endif
