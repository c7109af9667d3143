/* kl.sandbox: the emu worker's seccomp filter (engine/core/sandbox.h says
 * what it stops, allows and refuses), seen from Lua.
 *
 *   sandbox.enter{ keep = { file, ... } } -> true | nil, err
 *       closes every descriptor above 2 except those of the io files in
 *       keep (the worker's protocol streams), then confines this process
 *       and every thread of it, for good. A second call does nothing.
 *   sandbox.active() -> boolean
 *
 * A process that cannot be confined (no seccomp, an unknown architecture)
 * gets nil, err: the caller decides whether to run unconfined. */
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "core/sandbox.h"

#define MAX_KEEP 16

static int l_enter(lua_State *L) {
  int keep[MAX_KEEP], nkeep = 0;
  if (!lua_isnoneornil(L, 1)) {
    luaL_checktype(L, 1, LUA_TTABLE);
    lua_getfield(L, 1, "keep");
    if (!lua_isnil(L, -1)) {
      luaL_argcheck(L, lua_istable(L, -1), 1, "keep must be a list of io files");
      int n = (int)luaL_len(L, -1);
      luaL_argcheck(L, n <= MAX_KEEP, 1, "keep lists more than 16 files");
      for (int i = 1; i <= n; i++) {
        lua_rawgeti(L, -1, i);
        luaL_Stream *s = luaL_testudata(L, -1, LUA_FILEHANDLE);
        luaL_argcheck(L, s && s->closef, 1, "keep must hold open io files");
        keep[nkeep++] = fileno(s->f);
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
  }
  fflush(NULL); /* nothing buffered for a descriptor about to close */
  char why[256];
  if (!kl_sandbox_enter(keep, nkeep, why, sizeof why)) {
    lua_pushnil(L);
    lua_pushfstring(L, "cannot enter the sandbox: %s", why);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_active(lua_State *L) {
  lua_pushboolean(L, kl_sandbox_active());
  return 1;
}

static const luaL_Reg sandbox_functions[] = {
    {"enter", l_enter},
    {"active", l_active},
    {NULL, NULL},
};

int luaopen_kl_sandbox(lua_State *L) {
  luaL_newlib(L, sandbox_functions);
  return 1;
}
