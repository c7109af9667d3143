/* kl.nvrtc: compile CUDA C++ with NVRTC, with no GPU needed.
 *
 *   nvrtc.compile(source, opts) -> result | nil, message, details
 *     opts.arch      "sm_90" (default) or "compute_90" (PTX only)
 *     opts.name      file name used in diagnostics (default "kernel.cu");
 *                    its control characters are shown as C escapes (\n,
 *                    \t, \ooo), so that a diagnostic stays one line
 *     opts.options   extra NVRTC options, a list of strings
 *     opts.names     name expressions to lower ("tmpl<128>"), for templates
 *   result = { ptx, cubin (nil for compute_XX), log, arch,
 *              functions = { [name] = { registers, smem, ... } },
 *              lowered = { [expr] = mangled } }
 *   details = { log, file, line, col, severity, message }, or { log, result }
 *     when NVRTC failed for another reason than the source: result is
 *     NVRTC's name for it ("NVRTC_ERROR_INVALID_OPTION": a bad option or
 *     arch) and the message is the log's error line, else "nvrtc: " and
 *     that name
 *     message is "file:line:col: severity: text" where NVRTC gives a
 *     location, else "file: " and the first error line of the log (ptxas
 *     reports its errors without one: "ptxas error   : Entry function 'k'
 *     uses too much shared data ...").
 *   nvrtc.include_paths() -> { dir... }
 *     the toolkit's header folders every compile searches: include/, and
 *     include/cccl where the toolkit has it (CUDA 13 keeps libcu++'s
 *     cuda/std/..., which cooperative_groups.h includes, there)
 *
 *   nvrtc.read_source(path [, max_bytes]) -> text | nil, message, stage
 *     Reads a source file for the compiler. The file is opened non-blocking
 *     and checked with fstat before a byte is read, so a FIFO, a device
 *     (/dev/zero), a socket or a directory is refused at once instead of
 *     blocking or filling memory; a file over max_bytes (default 4 MiB),
 *     or one that grows past it while it is read, is refused too. message
 *     is the reason alone (no path); stage is "open" (the reason is the
 *     system's), "type", "size" or "read".
 *
 * A compile error is an expected failure; bad arguments raise. The NVRTC
 * program lives in a boxed userdata so that an error raised mid-compile
 * never leaks it; so does the descriptor read_source holds.
 *
 * libnvrtc is opened on first use (compile, version, archs, library), not
 * linked: its load and relocation cost some 40 ms of CPU, and most klineage
 * processes (emu workers, commands that stop at bad input) never compile.
 * It is the library the build found (KL_NVRTC_LIBRARY), else its soname on
 * the loader's path; a missing one raises. */
#define _POSIX_C_SOURCE 200809L

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <nvrtc.h>

#include "core/libpath.h"
#include "core/nvrtc_log.h"
#include "lua/newtype.h"

#define PROGRAM_MT "kl.NvrtcProgram"
#define SOURCE_FILE_MT "kl.NvrtcSourceFile"
#define MAX_OPTIONS 64
#define MAX_FUNCTIONS 256
#define SOURCE_MAX_BYTES ((lua_Integer)4 << 20)
#define VERBOSE_PTXAS "--ptxas-options=-v"
#define CCCL_DIR KL_CUDA_INCLUDE_DIR "/cccl"

/* The NVRTC functions this module calls, opened once. */
#define NVRTC_FUNCTIONS(X)                                                                           \
  X(nvrtcVersion) X(nvrtcGetErrorString) X(nvrtcCreateProgram) X(nvrtcDestroyProgram)                \
  X(nvrtcCompileProgram) X(nvrtcAddNameExpression) X(nvrtcGetLoweredName) X(nvrtcGetProgramLogSize)  \
  X(nvrtcGetProgramLog) X(nvrtcGetPTXSize) X(nvrtcGetPTX) X(nvrtcGetCUBINSize) X(nvrtcGetCUBIN)      \
  X(nvrtcGetNumSupportedArchs) X(nvrtcGetSupportedArchs)

