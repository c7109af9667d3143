/* The emu worker's seccomp filter (sandbox.h says what it allows). The
 * rules are a flat table; kl_sandbox_enter compiles it into one classic
 * BPF program: the architecture check, then one block per rule, each
 * "if nr == rule.nr then <its body, which always returns>", then the
 * default, ENOSYS. Hand-written with the kernel's own headers rather than
 * libseccomp: the filter is about a hundred rules, the engine gains no
 * dependency, and what the program does can be read here in full. */
#define _GNU_SOURCE
#include "core/sandbox.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>

#if defined(__x86_64__)
#define KL_AUDIT_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define KL_AUDIT_ARCH AUDIT_ARCH_AARCH64
#endif

#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000U
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC
#define SECCOMP_FILTER_FLAG_TSYNC 1
#endif
#ifndef SYS_SECCOMP
#define SYS_SECCOMP 1
#endif

/* Why a call is stopped: the RET_DATA of its trap, and the line's reason. */
enum {
  WHY_NONE,
  WHY_EXEC,
  WHY_PROCESS,
  WHY_NETWORK,
  WHY_WRITE,
  WHY_FILES,
  WHY_OTHER_PROCESS,
  WHY_FAKE_KILL,
  WHY_SIGSYS,
  WHY_TTY,
  WHY_SYSTEM,
  WHY_SIGNAL_OWNER,
  WHY_COUNT
};

static const char *const why_text[WHY_COUNT] = {
    [WHY_NONE] = "is forbidden",
    [WHY_EXEC] = "runs another program",
    [WHY_PROCESS] = "starts a new process",
    [WHY_NETWORK] = "opens or uses a socket",
    [WHY_WRITE] = "opens a file for writing",
    [WHY_FILES] = "changes the file system",
    [WHY_OTHER_PROCESS] = "reaches into another process",
    [WHY_FAKE_KILL] = "sends itself a signal that reads as a kill from outside",
    [WHY_SIGSYS] = "changes the handling of SIGSYS, the sandbox's signal",
    [WHY_TTY] = "injects input into a terminal",
    [WHY_SYSTEM] = "administers the system",
    [WHY_SIGNAL_OWNER] = "asks the kernel to signal a process on its behalf (fcntl F_SETOWN, F_SETSIG, O_ASYNC, a lease or a notify)",
};

/* What a rule's body does with the call. */
enum {
  ALLOW,      /* allowed */
  STOP,       /* stopped, always */
  REFUSE,     /* fails with errno `value` */
  NEED_FLAGS, /* allowed when arg has every bit of value, else stopped (clone) */
  NO_FLAGS,   /* allowed when arg has none of the bits of value, else stopped (open) */
  NOT_VALUE,  /* allowed unless arg == value, else stopped (rt_sigaction) */
  SELF_SIGNAL, /* arg 0 must be this pid and arg `arg` not a kill-like signal (kill, tgkill) */
  IOCTL,      /* terminal queries allowed, TIOCSTI/TIOCLINUX stopped, else ENOTTY */
  GET_LIMIT,  /* prlimit64(0, r, NULL, old) allowed, else EPERM */
  FCNTL,      /* the commands in fcntl_allowed, F_SETFL without O_ASYNC; fcntl_stopped stopped; else EINVAL */
  MADVISE     /* any advice but the two that take memory away from the machine (stopped) */
};

/* fcntl's commands a kernel and the runtime need: descriptors' flags and
 * copies. The ones that make the kernel send signals (to any process the
 * caller names: F_SETOWN, F_SETOWN_EX; with any signal: F_SETSIG; on I/O:
 * O_ASYNC; on a lease break or a folder change) are stopped; locks, leases,
 * pipe sizes, seals and the rest fail with EINVAL. The kernel reads cmd as
 * an unsigned int and F_SETFL's flags as an int (setfl keeps only
 * SETFL_MASK's bits of it): the low word holds both. */
static const uint32_t fcntl_allowed[] = {F_DUPFD, F_DUPFD_CLOEXEC, F_GETFD, F_SETFD, F_GETFL};
static const uint32_t fcntl_stopped[] = {F_SETOWN, F_SETOWN_EX, F_SETSIG, F_SETLEASE, F_NOTIFY};
#define NELEMS(a) (sizeof(a) / sizeof((a)[0]))

/* madvise's advice that poison or offline a physical page: root (this
 * engine on a CI box, a container) may take memory from the whole machine. */
