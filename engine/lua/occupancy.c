/* kl.occupancy: theoretical occupancy with no GPU (engine/core/occupancy.h).
 *
 *   occupancy.compute{ arch = "sm_90", registers = 32, threads = 256,
 *                      smem = static bytes (ptxas), dynamic_smem = 0,
 *                      barriers = 0, optin = nil }
 *     -> { active_blocks, active_warps, occupancy, limited_by = "registers",
 *          limiting = { "warps", "registers" }, limits = { warps = n, ... },
 *          regs_per_warp, smem_per_block, why_zero }
 *     | nil, "unknown architecture ..."
 *   The field names (registers, smem, barriers) match a kl.nvrtc function
 *   record: copy res.functions[name] into the table and add the launch
 *   (threads, dynamic_smem). limited_by is the first binding limit, in the
 *   order registers, smem, warps, blocks, barriers. optin defaults to
 *   true exactly when static + dynamic smem exceeds 48 KiB (the worker raises
 *   the attribute then).
 *   occupancy.archs() -> { "sm_80", "sm_86", "sm_89", "sm_90" }
 *   occupancy.limits(arch) -> { max_warps_per_sm, ... } | nil, err */
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "core/occupancy.h"

static lua_Integer opt_int_field(lua_State *L, int t, const char *k, lua_Integer def) {
  lua_getfield(L, t, k);
  lua_Integer v = def;
  if (!lua_isnil(L, -1)) {
    int ok;
    v = lua_tointegerx(L, -1, &ok);
    if (!ok) luaL_error(L, "occupancy.compute: field '%s' must be an integer", k);
    if (v < 0) luaL_error(L, "occupancy.compute: field '%s' must not be negative", k);
  }
  lua_pop(L, 1);
  return v;
}

static int push_unknown_arch(lua_State *L, const char *arch) {
  lua_pushnil(L);
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  luaL_addstring(&b, "unknown architecture '");
  luaL_addstring(&b, arch);
  luaL_addstring(&b, "' for occupancy (known:");
  for (const char *const *p = kl_arch_limits_names(); *p; p++) {
    luaL_addchar(&b, ' ');
    luaL_addstring(&b, *p);
  }
  luaL_addchar(&b, ')');
  luaL_pushresult(&b);
  return 2;
}

static void set_limit(lua_State *L, const char *k, int v) {
  if (v == KL_OCC_UNLIMITED) return; /* absent: the limit does not apply */
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static int occ_compute(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "arch");
  const char *arch = lua_isnil(L, -1) ? "sm_90" : luaL_checkstring(L, -1);
  const kl_arch_limits *a = kl_arch_limits_find(arch);
  if (!a) return push_unknown_arch(L, arch);
  kl_occupancy_input in;
  in.registers = (int)opt_int_field(L, 1, "registers", 0);
  in.static_smem = (size_t)opt_int_field(L, 1, "smem", 0);
  in.static_smem = (size_t)opt_int_field(L, 1, "static_smem", (lua_Integer)in.static_smem);
  in.dynamic_smem = (size_t)opt_int_field(L, 1, "dynamic_smem", 0);
  in.barriers = (int)opt_int_field(L, 1, "barriers", 0);
  lua_getfield(L, 1, "threads");
  if (!lua_isinteger(L, -1) || lua_tointeger(L, -1) <= 0)
    return luaL_error(L, "occupancy.compute: field 'threads' must be a positive integer");
  in.threads = (int)lua_tointeger(L, -1);
  lua_getfield(L, 1, "optin");
  in.optin = lua_isnil(L, -1) ? in.static_smem + in.dynamic_smem > a->smem_per_block
                              : lua_toboolean(L, -1);
  kl_occupancy out;
  kl_occupancy_compute(a, &in, &out);

  lua_createtable(L, 0, 10);
  lua_pushstring(L, a->arch);
  lua_setfield(L, -2, "arch");
  lua_pushinteger(L, out.active_blocks);
  lua_setfield(L, -2, "active_blocks");
  lua_pushinteger(L, out.active_warps);
  lua_setfield(L, -2, "active_warps");
  lua_pushnumber(L, out.occupancy);
  lua_setfield(L, -2, "occupancy");
  lua_pushinteger(L, out.regs_per_warp);
  lua_setfield(L, -2, "regs_per_warp");
  lua_pushinteger(L, (lua_Integer)out.smem_per_block);
  lua_setfield(L, -2, "smem_per_block");
  lua_pushboolean(L, in.optin);
  lua_setfield(L, -2, "optin");
  if (out.why_zero) {
    lua_pushstring(L, out.why_zero);
    lua_setfield(L, -2, "why_zero");
  }
  static const kl_occupancy_factor order[] = {KL_OCC_REGISTERS, KL_OCC_SMEM, KL_OCC_WARPS,
                                              KL_OCC_BLOCKS, KL_OCC_BARRIERS};
  lua_newtable(L);
  int n = 0;
  for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
    if (!(out.limited_by & order[i])) continue;
    lua_pushstring(L, kl_occupancy_factor_name(order[i]));
    lua_rawseti(L, -2, ++n);
  }
  lua_rawgeti(L, -1, 1);
  lua_setfield(L, -3, "limited_by"); /* the first: resources before hard caps */
  lua_setfield(L, -2, "limiting");
  lua_newtable(L);
  set_limit(L, "warps", out.limit_warps);
  set_limit(L, "registers", out.limit_registers);
  set_limit(L, "smem", out.limit_smem);
  set_limit(L, "blocks", out.limit_blocks);
  set_limit(L, "barriers", out.limit_barriers);
  lua_setfield(L, -2, "limits");
  return 1;
}

static int occ_archs(lua_State *L) {
  lua_newtable(L);
  int n = 0;
  for (const char *const *p = kl_arch_limits_names(); *p; p++) {
    lua_pushstring(L, *p);
    lua_rawseti(L, -2, ++n);
  }
  return 1;
}

static int occ_limits(lua_State *L) {
  const char *arch = luaL_checkstring(L, 1);
  const kl_arch_limits *a = kl_arch_limits_find(arch);
  if (!a) return push_unknown_arch(L, arch);
  lua_createtable(L, 0, 14);
#define FIELD(name)                         \
  lua_pushinteger(L, (lua_Integer)a->name); \
  lua_setfield(L, -2, #name);
  FIELD(max_warps_per_sm)
  FIELD(max_blocks_per_sm)
  FIELD(max_threads_per_block)
  FIELD(regs_per_sm)
  FIELD(regs_per_block)
  FIELD(max_regs_per_thread)
  FIELD(reg_alloc_unit)
  FIELD(sub_partitions)
  FIELD(smem_per_sm)
  FIELD(smem_per_block)
  FIELD(smem_per_block_optin)
  FIELD(smem_reserved)
  FIELD(smem_alloc_unit)
#undef FIELD
  return 1;
}

static const luaL_Reg occ_functions[] = {
    {"compute", occ_compute},
    {"archs", occ_archs},
    {"limits", occ_limits},
    {NULL, NULL},
};

int luaopen_kl_occupancy(lua_State *L) {
  luaL_newlib(L, occ_functions);
  return 1;
}
