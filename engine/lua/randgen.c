/* kl.randgen: host buffers as packed little-endian Lua strings: the
 * deterministic input generator (specified in engine/core/randgen.h),
 * packing, poisoning and the tolerance check.
 *
 *   randgen.fill(type, count, init, seed, stream [, first]) -> string
 *       init = "uniform" | "normal" | "zeros" | { "int", lo, hi }
 *   randgen.poison(type, count)      -> string (every byte 0xFF)
 *   randgen.pack(type, list)         -> string
 *   randgen.unpack(type, data [, first [, count]]) -> list (1-based first)
 *   randgen.get(type, data, i)       -> number (element i, 1-based)
 *   randgen.size(type)               -> bytes per element | nil
 *   randgen.types()                  -> { "f32", "f64", ... }
 *   randgen.bits(seed, stream, i)    -> the 64-bit bits(i) (0-based i), an integer
 *   randgen.rng(seed, stream)        -> Rng, a sequential stream of the same
 *       bits, for custom init functions: r:uniform() (f64 in [-1, 1)),
 *       r:normal(), r:int(lo, hi), r:bits()
 *   randgen.rmat_csr(rng, V, E, qa, qb, qc) -> string
 *       an RMAT graph in CSR, as engine/core/rmat.h specifies, drawn from
 *       the Rng (which advances past the draws): the V + 1 offsets then
 *       the E columns, little-endian i32. qa, qb, qc: quadrant thresholds
 *       out of 256.
 *   randgen.compare(type, out, ref, { rtol, atol })
 *       -> { pass, max_abs, max_rel, max_ref, first_bad, bad_count, nonfinite }
 *       out passes when every |out - ref| <= atol + rtol * max|ref|; a NaN or
 *       infinity in out never passes; integer types must match exactly.
 *       first_bad is 1-based (nil when none). */
#include <math.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "core/randgen.h"
#include "core/rmat.h"
#include "lua/newtype.h"
#include "lua/randgen_args.h"

#define RNG_MT "kl.Rng"

typedef struct {
  uint64_t key;
  uint64_t next; /* index of the next element */
} rng_box;

static size_t check_count(lua_State *L, int i) {
  lua_Integer n = luaL_checkinteger(L, i);
  luaL_argcheck(L, n >= 0, i, "count must not be negative");
  return (size_t)n;
}

static int l_fill(lua_State *L) {
  kl_dtype t = kl_check_dtype(L, 1);
  size_t count = check_count(L, 2);
  kl_init init = kl_check_init(L, 3);
  uint64_t seed = (uint64_t)luaL_checkinteger(L, 4);
  uint64_t stream = (uint64_t)luaL_checkinteger(L, 5);
  lua_Integer first = luaL_optinteger(L, 6, 0);
  luaL_argcheck(L, first >= 0, 6, "first must not be negative");
  luaL_Buffer b;
  char *p = luaL_buffinitsize(L, &b, count * kl_dtype_size(t) + 1);
  const char *why = NULL;
  if (kl_randgen_fill(t, &init, seed, stream, (uint64_t)first, count, p, &why) != 0)
    return luaL_argerror(L, 3, why);
  luaL_pushresultsize(&b, count * kl_dtype_size(t));
  return 1;
}

static int l_poison(lua_State *L) {
  kl_dtype t = kl_check_dtype(L, 1);
  size_t n = check_count(L, 2) * kl_dtype_size(t);
  lua_Integer byte = luaL_optinteger(L, 3, 0xFF);
  luaL_argcheck(L, byte >= 0 && byte <= 255, 3, "a byte value");
  luaL_Buffer b;
  char *p = luaL_buffinitsize(L, &b, n + 1);
  memset(p, (int)byte, n);
  luaL_pushresultsize(&b, n);
  return 1;
}

