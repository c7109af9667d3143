/* kl.cuda: the CUDA driver for Lua, loaded with dlopen (core/driver.c).
 *
 *   cuda.load() -> true | nil, reason       dlopen + cuInit, idempotent
 *   cuda.driver_version() -> 13000
 *   cuda.devices() -> { { index, name, major, minor, sms, memory, ... } }
 *   cuda.context(index) -> Context           the device's primary context
 *   ctx:load(cubin) -> Module | nil, err     mod:func(name) -> Function | nil, err
 *   ctx:alloc(bytes) -> Buffer | nil, err    buf:upload(s [, offset]), buf:download([n, offset])
 *   fn:launch{ grid = {x,y,z}, block = {x,y,z}, smem = n,
 *              args = { buf, {"i32", n}, {"f32", a}, ... } } -> true | nil, err
 *   ctx:synchronize() -> true | nil, err     ctx:event() -> Event
 *
 * What a kernel can cause (a fault, a launch failure) is an expected
 * failure: nil, "CUDA_ERROR_...: text". Misuse raises. Modules, buffers and
 * events keep their context alive through their user value. */
#include <stdint.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "core/driver.h"
#include "lua/cuda.h"
#include "lua/kernel_args.h"
#include "lua/newtype.h"

#define CONTEXT_MT "kl.Context"
#define MODULE_MT "kl.Module"
#define FUNCTION_MT "kl.Function"
#define BUFFER_MT "kl.Buffer"
#define EVENT_MT "kl.Event"
#define MAX_ARGS 64

typedef struct {
  CUcontext ctx; /* NULL once released */
  CUdevice dev;
  int ordinal;
} context_box;

typedef struct {
  CUmodule mod;
  context_box *owner;
} module_box;

typedef struct {
  CUfunction fn; /* valid while its module is alive (user value) */
  context_box *owner;
} function_box;

/* A view (buf:view) owns nothing: it names a range of its parent, which its
 * user value keeps alive, and it is usable only while the parent is. */
typedef struct buffer_box {
  CUdeviceptr ptr;
  size_t size;
  context_box *owner;
  struct buffer_box *parent; /* NULL for an allocation */
} buffer_box;

typedef struct {
  CUevent ev;
  context_box *owner;
} event_box;

static const kl_driver_api *cu;

static const kl_driver_api *need_driver(lua_State *L) {
  const char *why = NULL;
  if (!cu) cu = kl_driver_load(&why);
  if (!cu) luaL_error(L, "CUDA driver not available: %s", why);
  return cu;
}

/* Pushes nil, "CUDA_ERROR_X: text (what)" and returns 2. */
static int push_cuda_error(lua_State *L, CUresult r, const char *what) {
  char buf[256];
  lua_pushnil(L);
  lua_pushfstring(L, "%s: %s", what, kl_driver_error(r, buf, sizeof buf));
  return 2;
}

static void check_cuda(lua_State *L, CUresult r, const char *what) {
  if (r != CUDA_SUCCESS) {
    char buf[256];
    luaL_error(L, "%s: %s", what, kl_driver_error(r, buf, sizeof buf));
  }
}

static void use_context(lua_State *L, context_box *c) {
  if (!c->ctx) luaL_error(L, "the CUDA context is closed");
  check_cuda(L, cu->cuCtxSetCurrent(c->ctx), "cuCtxSetCurrent");
}

static void *new_box(lua_State *L, size_t size, const char *mt, int owner_idx) {
  void *p = lua_newuserdatauv(L, size, 1);
  memset(p, 0, size);
  luaL_setmetatable(L, mt);
  if (owner_idx) {
    lua_pushvalue(L, owner_idx);
    lua_setiuservalue(L, -2, 1);
  }
  return p;
}

/* --- module functions ---------------------------------------------------- */

