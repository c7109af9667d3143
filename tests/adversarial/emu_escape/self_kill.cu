// expect: fault on emu (SIGSYS: the emu sandbox stops a SIGKILL to itself)
// A saxpy whose thread 0 kills its own worker with SIGKILL, the signal of
// the OOM killer: the pool would take it for a death from outside,
// worker_lost, the engine's fault, and never blame the kernel.
#ifdef KL_EMU
#include <signal.h>
#include <unistd.h>
#endif
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
#ifdef KL_EMU
  if (i == 0) kill(getpid(), SIGKILL);
#endif
  if (i < n) y[i] = a * x[i] + y[i];
}