#ifndef MADV_HWPOISON
#define MADV_HWPOISON 100
#endif
#ifndef MADV_SOFT_OFFLINE
#define MADV_SOFT_OFFLINE 101
#endif

typedef struct {
  int nr;
  unsigned char kind, arg, why;
  uint32_t value;
  const char *name;
} rule;

#define R(sys, kind, arg, why, value) {__NR_##sys, kind, arg, why, value, #sys}
#define OK(sys) R(sys, ALLOW, 0, WHY_NONE, 0)
#define NO(sys, why) R(sys, STOP, 0, why, 0)

#define WRITE_FLAGS ((uint32_t)(O_WRONLY | O_RDWR | O_CREAT | O_TRUNC | O_APPEND | (O_TMPFILE & ~O_DIRECTORY)))

/* Most frequent first: every call walks the table up to its rule. Calls a
 * header may lack are guarded. */
static const rule rules[] = {
    OK(futex), OK(read), OK(write), OK(mmap), OK(munmap), OK(mprotect), R(madvise, MADVISE, 2, WHY_SYSTEM, 0),
    OK(clock_gettime), OK(sched_yield), OK(rt_sigprocmask), OK(rt_sigreturn), OK(brk),
    OK(mremap), OK(close), OK(readv), OK(writev), OK(pread64), OK(lseek), OK(fstat),
    OK(newfstatat), R(fcntl, FCNTL, 1, WHY_SIGNAL_OWNER, 0), OK(getpid), OK(gettid), OK(sigaltstack), OK(set_robust_list),
    OK(rseq), OK(set_tid_address), OK(exit), OK(exit_group), OK(nanosleep), OK(clock_nanosleep),
    OK(clock_getres), OK(gettimeofday), OK(getppid), OK(getuid), OK(geteuid), OK(getgid),
    OK(getegid), OK(getresuid), OK(getresgid), OK(getgroups), OK(uname), OK(sysinfo),
    OK(getrusage), OK(times), OK(getrandom), OK(sched_getaffinity), OK(getcpu),
    OK(sched_getparam), OK(sched_getscheduler), OK(rt_sigpending), OK(restart_syscall),
    OK(getcwd), OK(getdents64), OK(readlinkat), OK(faccessat), OK(statx), OK(fstatfs),
    OK(statfs), OK(dup), OK(dup3), OK(ppoll), OK(mincore), OK(membarrier), OK(preadv),
    OK(preadv2), OK(prctl), OK(get_robust_list),
#ifdef __NR_faccessat2
    OK(faccessat2),
#endif
#ifdef __NR_getrlimit
    OK(getrlimit),
#endif
#if defined(__x86_64__)
    OK(stat), OK(lstat), OK(access), OK(readlink), OK(dup2), OK(poll), OK(time), OK(arch_prctl),
    R(open, NO_FLAGS, 1, WHY_WRITE, WRITE_FLAGS),
    NO(creat, WHY_WRITE),
    NO(fork, WHY_PROCESS), NO(vfork, WHY_PROCESS),
    NO(rename, WHY_FILES), NO(unlink, WHY_FILES), NO(rmdir, WHY_FILES), NO(mkdir, WHY_FILES),
    NO(link, WHY_FILES), NO(symlink, WHY_FILES), NO(chmod, WHY_FILES), NO(chown, WHY_FILES),
    NO(lchown, WHY_FILES), NO(mknod, WHY_FILES), NO(utime, WHY_FILES), NO(utimes, WHY_FILES),
    NO(futimesat, WHY_FILES), NO(iopl, WHY_SYSTEM), NO(ioperm, WHY_SYSTEM),
#endif
    R(openat, NO_FLAGS, 2, WHY_WRITE, WRITE_FLAGS),
    R(clone, NEED_FLAGS, 0, WHY_PROCESS, CLONE_THREAD),
#ifdef __NR_clone3
    /* clone3's flags sit behind a pointer the filter cannot read: ENOSYS
     * sends glibc (threads and fork alike) to clone, which it can. */
    R(clone3, REFUSE, 0, WHY_NONE, ENOSYS),
#endif
    R(rt_sigaction, NOT_VALUE, 0, WHY_SIGSYS, SIGSYS),
    R(kill, SELF_SIGNAL, 1, WHY_OTHER_PROCESS, 0),
    R(tgkill, SELF_SIGNAL, 2, WHY_OTHER_PROCESS, 0),
    R(ioctl, IOCTL, 1, WHY_TTY, 0),
    R(prlimit64, GET_LIMIT, 0, WHY_NONE, 0),

    NO(execve, WHY_EXEC), NO(execveat, WHY_EXEC),

    NO(socket, WHY_NETWORK), NO(socketpair, WHY_NETWORK), NO(connect, WHY_NETWORK),
    NO(bind, WHY_NETWORK), NO(listen, WHY_NETWORK), NO(accept, WHY_NETWORK),
    NO(accept4, WHY_NETWORK), NO(sendto, WHY_NETWORK), NO(recvfrom, WHY_NETWORK),
    NO(sendmsg, WHY_NETWORK), NO(recvmsg, WHY_NETWORK), NO(sendmmsg, WHY_NETWORK),
    NO(recvmmsg, WHY_NETWORK), NO(shutdown, WHY_NETWORK), NO(setsockopt, WHY_NETWORK),
    NO(getsockopt, WHY_NETWORK), NO(getsockname, WHY_NETWORK), NO(getpeername, WHY_NETWORK),

    NO(renameat, WHY_FILES), NO(renameat2, WHY_FILES), NO(unlinkat, WHY_FILES),
    NO(mkdirat, WHY_FILES), NO(linkat, WHY_FILES), NO(symlinkat, WHY_FILES),
    NO(fchmod, WHY_FILES), NO(fchmodat, WHY_FILES), NO(fchown, WHY_FILES),
    NO(fchownat, WHY_FILES), NO(truncate, WHY_FILES), NO(ftruncate, WHY_FILES),
    NO(fallocate, WHY_FILES), NO(mknodat, WHY_FILES), NO(utimensat, WHY_FILES),
    NO(setxattr, WHY_FILES), NO(lsetxattr, WHY_FILES), NO(fsetxattr, WHY_FILES),
    NO(removexattr, WHY_FILES), NO(lremovexattr, WHY_FILES), NO(fremovexattr, WHY_FILES),
#ifdef __NR_fchmodat2
    NO(fchmodat2, WHY_FILES),
#endif

    NO(ptrace, WHY_OTHER_PROCESS), NO(process_vm_readv, WHY_OTHER_PROCESS),
    NO(process_vm_writev, WHY_OTHER_PROCESS), NO(tkill, WHY_OTHER_PROCESS),
    NO(rt_sigqueueinfo, WHY_OTHER_PROCESS), NO(rt_tgsigqueueinfo, WHY_OTHER_PROCESS),
    NO(kcmp, WHY_OTHER_PROCESS), NO(migrate_pages, WHY_OTHER_PROCESS),
    NO(move_pages, WHY_OTHER_PROCESS),
#ifdef __NR_pidfd_open
    NO(pidfd_open, WHY_OTHER_PROCESS), NO(pidfd_send_signal, WHY_OTHER_PROCESS),
#endif
#ifdef __NR_pidfd_getfd
    NO(pidfd_getfd, WHY_OTHER_PROCESS),
#endif
#ifdef __NR_process_madvise
    NO(process_madvise, WHY_OTHER_PROCESS),
#endif

    NO(mount, WHY_SYSTEM), NO(umount2, WHY_SYSTEM), NO(pivot_root, WHY_SYSTEM),
    NO(chroot, WHY_SYSTEM), NO(swapon, WHY_SYSTEM), NO(swapoff, WHY_SYSTEM),
    NO(reboot, WHY_SYSTEM), NO(init_module, WHY_SYSTEM), NO(finit_module, WHY_SYSTEM),
    NO(delete_module, WHY_SYSTEM), NO(kexec_load, WHY_SYSTEM), NO(sethostname, WHY_SYSTEM),
    NO(setdomainname, WHY_SYSTEM), NO(settimeofday, WHY_SYSTEM), NO(clock_settime, WHY_SYSTEM),
    NO(clock_adjtime, WHY_SYSTEM), NO(adjtimex, WHY_SYSTEM), NO(acct, WHY_SYSTEM),
    NO(quotactl, WHY_SYSTEM), NO(unshare, WHY_SYSTEM), NO(setns, WHY_SYSTEM),
    NO(bpf, WHY_SYSTEM), NO(perf_event_open, WHY_SYSTEM), NO(userfaultfd, WHY_SYSTEM),
    NO(keyctl, WHY_SYSTEM), NO(add_key, WHY_SYSTEM), NO(request_key, WHY_SYSTEM),
    NO(fanotify_init, WHY_SYSTEM), NO(syslog, WHY_SYSTEM), NO(name_to_handle_at, WHY_SYSTEM),
    NO(open_by_handle_at, WHY_SYSTEM),
#ifdef __NR_kexec_file_load
    NO(kexec_file_load, WHY_SYSTEM),
#endif
#ifdef __NR_io_uring_setup
    /* io_uring runs reads, writes and connects that seccomp never sees */
    NO(io_uring_setup, WHY_SYSTEM), NO(io_uring_enter, WHY_SYSTEM), NO(io_uring_register, WHY_SYSTEM),
#endif
#ifdef __NR_open_tree
    NO(open_tree, WHY_SYSTEM), NO(move_mount, WHY_SYSTEM), NO(fsopen, WHY_SYSTEM),
    NO(fsconfig, WHY_SYSTEM), NO(fsmount, WHY_SYSTEM), NO(fspick, WHY_SYSTEM),
#endif
};

