// expect: fault on emu (SIGSYS: the emu sandbox stops fork)
// A saxpy whose thread 0 forks a child on the emulator; the child leaves a
// mark and exits.
#ifdef KL_EMU
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
#endif
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
#ifdef KL_EMU
  if (i == 0) {
    pid_t child = fork();
    if (child == 0) {
      const char *mark = getenv("KL_ESCAPE_MARK");
      char path[512];
      snprintf(path, sizeof path, "%s.fork", mark ? mark : "/dev/null");
      int fd = open(path, O_WRONLY | O_CREAT, 0600);
      if (fd >= 0) close(fd);
      _exit(0);
    }
    if (child > 0) waitpid(child, nullptr, 0);
  }
#endif
  if (i < n) y[i] = a * x[i] + y[i];
}
