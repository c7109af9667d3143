/* kl.emu: the CPU backend's runtime, seen from Lua. lua/klineage/device/emu.lua
 * lowers and compiles a kernel; this module loads the result and runs it.
 *
 *   emu.alloc(bytes, name [, elem_size]) -> Buffer   guarded global memory
 *     buf:upload(str [, offset]), buf:download([offset [, len]]) -> str,
 *     buf:fill(byte), buf:size(), buf:name(), buf:free()
 *     In place, with no copy through a Lua string (the emu worker's inputs
 *     run to tens of MB, and every fresh page is a fault):
 *     buf:sha256() -> 64 hex digits of its bytes
 *     buf:generate(type, init, seed, stream) fills it as
 *       kl.randgen.fill(type, size / elem, init, seed, stream) would (type's
 *       element size must divide the buffer's size)
 *     buf:copy_from(other)   other's bytes, of the same size
 *   emu.load(path) -> Library | nil, err               a compiled kernel library
 *     lib:signature(kernel) -> { "ptr", "i32", "f32", ... } | nil, err
 *     lib:launch(kernel, cfg) -> true, info | nil, verdict
 *       cfg = { grid = {x,y,z} | n, block = {x,y,z} | n, smem = bytes,
 *               args = { Buffer | {Buffer, byte_offset} | number | bool | string },
 *               order = "forward" | "reverse" | "shuffle", seed = n,
 *               threads = host threads, poison = true, capture = false,
 *               timeout = seconds (0: none) }
 *       info = { switches = n, output = captured printf text }
 *       verdict = { verdict = "fault" | "divergent barrier" | "launch error" | "timeout",
 *                   message, block = {x,y,z}, thread = {x,y,z}, output }
 *   emu.load_host(path) -> HostLibrary | nil, err       a plain host shared object
 *     host:call(symbol, args)   calls void symbol(void **argv) once, where
 *       argv[i] points at argument i's value: args[i] is a Buffer (the value
 *       is its data pointer) or { type, value } with a scalar type name of
 *       lua/kernel_args.h. The pointers are lent for the call only; the
 *       caller keeps the buffers alive, and the function must not keep them.
 *       A crash inside the function is not caught: it ends the process (the
 *       emu worker's pool reports the death). host:close()
 *   emu.hash(str, ...) -> 32 hex digits                for the compile cache
 *   emu.fiber_benchmark(fibers, rounds [, "asm" | "ucontext"]) -> switches/s
 *
 * Bad arguments raise; a kernel that faults or deadlocks is an expected
 * failure and returns nil, verdict. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "core/hash.h"
#include "emu/buffer.h"
#include "emu/emu.h"
#include "emu/fiber.h"
#include "lua/kernel_args.h"
#include "lua/newtype.h"
#include "lua/randgen_args.h"
#include "lua/scratch.h"

#define BUFFER_MT "kl.EmuBuffer"
#define LIBRARY_MT "kl.EmuLibrary"
#define HOST_MT "kl.EmuHostLibrary"
#define MAX_PARAMS 256

/* --- buffers ----------------------------------------------------------------- */

typedef struct {
  kl_emu_buffer *b; /* NULL once freed */
} buffer_box;

static buffer_box *check_buffer_box(lua_State *L, int i) { return luaL_checkudata(L, i, BUFFER_MT); }

static kl_emu_buffer *check_buffer(lua_State *L, int i) {
  buffer_box *box = check_buffer_box(L, i);
  if (!box->b) luaL_argerror(L, i, "buffer was freed");
  return box->b;
}

static int buffer_gc(lua_State *L) {
  buffer_box *box = check_buffer_box(L, 1);
  kl_emu_buffer_free(box->b);
  box->b = NULL;
  return 0;
}

static int emu_alloc(lua_State *L) {
  lua_Integer bytes = luaL_checkinteger(L, 1);
  const char *name = luaL_optstring(L, 2, "buffer");
  lua_Integer elem = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, bytes >= 0, 1, "negative size");
  luaL_argcheck(L, elem >= 1 && elem <= 1024, 3, "element size must be 1..1024");
  buffer_box *box = lua_newuserdatauv(L, sizeof *box, 0);
  box->b = NULL;
  luaL_setmetatable(L, BUFFER_MT);
  box->b = kl_emu_buffer_new((size_t)bytes, name, (size_t)elem);
  if (!box->b) return luaL_error(L, "kl.emu: cannot map a buffer of %I bytes", bytes);
  return 1;
}

