/* kl.cupti: the CUDA Profiling Tools Interface.
 *
 *   cupti.version() -> CUPTI API version | nil, err
 *   cupti.activity_start() -> true | nil, err     kernel activity on
 *   cupti.activity_collect() -> records, dropped | nil, err
 *       records[i] = { name, start, finish, duration (ns), device, stream,
 *                      correlation, grid = {x,y,z}, block = {x,y,z},
 *                      registers, smem_static, smem_dynamic, timed }
 *   cupti.activity_stop()
 *   cupti.metrics(ctx, { "dram__bytes_read.sum", ... } [, max_ranges])
 *       -> Metrics | nil, err    m.passes, m.chip
 *   m:begin() ... launches ... m:finish() -> { { range = name, values = { [metric] = v } } }
 *   m:close()
 *
 * Everything here needs the CUDA driver; without it the calls return
 * nil, err (expected failure), never crash. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <lauxlib.h>
#include <lua.h>

#include "core/cupti_activity.h"
#include "core/cupti_metrics.h"
#include "core/driver.h"
#include "core/libpath.h"
#include "lua/cuda.h"
#include "lua/newtype.h"
#include "lua/scratch.h"

#define METRICS_MT "kl.Metrics"
#define MAX_METRICS 64

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

/* CUPTI without a driver fails in confusing ways: say why up front. */
static int no_driver(lua_State *L) {
  const char *why = NULL;
  if (kl_driver_load(&why)) return 0;
  lua_pushnil(L);
  lua_pushfstring(L, "CUDA driver not available: %s", why);
  return 2;
}

static int cupti_activity_start(lua_State *L) {
  int n = no_driver(L);
  if (n) return n;
  const char *err = NULL;
  if (kl_activity_start(&err)) {
    lua_pushnil(L);
    lua_pushfstring(L, "CUPTI activity: %s", err);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static void push_triple(lua_State *L, const char *k, const int32_t v[3]) {
  lua_createtable(L, 3, 0);
  for (int i = 0; i < 3; i++) {
    lua_pushinteger(L, v[i]);
    lua_rawseti(L, -2, i + 1);
  }
  lua_setfield(L, -2, k);
}

static int cupti_activity_collect(lua_State *L) {
  int r = no_driver(L);
  if (r) return r;
  /* The malloc'd records live in a scratch box, so that a memory error
   * while building the Lua table cannot leak them. */
  kl_scratch *box = kl_scratch_new(L);
  kl_kernel_record *records = NULL;
  uint64_t dropped = 0;
  const char *err = NULL;
  int n = kl_activity_collect(&records, &dropped, &err);
  kl_scratch_adopt(box, records);
  if (n < 0) {
    lua_pushnil(L);
    lua_pushfstring(L, "CUPTI activity: %s", err);
    return 2;
  }
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    const kl_kernel_record *k = &records[i];
    lua_createtable(L, 0, 16);
    lua_pushstring(L, k->name);
    lua_setfield(L, -2, "name");
    set_int(L, "start", (lua_Integer)k->start);
    set_int(L, "finish", (lua_Integer)k->end);
    set_int(L, "duration", k->start && k->end >= k->start ? (lua_Integer)(k->end - k->start) : 0);
    lua_pushboolean(L, k->start != 0); /* a record whose start is 0 was not timed */
    lua_setfield(L, -2, "timed");
    set_int(L, "device", k->device);
    set_int(L, "stream", k->stream);
    set_int(L, "correlation", k->correlation);
    push_triple(L, "grid", k->grid);
    push_triple(L, "block", k->block);
    set_int(L, "registers", k->registers);
    set_int(L, "smem_static", k->smem_static);
    set_int(L, "smem_dynamic", k->smem_dynamic);
    lua_rawseti(L, -2, i + 1);
  }
  lua_pushinteger(L, (lua_Integer)dropped);
  return 2;
}

static int cupti_activity_stop(lua_State *L) {
  (void)L;
  if (kl_driver_load(NULL)) kl_activity_stop();
  return 0;
}

/* --- Metrics ------------------------------------------------------------ */

typedef struct {
  kl_metrics_session *s;
  size_t n;
  char *names[MAX_METRICS]; /* owned copies: the session points into them */
} metrics_box;

static int metrics_close(lua_State *L) {
  metrics_box *m = luaL_checkudata(L, 1, METRICS_MT);
  kl_metrics_close(m->s);
  m->s = NULL;
  for (size_t i = 0; i < m->n; i++) {
    free(m->names[i]);
    m->names[i] = NULL;
  }
  m->n = 0;
  return 0;
}

static metrics_box *check_metrics(lua_State *L, int i) {
  metrics_box *m = luaL_checkudata(L, i, METRICS_MT);
  if (!m->s) luaL_argerror(L, i, "metrics session is closed");
  return m;
}

static int cupti_metrics(lua_State *L) {
  int ordinal = 0;
  CUcontext ctx = kl_check_cuda_context(L, 1, &ordinal);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer max_ranges = luaL_optinteger(L, 3, 64);
  lua_Integer n = luaL_len(L, 2);
  luaL_argcheck(L, n >= 1 && n <= MAX_METRICS, 2, "between 1 and 64 metric names");
  for (lua_Integer i = 1; i <= n; i++) {
    if (lua_geti(L, 2, i) != LUA_TSTRING) return luaL_error(L, "metrics[%d] is not a string", (int)i);
    lua_pop(L, 1);
  }
  metrics_box *m = lua_newuserdatauv(L, sizeof *m, 0);
  memset(m, 0, sizeof *m);
  luaL_setmetatable(L, METRICS_MT);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_geti(L, 2, i);
    m->names[m->n] = strdup(lua_tostring(L, -1));
    lua_pop(L, 1);
    if (!m->names[m->n]) return luaL_error(L, "out of memory");
    m->n++;
  }
  char err[512];
  m->s = kl_metrics_open(ctx, ordinal, (const char *const *)m->names, m->n, (size_t)max_ranges, err,
                         sizeof err);
  if (!m->s) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  return 1;
}

