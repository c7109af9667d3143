/* The userdata types of the kl.* modules (engine/lua/newtype.h): every
 * module of engine/lua/modules.h is opened in a fresh Lua state, and then
 *   - every metatable in the registry is named kl.<Type> (CamelCase), under
 *     its own name, and registered by luaopen (the list below is exact);
 *   - a type with __gc has __close, the same function, and the reverse;
 *   - __index is the method table, or a function with a "methods" table;
 *   - boxes that scripts can make close twice (and then collect) safely;
 *   - kl.Scratch (engine/lua/scratch.h) keeps, grows, frees and closes.
 * Links kl_modules, where the other C tests link kl_core alone. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "harness.h"
#include "lua/modules.h"
#include "lua/scratch.h"

static test_batch T;

/* Every type the modules register when opened. */
static const char *const expected_types[] = {
    "kl.Context", "kl.Module", "kl.Function", "kl.Buffer", "kl.Event", /* kl.cuda */
    "kl.Metrics",                                                      /* kl.cupti */
    "kl.EmuBuffer", "kl.EmuLibrary", "kl.EmuHostLibrary",              /* kl.emu */
    "kl.FsListing", "kl.FsLock",                                       /* kl.fs */
    "kl.HttpRequest",                                                  /* kl.http */
    "kl.Pattern", "kl.PatternSet", "kl.MatchIndex", "kl.MatchResults", /* kl.match */
    "kl.MatchReplacements", "kl.MatchDiff", "kl.MatchGeneralization",
    "kl.MdRender",                                                     /* kl.md */
    "kl.NvrtcProgram", "kl.NvrtcSourceFile",                           /* kl.nvrtc */
    "kl.Proc",                                                         /* kl.proc */
    "kl.Rng",                                                          /* kl.randgen */
    "kl.SourceUnit", "kl.SourceNode",                                  /* kl.source */
    "kl.Scratch",                                                      /* engine/lua/scratch.h */
    NULL,
};