static void check_range(lua_State *L, const kl_emu_buffer *b, lua_Integer off, lua_Integer len) {
  if (off < 0 || len < 0 || (size_t)off > b->bytes || (size_t)len > b->bytes - (size_t)off)
    luaL_error(L, "kl.emu: range [%I, %I) is outside buffer '%s' of %I bytes", off, off + len,
               b->name, (lua_Integer)b->bytes);
}

static int buffer_upload(lua_State *L) {
  kl_emu_buffer *b = check_buffer(L, 1);
  size_t n;
  const char *s = luaL_checklstring(L, 2, &n);
  lua_Integer off = luaL_optinteger(L, 3, 0);
  check_range(L, b, off, (lua_Integer)n);
  memcpy(b->data + off, s, n);
  return 0;
}

static int buffer_download(lua_State *L) {
  kl_emu_buffer *b = check_buffer(L, 1);
  lua_Integer off = luaL_optinteger(L, 2, 0);
  lua_Integer len = luaL_optinteger(L, 3, (lua_Integer)b->bytes - off);
  check_range(L, b, off, len);
  lua_pushlstring(L, (const char *)b->data + off, (size_t)len);
  return 1;
}

static int buffer_fill(lua_State *L) {
  kl_emu_buffer *b = check_buffer(L, 1);
  lua_Integer byte = luaL_checkinteger(L, 2);
  luaL_argcheck(L, byte >= 0 && byte <= 255, 2, "a byte 0..255");
  memset(b->data, (int)byte, b->bytes);
  return 0;
}

static int buffer_sha256(lua_State *L) {
  kl_emu_buffer *b = check_buffer(L, 1);
  char hex[2 * KL_SHA256_BYTES + 1];
  kl_sha256_hex(b->data, b->bytes, hex);
  lua_pushstring(L, hex);
  return 1;
}

static int buffer_generate(lua_State *L) {
  kl_emu_buffer *b = check_buffer(L, 1);
  kl_dtype t = kl_check_dtype(L, 2);
  kl_init init = kl_check_init(L, 3);
  uint64_t seed = (uint64_t)luaL_checkinteger(L, 4);
  uint64_t stream = (uint64_t)luaL_checkinteger(L, 5);
  size_t size = kl_dtype_size(t);
  if (b->bytes % size != 0)
    return luaL_error(L, "kl.emu: buffer '%s' of %I bytes is no whole number of %s elements", b->name,
                      (lua_Integer)b->bytes, kl_dtype_name(t));
  const char *why = NULL;
  if (kl_randgen_fill(t, &init, seed, stream, 0, b->bytes / size, b->data, &why) != 0) return luaL_argerror(L, 3, why);
  return 0;
}

static int buffer_copy_from(lua_State *L) {
  kl_emu_buffer *b = check_buffer(L, 1), *from = check_buffer(L, 2);
  if (from->bytes != b->bytes)
    return luaL_error(L, "kl.emu: cannot copy buffer '%s' of %I bytes into '%s' of %I", from->name,
                      (lua_Integer)from->bytes, b->name, (lua_Integer)b->bytes);
  memmove(b->data, from->data, b->bytes);
  return 0;
}

static int buffer_size(lua_State *L) {
  lua_pushinteger(L, (lua_Integer)check_buffer(L, 1)->bytes);
  return 1;
}

static int buffer_name(lua_State *L) {
  lua_pushstring(L, check_buffer(L, 1)->name);
  return 1;
}

static int buffer_tostring(lua_State *L) {
  buffer_box *box = check_buffer_box(L, 1);
  if (box->b) lua_pushfstring(L, "kl.EmuBuffer '%s' (%I bytes)", box->b->name, (lua_Integer)box->b->bytes);
  else lua_pushliteral(L, "kl.EmuBuffer (freed)");
  return 1;
}

