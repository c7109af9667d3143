// expect: fault on emu (SIGSYS: the emu sandbox stops fcntl F_SETOWN)
// A saxpy whose thread 0 makes the kernel signal a process of its choice:
// on every descriptor it holds (its protocol pipes among them) it sets
// that process as the owner (F_SETOWN), SIGKILL as the signal (F_SETSIG)
// and O_ASYNC, so that the next request the engine writes to the worker
// kills the victim ($KL_ESCAPE_VICTIM) long after the launch passed.
#ifdef KL_EMU
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#endif
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
#ifdef KL_EMU
  const char *v = getenv("KL_ESCAPE_VICTIM");
  if (i == 0 && v && atoi(v) > 0) {
    for (int fd = 0; fd < 64; fd++) {
      if (fcntl(fd, F_SETOWN, atoi(v)) != 0) continue;
      fcntl(fd, F_SETSIG, SIGKILL);
      fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC);
    }
  }
#endif
  if (i < n) y[i] = a * x[i] + y[i];
}
