/* kl.nvrtc: compile CUDA C++ with NVRTC, with no GPU needed.
 *
 *   nvrtc.compile(source, opts) -> result | nil, message, details
 *     opts.arch      "sm_90" (default) or "compute_90" (PTX only)
 *     opts.name      file name used in diagnostics (default "kernel.cu")
 *     opts.options   extra NVRTC options, a list of strings
 *     opts.names     name expressions to lower ("tmpl<128>"), for templates
 *   result = { ptx, cubin (nil for compute_XX), log, arch,
 *              functions = { [name] = { registers, smem, ... } },
 *              lowered = { [expr] = mangled } }
 *   details = { log, file, line, col, severity, message }
 *
 * A compile error is an expected failure; bad arguments raise. The NVRTC
 * program lives in a boxed userdata so that an error raised mid-compile
 * never leaks it. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>
#include <nvrtc.h>

#include "core/libpath.h"
#include "core/nvrtc_log.h"

#define PROGRAM_MT "kl.NvrtcProgram"
#define MAX_OPTIONS 64
#define MAX_FUNCTIONS 256

typedef struct {
  nvrtcProgram prog; /* NULL once destroyed */
} program_box;

static void program_destroy(program_box *b);

static int program_gc(lua_State *L) {
  program_destroy(luaL_checkudata(L, 1, PROGRAM_MT));
  return 0;
}

static void program_destroy(program_box *b) {
  if (b->prog) {
    nvrtcDestroyProgram(&b->prog);
    b->prog = NULL;
  }
}

static program_box *new_program_box(lua_State *L) {
  program_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->prog = NULL; /* closed state first, then acquire */
  if (luaL_newmetatable(L, PROGRAM_MT)) {
    lua_pushcfunction(L, program_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, program_gc);
    lua_setfield(L, -2, "__close");
  }
  lua_setmetatable(L, -2);
  return b;
}

static void check_nvrtc(lua_State *L, nvrtcResult r, const char *what) {
  if (r != NVRTC_SUCCESS) luaL_error(L, "nvrtc: %s: %s", what, nvrtcGetErrorString(r));
}