static const luaL_Reg buffer_methods[] = {
    {"upload", buffer_upload}, {"download", buffer_download}, {"fill", buffer_fill},
    {"sha256", buffer_sha256}, {"generate", buffer_generate}, {"copy_from", buffer_copy_from},
    {"size", buffer_size},     {"name", buffer_name},         {"free", buffer_gc},
    {NULL, NULL},
};
static const luaL_Reg buffer_meta[] = {
    {"__gc", buffer_gc}, {"__close", buffer_gc}, {"__tostring", buffer_tostring}, {NULL, NULL},
};

/* --- libraries --------------------------------------------------------------- */

typedef struct {
  void *handle; /* NULL once closed */
  void (*block_start)(size_t, int);
} library_box;

static library_box *check_library_box(lua_State *L, int i) { return luaL_checkudata(L, i, LIBRARY_MT); }

static library_box *check_library(lua_State *L, int i) {
  library_box *box = check_library_box(L, i);
  if (!box->handle) luaL_argerror(L, i, "library was closed");
  return box;
}

static int library_gc(lua_State *L) {
  library_box *box = check_library_box(L, 1);
  if (box->handle) dlclose(box->handle);
  box->handle = NULL;
  return 0;
}

static int emu_load(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  library_box *box = lua_newuserdatauv(L, sizeof *box, 0);
  box->handle = NULL;
  luaL_setmetatable(L, LIBRARY_MT);
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) {
    lua_pushnil(L);
    lua_pushfstring(L, "cannot load '%s': %s", path, dlerror());
    return 2;
  }
  box->handle = h;
  unsigned (*bind)(const kl_emu_hooks *) = (unsigned (*)(const kl_emu_hooks *))dlsym(h, "__kl_bind");
  box->block_start = (void (*)(size_t, int))dlsym(h, "__kl_block_start");
  if (!bind || !box->block_start) {
    library_gc(L);
    lua_pushnil(L);
    lua_pushfstring(L, "'%s' was not compiled against the kl.emu prelude", path);
    return 2;
  }
  unsigned abi = bind(&kl_emu_runtime_hooks);
  if (abi != KL_EMU_ABI_VERSION) {
    library_gc(L);
    lua_pushnil(L);
    lua_pushfstring(L, "'%s' uses emu ABI %d, the engine speaks %d", path, (int)abi,
                    (int)KL_EMU_ABI_VERSION);
    return 2;
  }
  return 1;
}

typedef const kl_emu_param *(*sig_fn)(int *);
typedef void (*entry_fn)(void **);

/* Finds __kl_entry_<name> and __kl_sig_<name>; pushes nil, err when absent. */
static int find_kernel(lua_State *L, library_box *box, const char *name, entry_fn *entry,
                       const kl_emu_param **params, int *count) {
  char sym[512];
  snprintf(sym, sizeof sym, "__kl_sig_%s", name);
  sig_fn sig = (sig_fn)dlsym(box->handle, sym);
  snprintf(sym, sizeof sym, "__kl_entry_%s", name);
  *entry = (entry_fn)dlsym(box->handle, sym);
  if (!sig || !*entry) {
    lua_pushnil(L);
    lua_pushfstring(L, "no kernel '%s' in the library (only non-template __global__ functions "
                       "get an entry)", name);
    return 0;
  }
  *params = sig(count);
  return 1;
}

static const char *const type_names[] = {"struct", "ptr", "bool", "i8",  "u8",  "i16", "u16", "i32",
                                         "u32",    "i64", "u64",  "f16", "bf16", "f32", "f64"};

