/* Guarded buffers and the address registry (see buffer.h). */
#define _GNU_SOURCE
#include "emu/buffer.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define CANARY 0xA5u
/* Inaccessible pages on each side of a buffer: a write up to 64 KiB (at
 * 4 KiB pages) before or past a buffer faults at once instead of landing
 * in another buffer, the reference copy included. They cost address
 * space only. */
#define GUARD_PAGES 16

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static kl_emu_buffer *registry;

static size_t page_size(void) { return (size_t)sysconf(_SC_PAGESIZE); }

/* Mappings of freed buffers, kept for the next buffer of the same size.
 * A worker allocates the same buffers for every trial, and touching fresh
 * pages is slow (each is a fault: on a virtual machine some 15 us, so 50 ms
 * for a 12 MB input); a kept mapping has its pages already. While kept it
 * is inaccessible, as an unmapped range is (mprotect keeps the pages); on
 * reuse its data pages are opened and zeroed again, as a new mapping's
 * are. At most KEPT_MAX of them and KEPT_BYTES_MAX bytes, the oldest
 * unmapped first. */
#define KEPT_MAX 8
#define KEPT_BYTES_MAX ((size_t)256 << 20)

static pthread_mutex_t kept_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  unsigned char *map;
  size_t map_bytes;
} kept[KEPT_MAX];
static unsigned kept_count;
static size_t kept_bytes;

/* A kept mapping of exactly map_bytes (all of it PROT_NONE), or NULL. */
static unsigned char *take_kept(size_t map_bytes) {
  unsigned char *map = NULL;
  pthread_mutex_lock(&kept_lock);
  for (unsigned i = kept_count; i-- > 0;) {
    if (kept[i].map_bytes != map_bytes) continue;
    map = kept[i].map;
    kept_bytes -= map_bytes;
    memmove(&kept[i], &kept[i + 1], (kept_count - i - 1) * sizeof kept[0]);
    kept_count--;
    break;
  }
  pthread_mutex_unlock(&kept_lock);
  return map;
}

/* Keeps a freed buffer's mapping, or unmaps it (and older ones) past the limits. */
static void keep_mapping(unsigned char *map, size_t map_bytes) {
  unsigned char *drop[KEPT_MAX + 1];
  size_t drop_bytes[KEPT_MAX + 1];
  unsigned ndrop = 0;
  int closed = mprotect(map, map_bytes, PROT_NONE) == 0;
  pthread_mutex_lock(&kept_lock);
  if (map_bytes > KEPT_BYTES_MAX || !closed) {
    drop[ndrop] = map, drop_bytes[ndrop++] = map_bytes;
  } else {
    while (kept_count > 0 && (kept_count == KEPT_MAX || kept_bytes + map_bytes > KEPT_BYTES_MAX)) {
      drop[ndrop] = kept[0].map, drop_bytes[ndrop++] = kept[0].map_bytes;
      kept_bytes -= kept[0].map_bytes;
      memmove(&kept[0], &kept[1], (kept_count - 1) * sizeof kept[0]);
      kept_count--;
    }
    kept[kept_count].map = map;
    kept[kept_count].map_bytes = map_bytes;
    kept_count++;
    kept_bytes += map_bytes;
  }
  pthread_mutex_unlock(&kept_lock);
  for (unsigned i = 0; i < ndrop; i++) munmap(drop[i], drop_bytes[i]);
}