static int l_pack(lua_State *L) {
  kl_dtype t = kl_check_dtype(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  size_t n = (size_t)luaL_len(L, 2), size = kl_dtype_size(t);
  luaL_Buffer b;
  char *p = luaL_buffinitsize(L, &b, n * size + 1);
  for (size_t i = 0; i < n; i++) {
    int kind = lua_rawgeti(L, 2, (lua_Integer)i + 1);
    if (kind != LUA_TNUMBER) luaL_error(L, "randgen.pack: element %d is a %s, not a number", (int)i + 1, lua_typename(L, kind));
    if (lua_isinteger(L, -1)) {
      kl_store_int(t, lua_tointeger(L, -1), p + i * size);
    } else if (kl_dtype_is_float(t)) {
      kl_store_double(t, lua_tonumber(L, -1), p + i * size);
    } else {
      int exact = 0;
      lua_Integer v = lua_tointegerx(L, -1, &exact);
      if (!exact)
        luaL_error(L, "randgen.pack: element %d (%f) is not an integer for %s", (int)i + 1,
                   lua_tonumber(L, -1), kl_dtype_name(t));
      kl_store_int(t, v, p + i * size);
    }
    lua_pop(L, 1);
  }
  luaL_pushresultsize(&b, n * size);
  return 1;
}

static void push_element(lua_State *L, kl_dtype t, const char *p) {
  if (kl_dtype_is_float(t)) lua_pushnumber(L, kl_load_double(t, p));
  else lua_pushinteger(L, kl_load_int(t, p));
}

static int l_unpack(lua_State *L) {
  kl_dtype t = kl_check_dtype(L, 1);
  size_t len;
  const char *data = luaL_checklstring(L, 2, &len);
  size_t size = kl_dtype_size(t), total = len / size;
  lua_Integer first = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, first >= 1, 3, "first must be >= 1");
  size_t from = (size_t)first - 1;
  size_t count = from < total ? total - from : 0;
  if (!lua_isnoneornil(L, 4)) {
    size_t want = check_count(L, 4);
    luaL_argcheck(L, from + want <= total, 4, "past the end of the data");
    count = want;
  }
  lua_createtable(L, (int)count, 0);
  for (size_t i = 0; i < count; i++) {
    push_element(L, t, data + (from + i) * size);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int l_get(lua_State *L) {
  kl_dtype t = kl_check_dtype(L, 1);
  size_t len;
  const char *data = luaL_checklstring(L, 2, &len);
  lua_Integer i = luaL_checkinteger(L, 3);
  size_t size = kl_dtype_size(t);
  luaL_argcheck(L, i >= 1 && (size_t)i <= len / size, 3, "index out of range");
  push_element(L, t, data + (size_t)(i - 1) * size);
  return 1;
}

static int l_size(lua_State *L) {
  int t = kl_dtype_parse(luaL_checkstring(L, 1));
  if (t < 0) return 0;
  lua_pushinteger(L, (lua_Integer)kl_dtype_size((kl_dtype)t));
  return 1;
}

static int l_types(lua_State *L) {
  lua_createtable(L, KL_DTYPE_COUNT, 0);
  for (int t = 0; t < KL_DTYPE_COUNT; t++) {
    lua_pushstring(L, kl_dtype_name((kl_dtype)t));
    lua_rawseti(L, -2, t + 1);
  }
  return 1;
}

static int l_bits(lua_State *L) {
  uint64_t seed = (uint64_t)luaL_checkinteger(L, 1);
  uint64_t stream = (uint64_t)luaL_checkinteger(L, 2);
  uint64_t i = (uint64_t)luaL_checkinteger(L, 3);
  lua_pushinteger(L, (lua_Integer)kl_randgen_bits(kl_randgen_key(seed, stream), i));
  return 1;
}

static int l_rng(lua_State *L) {
  uint64_t seed = (uint64_t)luaL_checkinteger(L, 1);
  uint64_t stream = (uint64_t)luaL_optinteger(L, 2, 0);
  rng_box *r = lua_newuserdatauv(L, sizeof *r, 0);
  r->key = kl_randgen_key(seed, stream);
  r->next = 0;
  luaL_setmetatable(L, RNG_MT);
  return 1;
}

static uint64_t rng_next(lua_State *L) {
  rng_box *r = luaL_checkudata(L, 1, RNG_MT);
  return kl_randgen_bits(r->key, r->next++);
}

static int rng_uniform(lua_State *L) {
  lua_pushnumber(L, kl_randgen_uniform(rng_next(L), 53));
  return 1;
}

static int rng_normal(lua_State *L) {
  lua_pushnumber(L, kl_randgen_normal(rng_next(L)));
  return 1;
}

static int rng_int(lua_State *L) {
  lua_Integer lo = luaL_checkinteger(L, 2), hi = luaL_checkinteger(L, 3);
  luaL_argcheck(L, lo <= hi, 3, "hi must be >= lo");
  lua_pushinteger(L, kl_randgen_int(rng_next(L), lo, hi));
  return 1;
}

static int rng_bits(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)rng_next(L));
  return 1;
}

/* Every argument is checked before anything is allocated, and the scratch
 * and the result live in Lua's memory (a userdata, a luaL_Buffer), so an
 * error (out of memory included) cannot leak them. */