#define NRULES (sizeof rules / sizeof rules[0])

const char *kl_sandbox_syscall_name(long nr) {
  for (size_t i = 0; i < NRULES; i++)
    if (rules[i].nr == nr) return rules[i].name;
  return NULL;
}

/* --- the program --------------------------------------------------------------- */

#define MAX_INSNS 1024

typedef struct {
  struct sock_filter insn[MAX_INSNS];
  unsigned n;
  int overflow;
} program;

static void put(program *p, unsigned short code, unsigned jt, unsigned jf, uint32_t k) {
  if (p->n >= MAX_INSNS) {
    p->overflow = 1;
    return;
  }
  p->insn[p->n++] = (struct sock_filter){code, (unsigned char)jt, (unsigned char)jf, k};
}

static void ret(program *p, uint32_t action) { put(p, BPF_RET | BPF_K, 0, 0, action); }

static uint32_t stop(unsigned why) { return SECCOMP_RET_TRAP | (why & SECCOMP_RET_DATA); }
static uint32_t fail_with(int e) { return SECCOMP_RET_ERRNO | ((uint32_t)e & SECCOMP_RET_DATA); }

/* Loads the low (or high) 32 bits of argument i into A. */
static void load_arg(program *p, unsigned i, int high) {
  uint32_t off = (uint32_t)(offsetof(struct seccomp_data, args) + 8 * i + (high ? 4 : 0));
  put(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, off);
}

