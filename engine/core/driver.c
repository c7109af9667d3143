#define _GNU_SOURCE
#include "core/driver.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "core/libpath.h"

static kl_driver_api api;
static const char *load_error;
static char load_error_buf[512];
static char driver_path[PATH_MAX];
static int loaded;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void load_once(void) {
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    snprintf(load_error_buf, sizeof load_error_buf, "%s", dlerror());
    load_error = load_error_buf;
    return;
  }
/* Two levels, so that the argument is macro-expanded first. */
#define KL_STRINGIFY(x) #x
#define KL_SYMBOL_NAME(x) KL_STRINGIFY(x)
#define KL_DRIVER_RESOLVE(name)                                                      \
  {                                                                                  \
    void *fn = dlsym(lib, KL_SYMBOL_NAME(name));                                     \
    if (!fn) {                                                                       \
      snprintf(load_error_buf, sizeof load_error_buf, "the driver has no %s",        \
               KL_SYMBOL_NAME(name));                                                \
      load_error = load_error_buf;                                                   \
      return;                                                                        \
    }                                                                                \
    memcpy(&api.name, &fn, sizeof fn);                                               \
  }
  KL_DRIVER_FUNCTIONS(KL_DRIVER_RESOLVE)
#undef KL_DRIVER_RESOLVE
  kl_library_of((const void *)api.cuInit, driver_path, sizeof driver_path);
  CUresult r = api.cuInit(0);
  if (r != CUDA_SUCCESS) {
    char buf[256];
    snprintf(load_error_buf, sizeof load_error_buf, "cuInit failed: %s",
             kl_driver_error(r, buf, sizeof buf));
    load_error = load_error_buf;
    return;
  }
  loaded = 1;
}

const kl_driver_api *kl_driver_load(const char **why) {
  pthread_once(&once, load_once);
  if (!loaded) {
    if (why) *why = load_error ? load_error : "unknown error";
    return NULL;
  }
  return &api;
}

const char *kl_driver_path(void) { return driver_path[0] ? driver_path : NULL; }

const char *kl_driver_error(CUresult r, char *buf, unsigned size) {
  const char *name = NULL, *text = NULL;
  if (api.cuGetErrorName) api.cuGetErrorName(r, &name);
  if (api.cuGetErrorString) api.cuGetErrorString(r, &text);
  if (name)
    snprintf(buf, size, "%s: %s", name, text ? text : "");
  else
    snprintf(buf, size, "CUDA error %d", (int)r);
  return buf;
}
