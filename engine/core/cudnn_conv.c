/* cuDNN's fp32 3x3 convolution through dlopen; see cudnn_conv.h. */
#include "core/cudnn_conv.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/driver.h"

/* The handful of cuDNN 9 types and values used here (cudnn_graph.h,
 * cudnn_cnn.h). Enums are C ints; descriptors and handles are pointers. */
typedef void *cudnn_handle;
typedef void *cudnn_desc;
enum { CUDNN_OK = 0 };
enum { CUDNN_TENSOR_NCHW = 0 };
enum { CUDNN_DATA_FLOAT = 0 };
enum { CUDNN_CROSS_CORRELATION = 1 };
enum { CUDNN_TENSOR_OP_MATH = 1, CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION = 2, CUDNN_FMA_MATH = 3 };

typedef struct {
  int algo;
  int status;
  float time;
  size_t memory;
  int determinism;
  int math_type;
  int reserved[3];
} cudnn_fwd_perf;

static struct {
  void *lib;
  cudnn_handle handle;
  long version;
  const kl_driver_api *cu;
  int (*create)(cudnn_handle *);
  const char *(*error_string)(int);
  int (*create_tensor)(cudnn_desc *);
  int (*set_tensor4d)(cudnn_desc, int format, int type, int n, int c, int h, int w);
  int (*create_filter)(cudnn_desc *);
  int (*set_filter4d)(cudnn_desc, int type, int format, int k, int c, int h, int w);
  int (*create_conv)(cudnn_desc *);
  int (*set_conv2d)(cudnn_desc, int pad_h, int pad_w, int u, int v, int dil_h, int dil_w, int mode, int type);
  int (*set_math)(cudnn_desc, int math);
  int (*find_fwd)(cudnn_handle, cudnn_desc x, cudnn_desc w, cudnn_desc conv, cudnn_desc y, int want, int *got,
                  cudnn_fwd_perf *perf);
  int (*forward)(cudnn_handle, const void *alpha, cudnn_desc xd, const void *x, cudnn_desc wd, const void *w,
                 cudnn_desc conv, int algo, void *ws, size_t ws_size, const void *beta, cudnn_desc yd, void *y);
  cudnn_desc xd, wd, yd, conv;
  /* the shape planned last, its algorithm and workspace */
  int shape[5], algo, planned;
  CUdeviceptr workspace;
  size_t workspace_size;
} dnn;

static void *open_cudnn(char *why, size_t n) {
  const char *env = getenv("KL_CUDNN_LIB");
  const char *names[] = {env && *env ? env : NULL, "libcudnn.so.9", "libcudnn.so"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (!names[i]) continue;
    void *lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (lib) return lib;
    snprintf(why, n, "%s (set KL_CUDNN_LIB to libcudnn.so.9's path)", dlerror());
  }
  return NULL;
}

static const char *status_text(int s) { return dnn.error_string ? dnn.error_string(s) : "?"; }

#define SYM(field, name)                                                 \
  do {                                                                   \
    void *p_ = dlsym(dnn.lib, name);                                     \
    if (!p_) return snprintf(why, n, "libcudnn has no %s", name), 0;     \
    memcpy(&dnn.field, &p_, sizeof p_);                                  \
  } while (0)

long kl_cudnn_load(char *why, size_t n) {
  if (dnn.handle) return dnn.version;
  const char *derr = NULL;
  if (!(dnn.cu = kl_driver_load(&derr))) return snprintf(why, n, "no CUDA driver: %s", derr), 0;
  if (!dnn.lib && !(dnn.lib = open_cudnn(why, n))) return 0;
  size_t (*get_version)(void);
  void *p = dlsym(dnn.lib, "cudnnGetVersion");
  if (!p) return snprintf(why, n, "libcudnn has no cudnnGetVersion"), 0;
  memcpy(&get_version, &p, sizeof p);
  SYM(create, "cudnnCreate");
  SYM(error_string, "cudnnGetErrorString");
  SYM(create_tensor, "cudnnCreateTensorDescriptor");
  SYM(set_tensor4d, "cudnnSetTensor4dDescriptor");
  SYM(create_filter, "cudnnCreateFilterDescriptor");
  SYM(set_filter4d, "cudnnSetFilter4dDescriptor");
  SYM(create_conv, "cudnnCreateConvolutionDescriptor");
  SYM(set_conv2d, "cudnnSetConvolution2dDescriptor");
  SYM(set_math, "cudnnSetConvolutionMathType");
  SYM(find_fwd, "cudnnFindConvolutionForwardAlgorithm");
  SYM(forward, "cudnnConvolutionForward");
  int s;
  /* cudnnCreate binds the handle to the current context (the worker's). */
  if ((s = dnn.create(&dnn.handle)) != CUDNN_OK) {
    dnn.handle = NULL;
    return snprintf(why, n, "cudnnCreate: %s (no current CUDA context?)", status_text(s)), 0;
  }
  if ((s = dnn.create_tensor(&dnn.xd)) != CUDNN_OK || (s = dnn.create_tensor(&dnn.yd)) != CUDNN_OK ||
      (s = dnn.create_filter(&dnn.wd)) != CUDNN_OK || (s = dnn.create_conv(&dnn.conv)) != CUDNN_OK)
    return snprintf(why, n, "cuDNN descriptors: %s", status_text(s)), 0;
  dnn.version = (long)get_version();
  return dnn.version;
}