/* Pushes the program log as a string. */
static void push_log(lua_State *L, nvrtcProgram prog) {
  size_t n = 0;
  check_nvrtc(L, nvrtcGetProgramLogSize(prog, &n), "nvrtcGetProgramLogSize");
  luaL_Buffer buf;
  char *p = luaL_buffinitsize(L, &buf, n ? n : 1);
  check_nvrtc(L, nvrtcGetProgramLog(prog, p), "nvrtcGetProgramLog");
  luaL_pushresultsize(&buf, n ? strlen(p) : 0);
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

/* Pushes { [name] = resources } parsed from the ptxas report in log. */
static void push_functions(lua_State *L, const char *log) {
  kl_ptxas_function *fns = lua_newuserdatauv(L, sizeof *fns * MAX_FUNCTIONS, 0);
  int n = kl_ptxas_parse(log, fns, MAX_FUNCTIONS);
  if (n > MAX_FUNCTIONS) n = MAX_FUNCTIONS;
  lua_createtable(L, 0, n);
  for (int i = 0; i < n; i++) {
    lua_createtable(L, 0, 9);
    lua_pushboolean(L, fns[i].is_entry);
    lua_setfield(L, -2, "entry");
    set_int(L, "registers", fns[i].registers);
    set_int(L, "barriers", fns[i].barriers);
    set_int(L, "smem", fns[i].smem);
    set_int(L, "cmem0", fns[i].cmem0);
    set_int(L, "stack", fns[i].stack);
    set_int(L, "spill_stores", fns[i].spill_stores);
    set_int(L, "spill_loads", fns[i].spill_loads);
    lua_setfield(L, -2, fns[i].name);
  }
  lua_remove(L, -2); /* the scratch userdata */
}

static int push_failure(lua_State *L, const char *log) {
  kl_diagnostic d;
  int found = kl_nvrtc_first_diagnostic(log, &d);
  lua_pushnil(L);
  if (found && d.col)
    lua_pushfstring(L, "%s:%d:%d: %s: %s", d.file, d.line, d.col, d.severity, d.message);
  else if (found)
    lua_pushfstring(L, "%s:%d: %s: %s", d.file, d.line, d.severity, d.message);
  else
    lua_pushfstring(L, "compile failed: %s", d.message[0] ? d.message : "(empty log)");
  lua_createtable(L, 0, 6);
  lua_pushstring(L, log);
  lua_setfield(L, -2, "log");
  if (found) {
    lua_pushstring(L, d.file);
    lua_setfield(L, -2, "file");
    set_int(L, "line", d.line);
    set_int(L, "col", d.col);
    lua_pushstring(L, d.severity);
    lua_setfield(L, -2, "severity");
  }
  lua_pushstring(L, d.message);
  lua_setfield(L, -2, "message");
  return 3;
}

static int nvrtc_compile(lua_State *L) {
  size_t srclen;
  luaL_checktype(L, 1, LUA_TSTRING); /* a number is no source */
  const char *src = lua_tolstring(L, 1, &srclen);
  if (lua_isnoneornil(L, 2)) {
    lua_settop(L, 1);
    lua_newtable(L);
  }
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_settop(L, 2);
  if (memchr(src, '\0', srclen))
    return luaL_argerror(L, 1, "source contains a NUL byte");

  lua_getfield(L, 2, "arch"); /* 3 */
  const char *arch = luaL_optstring(L, 3, "sm_90");
  if (strncmp(arch, "sm_", 3) != 0 && strncmp(arch, "compute_", 8) != 0)
    return luaL_argerror(L, 2, "opts.arch must look like sm_90 or compute_90");
  int want_cubin = strncmp(arch, "sm_", 3) == 0;
  lua_getfield(L, 2, "name"); /* 4 */
  const char *name = luaL_optstring(L, 4, "kernel.cu");

  const char *options[MAX_OPTIONS];
  int nopt = 0;
  lua_pushfstring(L, "-arch=%s", arch); /* 5 */
  options[nopt++] = lua_tostring(L, 5);
  if (want_cubin) options[nopt++] = "--ptxas-options=-v";
  /* Where a driver is present NVRTC reuses cubins from the driver's compute
   * cache and then runs no ptxas, so the log has no resource report. The
   * engine keeps its own content-addressed cache (with the report), so
   * NVRTC's is turned off. */
  options[nopt++] = "--no-cache";
  /* The toolkit's headers (cuda_fp16.h, cuda_bf16.h, ...) resolve as they
   * do under nvcc. */
  options[nopt++] = "--include-path=" KL_CUDA_INCLUDE_DIR;
  lua_getfield(L, 2, "options"); /* 6 */
  if (!lua_isnil(L, 6)) {
    luaL_checktype(L, 6, LUA_TTABLE);
    lua_Integer n = luaL_len(L, 6);
    for (lua_Integer i = 1; i <= n; i++) {
      if (nopt >= MAX_OPTIONS) return luaL_error(L, "nvrtc: more than %d options", MAX_OPTIONS);
      lua_geti(L, 6, i);
      if (lua_type(L, -1) != LUA_TSTRING)
        return luaL_error(L, "nvrtc: opts.options[%d] is not a string", (int)i);
      options[nopt++] = lua_tostring(L, -1); /* stays on the stack */
    }
  }
  lua_getfield(L, 2, "names");
  int names_idx = lua_gettop(L);
  lua_Integer nnames = 0;
  if (!lua_isnil(L, names_idx)) {
    luaL_checktype(L, names_idx, LUA_TTABLE);
    nnames = luaL_len(L, names_idx);
    for (lua_Integer i = 1; i <= nnames; i++) {
      if (lua_geti(L, names_idx, i) != LUA_TSTRING)
        return luaL_error(L, "nvrtc: opts.names[%d] is not a string", (int)i);
      lua_pop(L, 1);
    }
  }

  program_box *box = new_program_box(L);
  check_nvrtc(L, nvrtcCreateProgram(&box->prog, src, name, 0, NULL, NULL), "nvrtcCreateProgram");
  for (lua_Integer i = 1; i <= nnames; i++) {
    lua_geti(L, names_idx, i);
    check_nvrtc(L, nvrtcAddNameExpression(box->prog, lua_tostring(L, -1)), "nvrtcAddNameExpression");
    lua_pop(L, 1);
  }
  nvrtcResult cr = nvrtcCompileProgram(box->prog, nopt, options);
  push_log(L, box->prog);
  int log_idx = lua_gettop(L);
  if (cr == NVRTC_ERROR_COMPILATION) {
    program_destroy(box);
    return push_failure(L, lua_tostring(L, log_idx));
  }
  if (cr != NVRTC_SUCCESS) {
    program_destroy(box);
    lua_pushnil(L);
    lua_pushfstring(L, "nvrtc: %s", nvrtcGetErrorString(cr));
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, log_idx);
    lua_setfield(L, -2, "log");
    return 3;
  }

  lua_createtable(L, 0, 8);
  int res = lua_gettop(L);
  lua_pushvalue(L, log_idx);
  lua_setfield(L, res, "log");
  lua_pushstring(L, arch);
  lua_setfield(L, res, "arch");

  size_t n = 0;
  check_nvrtc(L, nvrtcGetPTXSize(box->prog, &n), "nvrtcGetPTXSize");
  luaL_Buffer buf;
  char *p = luaL_buffinitsize(L, &buf, n);
  check_nvrtc(L, nvrtcGetPTX(box->prog, p), "nvrtcGetPTX");
  luaL_pushresultsize(&buf, n && p[n - 1] == '\0' ? n - 1 : n);
  lua_setfield(L, res, "ptx");

  if (want_cubin) {
    check_nvrtc(L, nvrtcGetCUBINSize(box->prog, &n), "nvrtcGetCUBINSize");
    /* NVRTC answers success with 0 bytes for a virtual arch; never hand
     * out an empty cubin as if it were one. */
    if (n == 0) return luaL_error(L, "nvrtc: %s produced an empty cubin", arch);
    p = luaL_buffinitsize(L, &buf, n);
    check_nvrtc(L, nvrtcGetCUBIN(box->prog, p), "nvrtcGetCUBIN");
    luaL_pushresultsize(&buf, n);
    lua_setfield(L, res, "cubin");
  }

  push_functions(L, lua_tostring(L, log_idx));
  lua_setfield(L, res, "functions");

  lua_createtable(L, 0, (int)nnames);
  for (lua_Integer i = 1; i <= nnames; i++) {
    lua_geti(L, names_idx, i);
    const char *lowered = NULL;
    check_nvrtc(L, nvrtcGetLoweredName(box->prog, lua_tostring(L, -1), &lowered), "nvrtcGetLoweredName");
    lua_pushstring(L, lowered); /* copied before the program is destroyed */
    lua_settable(L, -3);
  }
  lua_setfield(L, res, "lowered");

  program_destroy(box);
  lua_pushvalue(L, res);
  return 1;
}

