/* engine/core/sandbox.c: each case runs in a child that enters the sandbox
 * and then does one thing; the parent checks how the child ended and what
 * it said on stderr. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/sandbox.h"
#include "harness.h"

typedef struct {
  int exited, code, signo;
  char err[1024];
} outcome;

/* Runs fn in a sandboxed child; fn's return value is the exit code. */
static outcome run(int (*fn)(void)) {
  outcome o;
  memset(&o, 0, sizeof o);
  int pipefd[2];
  if (pipe(pipefd) != 0) return o;
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    dup2(pipefd[1], 2);
    close(pipefd[0]);
    close(pipefd[1]);
    char why[256];
    if (!kl_sandbox_enter(NULL, 0, why, sizeof why)) {
      fprintf(stderr, "enter: %s\n", why);
      _exit(100);
    }
    _exit(fn());
  }
  close(pipefd[1]);
  size_t got = 0;
  ssize_t r;
  while (got < sizeof o.err - 1 && (r = read(pipefd[0], o.err + got, sizeof o.err - 1 - got)) > 0) got += (size_t)r;
  close(pipefd[0]);
  int status;
  waitpid(pid, &status, 0);
  o.exited = WIFEXITED(status);
  o.code = o.exited ? WEXITSTATUS(status) : -1;
  o.signo = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  return o;
}

static void *thread_main(void *arg) { return arg; }

static int allowed_work(void) {
  /* reading a file, threads, executable memory, signals to itself, clocks */
  int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  char buf[64];
  if (fd < 0 || read(fd, buf, sizeof buf) <= 0) return 1;
  close(fd);
  FILE *f = fopen("/proc/self/maps", "rb");
  if (!f) return 2;
  fclose(f);
  pthread_t t;
  static int token;
  void *back = NULL;
  if (pthread_create(&t, NULL, thread_main, &token) != 0 || pthread_join(t, &back) != 0 || back != &token) return 3;
  void *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED || mprotect(m, 4096, PROT_READ | PROT_EXEC) != 0) return 4;
  if (kill(getpid(), 0) != 0) return 5;
  struct rlimit rl;
  if (getrlimit(RLIMIT_STACK, &rl) != 0) return 6;
  if (write(2, "still here\n", 11) != 11) return 7;
  struct timespec ts = {0, 1000};
  nanosleep(&ts, NULL);
  return 0;
}

static int refused_quietly(void) {
  /* neither allowed nor dangerous: the call fails with ENOSYS */
  long r = syscall(__NR_chdir, "/");
  return r == -1 && errno == ENOSYS ? 0 : 1;
}

static int do_execve(void) {
  char *argv[] = {"true", NULL};
  execve("/bin/true", argv, environ);
  return 0;
}
static int do_fork(void) {
  pid_t p = fork();
  if (p == 0) _exit(0);
  return 0;
}
static int do_system(void) {
  int r = system("true"); /* never returns: the sandbox kills the child */
  return r == -1 ? 0 : 0;
}
static int do_socket(void) { return socket(AF_UNIX, SOCK_DGRAM, 0) >= 0 ? 0 : 0; }
static int do_fopen_write(void) {
  FILE *f = fopen("/tmp/kl_sandbox_test_should_not_exist", "w");
  if (f) fclose(f);
  return 0;
}
static int do_open_append(void) { return open("/dev/null", O_RDONLY | O_APPEND) >= 0 ? 0 : 0; }
static int do_unlink(void) { return unlink("/tmp/kl_sandbox_test_absent") == 0 ? 0 : 0; }
static int do_kill_parent(void) { return kill(getppid(), 0) == 0 ? 0 : 0; }
static int do_kill_self(void) { return kill(getpid(), SIGKILL) == 0 ? 0 : 0; }
static int do_ptrace(void) { return ptrace(PTRACE_ATTACH, getppid(), NULL, NULL) == 0 ? 0 : 0; }
static int do_sigsys_ignore(void) { return signal(SIGSYS, SIG_IGN) == SIG_ERR ? 0 : 0; }