/* Describes the shape and picks the fastest FMA algorithm cudnnFind sees. */
static int plan(const int shape[5], char *why, size_t n) {
  int N = shape[0], C = shape[1], H = shape[2], W = shape[3], K = shape[4], s;
  dnn.planned = 0;
  if (dnn.workspace) {
    dnn.cu->cuMemFree(dnn.workspace);
    dnn.workspace = 0, dnn.workspace_size = 0;
  }
  if ((s = dnn.set_tensor4d(dnn.xd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, C, H, W)) != CUDNN_OK ||
      (s = dnn.set_tensor4d(dnn.yd, CUDNN_TENSOR_NCHW, CUDNN_DATA_FLOAT, N, K, H, W)) != CUDNN_OK ||
      (s = dnn.set_filter4d(dnn.wd, CUDNN_DATA_FLOAT, CUDNN_TENSOR_NCHW, K, C, 3, 3)) != CUDNN_OK ||
      (s = dnn.set_conv2d(dnn.conv, 1, 1, 1, 1, 1, 1, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT)) != CUDNN_OK ||
      (s = dnn.set_math(dnn.conv, CUDNN_FMA_MATH)) != CUDNN_OK)
    return snprintf(why, n, "cuDNN describing %dx%dx%dx%d -> %d: %s", N, C, H, W, K, status_text(s)), 0;
  cudnn_fwd_perf perf[16];
  int got = 0;
  if ((s = dnn.find_fwd(dnn.handle, dnn.xd, dnn.wd, dnn.conv, dnn.yd, 16, &got, perf)) != CUDNN_OK)
    return snprintf(why, n, "cudnnFindConvolutionForwardAlgorithm: %s", status_text(s)), 0;
  /* Sorted fastest first; tensor-core math (TF32) is not the fp32 bar. */
  int best = -1;
  for (int i = 0; i < got && best < 0; i++)
    if (perf[i].status == CUDNN_OK && perf[i].math_type != CUDNN_TENSOR_OP_MATH &&
        perf[i].math_type != CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION)
      best = i;
  if (best < 0) return snprintf(why, n, "cuDNN found no FMA algorithm among %d", got), 0;
  dnn.algo = perf[best].algo;
  if (perf[best].memory > 0) {
    CUresult r = dnn.cu->cuMemAlloc(&dnn.workspace, perf[best].memory);
    if (r != CUDA_SUCCESS) {
      char buf[256];
      return snprintf(why, n, "cuDNN workspace of %zu bytes: %s", perf[best].memory,
                      kl_driver_error(r, buf, sizeof buf)), 0;
    }
    dnn.workspace_size = perf[best].memory;
  }
  memcpy(dnn.shape, shape, sizeof dnn.shape);
  dnn.planned = 1;
  return 1;
}

int kl_cudnn_conv3x3(int N, int C, int H, int W, int K, const void *x, const void *w, void *y, int *algo,
                     char *why, size_t n) {
  if (!kl_cudnn_load(why, n)) return 0;
  const int shape[5] = {N, C, H, W, K};
  if (!dnn.planned || memcmp(shape, dnn.shape, sizeof shape) != 0)
    if (!plan(shape, why, n)) return 0;
  const float one = 1.0f, zero = 0.0f;
  int s = dnn.forward(dnn.handle, &one, dnn.xd, x, dnn.wd, w, dnn.conv, dnn.algo, (void *)(size_t)dnn.workspace,
                      dnn.workspace_size, &zero, dnn.yd, y);
  if (s != CUDNN_OK) return snprintf(why, n, "cudnnConvolutionForward: %s", status_text(s)), 0;
  if (algo) *algo = dnn.algo;
  return 1;
}