/* nvrtc.version() -> major, minor */
static int nvrtc_version(lua_State *L) {
  int major = 0, minor = 0;
  check_nvrtc(L, nvrtcVersion(&major, &minor), "nvrtcVersion");
  lua_pushinteger(L, major);
  lua_pushinteger(L, minor);
  return 2;
}

/* nvrtc.archs() -> { "sm_75", ..., "sm_120" } : the real archs NVRTC can target */
static int nvrtc_archs(lua_State *L) {
  int n = 0;
  check_nvrtc(L, nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  int *archs = lua_newuserdatauv(L, sizeof(int) * (size_t)(n > 0 ? n : 1), 0);
  check_nvrtc(L, nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs");
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushfstring(L, "sm_%d", archs[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int nvrtc_library(lua_State *L) {
  char buf[PATH_MAX];
  if (kl_library_of((const void *)nvrtcVersion, buf, sizeof buf))
    lua_pushstring(L, buf);
  else
    lua_pushnil(L);
  return 1;
}

static const luaL_Reg nvrtc_functions[] = {
    {"compile", nvrtc_compile},
    {"version", nvrtc_version},
    {"archs", nvrtc_archs},
    {"library", nvrtc_library},
    {NULL, NULL},
};

int luaopen_kl_nvrtc(lua_State *L) {
  luaL_newlib(L, nvrtc_functions);
  return 1;
}
