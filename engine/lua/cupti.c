/* kl.cupti: the CUDA Profiling Tools Interface. This first part reports
 * the library and its API version; kernel timing through the Activity API
 * and metrics through the Range Profiler build on it (the gate). */
#include <limits.h>

#include <cupti.h>
#include <lauxlib.h>
#include <lua.h>

#include "core/libpath.h"

/* cupti.version() -> the CUPTI API version (CUPTI_API_VERSION of the library) */
static int cupti_version(lua_State *L) {
  uint32_t v = 0;
  CUptiResult r = cuptiGetVersion(&v);
  if (r != CUPTI_SUCCESS) {
    const char *msg = NULL;
    cuptiGetResultString(r, &msg);
    lua_pushnil(L);
    lua_pushstring(L, msg ? msg : "cuptiGetVersion failed");
    return 2;
  }
  lua_pushinteger(L, v);
  return 1;
}

static int cupti_library(lua_State *L) {
  char buf[PATH_MAX];
  if (kl_library_of((const void *)cuptiGetVersion, buf, sizeof buf))
    lua_pushstring(L, buf);
  else
    lua_pushnil(L);
  return 1;
}

static const luaL_Reg cupti_functions[] = {
    {"version", cupti_version},
    {"library", cupti_library},
    {NULL, NULL},
};

int luaopen_kl_cupti(lua_State *L) {
  luaL_newlib(L, cupti_functions);
  lua_pushinteger(L, CUPTI_API_VERSION);
  lua_setfield(L, -2, "header_version");
  return 1;
}
