// expect: fault on emu (SIGSYS, during load: the worker is sandboxed before it
// loads the first kernel library, whose initializers are kernel code)
// A correct saxpy with a static initializer that writes a file when the
// emulator's shared object is loaded, before any launch.
#ifdef KL_EMU
#include <stdio.h>
#include <stdlib.h>
__attribute__((constructor)) static void kl_escape_on_load() {
  const char *mark = getenv("KL_ESCAPE_MARK");
  char path[512];
  snprintf(path, sizeof path, "%s.constructor", mark ? mark : "/tmp/kl_escape");
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
}
#endif
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