kl_emu_buffer *kl_emu_buffer_new(size_t bytes, const char *name, size_t elem) {
  size_t page = page_size();
  size_t padded = (bytes + 15) & ~(size_t)15;
  if (padded < bytes) return NULL;
  size_t data_pages = (padded + page - 1) / page;
  if (data_pages == 0) data_pages = 1;
  kl_emu_buffer *b = calloc(1, sizeof *b);
  if (!b) return NULL;
  b->map_bytes = (data_pages + 2 * GUARD_PAGES) * page;
  unsigned char *first;
  b->map = take_kept(b->map_bytes);
  int reused = b->map != NULL;
  if (!reused) {
    void *map = mmap(NULL, b->map_bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED) {
      free(b);
      return NULL;
    }
    b->map = map;
  }
  first = b->map + GUARD_PAGES * page;
  if (mprotect(first, data_pages * page, PROT_READ | PROT_WRITE) != 0) {
    munmap(b->map, b->map_bytes);
    free(b);
    return NULL;
  }
  if (reused) memset(first, 0, data_pages * page);
  unsigned char *tail_guard = first + data_pages * page;
  b->data = tail_guard - padded;
  b->bytes = bytes;
  b->elem = elem ? elem : 1;
  snprintf(b->name, sizeof b->name, "%s", name ? name : "?");
  memset(first, CANARY, (size_t)(b->data - first));
  memset(b->data + bytes, CANARY, padded - bytes);

  pthread_mutex_lock(&registry_lock);
  b->next = registry;
  if (registry) registry->prev = b;
  registry = b;
  pthread_mutex_unlock(&registry_lock);
  return b;
}

void kl_emu_buffer_free(kl_emu_buffer *b) {
  if (!b) return;
  pthread_mutex_lock(&registry_lock);
  if (b->prev) b->prev->next = b->next;
  else registry = b->next;
  if (b->next) b->next->prev = b->prev;
  pthread_mutex_unlock(&registry_lock);
  keep_mapping(b->map, b->map_bytes);
  free(b);
}

static void describe_offset(const kl_emu_buffer *b, long long offset, char *out, size_t n) {
  long long index = offset >= 0 ? offset / (long long)b->elem
                                : -((-offset + (long long)b->elem - 1) / (long long)b->elem);
  long long count = (long long)(b->bytes / b->elem);
  if (b->elem > 1)
    snprintf(out, n, "buffer '%s' element index %lld (of %lld, byte offset %lld)", b->name, index,
             count, offset);
  else
    snprintf(out, n, "buffer '%s' byte offset %lld (of %lld)", b->name, offset, count);
}

int kl_emu_buffer_describe(const void *addr, char *out, size_t n) {
  uintptr_t a = (uintptr_t)addr;
  const kl_emu_buffer *near = NULL;
  uintptr_t near_distance = UINTPTR_MAX;
  pthread_mutex_lock(&registry_lock);
  for (const kl_emu_buffer *b = registry; b; b = b->next) {
    uintptr_t lo = (uintptr_t)b->map, hi = lo + b->map_bytes;
    if (a >= lo && a < hi) {
      near = b;
      near_distance = 0;
      break;
    }
    /* Not inside any mapping: remember the buffer whose end is closest below. */
    uintptr_t end = (uintptr_t)b->data + b->bytes;
    if (a >= end && a - end < near_distance) {
      near = b;
      near_distance = a - end;
    }
  }
  int found = near && near_distance <= (1u << 20);
  if (found) describe_offset(near, (long long)(a - (uintptr_t)near->data), out, n);
  else snprintf(out, n, "address %p, in no buffer", addr);
  pthread_mutex_unlock(&registry_lock);
  return found;
}

int kl_emu_buffers_check(char *out, size_t n) {
  size_t page = page_size();
  int damaged = 0;
  pthread_mutex_lock(&registry_lock);
  for (kl_emu_buffer *b = registry; b && !damaged; b = b->next) {
    const unsigned char *first = b->map + GUARD_PAGES * page;
    const unsigned char *end = b->data + ((b->bytes + 15) & ~(size_t)15);
    for (const unsigned char *p = b->data - 1; p >= first; p--) {
      if (*p != CANARY) {
        describe_offset(b, (long long)(p - b->data), out, n);
        damaged = 1;
        break;
      }
    }
    for (const unsigned char *p = b->data + b->bytes; !damaged && p < end; p++) {
      if (*p != CANARY) {
        describe_offset(b, (long long)(p - b->data), out, n);
        damaged = 1;
      }
    }
    if (damaged) { /* repair, so the next launch reports only its own damage */
      memset(b->map + GUARD_PAGES * page, CANARY, (size_t)(b->data - (b->map + GUARD_PAGES * page)));
      memset(b->data + b->bytes, CANARY, (size_t)(end - (b->data + b->bytes)));
    }
  }
  pthread_mutex_unlock(&registry_lock);
  return damaged;
}