static struct {
#define KL_FIELD(f) __typeof__(&f) f;
  NVRTC_FUNCTIONS(KL_FIELD)
#undef KL_FIELD
} nv;
static void *nv_handle;

/* Opens libnvrtc and finds every function, once; raises when it cannot. */
static void need_nvrtc(lua_State *L) {
  if (nv_handle) return;
  const char *path = KL_NVRTC_LIBRARY;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen(KL_NVRTC_SONAME, RTLD_NOW | RTLD_LOCAL);
  if (!h) luaL_error(L, "kl.nvrtc: cannot load NVRTC (%s): %s", path, dlerror());
#define KL_FIND(f)                                                                       \
  {                                                                                      \
    void *fn = dlsym(h, #f);                                                             \
    if (!fn) {                                                                           \
      dlclose(h);                                                                        \
      luaL_error(L, "kl.nvrtc: %s has no %s", path, #f);                                 \
    }                                                                                    \
    memcpy(&nv.f, &fn, sizeof fn);                                                       \
  }
  NVRTC_FUNCTIONS(KL_FIND)
#undef KL_FIND
  nv_handle = h;
}

/* Whether the toolkit has include/cccl (CUDA 13 and newer; CUDA 12 keeps
 * those headers in include/ itself). Looked at once. */
static int have_cccl(void) {
  static int known = -1;
  if (known < 0) {
    struct stat st;
    known = stat(CCCL_DIR, &st) == 0 && S_ISDIR(st.st_mode);
  }
  return known;
}

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
    nv.nvrtcDestroyProgram(&b->prog);
    b->prog = NULL;
  }
}

static program_box *new_program_box(lua_State *L) {
  program_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->prog = NULL; /* closed state first, then acquire */
  luaL_setmetatable(L, PROGRAM_MT);
  return b;
}

static void check_nvrtc(lua_State *L, nvrtcResult r, const char *what) {
  if (r != NVRTC_SUCCESS) luaL_error(L, "nvrtc: %s: %s", what, nv.nvrtcGetErrorString(r));
}

/* Pushes the program log as a string. */
static void push_log(lua_State *L, nvrtcProgram prog) {
  size_t n = 0;
  check_nvrtc(L, nv.nvrtcGetProgramLogSize(prog, &n), "nvrtcGetProgramLogSize");
  luaL_Buffer buf;
  char *p = luaL_buffinitsize(L, &buf, n ? n : 1);
  check_nvrtc(L, nv.nvrtcGetProgramLog(prog, p), "nvrtcGetProgramLog");
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

static int push_failure(lua_State *L, const char *name, const char *log) {
  kl_diagnostic d;
  int found = kl_nvrtc_first_diagnostic(log, &d);
  lua_pushnil(L);
  if (found && d.col)
    lua_pushfstring(L, "%s:%d:%d: %s: %s", d.file, d.line, d.col, d.severity, d.message);
  else if (found)
    lua_pushfstring(L, "%s:%d: %s: %s", d.file, d.line, d.severity, d.message);
  else
    lua_pushfstring(L, "%s: %s", name, d.message[0] ? d.message : "compile failed (empty log)");
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

/* Pushes name with its control characters written as C escapes. */
static const char *push_display_name(lua_State *L, const char *name) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
    char esc[8];
    if (*p == '\n') luaL_addstring(&b, "\\n");
    else if (*p == '\t') luaL_addstring(&b, "\\t");
    else if (*p == '\r') luaL_addstring(&b, "\\r");
    else if (*p < 0x20 || *p == 0x7f) {
      snprintf(esc, sizeof esc, "\\%03o", *p);
      luaL_addstring(&b, esc);
    } else {
      luaL_addchar(&b, (char)*p);
    }
  }
  luaL_pushresult(&b);
  return lua_tostring(L, -1);
}