static int l_rmat_csr(lua_State *L) {
  rng_box *r = luaL_checkudata(L, 1, RNG_MT);
  lua_Integer V = luaL_checkinteger(L, 2), E = luaL_checkinteger(L, 3);
  int q[3];
  for (int i = 0; i < 3; i++) {
    lua_Integer t = luaL_checkinteger(L, 4 + i);
    luaL_argcheck(L, t >= (i ? q[i - 1] : 0) && t <= 256, 4 + i, "thresholds must satisfy 0 <= qa <= qb <= qc <= 256");
    q[i] = (int)t;
  }
  luaL_argcheck(L, V >= 2 && V <= KL_RMAT_MAX_V && (V & (V - 1)) == 0, 2, "V must be a power of two from 2 to 2^30");
  luaL_argcheck(L, E > 0 && E % (2 * V) == 0, 3, "E must be 2 * edge factor * V, edge factor >= 1");
  luaL_argcheck(L, E < ((lua_Integer)1 << 31), 3, "E must be below 2^31 (i32 offsets)");
  uint32_t *scratch = lua_newuserdatauv(L, 2 * (size_t)V * sizeof *scratch, 0);
  size_t bytes = 4 * ((size_t)V + 1 + (size_t)E);
  luaL_Buffer b;
  unsigned char *out = (unsigned char *)luaL_buffinitsize(L, &b, bytes);
  kl_rmat_csr(r->key, &r->next, (uint32_t)V, (uint32_t)E, q, scratch, scratch + V, out);
  luaL_pushresultsize(&b, bytes);
  return 1;
}

static double opt_number_field(lua_State *L, int t, const char *k, double def) {
  if (lua_isnoneornil(L, t)) return def;
  lua_getfield(L, t, k);
  double v = luaL_optnumber(L, -1, def);
  lua_pop(L, 1);
  return v;
}

static int l_compare(lua_State *L) {
  kl_dtype t = kl_check_dtype(L, 1);
  size_t out_len, ref_len;
  const char *out = luaL_checklstring(L, 2, &out_len);
  const char *ref = luaL_checklstring(L, 3, &ref_len);
  luaL_argcheck(L, out_len == ref_len, 3, "output and reference differ in size");
  double rtol = opt_number_field(L, 4, "rtol", 0), atol = opt_number_field(L, 4, "atol", 0);
  size_t size = kl_dtype_size(t), n = out_len / size;
  int is_float = kl_dtype_is_float(t);
  double max_ref = 0, max_abs = 0, max_rel = 0;
  size_t first_bad = 0, bad = 0, nonfinite = 0;
  if (is_float) {
    for (size_t i = 0; i < n; i++) {
      double r = fabs(kl_load_double(t, ref + i * size));
      if (isfinite(r) && r > max_ref) max_ref = r;
    }
  }
  double tol = atol + rtol * max_ref;
  for (size_t i = 0; i < n; i++) {
    int ok;
    if (is_float) {
      double o = kl_load_double(t, out + i * size), r = kl_load_double(t, ref + i * size);
      if (!isfinite(o) || !isfinite(r)) {
        nonfinite++;
        ok = 0;
      } else {
        double d = fabs(o - r);
        if (d > max_abs) max_abs = d;
        if (r != 0 && d / fabs(r) > max_rel) max_rel = d / fabs(r);
        ok = d <= tol;
      }
    } else {
      int64_t o = kl_load_int(t, out + i * size), r = kl_load_int(t, ref + i * size);
      double d = fabs((double)o - (double)r);
      if (d > max_abs) max_abs = d;
      if (r != 0 && d / fabs((double)r) > max_rel) max_rel = d / fabs((double)r);
      ok = o == r;
    }
    if (!ok && bad++ == 0) first_bad = i + 1;
  }
  lua_createtable(L, 0, 8);
  lua_pushboolean(L, bad == 0);
  lua_setfield(L, -2, "pass");
  lua_pushnumber(L, max_abs);
  lua_setfield(L, -2, "max_abs");
  lua_pushnumber(L, max_rel);
  lua_setfield(L, -2, "max_rel");
  lua_pushnumber(L, max_ref);
  lua_setfield(L, -2, "max_ref");
  lua_pushnumber(L, is_float ? tol : 0);
  lua_setfield(L, -2, "tolerance");
  lua_pushinteger(L, (lua_Integer)bad);
  lua_setfield(L, -2, "bad_count");
  lua_pushinteger(L, (lua_Integer)nonfinite);
  lua_setfield(L, -2, "nonfinite");
  lua_pushinteger(L, (lua_Integer)n);
  lua_setfield(L, -2, "count");
  if (first_bad) {
    lua_pushinteger(L, (lua_Integer)first_bad);
    lua_setfield(L, -2, "first_bad");
  }
  return 1;
}

static const luaL_Reg rng_methods[] = {
    {"uniform", rng_uniform}, {"normal", rng_normal}, {"int", rng_int}, {"bits", rng_bits}, {NULL, NULL},
};

static const luaL_Reg randgen_functions[] = {
    {"fill", l_fill},   {"poison", l_poison}, {"pack", l_pack}, {"unpack", l_unpack},
    {"get", l_get},     {"size", l_size},     {"types", l_types}, {"bits", l_bits},
    {"rng", l_rng},     {"compare", l_compare}, {"rmat_csr", l_rmat_csr}, {NULL, NULL},
};

int luaopen_kl_randgen(lua_State *L) {
  kl_newtype(L, RNG_MT, NULL, rng_methods);
  luaL_newlib(L, randgen_functions);
  return 1;
}
