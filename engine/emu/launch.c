/* Launching a grid: host threads take blocks from a shared counter, each
 * with its own fiber pool and signal stack. A fault raised by kernel code
 * (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, or a trap) jumps out of the
 * fiber world back to the host thread, which turns it into the verdict
 * `fault` with the buffer, index and thread coordinates; the other host
 * threads stop at their next block. Signals raised outside kernel code go
 * to whatever handler was there before. With a timeout, a watchdog thread
 * interrupts the host threads with a real-time signal once the deadline
 * passes. */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ucontext.h>
#include <time.h>
#include <unistd.h>

#include "emu/buffer.h"
#include "emu/internal.h"

#define ALT_STACK_BYTES (64u * 1024u)
#define MAX_HOST_THREADS 64u

typedef struct worker {
  kl_launch *launch;
  sigjmp_buf jmp;
  kl_block block;
  /* Written by the signal handler or the trap hook just before the jump. */
  int sig, code, is_write;
  void *addr;
  kl_fiber *fiber;
  char trap[256];
  unsigned char *altstack;
  pthread_t thread;
  int alive; /* guarded by the watchdog's lock */
} worker;

typedef struct watchdog {
  pthread_mutex_t lock;
  pthread_cond_t done_cond;
  int done;
  worker *workers;
  unsigned nworkers;
  kl_launch *launch;
} watchdog;

static _Thread_local worker *current_worker;

static const int caught_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
#define NSIG_CAUGHT (sizeof caught_signals / sizeof caught_signals[0])
static struct sigaction previous[NSIG_CAUGHT];
static pthread_mutex_t handler_lock = PTHREAD_MUTEX_INITIALIZER;
static int handlers_installed;
static int timeout_signal; /* SIGRTMIN + 5, fixed at the first install */
static watchdog *volatile active_watchdog;

static void on_signal(int sig, siginfo_t *si, void *ucv) {
  worker *w = current_worker;
  kl_fiber *f = kl_emu_current;
  if (!w || !f) {
    /* Not kernel code: hand the signal to the previous disposition. For a
     * fault, returning re-runs the instruction under it. */
    for (size_t i = 0; i < NSIG_CAUGHT; i++) {
      if (caught_signals[i] != sig) continue;
      if (previous[i].sa_flags & SA_SIGINFO && previous[i].sa_sigaction) {
        previous[i].sa_sigaction(sig, si, ucv);
      } else if (previous[i].sa_handler != SIG_IGN && previous[i].sa_handler != SIG_DFL &&
                 previous[i].sa_handler) {
        previous[i].sa_handler(sig);
      } else {
        signal(sig, SIG_DFL);
        handlers_installed = 0;
      }
    }
    return;
  }
  w->sig = sig;
  w->code = si->si_code;
  w->addr = si->si_addr;
  w->fiber = f;
  w->is_write = -1;
#if defined(__x86_64__)
  if (sig == SIGSEGV && ucv) w->is_write = (((ucontext_t *)ucv)->uc_mcontext.gregs[REG_ERR] & 2) != 0;
#endif
  kl_emu_current = NULL;
  kl_asan_start(NULL, w->block.host_bottom, w->block.host_size);
  siglongjmp(w->jmp, 1);
}

/* The watchdog's signal: leave the kernel only if this launch timed out
 * and a fiber is running; otherwise the host thread stops at its next
 * block by itself. */
static void on_timeout(int sig, siginfo_t *si, void *ucv) {
  (void)si, (void)ucv;
  worker *w = current_worker;
  kl_fiber *f = kl_emu_current;
  if (!w || !f || !atomic_load(&w->launch->timed_out)) return;
  w->sig = sig;
  w->fiber = f;
  kl_emu_current = NULL;
  kl_asan_start(NULL, w->block.host_bottom, w->block.host_size);
  siglongjmp(w->jmp, 1);
}

static void install_handlers(void) {
  pthread_mutex_lock(&handler_lock);
  if (!handlers_installed) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_signal;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (size_t i = 0; i < NSIG_CAUGHT; i++) sigaction(caught_signals[i], &sa, &previous[i]);
    handlers_installed = 1;
    if (!timeout_signal) {
      timeout_signal = SIGRTMIN + 5;
      struct sigaction ta;
      memset(&ta, 0, sizeof ta);
      ta.sa_sigaction = on_timeout;
      ta.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
      sigemptyset(&ta.sa_mask);
      sigaction(timeout_signal, &ta, NULL);
    }
  }
  pthread_mutex_unlock(&handler_lock);
}

