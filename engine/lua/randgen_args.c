/* Reading the generator's arguments (see randgen_args.h). */
#include "lua/randgen_args.h"

#include <string.h>

#include <lauxlib.h>

kl_dtype kl_check_dtype(lua_State *L, int i) {
  const char *name = luaL_checkstring(L, i);
  int t = kl_dtype_parse(name);
  if (t < 0)
    luaL_argerror(L, i, lua_pushfstring(L, "unknown buffer type '%s' (f32 f64 f16 bf16 i32 u32 i64 u8)", name));
  return (kl_dtype)t;
}

kl_init kl_check_init(lua_State *L, int i) {
  kl_init init = {KL_INIT_ZEROS, 0, 0};
  if (lua_type(L, i) == LUA_TSTRING) {
    const char *s = lua_tostring(L, i);
    if (strcmp(s, "zeros") == 0) init.kind = KL_INIT_ZEROS;
    else if (strcmp(s, "uniform") == 0) init.kind = KL_INIT_UNIFORM;
    else if (strcmp(s, "normal") == 0) init.kind = KL_INIT_NORMAL;
    else luaL_argerror(L, i, lua_pushfstring(L, "unknown init '%s'", s));
    return init;
  }
  luaL_argcheck(L, lua_istable(L, i), i, "init must be \"uniform\", \"normal\", \"zeros\" or { \"int\", lo, hi }");
  lua_rawgeti(L, i, 1);
  lua_rawgeti(L, i, 2);
  lua_rawgeti(L, i, 3);
  luaL_argcheck(L, lua_type(L, -3) == LUA_TSTRING && strcmp(lua_tostring(L, -3), "int") == 0 &&
                       lua_isinteger(L, -2) && lua_isinteger(L, -1),
                i, "init table must be { \"int\", lo, hi } with integer bounds");
  init.kind = KL_INIT_INT;
  init.lo = lua_tointeger(L, -2);
  init.hi = lua_tointeger(L, -1);
  lua_pop(L, 3);
  return init;
}
