/* kl.vendor: the vendor libraries the lineages are judged against, loaded
 * with dlopen so that klineage never depends on them (and kernels never
 * call them: the gate compiles kernels with NVRTC alone). They run in the
 * worker, on the worker's current context and the default stream, so the
 * gate times them exactly like a candidate (CUPTI sees their kernels).
 *
 *   vendor.load("cublas" | "cudnn") -> version | nil, reason
 *   vendor.sgemm_rowmajor(M, N, K, alpha, A, B, beta, C) -> true | nil, err
 *       C = alpha * A * B + beta * C, row-major fp32, A M x K, B K x N;
 *       A, B, C are device addresses (kl.Buffer.address). Default math
 *       mode: no TF32.
 *   vendor.conv2d_nchw_3x3(N, C, H, W, K, x, w, y) -> true, algo | nil, err
 *       cuDNN, fp32 FMA math (engine/core/cudnn_conv.h). */
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cublas_v2.h>
#include <lauxlib.h>
#include <lua.h>

#include "core/cudnn_conv.h"

typedef struct {
  void *lib;
  cublasHandle_t handle;
  __typeof__(&cublasCreate_v2) create;
  __typeof__(&cublasSgemm_v2) sgemm;
  __typeof__(&cublasSetMathMode) set_math_mode;
  __typeof__(&cublasGetVersion_v2) get_version;
  int version;
} cublas_api;

static cublas_api cublas;

/* The toolkit's library folder first: the loader path may not have it. */
static void *open_cublas(char *why, size_t n) {
  static const char *const names[] = {KL_CUDA_LIB_DIR "/libcublas.so", "libcublas.so.13", "libcublas.so.12",
                                      "libcublas.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
    snprintf(why, n, "%s", dlerror());
  }
  return NULL;
}

static int load_cublas(char *why, size_t n) {
  if (cublas.handle) return 1;
  if (!cublas.lib) {
    cublas.lib = open_cublas(why, n);
    if (!cublas.lib) return 0;
  }
  void *p;
  if (!(p = dlsym(cublas.lib, "cublasCreate_v2"))) return snprintf(why, n, "no cublasCreate_v2"), 0;
  *(void **)&cublas.create = p;
  if (!(p = dlsym(cublas.lib, "cublasSgemm_v2"))) return snprintf(why, n, "no cublasSgemm_v2"), 0;
  *(void **)&cublas.sgemm = p;
  if (!(p = dlsym(cublas.lib, "cublasSetMathMode"))) return snprintf(why, n, "no cublasSetMathMode"), 0;
  *(void **)&cublas.set_math_mode = p;
  if (!(p = dlsym(cublas.lib, "cublasGetVersion_v2"))) return snprintf(why, n, "no cublasGetVersion_v2"), 0;
  *(void **)&cublas.get_version = p;
  /* cublasCreate binds the handle to the current context (the worker's). */
  cublasStatus_t s = cublas.create(&cublas.handle);
  if (s != CUBLAS_STATUS_SUCCESS) {
    cublas.handle = NULL;
    return snprintf(why, n, "cublasCreate failed with status %d (no current CUDA context?)", (int)s), 0;
  }
  cublas.set_math_mode(cublas.handle, CUBLAS_DEFAULT_MATH);
  cublas.get_version(cublas.handle, &cublas.version);
  return 1;
}

static int vendor_load(lua_State *L) {
  const char *name = luaL_checkstring(L, 1);
  char why[512] = "";
  if (strcmp(name, "cudnn") == 0) {
    long v = kl_cudnn_load(why, sizeof why);
    if (!v) {
      lua_pushnil(L);
      lua_pushfstring(L, "cuDNN: %s", why);
      return 2;
    }
    lua_pushinteger(L, v);
    return 1;
  }
  if (strcmp(name, "cublas") != 0) return luaL_argerror(L, 1, "known libraries: cublas, cudnn");
  if (!load_cublas(why, sizeof why)) {
    lua_pushnil(L);
    lua_pushfstring(L, "cuBLAS: %s", why);
    return 2;
  }
  lua_pushinteger(L, cublas.version);
  return 1;
}

static int vendor_sgemm_rowmajor(lua_State *L) {
  int M = (int)luaL_checkinteger(L, 1), N = (int)luaL_checkinteger(L, 2), K = (int)luaL_checkinteger(L, 3);
  float alpha = (float)luaL_checknumber(L, 4);
  const float *A = (const float *)(uintptr_t)luaL_checkinteger(L, 5);
  const float *B = (const float *)(uintptr_t)luaL_checkinteger(L, 6);
  float beta = (float)luaL_checknumber(L, 7);
  float *C = (float *)(uintptr_t)luaL_checkinteger(L, 8);
  char why[512];
  if (!load_cublas(why, sizeof why)) {
    lua_pushnil(L);
    lua_pushfstring(L, "cuBLAS: %s", why);
    return 2;
  }
  /* Column-major cuBLAS computes C^T = B^T A^T, which is row-major C = A B. */
  cublasStatus_t s = cublas.sgemm(cublas.handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &alpha, B, N, A, K,
                                  &beta, C, N);
  if (s != CUBLAS_STATUS_SUCCESS) {
    lua_pushnil(L);
    lua_pushfstring(L, "cublasSgemm failed with status %d", (int)s);
    return 2;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int vendor_conv2d_nchw_3x3(lua_State *L) {
  int dims[5];
  for (int i = 0; i < 5; i++) {
    lua_Integer d = luaL_checkinteger(L, i + 1);
    luaL_argcheck(L, d >= 1 && d <= 1 << 30, i + 1, "a dimension must be in 1 .. 2^30");
    dims[i] = (int)d;
  }
  const void *x = (const void *)(uintptr_t)luaL_checkinteger(L, 6);
  const void *w = (const void *)(uintptr_t)luaL_checkinteger(L, 7);
  void *y = (void *)(uintptr_t)luaL_checkinteger(L, 8);
  char why[512];
  int algo = -1;
  if (!kl_cudnn_conv3x3(dims[0], dims[1], dims[2], dims[3], dims[4], x, w, y, &algo, why, sizeof why)) {
    lua_pushnil(L);
    lua_pushfstring(L, "cuDNN: %s", why);
    return 2;
  }
  lua_pushboolean(L, 1);
  lua_pushinteger(L, algo);
  return 2;
}

static const luaL_Reg vendor_functions[] = {
    {"load", vendor_load},
    {"sgemm_rowmajor", vendor_sgemm_rowmajor},
    {"conv2d_nchw_3x3", vendor_conv2d_nchw_3x3},
    {NULL, NULL},
};

int luaopen_kl_vendor(lua_State *L) {
  luaL_newlib(L, vendor_functions);
  return 1;
}