static int cuda_load(lua_State *L) {
  const char *why = NULL;
  if (!cu) cu = kl_driver_load(&why);
  if (!cu) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int cuda_driver_version(lua_State *L) {
  need_driver(L);
  int v = 0;
  check_cuda(L, cu->cuDriverGetVersion(&v), "cuDriverGetVersion");
  lua_pushinteger(L, v);
  return 1;
}

static int cuda_library(lua_State *L) {
  const char *p = kl_driver_path();
  if (p)
    lua_pushstring(L, p);
  else
    lua_pushnil(L);
  return 1;
}

static void set_attr(lua_State *L, CUdevice dev, const char *key, CUdevice_attribute a) {
  int v = 0;
  if (cu->cuDeviceGetAttribute(&v, a, dev) == CUDA_SUCCESS) {
    lua_pushinteger(L, v);
    lua_setfield(L, -2, key);
  }
}

static int cuda_devices(lua_State *L) {
  need_driver(L);
  int n = 0;
  check_cuda(L, cu->cuDeviceGetCount(&n), "cuDeviceGetCount");
  lua_createtable(L, n, 0);
  for (int i = 0; i < n; i++) {
    CUdevice dev;
    check_cuda(L, cu->cuDeviceGet(&dev, i), "cuDeviceGet");
    char name[256] = "";
    cu->cuDeviceGetName(name, sizeof name, dev);
    size_t mem = 0;
    cu->cuDeviceTotalMem(&mem, dev);
    lua_createtable(L, 0, 16);
    lua_pushinteger(L, i);
    lua_setfield(L, -2, "index");
    lua_pushstring(L, name);
    lua_setfield(L, -2, "name");
    lua_pushinteger(L, (lua_Integer)mem);
    lua_setfield(L, -2, "memory");
    set_attr(L, dev, "major", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    set_attr(L, dev, "minor", CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    set_attr(L, dev, "sms", CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    set_attr(L, dev, "clock_khz", CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    set_attr(L, dev, "memory_clock_khz", CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    set_attr(L, dev, "memory_bus_bits", CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    set_attr(L, dev, "l2_bytes", CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE);
    set_attr(L, dev, "smem_per_sm", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    set_attr(L, dev, "smem_per_block", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK);
    set_attr(L, dev, "smem_per_block_optin", CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN);
    set_attr(L, dev, "regs_per_sm", CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    set_attr(L, dev, "threads_per_sm", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    set_attr(L, dev, "blocks_per_sm", CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    set_attr(L, dev, "threads_per_block", CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    set_attr(L, dev, "warp_size", CU_DEVICE_ATTRIBUTE_WARP_SIZE);
    lua_rawseti(L, -2, i + 1);
  }
  return 1;
}

static context_box *check_context(lua_State *L, int i) {
  context_box *c = luaL_checkudata(L, i, CONTEXT_MT);
  if (!c->ctx) luaL_argerror(L, i, "context is closed");
  return c;
}

/* cuda.context(index) -> Context : retains the device's primary context */
static int cuda_context(lua_State *L) {
  need_driver(L);
  int index = (int)luaL_optinteger(L, 1, 0);
  context_box *c = new_box(L, sizeof *c, CONTEXT_MT, 0);
  CUresult r = cu->cuDeviceGet(&c->dev, index);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuDeviceGet");
  CUcontext ctx = NULL;
  r = cu->cuDevicePrimaryCtxRetain(&ctx, c->dev);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuDevicePrimaryCtxRetain");
  c->ctx = ctx;
  c->ordinal = index;
  use_context(L, c);
  return 1;
}

CUcontext kl_check_cuda_context(lua_State *L, int i, int *ordinal) {
  context_box *c = check_context(L, i);
  use_context(L, c);
  if (ordinal) *ordinal = c->ordinal;
  return c->ctx;
}

/* --- Context ------------------------------------------------------------- */

static int context_close(lua_State *L) {
  context_box *c = luaL_checkudata(L, 1, CONTEXT_MT);
  if (c->ctx && cu) {
    cu->cuDevicePrimaryCtxRelease(c->dev);
    c->ctx = NULL;
  }
  return 0;
}

static int context_synchronize(lua_State *L) {
  context_box *c = check_context(L, 1);
  use_context(L, c);
  CUresult r = cu->cuCtxSynchronize();
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuCtxSynchronize");
  lua_pushboolean(L, 1);
  return 1;
}

static int context_memory(lua_State *L) {
  context_box *c = check_context(L, 1);
  use_context(L, c);
  size_t free_b = 0, total = 0;
  check_cuda(L, cu->cuMemGetInfo(&free_b, &total), "cuMemGetInfo");
  lua_pushinteger(L, (lua_Integer)free_b);
  lua_pushinteger(L, (lua_Integer)total);
  return 2;
}

static int context_load(lua_State *L) {
  context_box *c = check_context(L, 1);
  size_t n;
  const char *image = luaL_checklstring(L, 2, &n);
  luaL_argcheck(L, n > 0, 2, "empty module image");
  use_context(L, c);
  module_box *m = new_box(L, sizeof *m, MODULE_MT, 1);
  m->owner = c;
  CUresult r = cu->cuModuleLoadData(&m->mod, image);
  if (r != CUDA_SUCCESS) {
    m->mod = NULL;
    return push_cuda_error(L, r, "cuModuleLoadData");
  }
  return 1;
}

static int context_alloc(lua_State *L) {
  context_box *c = check_context(L, 1);
  lua_Integer bytes = luaL_checkinteger(L, 2);
  luaL_argcheck(L, bytes > 0, 2, "size must be positive");
  use_context(L, c);
  buffer_box *b = new_box(L, sizeof *b, BUFFER_MT, 1);
  b->owner = c;
  CUresult r = cu->cuMemAlloc(&b->ptr, (size_t)bytes);
  if (r != CUDA_SUCCESS) {
    b->ptr = 0;
    return push_cuda_error(L, r, "cuMemAlloc");
  }
  b->size = (size_t)bytes;
  return 1;
}

static int context_event(lua_State *L) {
  context_box *c = check_context(L, 1);
  use_context(L, c);
  event_box *e = new_box(L, sizeof *e, EVENT_MT, 1);
  e->owner = c;
  check_cuda(L, cu->cuEventCreate(&e->ev, CU_EVENT_DEFAULT), "cuEventCreate");
  return 1;
}

/* --- Module and Function --------------------------------------------------- */

static int module_close(lua_State *L) {
  module_box *m = luaL_checkudata(L, 1, MODULE_MT);
  if (m->mod && cu && m->owner->ctx) {
    cu->cuCtxSetCurrent(m->owner->ctx);
    cu->cuModuleUnload(m->mod);
  }
  m->mod = NULL;
  return 0;
}

static int module_func(lua_State *L) {
  module_box *m = luaL_checkudata(L, 1, MODULE_MT);
  const char *name = luaL_checkstring(L, 2);
  luaL_argcheck(L, m->mod != NULL, 1, "module is closed");
  use_context(L, m->owner);
  CUfunction fn;
  CUresult r = cu->cuModuleGetFunction(&fn, m->mod, name);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, name);
  function_box *f = new_box(L, sizeof *f, FUNCTION_MT, 1); /* keeps module alive */
  f->fn = fn;
  f->owner = m->owner;
  return 1;
}

static function_box *check_function(lua_State *L, int i) {
  function_box *f = luaL_checkudata(L, i, FUNCTION_MT);
  lua_getiuservalue(L, i, 1);
  module_box *m = lua_touserdata(L, -1);
  lua_pop(L, 1);
  if (!m || !m->mod) luaL_argerror(L, i, "its module is closed");
  use_context(L, f->owner);
  return f;
}

static int function_attributes(lua_State *L) {
  function_box *f = check_function(L, 1);
  static const struct {
    const char *key;
    CUfunction_attribute a;
  } attrs[] = {
      {"registers", CU_FUNC_ATTRIBUTE_NUM_REGS},
      {"smem", CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES},
      {"local_bytes", CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES},
      {"const_bytes", CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES},
      {"max_threads", CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK},
      {"max_dynamic_smem", CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES},
      {"ptx_version", CU_FUNC_ATTRIBUTE_PTX_VERSION},
      {"binary_version", CU_FUNC_ATTRIBUTE_BINARY_VERSION},
  };
  lua_createtable(L, 0, 8);
  for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
    int v = 0;
    if (cu->cuFuncGetAttribute(&v, attrs[i].a, f->fn) == CUDA_SUCCESS) {
      lua_pushinteger(L, v);
      lua_setfield(L, -2, attrs[i].key);
    }
  }
  return 1;
}

/* fn:set_max_dynamic_smem(bytes): the opt-in above 48 KB */
static int function_set_max_dynamic_smem(lua_State *L) {
  function_box *f = check_function(L, 1);
  lua_Integer bytes = luaL_checkinteger(L, 2);
  CUresult r = cu->cuFuncSetAttribute(f->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)bytes);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuFuncSetAttribute");
  lua_pushboolean(L, 1);
  return 1;
}

/* fn:occupancy(threads_per_block [, dynamic_smem]) -> active blocks per SM */
static int function_occupancy(lua_State *L) {
  function_box *f = check_function(L, 1);
  int threads = (int)luaL_checkinteger(L, 2);
  size_t smem = (size_t)luaL_optinteger(L, 3, 0);
  int blocks = 0;
  CUresult r = cu->cuOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, f->fn, threads, smem);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  lua_pushinteger(L, blocks);
  return 1;
}

static unsigned dim_field(lua_State *L, int t, int i) {
  lua_Integer v = 1;
  if (lua_geti(L, t, i) != LUA_TNIL) {
    int ok;
    v = lua_tointegerx(L, -1, &ok);
    if (!ok || v < 1 || v > 0x7fffffff) luaL_error(L, "launch: dimension %d must be a positive integer", i);
  }
  lua_pop(L, 1);
  return (unsigned)v;
}

static void read_dim(lua_State *L, int opts, const char *key, unsigned d[3]) {
  lua_getfield(L, opts, key);
  int t = lua_gettop(L);
  if (lua_isinteger(L, t)) {
    d[0] = (unsigned)lua_tointeger(L, t);
    d[1] = d[2] = 1;
    if (lua_tointeger(L, t) < 1) luaL_error(L, "launch: %s must be positive", key);
  } else if (lua_istable(L, t)) {
    for (int i = 0; i < 3; i++) d[i] = dim_field(L, t, i + 1);
  } else {
    luaL_error(L, "launch: %s must be an integer or {x, y, z}", key);
  }
  lua_pop(L, 1);
}

/* One kernel argument from args[i]: a Buffer, or { "type", value } packed by
 * the shared packer (kernel_args.h). */
static void pack_arg(lua_State *L, int args, int i, uint64_t *slot) {
  int t = lua_geti(L, args, i);
  buffer_box *b = luaL_testudata(L, -1, BUFFER_MT);
  if (b) {
    if (!b->ptr || (b->parent && !b->parent->ptr)) luaL_error(L, "launch: args[%d] is a freed buffer", i);
    *slot = (uint64_t)b->ptr;
  } else if (t == LUA_TTABLE) {
    lua_geti(L, -1, 1);
    lua_geti(L, -2, 2);
    const char *type = lua_tostring(L, -2);
    if (!type) luaL_error(L, "launch: args[%d] must be {\"type\", value}", i);
    kl_pack_scalar(L, lua_gettop(L), type, i, "launch", slot);
    lua_pop(L, 2);
  } else {
    luaL_error(L, "launch: args[%d] must be a Buffer or {\"type\", value}, got %s", i,
               luaL_typename(L, -1));
  }
  lua_pop(L, 1);
}

static int function_launch(lua_State *L) {
  function_box *f = check_function(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  unsigned grid[3], block[3];
  read_dim(L, 2, "grid", grid);
  read_dim(L, 2, "block", block);
  lua_getfield(L, 2, "smem");
  lua_Integer smem = luaL_optinteger(L, -1, 0);
  lua_pop(L, 1);
  lua_getfield(L, 2, "args");
  int args = lua_gettop(L);
  luaL_checktype(L, args, LUA_TTABLE);
  lua_Integer n = luaL_len(L, args);
  if (n > MAX_ARGS) return luaL_error(L, "launch: more than %d arguments", MAX_ARGS);
  uint64_t slots[MAX_ARGS];
  void *params[MAX_ARGS];
  for (lua_Integer i = 1; i <= n; i++) {
    pack_arg(L, args, (int)i, &slots[i - 1]);
    params[i - 1] = &slots[i - 1];
  }
  CUresult r = cu->cuLaunchKernel(f->fn, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                  (unsigned)smem, NULL, params, NULL);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuLaunchKernel");
  lua_pushboolean(L, 1);
  return 1;
}

/* --- Buffer ---------------------------------------------------------------- */

static buffer_box *check_buffer(lua_State *L, int i) {
  buffer_box *b = luaL_checkudata(L, i, BUFFER_MT);
  if (!b->ptr || (b->parent && !b->parent->ptr)) luaL_argerror(L, i, "buffer is freed");
  use_context(L, b->owner);
  return b;
}

static int buffer_close(lua_State *L) {
  buffer_box *b = luaL_checkudata(L, 1, BUFFER_MT);
  if (b->ptr && !b->parent && cu && b->owner->ctx) {
    cu->cuCtxSetCurrent(b->owner->ctx);
    cu->cuMemFree(b->ptr);
  }
  b->ptr = 0;
  return 0;
}

static int buffer_upload(lua_State *L) {
  buffer_box *b = check_buffer(L, 1);
  size_t n;
  const char *data = luaL_checklstring(L, 2, &n);
  lua_Integer off = luaL_optinteger(L, 3, 0);
  luaL_argcheck(L, off >= 0 && (size_t)off + n <= b->size, 3, "upload past the end of the buffer");
  CUresult r = cu->cuMemcpyHtoD(b->ptr + (CUdeviceptr)off, data, n);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuMemcpyHtoD");
  lua_pushboolean(L, 1);
  return 1;
}

static int buffer_download(lua_State *L) {
  buffer_box *b = check_buffer(L, 1);
  lua_Integer off = luaL_optinteger(L, 3, 0);
  lua_Integer n = luaL_optinteger(L, 2, (lua_Integer)b->size - off);
  luaL_argcheck(L, off >= 0 && n >= 0 && (size_t)(off + n) <= b->size, 2, "download past the end of the buffer");
  luaL_Buffer buf;
  char *p = luaL_buffinitsize(L, &buf, (size_t)n);
  CUresult r = cu->cuMemcpyDtoH(p, b->ptr + (CUdeviceptr)off, (size_t)n);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuMemcpyDtoH");
  luaL_pushresultsize(&buf, (size_t)n);
  return 1;
}

/* buf:fill_u32(value): every 32-bit word set to value (0x7fc00000 poisons f32 with NaN) */
static int buffer_fill_u32(lua_State *L) {
  buffer_box *b = check_buffer(L, 1);
  lua_Integer v = luaL_checkinteger(L, 2);
  /* word stores need word alignment, which a view may not have */
  CUresult r = b->size % 4 == 0 && b->ptr % 4 == 0 ? cu->cuMemsetD32(b->ptr, (unsigned)v, b->size / 4)
                                                   : cu->cuMemsetD8(b->ptr, (unsigned char)v, b->size);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuMemset");
  lua_pushboolean(L, 1);
  return 1;
}

static int buffer_copy_from(lua_State *L) {
  buffer_box *dst = check_buffer(L, 1);
  buffer_box *src = check_buffer(L, 2);
  luaL_argcheck(L, src->size <= dst->size, 2, "source is larger than destination");
  CUresult r = cu->cuMemcpyDtoD(dst->ptr, src->ptr, src->size);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuMemcpyDtoD");
  lua_pushboolean(L, 1);
  return 1;
}

/* buf:view(offset, size) -> a Buffer naming bytes [offset, offset + size) of
 * buf, for canary regions around a kernel's buffer. Closing a view frees
 * nothing; closing its parent makes the view unusable. */
static int buffer_view(lua_State *L) {
  buffer_box *b = check_buffer(L, 1);
  lua_Integer off = luaL_checkinteger(L, 2);
  lua_Integer n = luaL_checkinteger(L, 3);
  luaL_argcheck(L, off >= 0 && n > 0 && (size_t)off + (size_t)n <= b->size, 3, "view past the end of the buffer");
  buffer_box *v = new_box(L, sizeof *v, BUFFER_MT, 1);
  v->owner = b->owner;
  v->parent = b->parent ? b->parent : b;
  v->ptr = b->ptr + (CUdeviceptr)off;
  v->size = (size_t)n;
  return 1;
}

static int buffer_index(lua_State *L) {
  buffer_box *b = luaL_checkudata(L, 1, BUFFER_MT);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "size") == 0) {
    lua_pushinteger(L, (lua_Integer)b->size);
    return 1;
  }
  if (strcmp(k, "address") == 0) {
    lua_pushinteger(L, (lua_Integer)b->ptr);
    return 1;
  }
  kl_pushmethod(L, 1, k);
  return 1;
}

/* --- Event ------------------------------------------------------------------ */

static int event_close(lua_State *L) {
  event_box *e = luaL_checkudata(L, 1, EVENT_MT);
  if (e->ev && cu && e->owner->ctx) {
    cu->cuCtxSetCurrent(e->owner->ctx);
    cu->cuEventDestroy(e->ev);
  }
  e->ev = NULL;
  return 0;
}

static event_box *check_event(lua_State *L, int i) {
  event_box *e = luaL_checkudata(L, i, EVENT_MT);
  if (!e->ev) luaL_argerror(L, i, "event is destroyed");
  use_context(L, e->owner);
  return e;
}

static int event_record(lua_State *L) {
  event_box *e = check_event(L, 1);
  CUresult r = cu->cuEventRecord(e->ev, NULL);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuEventRecord");
  lua_pushboolean(L, 1);
  return 1;
}

/* start:elapsed(stop) -> milliseconds between the two records */
static int event_elapsed(lua_State *L) {
  event_box *a = check_event(L, 1);
  event_box *b = check_event(L, 2);
  CUresult r = cu->cuEventSynchronize(b->ev);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuEventSynchronize");
  float ms = 0;
  r = cu->cuEventElapsedTime(&ms, a->ev, b->ev);
  if (r != CUDA_SUCCESS) return push_cuda_error(L, r, "cuEventElapsedTime");
  lua_pushnumber(L, ms);
  return 1;
}

/* --- registration ----------------------------------------------------------- */

static int function_noop_close(lua_State *L) {
  (void)L; /* a function handle owns nothing: its module does */
  return 0;
}

/* Every type has close(), __gc and __close, one function each. */
static const luaL_Reg context_meta[] = {{"__gc", context_close}, {"__close", context_close}, {NULL, NULL}};
static const luaL_Reg context_methods[] = {
    {"synchronize", context_synchronize}, {"memory", context_memory}, {"load", context_load},
    {"alloc", context_alloc},             {"event", context_event},   {"close", context_close},
    {NULL, NULL},
};
static const luaL_Reg module_meta[] = {{"__gc", module_close}, {"__close", module_close}, {NULL, NULL}};
static const luaL_Reg module_methods[] = {{"func", module_func}, {"close", module_close}, {NULL, NULL}};
static const luaL_Reg function_meta[] = {
    {"__gc", function_noop_close}, {"__close", function_noop_close}, {NULL, NULL},
};
static const luaL_Reg function_methods[] = {
    {"attributes", function_attributes},
    {"set_max_dynamic_smem", function_set_max_dynamic_smem},
    {"occupancy", function_occupancy},
    {"launch", function_launch},
    {"close", function_noop_close},
    {NULL, NULL},
};
static const luaL_Reg buffer_meta[] = {
    {"__gc", buffer_close}, {"__close", buffer_close}, {"__index", buffer_index}, {NULL, NULL},
};
static const luaL_Reg buffer_methods[] = {
    {"upload", buffer_upload},       {"download", buffer_download},
    {"fill_u32", buffer_fill_u32},   {"copy_from", buffer_copy_from},
    {"view", buffer_view},           {"close", buffer_close},
    {NULL, NULL},
};
static const luaL_Reg event_meta[] = {{"__gc", event_close}, {"__close", event_close}, {NULL, NULL}};
static const luaL_Reg event_methods[] = {
    {"record", event_record}, {"elapsed", event_elapsed}, {"close", event_close}, {NULL, NULL},
};

static const luaL_Reg cuda_functions[] = {
    {"load", cuda_load},       {"driver_version", cuda_driver_version},
    {"library", cuda_library}, {"devices", cuda_devices},
    {"context", cuda_context}, {NULL, NULL},
};

int luaopen_kl_cuda(lua_State *L) {
  kl_newtype(L, CONTEXT_MT, context_meta, context_methods);
  kl_newtype(L, MODULE_MT, module_meta, module_methods);
  kl_newtype(L, FUNCTION_MT, function_meta, function_methods);
  kl_newtype(L, BUFFER_MT, buffer_meta, buffer_methods);
  kl_newtype(L, EVENT_MT, event_meta, event_methods);
  luaL_newlib(L, cuda_functions);
  return 1;
}