/* One state for the whole test: kl.memcap caps one state per process. */
static lua_State *open_all(void) {
  lua_State *L = luaL_newstate();
  luaL_openlibs(L);
#define KL_OPEN(name)                                   \
  luaL_requiref(L, "kl." #name, luaopen_kl_##name, 0); \
  lua_pop(L, 1);
  KL_MODULES(KL_OPEN)
#undef KL_OPEN
  return L;
}

/* "kl." and then a capital letter and letters or digits. */
static int well_named(const char *name) {
  if (strncmp(name, "kl.", 3) != 0 || !isupper((unsigned char)name[3])) return 0;
  for (const char *p = name + 4; *p; p++)
    if (!isalnum((unsigned char)*p)) return 0;
  return 1;
}

static int expected(const char *name) {
  for (int i = 0; expected_types[i]; i++)
    if (strcmp(expected_types[i], name) == 0) return 1;
  return 0;
}

/* Checks the metatable at the stack top, registered under key. */
static void check_metatable(lua_State *L, const char *key, const char *name) {
  char what[256];
  snprintf(what, sizeof what, "%s: registered under its own __name", name);
  STR_EQ(&T, key, name, what);
  snprintf(what, sizeof what, "%s: named kl.<Type>, CamelCase", name);
  OK(&T, well_named(name), what);
  snprintf(what, sizeof what, "%s: registered when its module is opened", name);
  OK(&T, expected(name), what);

  int mt = lua_gettop(L);
  int gc = lua_getfield(L, mt, "__gc");
  int close = lua_getfield(L, mt, "__close");
  snprintf(what, sizeof what, "%s: __gc and __close are one function (or neither is there)", name);
  OK(&T, gc == close && lua_rawequal(L, -1, -2), what);
  lua_pop(L, 2);

  int index = lua_getfield(L, mt, "__index");
  int methods = lua_getfield(L, mt, "methods");
  snprintf(what, sizeof what, "%s: __index is the method table, or a function with a methods table", name);
  OK(&T, (index == LUA_TTABLE && methods == LUA_TNIL) || (index == LUA_TFUNCTION && methods == LUA_TTABLE) ||
             (index == LUA_TNIL && methods == LUA_TNIL),
     what);
  lua_pop(L, 2);
}

static void test_registry(lua_State *L) {
  int seen = 0;
  lua_pushnil(L);
  while (lua_next(L, LUA_REGISTRYINDEX)) {
    if (lua_type(L, -2) == LUA_TSTRING && lua_istable(L, -1)) {
      if (lua_getfield(L, -1, "__name") == LUA_TSTRING) {
        const char *name = lua_tostring(L, -1);
        lua_pop(L, 1);
        if (strcmp(name, LUA_FILEHANDLE) != 0) { /* liolib's own */
          check_metatable(L, lua_tostring(L, -2), name);
          seen++;
        }
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pop(L, 1);
  }
  int want = 0;
  while (expected_types[want]) want++;
  INT_EQ(&T, seen, want, "every expected type is registered once the modules are open");
}

/* Boxes a script can make: each one closed twice and collected. */
static const char close_twice[] =
    "local name, make = ...\n"
    "local v = make()\n"
    "local mt = getmetatable(v)\n"
    "assert(mt.__name == name, 'made a ' .. tostring(mt.__name))\n"
    "mt.__close(v); mt.__close(v); mt.__gc(v)\n"
    "do local w <close> = make() end\n"
    "return true\n";

static const struct {
  const char *type, *make;
} makers[] = {
    {"kl.SourceUnit", "return require('kl.source').parse('int x;')"},
    {"kl.EmuBuffer", "return require('kl.emu').alloc(64, 'b')"},
    {"kl.FsLock", "return require('kl.fs').lock('test_lua_types.lock', 'test_lua_types')"},
    {"kl.Proc", "return require('kl.proc').spawn{ argv = { '/bin/sh', '-c', 'sleep 5' } }"},
    {NULL, NULL},
};

static void test_close_twice(lua_State *L) {
  for (int i = 0; makers[i].type; i++) {
    char what[256];
    snprintf(what, sizeof what, "%s: closing twice, then collecting, is safe", makers[i].type);
    int ok = luaL_loadstring(L, close_twice) == LUA_OK;
    lua_pushstring(L, makers[i].type);
    ok = ok && luaL_loadstring(L, makers[i].make) == LUA_OK;
    ok = ok && lua_pcall(L, 2, 1, 0) == LUA_OK;
    if (!ok) fprintf(stderr, "  %s\n", lua_tostring(L, -1));
    OK(&T, ok && lua_toboolean(L, -1), what);
    lua_settop(L, 0);
  }
  lua_gc(L, LUA_GCCOLLECT);
}

/* kl.Scratch through its C API; returns the number of checks that failed. */
static int scratch_steps(lua_State *L) {
  int failed = 0;
  kl_scratch *s = kl_scratch_new(L);
  failed += s->p != NULL;
  char *p = kl_scratch_grow(L, s, 16);
  memcpy(p, "fifteen bytes..", 16);
  failed += kl_scratch_grow(L, s, 8) != p; /* smaller: the same memory */
  p = kl_scratch_grow(L, s, 1 << 20);
  failed += strcmp(p, "fifteen bytes..") != 0; /* grown: contents kept */
  p[(1 << 20) - 1] = 'x';
  kl_scratch_free(s);
  failed += s->p != NULL || s->size != 0;
  char *mine = malloc(32);
  failed += kl_scratch_adopt(s, mine) != mine || s->p != mine;
  failed += kl_scratch_adopt(s, malloc(8)) == mine; /* frees the first */
  lua_getfield(L, LUA_REGISTRYINDEX, KL_SCRATCH_MT);
  lua_getfield(L, -1, "__close");
  lua_pushvalue(L, -3);
  lua_call(L, 1, 0);
  failed += s->p != NULL;
  lua_getfield(L, -1, "__close");
  lua_pushvalue(L, -3);
  lua_call(L, 1, 0); /* twice */
  failed += s->p != NULL;
  kl_scratch_grow(L, s, 4); /* usable again; its __gc frees it */
  lua_pushinteger(L, failed);
  return 1;
}

/* Raises while the box holds memory: the box frees it when collected
 * (the ASan build reports a leak otherwise, with detect_leaks on). */
static int scratch_raise(lua_State *L) {
  kl_scratch *s = kl_scratch_new(L);
  kl_scratch_grow(L, s, 4096);
  return luaL_error(L, "raised while holding scratch");
}

static void test_scratch(lua_State *L) {
  lua_pushcfunction(L, scratch_steps);
  int ok = lua_pcall(L, 0, 1, 0) == LUA_OK;
  if (!ok) fprintf(stderr, "  %s\n", lua_tostring(L, -1));
  OK(&T, ok, "kl.Scratch: the C API runs");
  INT_EQ(&T, ok ? lua_tointeger(L, -1) : -1, 0, "kl.Scratch: grow keeps, free empties, close twice is safe");
  lua_settop(L, 0);
  lua_pushcfunction(L, scratch_raise);
  OK(&T, lua_pcall(L, 0, 0, 0) == LUA_ERRRUN, "kl.Scratch: a raise while holding memory");
  lua_settop(L, 0);
  lua_gc(L, LUA_GCCOLLECT);

  /* A state where no module registered kl.Scratch: the box refuses. */
  lua_State *bare = luaL_newstate();
  lua_pushcfunction(bare, scratch_raise);
  OK(&T, lua_pcall(bare, 0, 0, 0) == LUA_ERRRUN && strstr(lua_tostring(bare, -1), "kl_scratch_open") != NULL,
     "kl.Scratch: a box in a state that never registered it raises");
  lua_close(bare);
}

int main(void) {
  lua_State *L = open_all();
  test_registry(L);
  test_close_twice(L);
  test_scratch(L);
  lua_close(L);
  printf("%d passed, %d failed\n", T.passed, T.failed);
  return T.failed ? 1 : 0;
}