/* NVRTC (13.0) leaves ptxas's error line out of the log of a compile that
 * ran ptxas with -v: a kernel with too much shared memory fails with a log
 * that is only the resource report. Compiles src again without -v and
 * pushes that log followed by the verbose one, so the error comes first
 * and the resources stay in view. */
static void push_log_with_ptxas_error(lua_State *L, const char *src, const char *name,
                                      const char *const *options, int nopt, int verbose_idx) {
  const char *quiet[MAX_OPTIONS];
  int n = 0;
  for (int i = 0; i < nopt; i++)
    if (strcmp(options[i], VERBOSE_PTXAS) != 0 && strcmp(options[i], "-Xptxas=-v") != 0) quiet[n++] = options[i];
  program_box *box = new_program_box(L);
  check_nvrtc(L, nv.nvrtcCreateProgram(&box->prog, src, name, 0, NULL, NULL), "nvrtcCreateProgram");
  (void)nv.nvrtcCompileProgram(box->prog, n, quiet); /* it fails again: its log is what we want */
  push_log(L, box->prog);
  program_destroy(box);
  lua_remove(L, -2); /* the box */
  size_t qn = 0;
  const char *q = lua_tolstring(L, -1, &qn);
  lua_pushstring(L, qn && q[qn - 1] != '\n' ? "\n" : "");
  lua_pushvalue(L, verbose_idx);
  lua_concat(L, 3);
}

