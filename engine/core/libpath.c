#define _GNU_SOURCE
#include "core/libpath.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *kl_library_of(const void *symbol, char *buf, size_t size) {
  Dl_info info;
  if (!symbol || size == 0 || !dladdr(symbol, &info) || !info.dli_fname)
    return NULL;
  /* dladdr gives the name the loader used; resolve links for the report. */
  char *real = realpath(info.dli_fname, NULL);
  snprintf(buf, size, "%s", real ? real : info.dli_fname);
  free(real);
  return buf;
}

const char *kl_executable_dir(char *buf, size_t size) {
  char path[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) return NULL;
  path[n] = '\0';
  char *slash = strrchr(path, '/');
  if (!slash) return NULL;
  *slash = '\0';
  if ((size_t)snprintf(buf, size, "%s", path) >= size) return NULL;
  return buf;
}