/* fcntl: the commands the runtime needs work; a lock is refused quietly */
static int fcntl_needed(void) {
  int p[1] = {open("/dev/null", O_RDONLY)};
  if (p[0] < 0) return 1;
  int fl = fcntl(p[0], F_GETFL);
  if (fl < 0 || fcntl(p[0], F_SETFL, fl | O_NONBLOCK) != 0) return 2;
  if (fcntl(p[0], F_SETFD, FD_CLOEXEC) != 0 || !(fcntl(p[0], F_GETFD) & FD_CLOEXEC)) return 3;
  int d = fcntl(p[0], F_DUPFD_CLOEXEC, 10);
  if (d < 10 || fcntl(p[0], F_DUPFD, 20) < 20) return 4;
  struct flock lk = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
  if (fcntl(p[0], F_SETLK, &lk) != -1 || errno != EINVAL) return 5;
  if (fcntl(p[0], F_GETOWN) != -1 || errno != EINVAL) return 6;
  return 0;
}
/* pipe() is not allowed in the sandbox: /dev/null takes the calls as well */
static int pipe_fd(void) { return open("/dev/null", O_RDONLY); }
static int do_setown(void) { return fcntl(pipe_fd(), F_SETOWN, getppid()) == 0 ? 0 : 0; }
static int do_setown_ex(void) {
  struct f_owner_ex o = {F_OWNER_PID, getppid()};
  return fcntl(pipe_fd(), F_SETOWN_EX, &o) == 0 ? 0 : 0;
}
static int do_setsig(void) { return fcntl(pipe_fd(), F_SETSIG, SIGKILL) == 0 ? 0 : 0; }
static int do_async(void) { return fcntl(pipe_fd(), F_SETFL, O_ASYNC | O_NONBLOCK) == 0 ? 0 : 0; }
/* O_ASYNC with bits above the low word set: the filter reads the low word */
static int do_async_high(void) { return syscall(__NR_fcntl, pipe_fd(), F_SETFL, 0x100000000UL | O_ASYNC) == 0 ? 0 : 0; }
static int do_lease(void) { return fcntl(open("/proc/self/status", O_RDONLY), F_SETLEASE, F_RDLCK) == 0 ? 0 : 0; }
static int do_notify(void) { return fcntl(open("/tmp", O_RDONLY | O_DIRECTORY), F_NOTIFY, DN_CREATE) == 0 ? 0 : 0; }
/* on an unmapped page: even unconfined, nothing would be poisoned */
static int do_hwpoison(void) { return madvise(NULL, 4096, 100 /* MADV_HWPOISON */) == 0 ? 0 : 0; }
static int do_soft_offline(void) { return madvise(NULL, 4096, 101 /* MADV_SOFT_OFFLINE */) == 0 ? 0 : 0; }
static int madvise_needed(void) {
  void *m = mmap(NULL, 1 << 16, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (m == MAP_FAILED) return 1;
  return madvise(m, 1 << 16, MADV_DONTNEED) == 0 && madvise(m, 1 << 16, MADV_WILLNEED) == 0 ? 0 : 2;
}

static void expect_stopped(test_batch *t, const char *what, outcome o, const char *words) {
  char msg[160];
  snprintf(msg, sizeof msg, "%s: dies by SIGSYS", what);
  INT_EQ(t, o.signo, SIGSYS, msg);
  if (words) {
    snprintf(msg, sizeof msg, "%s: says \"%s\"", what, words);
    OK(t, strstr(o.err, words) != NULL, msg);
    if (!strstr(o.err, words)) fprintf(stderr, "  stderr: %s\n", o.err);
  }
}

int main(void) {
  test_batch t = {0, 0};

  outcome ok = run(allowed_work);
  INT_EQ(&t, ok.code, 0, "reads, threads, PROT_EXEC, own signals and clocks are allowed");
  OK(&t, strstr(ok.err, "still here") != NULL, "writes to its stderr");
  INT_EQ(&t, run(refused_quietly).code, 0, "an unlisted call fails with ENOSYS");

  expect_stopped(&t, "execve", run(do_execve), "execve (syscall");
  expect_stopped(&t, "execve", run(do_execve), "runs another program");
  expect_stopped(&t, "fork", run(do_fork), "starts a new process");
  /* system() blocks every signal before its clone: the kernel kills the
   * process with SIGSYS without the handler's line */
  expect_stopped(&t, "system", run(do_system), NULL);
  expect_stopped(&t, "socket", run(do_socket), "opens or uses a socket");
  expect_stopped(&t, "fopen w", run(do_fopen_write), "opens a file for writing");
  expect_stopped(&t, "open O_APPEND", run(do_open_append), "opens a file for writing");
  expect_stopped(&t, "unlink", run(do_unlink), "changes the file system");
  expect_stopped(&t, "kill parent", run(do_kill_parent), "reaches into another process");
  expect_stopped(&t, "SIGKILL to itself", run(do_kill_self), "reads as a kill from outside");
  expect_stopped(&t, "ptrace", run(do_ptrace), "ptrace");
  expect_stopped(&t, "SIGSYS ignored", run(do_sigsys_ignore), "handling of SIGSYS");
  INT_EQ(&t, run(fcntl_needed).code, 0, "fcntl: flags, descriptor flags and copies work; locks and F_GETOWN fail with EINVAL");
  expect_stopped(&t, "F_SETOWN", run(do_setown), "signal a process on its behalf");
  expect_stopped(&t, "F_SETOWN_EX", run(do_setown_ex), "signal a process on its behalf");
  expect_stopped(&t, "F_SETSIG", run(do_setsig), "signal a process on its behalf");
  expect_stopped(&t, "F_SETFL O_ASYNC", run(do_async), "signal a process on its behalf");
  expect_stopped(&t, "F_SETFL O_ASYNC, high word set", run(do_async_high), "signal a process on its behalf");
  expect_stopped(&t, "F_SETLEASE", run(do_lease), "signal a process on its behalf");
  expect_stopped(&t, "F_NOTIFY", run(do_notify), "signal a process on its behalf");
  INT_EQ(&t, run(madvise_needed).code, 0, "madvise: the runtime's advice is allowed");
  expect_stopped(&t, "MADV_HWPOISON", run(do_hwpoison), "administers the system");
  expect_stopped(&t, "MADV_SOFT_OFFLINE", run(do_soft_offline), "administers the system");
  struct stat st;
  OK(&t, stat("/tmp/kl_sandbox_test_should_not_exist", &st) != 0, "the file was not created");

  /* a descriptor inherited and not kept is closed on entry */
  int fd = open("/dev/null", O_WRONLY);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    char why[256];
    if (!kl_sandbox_enter(NULL, 0, why, sizeof why)) _exit(100);
    _exit(fcntl(fd, F_GETFD) == -1 && errno == EBADF ? 0 : 1);
  }
  int status;
  waitpid(pid, &status, 0);
  INT_EQ(&t, WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0, "descriptors not kept are closed");
  close(fd);
  STR_EQ(&t, kl_sandbox_syscall_name(__NR_execve), "execve", "names the calls it stops");
  return kl_test_finish(&t);
}
