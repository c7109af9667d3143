/* Running one block: its threads are fibers, run in the order of
 * b->order. A fiber runs until it reaches a barrier or returns, then hands
 * over directly to the next runnable fiber in that order (one switch, not
 * two through a scheduler). A warp exchange completes when every lane of
 * its mask has arrived. When no fiber can run, control returns to the
 * block loop: it releases a block barrier that every fiber waits at, or
 * ends the block when all have returned; otherwise the block has a
 * divergent barrier, reported with the thread ids on each side. */
#include <stdio.h>
#include <string.h>

#include "emu/internal.h"

_Thread_local kl_fiber *kl_emu_current;

_Static_assert(sizeof(kl_fiber) + 64u * 63u <= KL_EMU_STACK_BYTES - KL_EMU_THREAD_OFFSET,
               "a fiber's record must fit above its stack");

static uint64_t splitmix(uint64_t *s) {
  uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static kl_fiber *fiber_at(const kl_block *b, unsigned i) {
  return (kl_fiber *)kl_fiber_thread(b->pool, i);
}

/* Scheduling state lives in compact arrays of the block, not in the
 * records: a pass over 1024 fibers then reads one array instead of 1024
 * pages. */
#define STATE(f) ((f)->block->state[(f)->pub.linear])
/* The fiber after the next one gets its saved frame (two cache lines) and
 * its record prefetched: a block's stacks do not fit in L1, and this cut
 * the time of a barrier-bound reduction by a third. More lines measured
 * slower. */
#define PREFETCH_LINES 2

static void set_order(kl_block *b) {
  unsigned n = b->n;
  switch (b->cfg->order) {
  case KL_EMU_ORDER_REVERSE:
    for (unsigned i = 0; i < n; i++) b->order[i] = n - 1 - i;
    break;
  case KL_EMU_ORDER_SHUFFLE:
    for (unsigned i = 0; i < n; i++) b->order[i] = i;
    for (unsigned i = n; i > 1; i--) {
      unsigned j = (unsigned)(splitmix(&b->rng) % i);
      unsigned t = b->order[i - 1];
      b->order[i - 1] = b->order[j];
      b->order[j] = t;
    }
    break;
  default:
    for (unsigned i = 0; i < n; i++) b->order[i] = i;
  }
}

static void yield(kl_fiber *f);

static void fiber_main(void *arg) {
  kl_asan_finish(NULL);
  kl_fiber *f = arg;
  f->block->cfg->entry(f->block->cfg->args);
  STATE(f) = FIBER_EXITED;
  yield(f);
  __builtin_unreachable();
}

/* --- hooks called from kernel code -------------------------------------- */

/* Whether two waiting fibers called from the same source line (unknown
 * sites, from code not compiled against the prelude, count as the same). */
static int same_site(const kl_fiber *a, const kl_fiber *b) {
  if (!a->pub.site_file || !b->pub.site_file) return 1;
  return a->pub.site_line == b->pub.site_line &&
         (a->pub.site_file == b->pub.site_file || strcmp(a->pub.site_file, b->pub.site_file) == 0);
}

/* Notes the site of a fiber arriving at a block barrier. When no two known
 * sites of the arrivals differ, every thread is at the same barrier as
 * thread 0 is in split_barrier's sense (an unknown site matches any), so
 * the release need not look at their records. */
static void note_barrier_site(kl_block *b, const kl_fiber *f) {
  const char *file = f->pub.site_file;
  if (!file || b->bar_split) return;
  if (!b->bar_file) {
    b->bar_file = file;
    b->bar_line = f->pub.site_line;
  } else if (b->bar_line != f->pub.site_line || (b->bar_file != file && strcmp(b->bar_file, file) != 0)) {
    b->bar_split = 1;
  }
}

static int hook_sync_block(kl_emu_thread *self, int kind, int pred) {
  kl_fiber *f = (kl_fiber *)self;
  note_barrier_site(f->block, f);
  STATE(f) = FIBER_BLOCK_WAIT;
  f->block->pred_sum += pred != 0;
  yield(f);
  int count = f->block->bar_count;
  switch (kind) {
  case KL_EMU_SYNC_COUNT: return count;
  case KL_EMU_SYNC_AND: return count == (int)f->block->n;
  case KL_EMU_SYNC_OR: return count > 0;
  default: return 0;
  }
}

static uint64_t hook_warp(kl_emu_thread *self, int op, unsigned mask, uint64_t value, int arg,
                          int width) {
  kl_fiber *f = (kl_fiber *)self;
  if (op == KL_EMU_WARP_ACTIVEMASK) f->block->activemask_waiters++;
  STATE(f) = FIBER_WARP_WAIT;
  f->op = op;
  f->mask = mask | (1u << f->pub.lane);
  f->value = value;
  f->arg = arg;
  f->width = width;
  yield(f);
  return f->result;
}

/* Lanes of the warp that exist in this block. */
static unsigned warp_lanes(const kl_block *b, unsigned warp) {
  unsigned left = b->n - warp * 32;
  return left >= 32 ? 0xFFFFFFFFu : (1u << left) - 1;
}

/* Completes the __activemask calls of warp w once none of its lanes can
 * run: each returns the lanes waiting at the same call site. */
static void settle_activemask(kl_block *b, unsigned w) {
  unsigned base = w * 32, lanes = warp_lanes(b, w);
  for (unsigned l = 0; l < 32; l++)
    if ((lanes >> l & 1) && b->state[base + l] == FIBER_READY) return;
  kl_fiber *waiting[32];
  unsigned nwait = 0;
  for (unsigned l = 0; l < 32; l++) {
    if (!(lanes >> l & 1) || b->state[base + l] != FIBER_WARP_WAIT) continue;
    kl_fiber *f = fiber_at(b, base + l);
    if (f->op == KL_EMU_WARP_ACTIVEMASK) waiting[nwait++] = f;
  }
  for (unsigned i = 0; i < nwait; i++) {
    unsigned same = 0;
    for (unsigned j = 0; j < nwait; j++)
      if (waiting[j]->arg == waiting[i]->arg) same |= 1u << waiting[j]->pub.lane;
    waiting[i]->result = same;
  }
  for (unsigned i = 0; i < nwait; i++) STATE(waiting[i]) = FIBER_READY;
  b->activemask_waiters -= nwait;
}

static void hook_print(kl_emu_thread *self, const char *text, size_t n) {
  kl_fiber *f = (kl_fiber *)self;
  /* Out of kernel code while the output lock is held: a timeout signal
   * then waits for the next kernel instruction instead of jumping away
   * with the lock. */
  kl_emu_current = NULL;
  kl_emu_print(f->block->launch, self, text, n);
  kl_emu_current = f;
}

static void hook_trap(kl_emu_thread *self, const char *message) {
  kl_emu_trap((kl_fiber *)self, message);
}

const kl_emu_hooks kl_emu_runtime_hooks = {
    .sync_block = hook_sync_block,
    .warp = hook_warp,
    .print = hook_print,
    .trap = hook_trap,
};

/* --- warp exchanges ------------------------------------------------------ */

static unsigned shuffle_source(int op, unsigned lane, int arg, int width) {
  unsigned w = (width > 0 && width <= 32 && (width & (width - 1)) == 0) ? (unsigned)width : 32;
  unsigned seg = lane & ~(w - 1), pos = lane & (w - 1), d = (unsigned)arg;
  switch (op) {
  case KL_EMU_WARP_SHFL_IDX: return seg + (d & (w - 1));
  case KL_EMU_WARP_SHFL_UP: return pos >= d ? lane - d : lane;
  case KL_EMU_WARP_SHFL_DOWN: return pos + d < w ? lane + d : lane;
  default: {
    unsigned src = lane ^ d;
    return src < seg + w && src < 32 ? src : lane;
  }
  }
}

/* The lanes that must arrive with f, or 0 when they have not all arrived
 * at the same exchange yet. */
static unsigned warp_group_ready(const kl_block *b, const kl_fiber *f) {
  unsigned base = f->pub.warp * 32;
  unsigned group = f->mask & warp_lanes(b, f->pub.warp);
  for (unsigned l = 0; l < 32; l++) {
    if (!(group >> l & 1)) continue;
    const kl_fiber *g = fiber_at(b, base + l);
    if (STATE(g) != FIBER_WARP_WAIT || g->op != f->op || g->mask != f->mask) return 0;
  }
  return group;
}

static void complete_warp(kl_block *b, const kl_fiber *f, unsigned group) {
  unsigned base = f->pub.warp * 32;
  kl_fiber *lanes[32] = {0};
  for (unsigned l = 0; l < 32; l++)
    if (group >> l & 1) lanes[l] = fiber_at(b, base + l);
  unsigned votes = 0;
  uint32_t sum = 0, and_ = 0xFFFFFFFFu, or_ = 0, xor_ = 0;
  int first = 1, all_equal = 1;
  uint32_t umin = 0, umax = 0;
  int32_t smin = 0, smax = 0;
  for (unsigned l = 0; l < 32; l++) {
    if (!lanes[l]) continue;
    uint64_t v = lanes[l]->value;
    uint32_t v32 = (uint32_t)v;
    if (v) votes |= 1u << l;
    sum += v32;
    and_ &= v32;
    or_ |= v32;
    xor_ ^= v32;
    if (first) {
      umin = umax = v32;
      smin = smax = (int32_t)v32;
      first = 0;
    } else {
      if (v != lanes[__builtin_ctz(group)]->value) all_equal = 0;
      if (v32 < umin) umin = v32;
      if (v32 > umax) umax = v32;
      if ((int32_t)v32 < smin) smin = (int32_t)v32;
      if ((int32_t)v32 > smax) smax = (int32_t)v32;
    }
  }
  int is_signed = f->arg != 0;
  for (unsigned l = 0; l < 32; l++) {
    kl_fiber *g = lanes[l];
    if (!g) continue;
    uint64_t r = 0;
    switch (f->op) {
    case KL_EMU_WARP_SHFL_IDX:
    case KL_EMU_WARP_SHFL_UP:
    case KL_EMU_WARP_SHFL_DOWN:
    case KL_EMU_WARP_SHFL_XOR: {
      unsigned src = shuffle_source(f->op, l, g->arg, g->width);
      r = src < 32 && lanes[src] ? lanes[src]->value : g->value;
      break;
    }
    case KL_EMU_WARP_BALLOT: r = votes; break;
    case KL_EMU_WARP_ANY: r = votes != 0; break;
    case KL_EMU_WARP_ALL: r = votes == group; break;
    case KL_EMU_WARP_MATCH_ANY: {
      unsigned same = 0;
      for (unsigned k = 0; k < 32; k++)
        if (lanes[k] && lanes[k]->value == g->value) same |= 1u << k;
      r = same;
      break;
    }
    case KL_EMU_WARP_MATCH_ALL: r = all_equal ? group : 0; break;
    case KL_EMU_WARP_REDUCE_ADD: r = sum; break;
    case KL_EMU_WARP_REDUCE_MIN: r = is_signed ? (uint32_t)smin : umin; break;
    case KL_EMU_WARP_REDUCE_MAX: r = is_signed ? (uint32_t)smax : umax; break;
    case KL_EMU_WARP_REDUCE_AND: r = and_; break;
    case KL_EMU_WARP_REDUCE_OR: r = or_; break;
    case KL_EMU_WARP_REDUCE_XOR: r = xor_; break;
    default: r = 0;
    }
    g->result = r;
  }
  for (unsigned l = 0; l < 32; l++)
    if (lanes[l]) STATE(lanes[l]) = FIBER_READY;
}

/* Called on the fiber's own stack once it has blocked or exited: completes
 * what its arrival completes, then resumes the next runnable fiber after it
 * in the order, or the block loop when none can run. Returns when some
 * fiber resumes this one. */
static void yield(kl_fiber *f) {
  kl_block *b = f->block;
  unsigned me = f->pub.linear, n = b->n;
  if (b->state[me] == FIBER_WARP_WAIT && f->op != KL_EMU_WARP_ACTIVEMASK) {
    unsigned group = warp_group_ready(b, f);
    if (group) complete_warp(b, f, group);
  }
  if (b->activemask_waiters) settle_activemask(b, me / 32);
  b->switches++;
  for (unsigned step = 1; step <= n; step++) {
    unsigned k = b->pos + step < n ? b->pos + step : b->pos + step - n;
    unsigned idx = b->order[k];
    if (b->state[idx] != FIBER_READY) continue;
    b->pos = k;
    if (idx == me) return; /* its own exchange completed, and it is next */
    if (k + 1 < n) {
      const char *next_sp = b->sp[b->order[k + 1]];
      for (int line = 0; line < PREFETCH_LINES; line++) __builtin_prefetch(next_sp + 64 * line);
      __builtin_prefetch(fiber_at(b, b->order[k + 1]));
    }
    kl_emu_current = fiber_at(b, idx);
    void *bottom = kl_fiber_stack_bottom(b->pool, idx);
    kl_asan_start(b->state[me] == FIBER_EXITED ? NULL : &f->asan_fake, bottom,
                  (size_t)((unsigned char *)kl_fiber_stack_top(b->pool, idx) - (unsigned char *)bottom));
    kl_fiber_switch(&b->sp[me], b->sp[idx]);
    kl_asan_finish(f->asan_fake);
    return;
  }
  kl_emu_current = NULL;
  kl_asan_start(b->state[me] == FIBER_EXITED ? NULL : &f->asan_fake, b->host_bottom, b->host_size);
  kl_fiber_switch(&b->sp[me], b->sched_sp);
  kl_asan_finish(f->asan_fake);
}

/* --- diagnosis ----------------------------------------------------------- */

static const char *warp_op_name(int op) {
  static const char *const names[] = {
      "__syncwarp",       "__shfl_sync",       "__shfl_up_sync",    "__shfl_down_sync",
      "__shfl_xor_sync",  "__ballot_sync",     "__any_sync",        "__all_sync",
      "__match_any_sync", "__match_all_sync",  "__reduce_add_sync", "__reduce_min_sync",
      "__reduce_max_sync", "__reduce_and_sync", "__reduce_or_sync", "__reduce_xor_sync",
      "__activemask"};
  return op >= 0 && op < (int)(sizeof names / sizeof names[0]) ? names[op] : "a warp exchange";
}

/* Appends the ids of the fibers in [lo, hi) that `pick` accepts, as ranges
 * ("0-31, 64"), each id minus `subtract` (lanes of a warp: its base). */
static void append_ids(char *out, size_t n, const kl_block *b, unsigned lo, unsigned hi,
                       int (*pick)(const kl_fiber *, const void *), const void *ctx,
                       unsigned subtract) {
  size_t len = strlen(out);
  int any = 0;
  for (unsigned i = lo; i < hi && len + 24 < n;) {
    if (!pick(fiber_at(b, i), ctx)) {
      i++;
      continue;
    }
    unsigned j = i;
    while (j + 1 < hi && pick(fiber_at(b, j + 1), ctx)) j++;
    if (j == i) len += (size_t)snprintf(out + len, n - len, "%s%u", any ? ", " : "", i - subtract);
    else len += (size_t)snprintf(out + len, n - len, "%s%u-%u", any ? ", " : "", i - subtract, j - subtract);
    any = 1;
    i = j + 1;
  }
  if (!any && len + 8 < n) snprintf(out + len, n - len, "none");
}

static int pick_state(const kl_fiber *f, const void *ctx) { return STATE(f) == *(const int *)ctx; }
static int pick_not_exited(const kl_fiber *f, const void *ctx) {
  (void)ctx;
  return STATE(f) != FIBER_EXITED;
}
static int pick_same_exchange(const kl_fiber *f, const void *ctx) {
  const kl_fiber *w = ctx;
  return STATE(f) == FIBER_WARP_WAIT && f->op == w->op && f->mask == w->mask;
}
static int pick_other(const kl_fiber *f, const void *ctx) {
  const kl_fiber *w = ctx;
  return !pick_same_exchange(f, ctx) && ((w->mask >> f->pub.lane) & 1);
}

/* Appends " at file:line" when the site is known. */
static void append_site(char *out, size_t n, const kl_fiber *f) {
  size_t len = strlen(out);
  if (f->pub.site_file && len + 8 < n)
    snprintf(out + len, n - len, " at %s:%d", f->pub.site_file, f->pub.site_line);
}

static int pick_same_site(const kl_fiber *f, const void *ctx) {
  return STATE(f) == FIBER_BLOCK_WAIT && same_site(f, ctx);
}

/* Every thread waits at a block barrier, but not all at the same one: the
 * barriers of different branches. Returns 1 and fills b->message then. */
static int split_barrier(kl_block *b) {
  const kl_fiber *first = fiber_at(b, 0);
  unsigned i = 1;
  while (i < b->n && same_site(fiber_at(b, i), first)) i++;
  if (i == b->n) return 0;
  char *m = b->message;
  size_t n = sizeof b->message;
  const kl_emu_dim3 *bi = &first->pub.block_idx;
  b->culprit_block = *bi;
  b->culprit_thread = fiber_at(b, i)->pub.thread_idx;
  snprintf(m, n, "divergent barrier: the threads of block (%u,%u,%u) wait at different __syncthreads:",
           bi->x, bi->y, bi->z);
  /* One clause per distinct site, in thread order, at most four. */
  const kl_fiber *sites[4];
  unsigned nsites = 0;
  for (unsigned t = 0; t < b->n && nsites < 4; t++) {
    const kl_fiber *f = fiber_at(b, t);
    int seen = 0;
    for (unsigned s = 0; s < nsites; s++) seen |= same_site(f, sites[s]);
    if (seen) continue;
    sites[nsites++] = f;
    size_t len = strlen(m);
    snprintf(m + len, n - len, "%s threads ", nsites > 1 ? ";" : "");
    append_ids(m, n, b, 0, b->n, pick_same_site, f, 0);
    append_site(m, n, f);
  }
  return 1;
}

static void diagnose(kl_block *b) {
  char *m = b->message;
  size_t n = sizeof b->message;
  const kl_emu_dim3 *bi = &fiber_at(b, 0)->pub.block_idx;
  b->culprit_block = *bi;
  int block_wait = FIBER_BLOCK_WAIT, exited = FIBER_EXITED;
  const kl_fiber *warp_waiter = NULL;
  for (unsigned i = 0; i < b->n && !warp_waiter; i++)
    if (b->state[i] == FIBER_WARP_WAIT) warp_waiter = fiber_at(b, i);
  /* The culprit is the first thread that is missing from the barrier. */
  b->culprit_thread = fiber_at(b, 0)->pub.thread_idx;
  for (unsigned i = 0; i < b->n; i++) {
    const kl_fiber *f = fiber_at(b, i);
    if (warp_waiter ? pick_other(f, warp_waiter) && f->pub.warp == warp_waiter->pub.warp
                    : b->state[i] == FIBER_EXITED) {
      b->culprit_thread = f->pub.thread_idx;
      break;
    }
  }
  if (!warp_waiter) {
    const kl_fiber *waiter = NULL;
    for (unsigned i = 0; i < b->n && !waiter; i++)
      if (b->state[i] == FIBER_BLOCK_WAIT) waiter = fiber_at(b, i);
    snprintf(m, n, "divergent barrier: __syncthreads");
    if (waiter) append_site(m, n, waiter);
    size_t at = strlen(m);
    snprintf(m + at, n - at, " in block (%u,%u,%u) is reached by threads ", bi->x, bi->y, bi->z);
    append_ids(m, n, b, 0, b->n, pick_state, &block_wait, 0);
    size_t len = strlen(m);
    snprintf(m + len, n - len, " but never by threads ");
    append_ids(m, n, b, 0, b->n, pick_state, &exited, 0);
    len = strlen(m);
    snprintf(m + len, n - len, ", which returned (linear thread ids)");
    return;
  }
  unsigned base = warp_waiter->pub.warp * 32, hi = base + 32 < b->n ? base + 32 : b->n;
  snprintf(m, n, "divergent barrier: %s", warp_op_name(warp_waiter->op));
  append_site(m, n, warp_waiter);
  size_t at = strlen(m);
  snprintf(m + at, n - at, " (mask 0x%08x) in block (%u,%u,%u), warp %u, is reached by lanes ",
           warp_waiter->mask, bi->x, bi->y, bi->z, warp_waiter->pub.warp);
  append_ids(m, n, b, base, hi, pick_same_exchange, warp_waiter, base);
  size_t len = strlen(m);
  snprintf(m + len, n - len, " but not by lanes ");
  append_ids(m, n, b, base, hi, pick_other, warp_waiter, base);
  len = strlen(m);
  snprintf(m + len, n - len, " (returned, or waiting elsewhere); live threads of the block: ");
  append_ids(m, n, b, 0, b->n, pick_not_exited, NULL, 0);
}

/* --- the block loop ------------------------------------------------------ */

int kl_emu_run_block(kl_block *b, unsigned long long index) {
  const kl_emu_launch_config *cfg = b->cfg;
  kl_emu_dim3 bd = cfg->block, gd = cfg->grid;
  kl_emu_dim3 bi = {(unsigned)(index % gd.x), (unsigned)(index / gd.x % gd.y),
                    (unsigned)(index / ((unsigned long long)gd.x * gd.y))};
  unsigned n = bd.x * bd.y * bd.z;
  b->n = n;
  b->pred_sum = 0;
  b->activemask_waiters = 0;
  b->bar_file = NULL;
  b->bar_split = 0;
  b->rng = cfg->seed ^ (index * 0xD1B54A32D192ED03ull);
  for (unsigned i = 0; i < n; i++) {
    kl_fiber *f = fiber_at(b, i);
    f->pub.thread_idx = (kl_emu_dim3){i % bd.x, i / bd.x % bd.y, i / (bd.x * bd.y)};
    f->pub.block_idx = bi;
    f->pub.block_dim = bd;
    f->pub.grid_dim = gd;
    f->pub.lane = i % 32;
    f->pub.warp = i / 32;
    f->pub.linear = i;
    f->pub.hooks = &kl_emu_runtime_hooks;
    f->pub.site_file = NULL;
    f->pub.site_line = 0;
    f->block = b;
    f->asan_fake = NULL;
    b->state[i] = FIBER_READY;
    b->sp[i] = kl_fiber_prepare(kl_fiber_stack_top(b->pool, i), fiber_main, f);
  }
  cfg->block_start(cfg->smem, cfg->poison);
  set_order(b);
  for (;;) {
    /* Start the first runnable fiber; control comes back when none can run. */
    for (unsigned k = 0; k < n; k++) {
      unsigned idx = b->order[k];
      if (b->state[idx] != FIBER_READY) continue;
      b->pos = k;
      kl_emu_current = fiber_at(b, idx);
      b->switches++;
      void *bottom = kl_fiber_stack_bottom(b->pool, idx);
      kl_asan_start(&b->sched_fake, bottom,
                    (size_t)((unsigned char *)kl_fiber_stack_top(b->pool, idx) - (unsigned char *)bottom));
      kl_fiber_switch(&b->sched_sp, b->sp[idx]);
      kl_asan_finish(b->sched_fake);
      kl_emu_current = NULL;
      break;
    }
    unsigned exited = 0, waiting = 0;
    for (unsigned i = 0; i < n; i++) {
      exited += b->state[i] == FIBER_EXITED;
      waiting += b->state[i] == FIBER_BLOCK_WAIT;
    }
    if (exited == n) return 1;
    if (waiting == n) {
      if (b->bar_split && split_barrier(b)) return 0;
      b->bar_count = b->pred_sum;
      b->pred_sum = 0;
      b->activemask_waiters = 0;
      b->bar_file = NULL;
      b->bar_split = 0;
      for (unsigned i = 0; i < n; i++) b->state[i] = FIBER_READY;
      if (cfg->order == KL_EMU_ORDER_SHUFFLE) set_order(b);
      continue;
    }
    diagnose(b);
    return 0;
  }
}
