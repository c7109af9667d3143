/* klineage: the host. It owns one Lua 5.4 state, preloads the kl.* core
 * modules together with LPeg and lua-cjson, finds the Lua tree, and hands
 * argv to lua/klineage/cli/init.lua. All policy lives in Lua; this file only
 * makes sure that every call into Lua is protected and that an error
 * reaches the user with a traceback. */
#include <errno.h>
#include <execinfo.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "core/libpath.h"
#include "lua/modules.h"

int luaopen_lpeg(lua_State *L);
int luaopen_cjson(lua_State *L);
int luaopen_cjson_safe(lua_State *L);

static int is_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* The data root: $KLINEAGE_HOME, else <bin>/../share/klineage, which the
 * build tree and `cmake --install` both provide. */
static int find_home(char *home, size_t size) {
  char probe[PATH_MAX];
  const char *env = getenv("KLINEAGE_HOME");
  if (env && *env) {
    snprintf(home, size, "%s", env);
  } else {
    char bin[PATH_MAX];
    if (!kl_executable_dir(bin, sizeof bin)) return 0;
    if ((size_t)snprintf(home, size, "%s/../share/klineage", bin) >= size) return 0;
    char *real = realpath(home, NULL);
    if (real) {
      snprintf(home, size, "%s", real);
      free(real);
    }
  }
  if ((size_t)snprintf(probe, sizeof probe, "%s/lua/klineage/cli/init.lua", home) >= sizeof probe)
    return 0;
  return is_file(probe);
}

static void preload(lua_State *L, const char *name, lua_CFunction open) {
  luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_PRELOAD_TABLE);
  lua_pushcfunction(L, open);
  lua_setfield(L, -2, name);
  lua_pop(L, 1);
}

static int traceback(lua_State *L) {
  const char *msg = lua_tostring(L, 1);
  if (msg == NULL) {
    if (luaL_callmeta(L, 1, "__tostring") && lua_type(L, -1) == LUA_TSTRING)
      return 1;
    msg = lua_pushfstring(L, "(error object is a %s value)", luaL_typename(L, 1));
  }
  luaL_traceback(L, L, msg, 1);
  return 1;
}

/* Lua seeds math.random from the time and the state's address; where
 * address randomization is off (some CI sandboxes), two processes started in
 * the same second then draw the same numbers, and the same run ids. */
static void seed_random(lua_State *L) {
  lua_Integer seed[2];
  if (getrandom(seed, sizeof seed, 0) != (ssize_t)sizeof seed)
    return; /* Lua's own seed stays */
  lua_getglobal(L, "math");
  lua_getfield(L, -1, "randomseed");
  lua_pushinteger(L, seed[0]);
  lua_pushinteger(L, seed[1]);
  lua_call(L, 2, 0);
  lua_pop(L, 1);
}

/* Runs inside lua_pcall: everything that can raise happens here. */
static int run_cli(lua_State *L) {
  const char *home = lua_tostring(L, 1);
  char **argv = (char **)lua_touserdata(L, 2);
  int argc = (int)lua_tointeger(L, 3);

  luaL_openlibs(L);
  seed_random(L);
  /* kl.host publishes it as host.home: where lua/, gpu/ and skills/ are. */
  lua_pushstring(L, home);
  lua_setfield(L, LUA_REGISTRYINDEX, "kl.home");
  preload(L, "lpeg", luaopen_lpeg);
  preload(L, "cjson", luaopen_cjson);
  preload(L, "cjson.safe", luaopen_cjson_safe);
#define KL_PRELOAD(name) preload(L, "kl." #name, luaopen_kl_##name);
  KL_MODULES(KL_PRELOAD)
#undef KL_PRELOAD

  /* Our tree first; LUA_PATH / LUA_CPATH keep working for user modules. */
  lua_getglobal(L, "package");
  lua_getfield(L, -1, "path");
  lua_pushfstring(L, "%s/lua/?.lua;%s/lua/?/init.lua;%s", home, home, lua_tostring(L, -1));
  lua_setfield(L, -3, "path");
  lua_pop(L, 2);

  /* The conventional global `arg`, as the standalone lua sets it. */
  lua_createtable(L, argc, 1);
  for (int i = 0; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i);
  }
  lua_setglobal(L, "arg");

  lua_getglobal(L, "require");
  lua_pushliteral(L, "klineage.cli");
  lua_call(L, 1, 1);
  lua_getfield(L, -1, "main");
  lua_createtable(L, argc, 0);
  for (int i = 1; i < argc; i++) {
    lua_pushstring(L, argv[i]);
    lua_rawseti(L, -2, i);
  }
  lua_pushstring(L, home);
  lua_call(L, 2, 1);
  return 1;
}

/* A crash in C (ours or a library's) prints where it happened before the
 * process dies with the same signal, so a bug report carries a backtrace.
 * Only async-signal-safe calls here. */
static void on_fatal_signal(int sig) {
  static const char head[] = "klineage: fatal signal; C backtrace:\n";
  void *frames[64];
  if (write(2, head, sizeof head - 1) < 0) _exit(128 + sig);
  int n = backtrace(frames, 64);
  backtrace_symbols_fd(frames, n, 2);
  signal(sig, SIG_DFL);
  raise(sig);
}

static void install_crash_handler(void) {
  void *warm[1];
  backtrace(warm, 1); /* loads libgcc now, not inside the handler */
  const int sigs[] = {SIGSEGV, SIGBUS, SIGILL, SIGFPE};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) signal(sigs[i], on_fatal_signal);
}

int main(int argc, char **argv) {
  install_crash_handler();
  char home[PATH_MAX];
  if (!find_home(home, sizeof home)) {
    fprintf(stderr,
            "klineage: cannot find lua/klineage/cli/init.lua under '%s'\n"
            "  set KLINEAGE_HOME to the folder that holds lua/ (the source tree "
            "or <prefix>/share/klineage)\n",
            home);
    return 2;
  }
  lua_State *L = luaL_newstate();
  if (!L) {
    fprintf(stderr, "klineage: cannot create a Lua state: %s\n", strerror(ENOMEM));
    return 1;
  }
  lua_pushcfunction(L, traceback);
  lua_pushcfunction(L, run_cli);
  lua_pushstring(L, home);
  lua_pushlightuserdata(L, argv);
  lua_pushinteger(L, argc);
  int status = lua_pcall(L, 3, 1, 1);
  int code;
  if (status != LUA_OK) {
    fprintf(stderr, "klineage: %s\n", lua_tostring(L, -1));
    code = 1;
  } else if (lua_isinteger(L, -1)) {
    code = (int)lua_tointeger(L, -1);
  } else {
    code = lua_toboolean(L, -1) || lua_isnil(L, -1) ? 0 : 1;
  }
  fflush(stdout);
  lua_close(L);
  return code;
}
