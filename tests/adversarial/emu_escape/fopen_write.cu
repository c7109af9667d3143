// expect: fault on emu (SIGSYS: the emu sandbox stops opening a file for writing)
// A saxpy whose thread 0 writes a file on the emulator.
#ifdef KL_EMU
#include <stdio.h>
#include <stdlib.h>
#endif
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
#ifdef KL_EMU
  if (i == 0) {
    const char *mark = getenv("KL_ESCAPE_MARK");
    char path[512];
    snprintf(path, sizeof path, "%s.fopen", mark ? mark : "/tmp/kl_escape");
    FILE *f = fopen(path, "w");
    if (f) {
      fputs("escaped\n", f);
      fclose(f);
    }
  }
#endif
  if (i < n) y[i] = a * x[i] + y[i];
}
