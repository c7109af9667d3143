/* The CUDA driver, loaded at run time with dlopen("libcuda.so.1") so that
 * klineage starts and works (compile, emu, reports) where there is no GPU.
 * Every entry point is resolved with dlsym under the exact versioned name
 * that cuda.h maps it to (cuMemAlloc -> cuMemAlloc_v2), which is what a
 * link against libcuda would bind. cuGetProcAddress is not used: for a
 * given CUDA version it returns the newest ABI of a function, which can
 * differ from the header's prototype (cuCtxSynchronize vs _v2 in 13.0). */
#ifndef KL_DRIVER_H
#define KL_DRIVER_H

#include <cuda.h>

/* The entry points klineage uses. X(name) with the cuda.h name. */
#define KL_DRIVER_FUNCTIONS(X)                   \
  X(cuInit)                                      \
  X(cuDriverGetVersion)                          \
  X(cuGetErrorName)                              \
  X(cuGetErrorString)                            \
  X(cuDeviceGetCount)                            \
  X(cuDeviceGet)                                 \
  X(cuDeviceGetName)                             \
  X(cuDeviceGetAttribute)                        \
  X(cuDeviceTotalMem)                            \
  X(cuDevicePrimaryCtxRetain)                    \
  X(cuDevicePrimaryCtxRelease)                   \
  X(cuCtxSetCurrent)                             \
  X(cuCtxSynchronize)                            \
  X(cuMemGetInfo)                                \
  X(cuModuleLoadData)                            \
  X(cuModuleUnload)                              \
  X(cuModuleGetFunction)                         \
  X(cuFuncGetAttribute)                          \
  X(cuFuncSetAttribute)                          \
  X(cuOccupancyMaxActiveBlocksPerMultiprocessor) \
  X(cuMemAlloc)                                  \
  X(cuMemFree)                                   \
  X(cuMemcpyHtoD)                                \
  X(cuMemcpyDtoH)                                \
  X(cuMemcpyDtoD)                                \
  X(cuMemsetD8)                                  \
  X(cuMemsetD32)                                 \
  X(cuLaunchKernel)                              \
  X(cuEventCreate)                               \
  X(cuEventRecord)                               \
  X(cuEventSynchronize)                          \
  X(cuEventElapsedTime)                          \
  X(cuEventDestroy)

typedef struct {
#define KL_DRIVER_FIELD(name) __typeof__(&name) name;
  KL_DRIVER_FUNCTIONS(KL_DRIVER_FIELD)
#undef KL_DRIVER_FIELD
} kl_driver_api;

/* Loads libcuda.so.1 and calls cuInit(0), once per process. Returns the
 * table, or NULL with a reason in *why (a static string or one kept by the
 * loader; never freed by the caller). Thread-safe. */
const kl_driver_api *kl_driver_load(const char **why);

/* Path of the loaded driver library, or NULL. */
const char *kl_driver_path(void);

/* "CUDA_ERROR_X: description" for r, into buf. */
const char *kl_driver_error(CUresult r, char *buf, unsigned size);

#endif