static void jeq(program *p, uint32_t k, unsigned jt, unsigned jf) { put(p, BPF_JMP | BPF_JEQ | BPF_K, jt, jf, k); }

/* The body of a rule; every path through it returns. Jump offsets count
 * the instructions skipped. The kernel reads these arguments as 32-bit
 * ints (flags, pids, signals, ioctl requests): the low word is the value. */
static void body(program *p, const rule *r, uint32_t pid) {
  switch (r->kind) {
  case ALLOW: ret(p, SECCOMP_RET_ALLOW); break;
  case STOP: ret(p, stop(r->why)); break;
  case REFUSE: ret(p, fail_with((int)r->value)); break;
  case NEED_FLAGS:
    load_arg(p, r->arg, 0);
    put(p, BPF_ALU | BPF_AND | BPF_K, 0, 0, r->value);
    jeq(p, r->value, 0, 1);
    ret(p, SECCOMP_RET_ALLOW);
    ret(p, stop(r->why));
    break;
  case NO_FLAGS:
    load_arg(p, r->arg, 0);
    put(p, BPF_JMP | BPF_JSET | BPF_K, 1, 0, r->value);
    ret(p, SECCOMP_RET_ALLOW);
    ret(p, stop(r->why));
    break;
  case NOT_VALUE:
    load_arg(p, r->arg, 0);
    jeq(p, r->value, 1, 0);
    ret(p, SECCOMP_RET_ALLOW);
    ret(p, stop(r->why));
    break;
  case SELF_SIGNAL:
    load_arg(p, 0, 0);
    jeq(p, pid, 1, 0);
    ret(p, stop(WHY_OTHER_PROCESS));
    load_arg(p, r->arg, 0);
    jeq(p, SIGKILL, 4, 0);
    jeq(p, SIGTERM, 3, 0);
    jeq(p, SIGINT, 2, 0);
    jeq(p, SIGHUP, 1, 0);
    ret(p, SECCOMP_RET_ALLOW);
    ret(p, stop(WHY_FAKE_KILL));
    break;
  case IOCTL:
    load_arg(p, r->arg, 0);
    jeq(p, TCGETS, 4, 0);     /* -> allow */
    jeq(p, TIOCGWINSZ, 3, 0); /* -> allow */
    jeq(p, TIOCSTI, 3, 0);    /* -> stop */
    jeq(p, TIOCLINUX, 2, 0);  /* -> stop */
    ret(p, fail_with(ENOTTY));
    ret(p, SECCOMP_RET_ALLOW);
    ret(p, stop(WHY_TTY));
    break;
  case GET_LIMIT:
    load_arg(p, 0, 0);
    jeq(p, 0, 0, 5);
    load_arg(p, 2, 0);
    jeq(p, 0, 0, 3);
    load_arg(p, 2, 1);
    jeq(p, 0, 0, 1);
    ret(p, SECCOMP_RET_ALLOW);
    ret(p, fail_with(EPERM));
    break;
  case FCNTL: {
    /* a jeq per command, then: [E] EINVAL, [A] allow, [S] stop, [F] F_SETFL's check */
    unsigned na = NELEMS(fcntl_allowed), ns = NELEMS(fcntl_stopped);
    unsigned e = na + ns + 1, a = e + 1, st = a + 1, f = st + 1;
    load_arg(p, r->arg, 0);
    for (unsigned i = 0; i < na; i++) jeq(p, fcntl_allowed[i], a - i - 1, 0);
    for (unsigned i = 0; i < ns; i++) jeq(p, fcntl_stopped[i], st - (na + i) - 1, 0);
    jeq(p, F_SETFL, f - (na + ns) - 1, 0);
    ret(p, fail_with(EINVAL));
    ret(p, SECCOMP_RET_ALLOW);
    ret(p, stop(r->why));
    load_arg(p, 2, 0);
    put(p, BPF_JMP | BPF_JSET | BPF_K, 1, 0, O_ASYNC);
    ret(p, SECCOMP_RET_ALLOW);
    ret(p, stop(r->why));
    break;
  }
  case MADVISE:
    load_arg(p, r->arg, 0);
    jeq(p, MADV_HWPOISON, 2, 0);
    jeq(p, MADV_SOFT_OFFLINE, 1, 0);
    ret(p, SECCOMP_RET_ALLOW);
    ret(p, stop(r->why));
    break;
  }
}