_Noreturn void kl_emu_trap(kl_fiber *f, const char *message) {
  worker *w = current_worker;
  w->sig = 0;
  w->fiber = f;
  snprintf(w->trap, sizeof w->trap, "%s", message ? message : "__trap()");
  kl_emu_current = NULL;
  kl_asan_start(NULL, w->block.host_bottom, w->block.host_size);
  siglongjmp(w->jmp, 1);
}

void kl_emu_fail(kl_launch *l, kl_emu_verdict v, const char *message, const kl_emu_dim3 *block,
                 const kl_emu_dim3 *thread) {
  pthread_mutex_lock(&l->lock);
  if (!l->decided) {
    l->decided = 1;
    l->out->verdict = v;
    snprintf(l->out->message, sizeof l->out->message, "%s", message);
    if (block && thread) {
      l->out->has_thread = 1;
      l->out->block_idx = *block;
      l->out->thread_idx = *thread;
    }
  }
  pthread_mutex_unlock(&l->lock);
  atomic_store(&l->stop, 1);
}

static void append(kl_launch *l, const char *s, size_t n) {
  if (l->cap_len + n + 1 > l->cap_size) {
    size_t size = l->cap_size ? l->cap_size : 4096;
    while (l->cap_len + n + 1 > size) size *= 2;
    char *p = realloc(l->cap, size);
    if (!p) return; /* output is lost, never the launch */
    l->cap = p;
    l->cap_size = size;
  }
  memcpy(l->cap + l->cap_len, s, n);
  l->cap_len += n;
  l->cap[l->cap_len] = '\0';
}

void kl_emu_print(kl_launch *l, const kl_emu_thread *t, const char *text, size_t n) {
  char prefix[96];
  int p = snprintf(prefix, sizeof prefix, "[block (%u,%u,%u) thread (%u,%u,%u)] ", t->block_idx.x,
                   t->block_idx.y, t->block_idx.z, t->thread_idx.x, t->thread_idx.y,
                   t->thread_idx.z);
  pthread_mutex_lock(&l->lock);
  if (l->cfg->capture) {
    append(l, prefix, (size_t)p);
    append(l, text, n);
  } else {
    fwrite(prefix, 1, (size_t)p, stdout);
    fwrite(text, 1, n, stdout);
    fflush(stdout);
  }
  pthread_mutex_unlock(&l->lock);
}

/* Formats the fault a worker jumped out with. Runs on the host stack. */
static void report_fault(worker *w) {
  char what[512], message[1024];
  kl_fiber *f = w->fiber;
  const kl_emu_dim3 *b = &f->pub.block_idx, *t = &f->pub.thread_idx;
  if (w->sig == timeout_signal && timeout_signal) {
    snprintf(message, sizeof message,
             "timeout: the kernel ran longer than %g s; thread (%u,%u,%u) of block (%u,%u,%u) was running",
             w->launch->cfg->timeout, t->x, t->y, t->z, b->x, b->y, b->z);
    kl_emu_fail(w->launch, KL_EMU_TIMEOUT, message, b, t);
    return;
  }
  if (w->sig == 0) {
    snprintf(what, sizeof what, "trap: %s", w->trap);
  } else if (w->sig == SIGSEGV || w->sig == SIGBUS) {
    uintptr_t a = (uintptr_t)w->addr, slot = (uintptr_t)f & ~(uintptr_t)(KL_EMU_STACK_BYTES - 1);
    if (a >= slot && a < slot + KL_EMU_STACK_BYTES) {
      snprintf(what, sizeof what, "stack overflow in an emulated thread (the stack is %u KiB)",
               KL_EMU_STACK_BYTES / 1024);
    } else {
      char where[384];
      kl_emu_buffer_describe(w->addr, where, sizeof where);
      snprintf(what, sizeof what, "out-of-bounds %s: %s",
               w->is_write == 1 ? "write" : w->is_write == 0 ? "read" : "access", where);
    }
  } else if (w->sig == SIGFPE) {
    snprintf(what, sizeof what, "arithmetic fault (SIGFPE%s)",
             w->code == FPE_INTDIV ? ", integer division by zero" : "");
  } else if (w->sig == SIGABRT) {
    snprintf(what, sizeof what, "abort() called (SIGABRT)");
  } else {
    snprintf(what, sizeof what, "illegal instruction (SIGILL)");
  }
  snprintf(message, sizeof message, "%s, by thread (%u,%u,%u) of block (%u,%u,%u)", what, t->x, t->y,
           t->z, b->x, b->y, b->z);
  kl_emu_fail(w->launch, KL_EMU_FAULT, message, b, t);
}

