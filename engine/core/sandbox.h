/* The emu worker's sandbox: a seccomp-BPF filter, written by hand, that a
 * process installs on itself before it loads any kernel code. Kernels on
 * emu are host code (lua/klineage/device/emu.lua compiles them with g++), so what
 * a kernel may ask of the operating system is what this filter allows.
 *
 * Once entered, for every thread of the process and for good:
 *   stopped   running a program (execve), starting a process (fork, vfork,
 *             clone without CLONE_THREAD), sockets, opening a file for
 *             writing or creating one, changing the file system (rename,
 *             unlink, mkdir, chmod, truncate, xattrs, ...), reaching into
 *             another process (ptrace, process_vm_*, pidfd_*, kill or tgkill
 *             of another pid), a signal to itself that reads as a kill from
 *             outside (SIGKILL, SIGTERM, SIGINT, SIGHUP), changing SIGSYS's
 *             handler, terminal input injection (TIOCSTI), and system
 *             administration (mount, modules, namespaces, bpf, io_uring,
 *             perf, keys, clocks, MADV_HWPOISON/MADV_SOFT_OFFLINE, ...),
 *             asking the kernel to signal a process (fcntl F_SETOWN,
 *             F_SETOWN_EX, F_SETSIG, F_SETFL with O_ASYNC, F_SETLEASE,
 *             F_NOTIFY). The process dies by SIGSYS, after
 *             one line on stderr that names the call and why it is stopped
 *             ("klineage sandbox: ...");
 *   allowed   reading files it may read (open/openat without write flags),
 *             its memory (mmap, mprotect with PROT_EXEC: dlopen and fibers),
 *             threads (clone with CLONE_THREAD), futexes, signals to itself,
 *             clocks and sleeps, reads and writes on the descriptors it
 *             holds (its pipes);
 *   refused   fcntl's other commands (locks, F_GETOWN, pipe sizes) fail
 *             with EINVAL; any other call fails with ENOSYS and does nothing (glibc takes
 *             ENOSYS as "an older kernel" and falls back: clone3 to clone).
 * Descriptors other than 0, 1, 2 and the ones kept are closed on entry, so
 * a writable file inherited from the parent cannot be written either.
 *
 * A kernel that blocks SIGSYS still dies by SIGSYS, without the line. Code
 * that rewrites this process's own memory could silence the line (the call
 * is refused all the same). Reading files the user may read is not
 * stopped, nor is writing to the pipes the process holds.
 *
 * SANDBOX.md beside sandbox.c reviews every allowed call: what a hostile
 * kernel could reach with it, and what is left open.
 *
 * Linux on x86_64 or aarch64 only; anything else fails to enter. */
#ifndef KL_CORE_SANDBOX_H
#define KL_CORE_SANDBOX_H

#include <stddef.h>

/* Closes every descriptor above 2 but keep[0..nkeep), installs the SIGSYS
 * reporter, sets no_new_privs and the filter (on every thread). Returns 1,
 * or 0 with why[] set and the process left without a filter. */
int kl_sandbox_enter(const int *keep, int nkeep, char *why, size_t n);

/* 1 once kl_sandbox_enter has succeeded in this process. */
int kl_sandbox_active(void);

/* The name of a syscall the filter treats specially, or NULL. */
const char *kl_sandbox_syscall_name(long nr);

#endif
