/* The CUDA driver, loaded at run time with dlopen("libcuda.so.1") so that
 * klineage starts and works (compile, emu, reports) where there is no GPU.
 * Every entry point is resolved once through cuGetProcAddress for the
 * toolkit's CUDA_VERSION, which picks the same ABI version (_v2, ...) that
 * cuda.h's macros would have linked. */
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
