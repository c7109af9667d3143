/* Kernel argument packing: see kernel_args.h. */
#include "lua/kernel_args.h"

#include <lauxlib.h>
#include <stdint.h>
#include <string.h>

#include "core/randgen.h"

typedef enum { K_BOOL, K_I8, K_U8, K_I16, K_U16, K_I32, K_U32, K_I64, K_U64, K_F16, K_BF16, K_F32, K_F64 } kind;

static const struct {
  const char *name;
  kind k;
} scalars[] = {{"bool", K_BOOL}, {"i8", K_I8},   {"u8", K_U8},     {"i16", K_I16}, {"u16", K_U16},
               {"i32", K_I32},   {"u32", K_U32}, {"i64", K_I64},   {"u64", K_U64}, {"f16", K_F16},
               {"bf16", K_BF16}, {"f32", K_F32}, {"f64", K_F64}};

static int lookup(const char *type) {
  if (!type) return -1;
  for (size_t i = 0; i < sizeof scalars / sizeof scalars[0]; i++)
    if (strcmp(scalars[i].name, type) == 0) return (int)scalars[i].k;
  return -1;
}

int kl_scalar_known(const char *type) { return lookup(type) >= 0; }

void kl_pack_scalar(lua_State *L, int idx, const char *type, int argi, const char *who, void *slot) {
  int k = lookup(type);
  if (k < 0)
    luaL_error(L, "%s: argument %d has unknown type '%s' (bool i8 u8 i16 u16 i32 u32 i64 u64 f16 bf16 f32 f64)", who,
               argi, type ? type : "?");
  union {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    uint16_t u16;
    int32_t i32;
    uint32_t u32;
    int64_t i64;
    uint64_t u64;
    float f32;
    double f64;
    unsigned char b;
  } u;
  memset(&u, 0, sizeof u);
  if (k == K_BOOL) {
    u.b = (unsigned char)lua_toboolean(L, idx);
  } else if (k <= K_U64) {
    int ok = 0;
    lua_Integer x = lua_tointegerx(L, idx, &ok);
    if (!ok) luaL_error(L, "%s: argument %d must be an integer (%s), got %s", who, argi, type, luaL_typename(L, idx));
    switch (k) {
    case K_I8: u.i8 = (int8_t)x; break;
    case K_U8: u.u8 = (uint8_t)x; break;
    case K_I16: u.i16 = (int16_t)x; break;
    case K_U16: u.u16 = (uint16_t)x; break;
    case K_I32: u.i32 = (int32_t)x; break;
    case K_U32: u.u32 = (uint32_t)x; break;
    case K_I64: u.i64 = (int64_t)x; break;
    default: u.u64 = (uint64_t)x; break;
    }
  } else {
    int ok = 0;
    double x = (double)lua_tonumberx(L, idx, &ok);
    if (!ok) luaL_error(L, "%s: argument %d must be a number (%s), got %s", who, argi, type, luaL_typename(L, idx));
    if (k == K_F32) u.f32 = (float)x;
    else if (k == K_F64) u.f64 = x;
    else if (k == K_F16) u.u16 = kl_f32_to_f16((float)x);
    else u.u16 = kl_f32_to_bf16((float)x);
  }
  memcpy(slot, &u, 8);
}
