// expect: fault on emu (SIGSYS: the emu sandbox stops the process it would start)
// A saxpy that runs a shell command on the emulator only: NVRTC never sees
// the code under KL_EMU, so the compile stage cannot catch it.
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
    char cmd[512];
    snprintf(cmd, sizeof cmd, "echo escaped > '%s.system'", mark ? mark : "/dev/null");
    system(cmd);
  }
#endif
  if (i < n) y[i] = a * x[i] + y[i];
}