static int library_signature(lua_State *L) {
  library_box *box = check_library(L, 1);
  const char *name = luaL_checkstring(L, 2);
  entry_fn entry;
  const kl_emu_param *params;
  int count;
  if (!find_kernel(L, box, name, &entry, &params, &count)) return 2;
  lua_createtable(L, count, 0);
  for (int i = 0; i < count; i++) {
    unsigned c = params[i].code;
    lua_pushstring(L, c < sizeof type_names / sizeof type_names[0] ? type_names[c] : "?");
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static unsigned dim_field(lua_State *L, int t, const char *key, int index) {
  lua_getfield(L, t, key);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    lua_rawgeti(L, t, index);
  }
  lua_Integer v = lua_isnil(L, -1) ? 1 : luaL_checkinteger(L, -1);
  lua_pop(L, 1);
  if (v < 0 || v > 0x7FFFFFFF) luaL_error(L, "kl.emu: dimension %s = %I is out of range", key, v);
  return (unsigned)v;
}

/* cfg[key] as a dim3: a number n means (n,1,1). */
static kl_emu_dim3 get_dim(lua_State *L, int cfg, const char *key) {
  kl_emu_dim3 d = {1, 1, 1};
  lua_getfield(L, cfg, key);
  int t = lua_gettop(L);
  if (lua_type(L, t) == LUA_TNUMBER) {
    lua_Integer v = luaL_checkinteger(L, t); /* 8.0 from JSON is 8 */
    if (v < 0 || v > 0x7FFFFFFF) luaL_error(L, "kl.emu: %s = %I is out of range", key, v);
    d.x = (unsigned)v;
  } else if (lua_istable(L, t)) {
    d.x = dim_field(L, t, "x", 1);
    d.y = dim_field(L, t, "y", 2);
    d.z = dim_field(L, t, "z", 3);
  } else {
    luaL_error(L, "kl.emu: cfg.%s must be an integer or {x, y, z}", key);
  }
  lua_pop(L, 1);
  return d;
}

static void pack_pointer(lua_State *L, int v, int argi, void *slot) {
  void *p = NULL;
  if (lua_isnoneornil(L, v) || (lua_isboolean(L, v) && !lua_toboolean(L, v))) {
    p = NULL;
  } else if (luaL_testudata(L, v, BUFFER_MT)) {
    p = check_buffer(L, v)->data;
  } else if (lua_istable(L, v)) {
    lua_rawgeti(L, v, 1);
    lua_rawgeti(L, v, 2);
    kl_emu_buffer *b = luaL_testudata(L, -2, BUFFER_MT) ? check_buffer(L, lua_gettop(L) - 1) : NULL;
    if (!b) luaL_error(L, "kl.emu: argument %d: expected {Buffer, byte_offset}", argi);
    lua_Integer off = luaL_optinteger(L, -1, 0);
    if (off < 0 || (size_t)off > b->bytes) luaL_error(L, "kl.emu: argument %d: offset %I outside '%s'", argi, off, b->name);
    p = b->data + off;
    lua_pop(L, 2);
  } else {
    luaL_error(L, "kl.emu: argument %d is a pointer: pass a Buffer, {Buffer, offset} or false", argi);
  }
  memcpy(slot, &p, sizeof p);
}

static void push_dim(lua_State *L, kl_emu_dim3 d) {
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, d.x);
  lua_setfield(L, -2, "x");
  lua_pushinteger(L, d.y);
  lua_setfield(L, -2, "y");
  lua_pushinteger(L, d.z);
  lua_setfield(L, -2, "z");
}