static void work(worker *w) {
  kl_launch *l = w->launch;
  while (!atomic_load(&l->stop)) {
    unsigned long long i = atomic_fetch_add(&l->next_block, 1);
    if (i >= l->nblocks) break;
    if (!kl_emu_run_block(&w->block, i)) {
      kl_emu_fail(l, KL_EMU_DIVERGENT, w->block.message, &w->block.culprit_block,
                  &w->block.culprit_thread);
      break;
    }
  }
}

static void set_alive(worker *w, int alive) {
  watchdog *wd = active_watchdog;
  if (wd) pthread_mutex_lock(&wd->lock);
  w->alive = alive;
  if (wd) pthread_mutex_unlock(&wd->lock);
}

static void *worker_main(void *arg) {
  worker *w = arg;
  w->thread = pthread_self();
  set_alive(w, 1);
  stack_t ss = {.ss_sp = w->altstack, .ss_size = ALT_STACK_BYTES, .ss_flags = 0}, old_ss;
  int have_alt = sigaltstack(&ss, &old_ss) == 0;
  current_worker = w;
#if defined(__SANITIZE_ADDRESS__)
  /* ASan is told about every stack switch, the host stack included. (Only
   * then: on the main thread this reads /proc/self/maps, which is slow.) */
  pthread_attr_t attr;
  void *stack_lo = NULL;
  size_t stack_size = 0;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &stack_lo, &stack_size);
    pthread_attr_destroy(&attr);
  }
  w->block.host_bottom = stack_lo;
  w->block.host_size = stack_size;
#endif
  if (sigsetjmp(w->jmp, 1) == 0) {
    work(w);
  } else {
    kl_asan_finish(NULL); /* back on the host stack after a jump out of a fiber */
    report_fault(w);
  }
  current_worker = NULL;
  kl_emu_current = NULL;
  set_alive(w, 0);
  if (have_alt) {
    if (old_ss.ss_flags & SS_DISABLE) {
      stack_t off = {.ss_sp = NULL, .ss_size = 0, .ss_flags = SS_DISABLE};
      sigaltstack(&off, NULL);
    } else {
      sigaltstack(&old_ss, NULL);
    }
  }
  return NULL;
}

static void add_seconds(struct timespec *ts, double s) {
  clock_gettime(CLOCK_REALTIME, ts);
  long long ns = ts->tv_nsec + (long long)(s * 1e9);
  ts->tv_sec += (time_t)(ns / 1000000000LL);
  ts->tv_nsec = (long)(ns % 1000000000LL);
}

/* Sleeps until the launch ends or its deadline passes; then flags the
 * timeout and signals the live host threads, again every 20 ms, until
 * they have all left their fibers. */
static void *watchdog_main(void *arg) {
  watchdog *wd = arg;
  struct timespec deadline;
  add_seconds(&deadline, wd->launch->cfg->timeout);
  pthread_mutex_lock(&wd->lock);
  while (!wd->done) {
    if (pthread_cond_timedwait(&wd->done_cond, &wd->lock, &deadline) != ETIMEDOUT || wd->done) continue;
    atomic_store(&wd->launch->timed_out, 1);
    atomic_store(&wd->launch->stop, 1);
    for (unsigned i = 0; i < wd->nworkers; i++)
      if (wd->workers[i].alive) pthread_kill(wd->workers[i].thread, timeout_signal);
    add_seconds(&deadline, 0.02);
  }
  pthread_mutex_unlock(&wd->lock);
  return NULL;
}

static unsigned host_threads(const kl_emu_launch_config *cfg, unsigned long long nblocks) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  unsigned n = cfg->threads ? cfg->threads : (unsigned)(cpus > 0 ? cpus : 1);
  if (n > MAX_HOST_THREADS) n = MAX_HOST_THREADS;
  if (n > nblocks) n = (unsigned)nblocks;
  return n ? n : 1;
}

static int check_config(const kl_emu_launch_config *c, char *why, size_t n) {
  const kl_emu_dim3 *g = &c->grid, *b = &c->block;
  if (!c->entry || !c->block_start) return snprintf(why, n, "no kernel entry"), 0;
  if (!g->x || !g->y || !g->z || !b->x || !b->y || !b->z)
    return snprintf(why, n, "invalid configuration: a grid or block dimension is 0"), 0;
  if (g->y > 65535 || g->z > 65535)
    return snprintf(why, n, "invalid configuration: gridDim.y and .z must be at most 65535"), 0;
  if (b->z > 64 || b->x > 1024 || b->y > 1024 ||
      (unsigned long long)b->x * b->y * b->z > KL_EMU_MAX_BLOCK_THREADS)
    return snprintf(why, n, "invalid configuration: block (%u,%u,%u) has more than 1024 threads "
                            "or a dimension over its limit", b->x, b->y, b->z), 0;
  if (c->smem > KL_EMU_DYN_SMEM_MAX)
    return snprintf(why, n, "invalid configuration: %zu bytes of dynamic shared memory, more "
                            "than the %u a block may have", c->smem, KL_EMU_DYN_SMEM_MAX), 0;
  return 1;
}

