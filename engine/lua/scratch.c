/* kl.Scratch, the box for scratch C memory: engine/lua/scratch.h. */
#include <stdlib.h>

#include <lauxlib.h>

#include "lua/newtype.h"
#include "lua/scratch.h"

void kl_scratch_free(kl_scratch *s) {
  free(s->p);
  s->p = NULL;
  s->size = 0;
}

/* __gc and __close. */
static int scratch_release(lua_State *L) {
  kl_scratch_free(luaL_checkudata(L, 1, KL_SCRATCH_MT));
  return 0;
}

static const luaL_Reg scratch_meta[] = {
    {"__gc", scratch_release},
    {"__close", scratch_release},
    {NULL, NULL},
};

void kl_scratch_open(lua_State *L) { kl_newtype(L, KL_SCRATCH_MT, scratch_meta, NULL); }

kl_scratch *kl_scratch_new(lua_State *L) {
  kl_scratch *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->p = NULL;
  s->size = 0;
  if (luaL_getmetatable(L, KL_SCRATCH_MT) != LUA_TTABLE)
    luaL_error(L, "kl.Scratch is not registered: its module's luaopen calls kl_scratch_open");
  lua_setmetatable(L, -2);
  return s;
}

void *kl_scratch_grow(lua_State *L, kl_scratch *s, size_t n) {
  if (s->p && n <= s->size) return s->p;
  void *p = realloc(s->p, n ? n : 1);
  if (!p) luaL_error(L, "out of memory (scratch of %I bytes)", (lua_Integer)n);
  s->p = p;
  s->size = n;
  return p;
}

void *kl_scratch_adopt(kl_scratch *s, void *p) {
  if (s->p != p) free(s->p);
  s->p = p;
  s->size = 0;
  return p;
}