static int metrics_begin(lua_State *L) {
  metrics_box *m = check_metrics(L, 1);
  char err[512];
  if (kl_metrics_begin(m->s, err, sizeof err)) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int metrics_finish(lua_State *L) {
  metrics_box *m = check_metrics(L, 1);
  char err[512];
  int ranges = kl_metrics_end(m->s, err, sizeof err);
  if (ranges < 0) {
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  double values[MAX_METRICS];
  lua_createtable(L, ranges, 0);
  for (int r = 0; r < ranges; r++) {
    const char *name = NULL;
    if (kl_metrics_values(m->s, (size_t)r, values, &name, err, sizeof err)) {
      lua_pushnil(L);
      lua_pushstring(L, err);
      return 2;
    }
    lua_createtable(L, 0, 2);
    lua_pushstring(L, name ? name : "");
    lua_setfield(L, -2, "range");
    lua_createtable(L, 0, (int)m->n);
    for (size_t i = 0; i < m->n; i++) {
      lua_pushnumber(L, values[i]);
      lua_setfield(L, -2, m->names[i]);
    }
    lua_setfield(L, -2, "values");
    lua_rawseti(L, -2, r + 1);
  }
  return 1;
}

static int metrics_index(lua_State *L) {
  metrics_box *m = luaL_checkudata(L, 1, METRICS_MT);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "passes") == 0 && m->s) {
    lua_pushinteger(L, kl_metrics_passes(m->s));
    return 1;
  }
  if (strcmp(k, "chip") == 0 && m->s) {
    lua_pushstring(L, kl_metrics_chip(m->s));
    return 1;
  }
  kl_pushmethod(L, 1, k);
  return 1;
}

static const luaL_Reg metrics_meta[] = {
    {"__gc", metrics_close},
    {"__close", metrics_close},
    {"__index", metrics_index},
    {NULL, NULL},
};

static const luaL_Reg metrics_methods[] = {
    {"begin", metrics_begin},
    {"finish", metrics_finish},
    {"close", metrics_close},
    {NULL, NULL},
};

static const luaL_Reg cupti_functions[] = {
    {"version", cupti_version},
    {"library", cupti_library},
    {"activity_start", cupti_activity_start},
    {"activity_collect", cupti_activity_collect},
    {"activity_stop", cupti_activity_stop},
    {"metrics", cupti_metrics},
    {NULL, NULL},
};

int luaopen_kl_cupti(lua_State *L) {
  kl_newtype(L, METRICS_MT, metrics_meta, metrics_methods);
  kl_scratch_open(L);
  luaL_newlib(L, cupti_functions);
  lua_pushinteger(L, CUPTI_API_VERSION);
  lua_setfield(L, -2, "header_version");
  return 1;
}