kl_emu_verdict kl_emu_launch(const kl_emu_launch_config *cfg, kl_emu_outcome *out) {
  memset(out, 0, sizeof *out);
  out->verdict = KL_EMU_OK;
  if (!check_config(cfg, out->message, sizeof out->message)) {
    out->verdict = KL_EMU_LAUNCH_ERROR;
    return out->verdict;
  }
  kl_launch l;
  memset(&l, 0, sizeof l);
  l.cfg = cfg;
  l.out = out;
  l.nblocks = (unsigned long long)cfg->grid.x * cfg->grid.y * cfg->grid.z;
  atomic_init(&l.next_block, 0);
  atomic_init(&l.stop, 0);
  atomic_init(&l.timed_out, 0);
  pthread_mutex_init(&l.lock, NULL);
  install_handlers();

  unsigned nthreads = host_threads(cfg, l.nblocks);
  unsigned nfibers = cfg->block.x * cfg->block.y * cfg->block.z;
  worker *ws = calloc(nthreads, sizeof *ws);
  pthread_t *tids = calloc(nthreads, sizeof *tids);
  unsigned ready = 0;
  if (ws && tids) {
    for (; ready < nthreads; ready++) {
      worker *w = &ws[ready];
      w->launch = &l;
      w->block.launch = &l;
      w->block.cfg = cfg;
      w->block.pool = kl_fiber_pool_take(nfibers);
      w->altstack = malloc(ALT_STACK_BYTES);
      if (!w->block.pool || !w->altstack) {
        kl_fiber_pool_give(w->block.pool);
        free(w->altstack);
        break;
      }
    }
  }
  if (ready == 0) {
    out->verdict = KL_EMU_LAUNCH_ERROR;
    snprintf(out->message, sizeof out->message, "out of memory for fiber stacks");
  } else {
    watchdog wd;
    pthread_t wd_thread;
    int have_wd = 0;
    if (cfg->timeout > 0) {
      memset(&wd, 0, sizeof wd);
      pthread_mutex_init(&wd.lock, NULL);
      pthread_cond_init(&wd.done_cond, NULL);
      wd.workers = ws;
      wd.nworkers = ready;
      wd.launch = &l;
      active_watchdog = &wd;
      have_wd = pthread_create(&wd_thread, NULL, watchdog_main, &wd) == 0;
    }
    /* Workers 1.. get their own threads; worker 0 runs on the caller's. */
    unsigned started = 1;
    for (unsigned i = 1; i < ready; i++) {
      if (pthread_create(&tids[i], NULL, worker_main, &ws[i]) != 0) break;
      started++;
    }
    worker_main(&ws[0]);
    for (unsigned i = 1; i < started; i++) pthread_join(tids[i], NULL);
    if (cfg->timeout > 0) {
      if (have_wd) {
        pthread_mutex_lock(&wd.lock);
        wd.done = 1;
        pthread_cond_signal(&wd.done_cond);
        pthread_mutex_unlock(&wd.lock);
        pthread_join(wd_thread, NULL);
      }
      active_watchdog = NULL;
      pthread_mutex_destroy(&wd.lock);
      pthread_cond_destroy(&wd.done_cond);
      if (atomic_load(&l.timed_out) && out->verdict == KL_EMU_OK) {
        out->verdict = KL_EMU_TIMEOUT;
        snprintf(out->message, sizeof out->message,
                 "timeout: the kernel did not finish within %g s", cfg->timeout);
      }
    }
    for (unsigned i = 0; i < ready; i++) {
      out->switches += ws[i].block.switches;
      kl_fiber_pool_give(ws[i].block.pool);
      free(ws[i].altstack);
    }
    if (out->verdict == KL_EMU_OK) {
      char where[512];
      if (kl_emu_buffers_check(where, sizeof where)) {
        out->verdict = KL_EMU_FAULT;
        snprintf(out->message, sizeof out->message,
                 "out-of-bounds write: %s, found after the launch in the bytes beside the buffer "
                 "(the thread is unknown)", where);
      }
    }
  }
  free(ws);
  free(tids);
  out->output = l.cap;
  out->output_len = l.cap_len;
  pthread_mutex_destroy(&l.lock);
  return out->verdict;
}
