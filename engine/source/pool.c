/* Recycled memory for the large arrays of units and of the parser.
 *
 * A 5 MB unit touches about 130 MB of arrays (40-byte tokens and nodes,
 * plus the parser's nodes in creation order). glibc serves blocks that
 * large with a fresh mmap each time and unmaps them on free, so every
 * parse page-faults all of it in again: on a VM a minor fault costs 1-2 us,
 * which is as much as the whole parse. Here the blocks of a freed unit are
 * kept in a small pool and handed to the next parse instead.
 *
 * Blocks are plain malloc blocks (free() on one is always correct, it only
 * skips the pool). Sizes of 256 KiB and more are rounded up to a class
 * (1/8 steps between powers of two) so that units of similar size reuse
 * each other's blocks; the rounding is virtual memory, never touched.
 * The pool holds at most POOL_SLOTS blocks and POOL_MAX bytes; beyond
 * that the oldest block goes back to the system. kl_source_trim empties
 * it. One mutex guards it: units may be freed on any thread. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

#define POOL_MIN ((size_t)256 << 10)
#define POOL_SLOTS 16
#define POOL_MAX ((size_t)KL_SOURCE_POOL_MAX)

static struct {
  void *block[POOL_SLOTS];
  size_t cap[POOL_SLOTS];
  unsigned n;     /* blocks held, oldest first */
  size_t bytes;   /* their capacities summed   */
} pool;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;

/* The capacity a request of `bytes` is given. */
static size_t size_class(size_t bytes) {
  if (bytes < POOL_MIN) return bytes ? bytes : 1;
  size_t top = (size_t)1 << (63 - __builtin_clzll((unsigned long long)bytes));
  size_t step = top / 8;
  return (bytes + step - 1) / step * step;
}

void *kl_src_alloc(size_t bytes, size_t *cap) {
  size_t want = size_class(bytes);
  if (want >= POOL_MIN) {
    /* best fit among the pooled blocks, at most twice the request: a long
     * lived small unit must not pin a large block */
    void *found = NULL;
    pthread_mutex_lock(&pool_lock);
    unsigned best = POOL_SLOTS;
    for (unsigned i = 0; i < pool.n; i++)
      if (pool.cap[i] >= bytes && pool.cap[i] <= 2 * want &&
          (best == POOL_SLOTS || pool.cap[i] < pool.cap[best]))
        best = i;
    if (best != POOL_SLOTS) {
      found = pool.block[best];
      *cap = pool.cap[best];
      pool.bytes -= pool.cap[best];
      pool.n--;
      memmove(&pool.block[best], &pool.block[best + 1], (pool.n - best) * sizeof pool.block[0]);
      memmove(&pool.cap[best], &pool.cap[best + 1], (pool.n - best) * sizeof pool.cap[0]);
    }
    pthread_mutex_unlock(&pool_lock);
    if (found) return found;
  }
  void *p = malloc(want);
  *cap = p ? want : 0;
  return p;
}

void kl_src_free(void *p, size_t cap) {
  if (!p) return;
  if (cap < POOL_MIN || cap > POOL_MAX) {
    free(p);
    return;
  }
  void *evicted[POOL_SLOTS];
  unsigned nev = 0;
  pthread_mutex_lock(&pool_lock);
  while (pool.n && (pool.n == POOL_SLOTS || pool.bytes + cap > POOL_MAX)) {
    evicted[nev++] = pool.block[0];
    pool.bytes -= pool.cap[0];
    pool.n--;
    memmove(&pool.block[0], &pool.block[1], pool.n * sizeof pool.block[0]);
    memmove(&pool.cap[0], &pool.cap[1], pool.n * sizeof pool.cap[0]);
  }
  pool.block[pool.n] = p;
  pool.cap[pool.n] = cap;
  pool.n++;
  pool.bytes += cap;
  pthread_mutex_unlock(&pool_lock);
  for (unsigned i = 0; i < nev; i++) free(evicted[i]);
}

void *kl_src_grow(void *p, size_t used, size_t *cap, size_t need) {
  if (need <= *cap && p) return p;
  size_t want = need;
  /* geometric growth: a chain of grows copies each byte O(1) times */
  if (p && want < *cap + *cap / 2) want = *cap + *cap / 2;
  size_t ncap;
  void *q = kl_src_alloc(want, &ncap);
  if (!q) return NULL;
  if (p) {
    if (used) memcpy(q, p, used);
    kl_src_free(p, *cap);
  }
  *cap = ncap;
  return q;
}

void kl_source_trim(void) {
  pthread_mutex_lock(&pool_lock);
  unsigned n = pool.n;
  void *blocks[POOL_SLOTS];
  memcpy(blocks, pool.block, n * sizeof blocks[0]);
  pool.n = 0;
  pool.bytes = 0;
  pthread_mutex_unlock(&pool_lock);
  for (unsigned i = 0; i < n; i++) free(blocks[i]);
}

size_t kl_source_pooled_bytes(void) {
  pthread_mutex_lock(&pool_lock);
  size_t b = pool.bytes;
  pthread_mutex_unlock(&pool_lock);
  return b;
}