static void compile(program *p, uint32_t pid) {
  p->n = 0;
  p->overflow = 0;
  put(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)offsetof(struct seccomp_data, arch));
  jeq(p, KL_AUDIT_ARCH, 1, 0);
  ret(p, SECCOMP_RET_KILL_PROCESS);
  put(p, BPF_LD | BPF_W | BPF_ABS, 0, 0, (uint32_t)offsetof(struct seccomp_data, nr));
#if defined(__x86_64__)
  /* the x32 ABI reuses x86_64's arch with these numbers: none is allowed */
  put(p, BPF_JMP | BPF_JGE | BPF_K, 0, 1, 0x40000000U);
  ret(p, SECCOMP_RET_KILL_PROCESS);
#endif
  for (size_t i = 0; i < NRULES; i++) {
    unsigned at = p->n;
    jeq(p, (uint32_t)rules[i].nr, 0, 0);
    body(p, &rules[i], pid);
    if (!p->overflow) p->insn[at].jf = (unsigned char)(p->n - at - 1);
  }
  ret(p, fail_with(ENOSYS));
}

/* --- the SIGSYS reporter ---------------------------------------------------------- */

static volatile sig_atomic_t active;

static size_t append(char *buf, size_t at, size_t cap, const char *s) {
  while (*s && at + 1 < cap) buf[at++] = *s++;
  return at;
}

static size_t append_int(char *buf, size_t at, size_t cap, long v) {
  char digits[24];
  int n = 0;
  unsigned long u = v < 0 ? 0UL - (unsigned long)v : (unsigned long)v;
  do digits[n++] = (char)('0' + u % 10);
  while ((u /= 10) && n < (int)sizeof digits);
  if (v < 0 && at + 1 < cap) buf[at++] = '-';
  while (n > 0 && at + 1 < cap) buf[at++] = digits[--n];
  return at;
}

/* One line on stderr, then death by SIGSYS: SIGSYS is blocked while this
 * handler runs, and a trapped call made with it blocked makes the kernel
 * kill the process with it (the handler is reset to the default). Only
 * async-signal-safe calls. */
