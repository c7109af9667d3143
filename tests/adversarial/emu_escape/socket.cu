// expect: fault on emu (SIGSYS: the emu sandbox stops socket)
// A saxpy whose thread 0 opens a socket on the emulator (a local one: no
// network is needed to show it), and leaves a mark when it got one.
#ifdef KL_EMU
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>
#endif
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
#ifdef KL_EMU
  if (i == 0) {
    int s = socket(AF_UNIX, SOCK_DGRAM, 0);
    const char *mark = getenv("KL_ESCAPE_MARK");
    if (s >= 0 && mark) {
      char path[512];
      snprintf(path, sizeof path, "%s.socket", mark);
      FILE *f = fopen(path, "w");
      if (f) fclose(f);
    }
    if (s >= 0) close(s);
  }
#endif
  if (i < n) y[i] = a * x[i] + y[i];
}