static int library_launch(lua_State *L) {
  library_box *box = check_library(L, 1);
  const char *name = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  entry_fn entry;
  const kl_emu_param *params;
  int count;
  if (!find_kernel(L, box, name, &entry, &params, &count)) return 2;
  if (count > MAX_PARAMS) return luaL_error(L, "kl.emu: kernel '%s' has %d parameters", name, count);

  kl_emu_launch_config cfg;
  memset(&cfg, 0, sizeof cfg);
  cfg.entry = entry;
  cfg.block_start = box->block_start;
  cfg.grid = get_dim(L, 3, "grid");
  cfg.block = get_dim(L, 3, "block");
  lua_getfield(L, 3, "smem");
  lua_Integer smem = luaL_optinteger(L, -1, 0);
  luaL_argcheck(L, smem >= 0, 3, "cfg.smem must be >= 0");
  cfg.smem = (size_t)smem;
  lua_getfield(L, 3, "order");
  const char *order = luaL_optstring(L, -1, "forward");
  if (strcmp(order, "forward") == 0) cfg.order = KL_EMU_ORDER_FORWARD;
  else if (strcmp(order, "reverse") == 0) cfg.order = KL_EMU_ORDER_REVERSE;
  else if (strcmp(order, "shuffle") == 0) cfg.order = KL_EMU_ORDER_SHUFFLE;
  else return luaL_error(L, "kl.emu: cfg.order must be forward, reverse or shuffle, not '%s'", order);
  lua_getfield(L, 3, "seed");
  cfg.seed = (uint64_t)luaL_optinteger(L, -1, 0);
  lua_getfield(L, 3, "threads");
  lua_Integer threads = luaL_optinteger(L, -1, 0);
  luaL_argcheck(L, threads >= 0 && threads <= 1024, 3, "cfg.threads must be 0..1024");
  cfg.threads = (unsigned)threads;
  lua_getfield(L, 3, "poison");
  cfg.poison = lua_isnil(L, -1) ? 1 : lua_toboolean(L, -1);
  lua_getfield(L, 3, "capture");
  cfg.capture = lua_toboolean(L, -1);
  lua_getfield(L, 3, "timeout");
  cfg.timeout = (double)luaL_optnumber(L, -1, 0);
  luaL_argcheck(L, cfg.timeout >= 0, 3, "cfg.timeout must be >= 0 seconds");
  lua_pop(L, 7);

  /* Argument storage: a userdata, so a raise below leaks nothing. */
  size_t bytes = (size_t)count * sizeof(void *);
  for (int i = 0; i < count; i++) bytes += (params[i].size + 15u) & ~15u;
  unsigned char *store = lua_newuserdatauv(L, bytes + 16, 0);
  void **argv = (void **)store;
  /* 16-byte aligned slots: a float4 or double2 parameter is read with
   * aligned vector loads (Lua only aligns userdata to 8). */
  unsigned char *slot =
      (unsigned char *)(((uintptr_t)(store + (size_t)count * sizeof(void *)) + 15u) & ~(uintptr_t)15u);
  lua_getfield(L, 3, "args");
  int args = lua_gettop(L);
  if (!lua_istable(L, args)) return luaL_error(L, "kl.emu: cfg.args must be a table");
  lua_Integer given = (lua_Integer)lua_rawlen(L, args);
  if (given != count)
    return luaL_error(L, "kl.emu: kernel '%s' takes %d arguments, cfg.args has %I", name, count, given);
  for (int i = 0; i < count; i++) {
    lua_rawgeti(L, args, i + 1);
    int v = lua_gettop(L);
    unsigned code = params[i].code;
    argv[i] = slot;
    if (code == KL_EMU_T_PTR) {
      pack_pointer(L, v, i + 1, slot);
    } else if (lua_type(L, v) == LUA_TSTRING) {
      size_t n;
      const char *s = lua_tolstring(L, v, &n);
      if (n != params[i].size)
        return luaL_error(L, "kl.emu: argument %d: %d bytes given, the parameter has %d", i + 1,
                          (int)n, (int)params[i].size);
      memcpy(slot, s, n);
    } else if (code == KL_EMU_T_OTHER) {
      return luaL_error(L, "kl.emu: argument %d is a struct of %d bytes: pass its bytes as a string",
                        i + 1, (int)params[i].size);
    } else {
      kl_pack_scalar(L, v, code < sizeof type_names / sizeof type_names[0] ? type_names[code] : "?", i + 1, "kl.emu",
                     slot);
    }
    lua_pop(L, 1);
    slot += (params[i].size + 15u) & ~15u;
  }
  cfg.args = argv;

  kl_scratch *captured = kl_scratch_new(L); /* the captured text, should a push raise */
  kl_emu_outcome out;
  kl_emu_launch(&cfg, &out);
  kl_scratch_adopt(captured, out.output);
  lua_pushlstring(L, out.output ? out.output : "", out.output ? out.output_len : 0);
  kl_scratch_free(captured);
  int output = lua_gettop(L);
  if (out.verdict == KL_EMU_OK) {
    lua_pushboolean(L, 1);
    lua_createtable(L, 0, 2);
    lua_pushinteger(L, (lua_Integer)out.switches);
    lua_setfield(L, -2, "switches");
    lua_pushvalue(L, output);
    lua_setfield(L, -2, "output");
    return 2;
  }
  static const char *const verdicts[] = {"ok", "fault", "divergent barrier", "launch error", "timeout"};
  lua_pushnil(L);
  lua_createtable(L, 0, 5);
  lua_pushstring(L, verdicts[out.verdict]);
  lua_setfield(L, -2, "verdict");
  lua_pushstring(L, out.message);
  lua_setfield(L, -2, "message");
  if (out.has_thread) {
    push_dim(L, out.block_idx);
    lua_setfield(L, -2, "block");
    push_dim(L, out.thread_idx);
    lua_setfield(L, -2, "thread");
  }
  lua_pushvalue(L, output);
  lua_setfield(L, -2, "output");
  return 2;
}

