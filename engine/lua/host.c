/* kl.host: facts about the running engine that Lua cannot see itself:
 * where it lives (host.home: the folder holding lua/, gpu/, skills/),
 * which libraries it loaded, a monotonic clock, and whether a stream is a
 * terminal. */
#define _GNU_SOURCE
#include <limits.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

#include "core/libpath.h"

int luaopen_lpeg(lua_State *L);
int luaopen_cjson(lua_State *L);

/* host.executable() -> path of the klineage binary */
static int host_executable(lua_State *L) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return luaL_error(L, "cannot read /proc/self/exe");
  lua_pushlstring(L, path, (size_t)n);
  return 1;
}

/* host.libraries() -> { lua = path, lpeg = path, cjson = path } */
static int host_libraries(lua_State *L) {
  static const struct {
    const char *name;
    const void *symbol;
  } libs[] = {
      {"lua", (const void *)lua_newstate},
      {"lpeg", (const void *)luaopen_lpeg},
      {"cjson", (const void *)luaopen_cjson},
  };
  char buf[PATH_MAX];
  lua_createtable(L, 0, 3);
  for (size_t i = 0; i < sizeof libs / sizeof libs[0]; i++) {
    if (kl_library_of(libs[i].symbol, buf, sizeof buf)) {
      lua_pushstring(L, buf);
      lua_setfield(L, -2, libs[i].name);
    }
  }
  return 1;
}

/* host.clock() -> seconds from a monotonic clock, as a float */
static int host_clock(lua_State *L) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  lua_pushnumber(L, (lua_Number)ts.tv_sec + (lua_Number)ts.tv_nsec * 1e-9);
  return 1;
}

/* host.isatty(fd) -> boolean; fd 0, 1 or 2 */
static int host_isatty(lua_State *L) {
  lua_Integer fd = luaL_checkinteger(L, 1);
  luaL_argcheck(L, fd >= 0 && fd <= 2, 1, "expected 0, 1 or 2");
  lua_pushboolean(L, isatty((int)fd));
  return 1;
}

/* host.cpu_count() -> online processors */
static int host_cpu_count(lua_State *L) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  lua_pushinteger(L, n > 0 ? n : 1);
  return 1;
}

static const luaL_Reg host_functions[] = {
    {"executable", host_executable},
    {"libraries", host_libraries},
    {"clock", host_clock},
    {"isatty", host_isatty},
    {"cpu_count", host_cpu_count},
    {NULL, NULL},
};

int luaopen_kl_host(lua_State *L) {
  luaL_newlib(L, host_functions);
  lua_pushliteral(L, KL_VERSION);
  lua_setfield(L, -2, "version");
  lua_pushliteral(L, LUA_RELEASE);
  lua_setfield(L, -2, "lua_release");
  lua_getfield(L, LUA_REGISTRYINDEX, "kl.home"); /* set by the host, nil elsewhere */
  lua_setfield(L, -2, "home");
  return 1;
}