static int nvrtc_compile(lua_State *L) {
  need_nvrtc(L);
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
  luaL_optstring(L, 4, "kernel.cu");

  const char *options[MAX_OPTIONS];
  int nopt = 0;
  lua_pushfstring(L, "-arch=%s", arch); /* 5 */
  options[nopt++] = lua_tostring(L, 5);
  if (want_cubin) options[nopt++] = VERBOSE_PTXAS;
  /* Where a driver is present NVRTC reuses cubins from the driver's compute
   * cache and then runs no ptxas, so the log has no resource report. The
   * engine keeps its own content-addressed cache (with the report), so
   * NVRTC's is turned off. */
  options[nopt++] = "--no-cache";
  /* The toolkit's headers (cuda_fp16.h, cuda_bf16.h, ...) resolve as they
   * do under nvcc. */
  options[nopt++] = "--include-path=" KL_CUDA_INCLUDE_DIR;
  if (have_cccl()) options[nopt++] = "--include-path=" CCCL_DIR; /* libcu++: cuda/std/... */
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

  const char *name = push_display_name(L, lua_isnil(L, 4) ? "kernel.cu" : lua_tostring(L, 4));

  program_box *box = new_program_box(L);
  check_nvrtc(L, nv.nvrtcCreateProgram(&box->prog, src, name, 0, NULL, NULL), "nvrtcCreateProgram");
  for (lua_Integer i = 1; i <= nnames; i++) {
    lua_geti(L, names_idx, i);
    check_nvrtc(L, nv.nvrtcAddNameExpression(box->prog, lua_tostring(L, -1)), "nvrtcAddNameExpression");
    lua_pop(L, 1);
  }
  nvrtcResult cr = nv.nvrtcCompileProgram(box->prog, nopt, options);
  push_log(L, box->prog);
  int log_idx = lua_gettop(L);
  if (cr == NVRTC_ERROR_COMPILATION) {
    program_destroy(box);
    if (want_cubin && !kl_nvrtc_log_has_error(lua_tostring(L, log_idx))) {
      push_log_with_ptxas_error(L, src, name, options, nopt, log_idx);
      lua_replace(L, log_idx);
    }
    return push_failure(L, name, lua_tostring(L, log_idx));
  }
  if (cr != NVRTC_SUCCESS) {
    /* Not the source's fault: an option NVRTC refused, or NVRTC itself.
     * The log's first line says which option. */
    program_destroy(box);
    kl_diagnostic d;
    kl_nvrtc_first_diagnostic(lua_tostring(L, log_idx), &d);
    lua_pushnil(L);
    if (d.message[0])
      lua_pushstring(L, d.message); /* "nvrtc: error: unrecognized option --x found" */
    else
      lua_pushfstring(L, "nvrtc: %s", nv.nvrtcGetErrorString(cr));
    lua_createtable(L, 0, 2);
    lua_pushvalue(L, log_idx);
    lua_setfield(L, -2, "log");
    lua_pushstring(L, nv.nvrtcGetErrorString(cr));
    lua_setfield(L, -2, "result");
    return 3;
  }

  lua_createtable(L, 0, 8);
  int res = lua_gettop(L);
  lua_pushvalue(L, log_idx);
  lua_setfield(L, res, "log");
  lua_pushstring(L, arch);
  lua_setfield(L, res, "arch");

  size_t n = 0;
  check_nvrtc(L, nv.nvrtcGetPTXSize(box->prog, &n), "nvrtcGetPTXSize");
  luaL_Buffer buf;
  char *p = luaL_buffinitsize(L, &buf, n);
  check_nvrtc(L, nv.nvrtcGetPTX(box->prog, p), "nvrtcGetPTX");
  luaL_pushresultsize(&buf, n && p[n - 1] == '\0' ? n - 1 : n);
  lua_setfield(L, res, "ptx");

  if (want_cubin) {
    check_nvrtc(L, nv.nvrtcGetCUBINSize(box->prog, &n), "nvrtcGetCUBINSize");
    /* NVRTC answers success with 0 bytes for a virtual arch; never hand
     * out an empty cubin as if it were one. */
    if (n == 0) return luaL_error(L, "nvrtc: %s produced an empty cubin", arch);
    p = luaL_buffinitsize(L, &buf, n);
    check_nvrtc(L, nv.nvrtcGetCUBIN(box->prog, p), "nvrtcGetCUBIN");
    luaL_pushresultsize(&buf, n);
    lua_setfield(L, res, "cubin");
  }

  push_functions(L, lua_tostring(L, log_idx));
  lua_setfield(L, res, "functions");

  lua_createtable(L, 0, (int)nnames);
  for (lua_Integer i = 1; i <= nnames; i++) {
    lua_geti(L, names_idx, i);
    const char *lowered = NULL;
    check_nvrtc(L, nv.nvrtcGetLoweredName(box->prog, lua_tostring(L, -1), &lowered), "nvrtcGetLoweredName");
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
  need_nvrtc(L);
  int major = 0, minor = 0;
  check_nvrtc(L, nv.nvrtcVersion(&major, &minor), "nvrtcVersion");
  lua_pushinteger(L, major);
  lua_pushinteger(L, minor);
  return 2;
}

/* nvrtc.archs() -> { "sm_75", ..., "sm_120" } : the real archs NVRTC can target */
static int nvrtc_archs(lua_State *L) {
  need_nvrtc(L);
  int n = 0;
  check_nvrtc(L, nv.nvrtcGetNumSupportedArchs(&n), "nvrtcGetNumSupportedArchs");
  int *archs = lua_newuserdatauv(L, sizeof(int) * (size_t)(n > 0 ? n : 1), 0);
  check_nvrtc(L, nv.nvrtcGetSupportedArchs(archs), "nvrtcGetSupportedArchs");
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    lua_pushfstring(L, "sm_%d", archs[i]);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static int nvrtc_library(lua_State *L) {
  need_nvrtc(L);
  char buf[PATH_MAX];
  if (kl_library_of((const void *)nv.nvrtcVersion, buf, sizeof buf))
    lua_pushstring(L, buf);
  else
    lua_pushnil(L);
  return 1;
}

static int source_file_close(lua_State *L) {
  int *fd = luaL_checkudata(L, 1, SOURCE_FILE_MT);
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
  return 0;
}

static const char *file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "a special file";
}

/* Closes the box at index box and pushes nil, message, stage. */
static int read_refused(lua_State *L, int box, const char *stage) {
  int *fd = lua_touserdata(L, box);
  if (*fd >= 0) {
    close(*fd);
    *fd = -1;
  }
  lua_pushnil(L);
  lua_rotate(L, -2, 1); /* nil below the message */
  lua_pushstring(L, stage);
  return 3;
}

static int nvrtc_read_source(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer max = luaL_optinteger(L, 2, SOURCE_MAX_BYTES);
  luaL_argcheck(L, max >= 0, 2, "max_bytes must be >= 0");
  lua_settop(L, 2);
  int *fd = lua_newuserdatauv(L, sizeof *fd, 0); /* 3: closed first, then open */
  *fd = -1;
  luaL_setmetatable(L, SOURCE_FILE_MT);
  do *fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  while (*fd < 0 && errno == EINTR);
  if (*fd < 0) {
    lua_pushstring(L, strerror(errno));
    return read_refused(L, 3, "open");
  }
  struct stat st;
  if (fstat(*fd, &st) != 0) {
    lua_pushstring(L, strerror(errno));
    return read_refused(L, 3, "read");
  }
  if (!S_ISREG(st.st_mode)) {
    lua_pushfstring(L, "%s, not a regular file", file_kind(st.st_mode));
    return read_refused(L, 3, "type");
  }
  if ((lua_Integer)st.st_size > max) {
    lua_pushfstring(L, "%I bytes, over the limit of %I", (lua_Integer)st.st_size, max);
    return read_refused(L, 3, "size");
  }
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  lua_Integer total = 0;
  int err = 0;
  for (;;) {
    size_t want = 1 << 16;
    if ((lua_Integer)want > max + 1 - total) want = (size_t)(max + 1 - total); /* one byte past the limit tells */
    char *p = luaL_prepbuffsize(&b, want);
    ssize_t n = read(*fd, p, want);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      err = errno;
      break;
    }
    if (n == 0) break;
    luaL_addsize(&b, (size_t)n);
    total += n;
    if (total > max) break;
  }
  luaL_pushresult(&b);
  if (err || total > max) {
    lua_pop(L, 1);
    if (err)
      lua_pushstring(L, strerror(err));
    else
      lua_pushfstring(L, "more than %I bytes, over the limit of %I", max, max);
    return read_refused(L, 3, err ? "read" : "size");
  }
  close(*fd);
  *fd = -1;
  return 1;
}