static int library_tostring(lua_State *L) {
  library_box *box = check_library_box(L, 1);
  lua_pushstring(L, box->handle ? "kl.EmuLibrary" : "kl.EmuLibrary (closed)");
  return 1;
}

static const luaL_Reg library_methods[] = {
    {"signature", library_signature}, {"launch", library_launch}, {"close", library_gc}, {NULL, NULL},
};
static const luaL_Reg library_meta[] = {
    {"__gc", library_gc}, {"__close", library_gc}, {"__tostring", library_tostring}, {NULL, NULL},
};

/* --- host libraries ----------------------------------------------------------- */

/* A shared object of ordinary host code (a workload's C reference), called
 * through one `void f(void **argv)` entry; kernels go through Library. */
typedef struct {
  void *handle; /* NULL once closed */
} host_box;

static host_box *check_host_box(lua_State *L, int i) { return luaL_checkudata(L, i, HOST_MT); }

static int host_gc(lua_State *L) {
  host_box *box = check_host_box(L, 1);
  if (box->handle) dlclose(box->handle);
  box->handle = NULL;
  return 0;
}

static int emu_load_host(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  host_box *box = lua_newuserdatauv(L, sizeof *box, 0);
  box->handle = NULL;
  luaL_setmetatable(L, HOST_MT);
  box->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!box->handle) {
    lua_pushnil(L);
    lua_pushfstring(L, "cannot load '%s': %s", path, dlerror());
    return 2;
  }
  return 1;
}

typedef void (*host_fn)(void **);

static int host_call(lua_State *L) {
  host_box *box = check_host_box(L, 1);
  if (!box->handle) return luaL_argerror(L, 1, "host library was closed");
  const char *symbol = luaL_checkstring(L, 2);
  luaL_checktype(L, 3, LUA_TTABLE);
  lua_Integer count = (lua_Integer)lua_rawlen(L, 3);
  luaL_argcheck(L, count <= MAX_PARAMS, 3, "too many arguments");
  host_fn fn = NULL;
  void *sym = dlsym(box->handle, symbol);
  memcpy(&fn, &sym, sizeof fn); /* object pointer to function pointer, as POSIX allows */
  if (!fn) return luaL_error(L, "kl.emu: no function '%s' in the host library", symbol);
  /* argv, then one 16-byte slot per argument: a userdata, so a raise while
   * packing leaks nothing. */
  size_t head = ((size_t)count * sizeof(void *) + 15u) & ~(size_t)15u;
  unsigned char *store = lua_newuserdatauv(L, head + (size_t)count * 16u + 16u, 0);
  void **argv = (void **)store;
  unsigned char *slots = (unsigned char *)(((uintptr_t)(store + head) + 15u) & ~(uintptr_t)15u);
  for (lua_Integer i = 0; i < count; i++) {
    unsigned char *slot = slots + (size_t)i * 16u;
    memset(slot, 0, 16);
    argv[i] = slot;
    lua_rawgeti(L, 3, i + 1);
    int v = lua_gettop(L);
    if (luaL_testudata(L, v, BUFFER_MT)) {
      void *p = check_buffer(L, v)->data;
      memcpy(slot, &p, sizeof p);
    } else if (lua_istable(L, v)) {
      lua_rawgeti(L, v, 1);
      lua_rawgeti(L, v, 2);
      const char *type = lua_tostring(L, -2);
      if (!type || !kl_scalar_known(type))
        return luaL_error(L, "kl.emu: host argument %d: expected a Buffer or {type, value} with a scalar type",
                          (int)i + 1);
      kl_pack_scalar(L, lua_gettop(L), type, (int)i + 1, "kl.emu", slot);
      lua_pop(L, 2);
    } else {
      return luaL_error(L, "kl.emu: host argument %d is a %s: pass a Buffer or {type, value}", (int)i + 1,
                        luaL_typename(L, v));
    }
    lua_pop(L, 1);
  }
  fn(argv);
  return 0;
}