static void on_sigsys(int sig, siginfo_t *si, void *ucv) {
  (void)sig, (void)ucv;
  char line[320];
  size_t n = 0;
  if (si->si_code == SYS_SECCOMP) {
    const char *name = kl_sandbox_syscall_name(si->si_syscall);
    unsigned why = (unsigned)si->si_errno < WHY_COUNT ? (unsigned)si->si_errno : WHY_NONE;
    n = append(line, n, sizeof line, "klineage sandbox: the kernel called ");
    n = append(line, n, sizeof line, name ? name : "a system call");
    n = append(line, n, sizeof line, " (syscall ");
    n = append_int(line, n, sizeof line, si->si_syscall);
    n = append(line, n, sizeof line, "), which ");
    n = append(line, n, sizeof line, why_text[why]);
    n = append(line, n, sizeof line, ": forbidden on emu, the worker stops\n");
  } else {
    n = append(line, n, sizeof line, "klineage sandbox: SIGSYS from outside the filter: the worker stops\n");
  }
  ssize_t ignored = write(2, line, n);
  (void)ignored;
  syscall(__NR_rt_sigaction, SIGSYS, NULL, NULL, (size_t)8); /* any SIGSYS query: stopped */
  syscall(__NR_execve, "", NULL, NULL);                    /* in case it was not */
  _exit(128 + SIGSYS);
}

/* --- entering -------------------------------------------------------------------- */

static int kept(int fd, const int *keep, int nkeep) {
  if (fd <= 2) return 1;
  for (int i = 0; i < nkeep; i++)
    if (keep[i] == fd) return 1;
  return 0;
}

/* Closes what /proc/self/fd lists, else every number up to the limit. */
static void close_others(const int *keep, int nkeep) {
  DIR *d = opendir("/proc/self/fd");
  if (d) {
    int self = dirfd(d);
    int fds[1024], n = 0;
    int more = 1;
    while (more) {
      more = 0;
      n = 0;
      rewinddir(d);
      struct dirent *e;
      while ((e = readdir(d)) != NULL) {
        char *end;
        long fd = strtol(e->d_name, &end, 10);
        if (*end || end == e->d_name || fd == self || kept((int)fd, keep, nkeep)) continue;
        if (n == (int)(sizeof fds / sizeof fds[0])) {
          more = 1;
          break;
        }
        fds[n++] = (int)fd;
      }
      for (int i = 0; i < n; i++) close(fds[i]);
    }
    closedir(d);
    return;
  }
  struct rlimit rl;
  long top = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY ? (long)rl.rlim_cur : 65536;
  if (top > 1 << 20) top = 1 << 20;
  for (long fd = 3; fd < top; fd++)
    if (!kept((int)fd, keep, nkeep)) close((int)fd);
}

int kl_sandbox_active(void) { return active != 0; }

int kl_sandbox_enter(const int *keep, int nkeep, char *why, size_t n) {
#ifndef KL_AUDIT_ARCH
  (void)keep, (void)nkeep;
  snprintf(why, n, "the sandbox knows Linux on x86_64 and aarch64 only");
  return 0;
#else
  if (active) return 1;
  close_others(keep, nkeep);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_sigaction = on_sigsys;
  sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&sa.sa_mask);
  if (sigaction(SIGSYS, &sa, NULL) != 0) {
    snprintf(why, n, "cannot install the SIGSYS handler: %s", strerror(errno));
    return 0;
  }
  sigset_t sys;
  sigemptyset(&sys);
  sigaddset(&sys, SIGSYS);
  pthread_sigmask(SIG_UNBLOCK, &sys, NULL);
  static program prog; /* 8 KiB: not on the stack */
  compile(&prog, (uint32_t)getpid());
  if (prog.overflow) {
    snprintf(why, n, "the filter is longer than %d instructions", MAX_INSNS);
    return 0;
  }
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    snprintf(why, n, "prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
    return 0;
  }
  struct sock_fprog fprog = {(unsigned short)prog.n, prog.insn};
  long r = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &fprog);
  if (r != 0 && errno == ENOSYS) /* before Linux 3.17: one thread only, as here */
    r = prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog, 0, 0);
  if (r > 0) {
    snprintf(why, n, "seccomp: thread %ld could not take the filter", r);
    return 0;
  }
  if (r != 0) {
    snprintf(why, n, "seccomp: %s", strerror(errno));
    return 0;
  }
  active = 1;
  return 1;
#endif
}
