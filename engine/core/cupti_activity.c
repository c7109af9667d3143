#include "core/cupti_activity.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>

#define BUFFER_SIZE (4u << 20)
#define BUFFER_ALIGN 8

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static kl_kernel_record *records;
static size_t nrecords, caprecords;
static uint64_t dropped_total;
static int registered, enabled;

static void CUPTIAPI on_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records) {
  *buffer = aligned_alloc(BUFFER_ALIGN, BUFFER_SIZE);
  *size = *buffer ? BUFFER_SIZE : 0;
  *max_records = 0; /* as many as fit */
}

static void append(const CUpti_ActivityKernel10 *k) {
  if (nrecords == caprecords) {
    size_t cap = caprecords ? caprecords * 2 : 1024;
    kl_kernel_record *p = realloc(records, cap * sizeof *p);
    if (!p) {
      dropped_total++;
      return;
    }
    records = p;
    caprecords = cap;
  }
  kl_kernel_record *r = &records[nrecords++];
  memset(r, 0, sizeof *r);
  if (k->name) {
    strncpy(r->name, k->name, sizeof r->name - 1);
  }
  r->start = k->start;
  r->end = k->end;
  r->device = k->deviceId;
  r->stream = k->streamId;
  r->correlation = k->correlationId;
  r->grid[0] = k->gridX, r->grid[1] = k->gridY, r->grid[2] = k->gridZ;
  r->block[0] = k->blockX, r->block[1] = k->blockY, r->block[2] = k->blockZ;
  r->smem_static = k->staticSharedMemory;
  r->smem_dynamic = k->dynamicSharedMemory;
  r->registers = k->registersPerThread;
}

/* CUPTI may call this from its own thread: everything under the lock. */
static void CUPTIAPI on_buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                        size_t size, size_t valid) {
  (void)ctx;
  (void)stream;
  (void)size;
  CUpti_Activity *rec = NULL;
  pthread_mutex_lock(&lock);
  while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
    if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || rec->kind == CUPTI_ACTIVITY_KIND_KERNEL)
      append((const CUpti_ActivityKernel10 *)rec);
  }
  pthread_mutex_unlock(&lock);
  free(buffer);
}

static const char *result_text(CUptiResult r) {
  const char *msg = NULL;
  cuptiGetResultString(r, &msg);
  return msg ? msg : "CUPTI error";
}

int kl_activity_start(const char **err) {
  CUptiResult r;
  if (!registered) {
    r = cuptiActivityRegisterCallbacks(on_buffer_requested, on_buffer_completed);
    if (r != CUPTI_SUCCESS) {
      *err = result_text(r);
      return -1;
    }
    registered = 1;
  }
  if (!enabled) {
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
      *err = result_text(r);
      return -1;
    }
    enabled = 1;
  }
  return 0;
}

int kl_activity_collect(kl_kernel_record **out, uint64_t *dropped, const char **err) {
  CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (r != CUPTI_SUCCESS) {
    *err = result_text(r);
    return -1;
  }
  pthread_mutex_lock(&lock);
  *out = records;
  int n = (int)nrecords;
  *dropped = dropped_total;
  records = NULL;
  nrecords = caprecords = 0;
  dropped_total = 0;
  pthread_mutex_unlock(&lock);
  return n;
}

void kl_activity_stop(void) {
  if (enabled) {
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    enabled = 0;
  }
  pthread_mutex_lock(&lock);
  free(records);
  records = NULL;
  nrecords = caprecords = 0;
  pthread_mutex_unlock(&lock);
}
