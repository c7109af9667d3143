/* kl.memcap: a cap on how much memory the Lua state may hold, enforced by
 * its allocator, for code the engine does not trust (workload specs,
 * lua/klineage/workload/spec_sandbox.lua). Opening the module wraps the state's
 * allocator once; the wrapper counts every block it hands out and frees,
 * and while a cap is set it refuses any growth that would take the count
 * past it. Lua then collects the garbage and asks once more; a second
 * refusal raises "not enough memory" where the allocation was made, so one
 * string.rep of a terabyte fails before a byte of it exists.
 *
 *   memcap.used()       -> bytes the state holds now (every block of the
 *                          allocator, lauxlib buffers included)
 *   memcap.set(cap)     -> the previous cap (nil for none); cap is a byte
 *                          count, or nil to lift the cap
 *   memcap.refusals()   -> refused, raised: allocations refused since the
 *                          module was opened, and how many of them were
 *                          refused again after the emergency collection
 *                          (each one a "not enough memory" error)
 *   memcap.physical()   -> bytes of physical memory of the host, or nil
 *
 * Shrinking or freeing never fails (Lua relies on it), so a cap below the
 * current count only stops growth. The count lives in a static, not in a
 * userdata: the allocator's data must outlive every block lua_close frees,
 * which no Lua object does. One state per process may be capped; opening
 * the module in a second one raises. */
#include <stddef.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>

typedef struct {
  lua_Alloc inner; /* the allocator the state had before */
  void *inner_ud;
  size_t used;     /* bytes in live blocks */
  size_t cap;      /* meaningful when capped */
  int capped;
  int pending;     /* the last growth was refused: the next one is Lua's retry */
  lua_Integer refused, raised;
} memcap_state;

static memcap_state state;

static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  memcap_state *s = ud;
  size_t old = ptr ? osize : 0; /* with ptr NULL, osize is a type tag */
  if (nsize == 0) {
    s->inner(s->inner_ud, ptr, osize, 0);
    s->used = s->used >= old ? s->used - old : 0;
    return NULL;
  }
  if (nsize > old && s->capped) {
    size_t grow = nsize - old;
    if (s->used > s->cap || grow > s->cap - s->used) {
      s->refused++;
      if (s->pending) s->raised++;
      s->pending = !s->pending;
      return NULL;
    }
  }
  void *p = s->inner(s->inner_ud, ptr, osize, nsize);
  if (p) {
    s->used = s->used - old + nsize;
    if (nsize > old) s->pending = 0;
  }
  return p;
}

static int l_used(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)state.used);
  return 1;
}

static int l_set(lua_State *L) {
  if (state.capped) lua_pushinteger(L, (lua_Integer)state.cap);
  else lua_pushnil(L);
  if (lua_isnoneornil(L, 1)) {
    state.capped = 0;
  } else {
    lua_Integer cap = luaL_checkinteger(L, 1);
    luaL_argcheck(L, cap >= 0, 1, "a cap is a byte count >= 0");
    state.cap = (size_t)cap;
    state.capped = 1;
  }
  state.pending = 0;
  return 1;
}

static int l_refusals(lua_State *L) {
  lua_pushinteger(L, state.refused);
  lua_pushinteger(L, state.raised);
  return 2;
}

static int l_physical(lua_State *L) {
  long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) {
    lua_pushnil(L);
    return 1;
  }
  lua_pushinteger(L, (lua_Integer)pages * (lua_Integer)page);
  return 1;
}

static const luaL_Reg memcap_functions[] = {
    {"used", l_used},
    {"set", l_set},
    {"refusals", l_refusals},
    {"physical", l_physical},
    {NULL, NULL},
};

int luaopen_kl_memcap(lua_State *L) {
  void *ud;
  lua_Alloc current = lua_getallocf(L, &ud);
  if (current != capped_alloc) {
    if (state.inner) return luaL_error(L, "kl.memcap: already caps another Lua state of this process");
    state.inner = current;
    state.inner_ud = ud;
    /* Every live block so far, as the collector counts them. */
    state.used = (size_t)lua_gc(L, LUA_GCCOUNT) * 1024 + (size_t)lua_gc(L, LUA_GCCOUNTB);
    lua_setallocf(L, capped_alloc, &state);
  }
  luaL_newlib(L, memcap_functions);
  return 1;
}