static int host_tostring(lua_State *L) {
  host_box *box = check_host_box(L, 1);
  lua_pushstring(L, box->handle ? "kl.EmuHostLibrary" : "kl.EmuHostLibrary (closed)");
  return 1;
}

static const luaL_Reg host_methods[] = {
    {"call", host_call}, {"close", host_gc}, {NULL, NULL},
};
static const luaL_Reg host_meta[] = {
    {"__gc", host_gc}, {"__close", host_gc}, {"__tostring", host_tostring}, {NULL, NULL},
};

/* --- utilities ------------------------------------------------------------------ */

/* Two FNV-1a lanes with different offsets and a final avalanche: 128 bits,
 * ample for naming cache entries by content. */
static int emu_hash(lua_State *L) {
  int n = lua_gettop(L);
  uint64_t a = 0xCBF29CE484222325ull, b = 0x84222325CBF29CE4ull;
  for (int i = 1; i <= n; i++) {
    size_t len;
    const unsigned char *s = (const unsigned char *)luaL_checklstring(L, i, &len);
    for (size_t k = 0; k < len; k++) {
      a = (a ^ s[k]) * 0x100000001B3ull;
      b = (b ^ s[k]) * 0x00000100000001B3ull + 0x9E3779B97F4A7C15ull;
    }
    /* Separate the strings, so ("ab", "c") differs from ("a", "bc"). */
    a = (a ^ (uint64_t)len ^ 0xFFu) * 0x100000001B3ull;
    b = (b ^ (uint64_t)len ^ 0xFEu) * 0x00000100000001B3ull;
  }
  uint64_t h[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    uint64_t z = h[i];
    z = (z ^ (z >> 33)) * 0xFF51AFD7ED558CCDull;
    z = (z ^ (z >> 33)) * 0xC4CEB9FE1A85EC53ull;
    h[i] = z ^ (z >> 33);
  }
  char hex[33];
  snprintf(hex, sizeof hex, "%016llx%016llx", (unsigned long long)h[0], (unsigned long long)h[1]);
  lua_pushstring(L, hex);
  return 1;
}

static int emu_fiber_benchmark(lua_State *L) {
  lua_Integer fibers = luaL_checkinteger(L, 1);
  lua_Integer rounds = luaL_checkinteger(L, 2);
  const char *impl = luaL_optstring(L, 3, "asm");
  luaL_argcheck(L, fibers >= 1 && fibers <= KL_EMU_MAX_BLOCK_THREADS, 1, "1..1024 fibers");
  luaL_argcheck(L, rounds >= 1 && rounds <= 100000000, 2, "1..1e8 rounds");
  int uc = strcmp(impl, "ucontext") == 0;
  luaL_argcheck(L, uc || strcmp(impl, "asm") == 0, 3, "\"asm\" or \"ucontext\"");
  double r = kl_fiber_benchmark((unsigned)fibers, (unsigned)rounds, uc);
  if (r < 0) return luaL_error(L, "kl.emu: out of memory for fiber stacks");
  lua_pushnumber(L, r);
  return 1;
}

static const luaL_Reg emu_functions[] = {
    {"alloc", emu_alloc},
    {"load", emu_load},
    {"load_host", emu_load_host},
    {"hash", emu_hash},
    {"fiber_benchmark", emu_fiber_benchmark},
    {NULL, NULL},
};

int luaopen_kl_emu(lua_State *L) {
  kl_newtype(L, BUFFER_MT, buffer_meta, buffer_methods);
  kl_newtype(L, LIBRARY_MT, library_meta, library_methods);
  kl_newtype(L, HOST_MT, host_meta, host_methods);
  kl_scratch_open(L);
  luaL_newlib(L, emu_functions);
  lua_pushinteger(L, KL_EMU_ABI_VERSION);
  lua_setfield(L, -2, "abi");
  lua_pushinteger(L, KL_EMU_DYN_SMEM_MAX);
  lua_setfield(L, -2, "max_dynamic_smem");
  return 1;
}