static int nvrtc_include_paths(lua_State *L) {
  lua_createtable(L, 2, 0);
  lua_pushliteral(L, KL_CUDA_INCLUDE_DIR);
  lua_rawseti(L, -2, 1);
  if (have_cccl()) {
    lua_pushliteral(L, CCCL_DIR);
    lua_rawseti(L, -2, 2);
  }
  return 1;
}

static const luaL_Reg nvrtc_functions[] = {
    {"include_paths", nvrtc_include_paths},
    {"compile", nvrtc_compile},
    {"read_source", nvrtc_read_source},
    {"version", nvrtc_version},
    {"archs", nvrtc_archs},
    {"library", nvrtc_library},
    {NULL, NULL},
};

static const luaL_Reg program_meta[] = {
    {"__gc", program_gc},
    {"__close", program_gc},
    {NULL, NULL},
};

static const luaL_Reg source_file_meta[] = {
    {"__gc", source_file_close},
    {"__close", source_file_close},
    {NULL, NULL},
};

int luaopen_kl_nvrtc(lua_State *L) {
  kl_newtype(L, PROGRAM_MT, program_meta, NULL);
  kl_newtype(L, SOURCE_FILE_MT, source_file_meta, NULL);
  luaL_newlib(L, nvrtc_functions);
  return 1;
}
