/* Kernel durations from the CUPTI Activity API (CONCURRENT_KERNEL records,
 * CUpti_ActivityKernel10): the GPU's own start/end timestamps for every
 * launch, independent of host-side timers. Records are buffered by CUPTI
 * and copied here when flushed; the store is process-global because CUPTI's
 * activity callbacks are. Needs the CUDA driver to be loaded. */
#ifndef KL_CUPTI_ACTIVITY_H
#define KL_CUPTI_ACTIVITY_H

#include <stdint.h>

typedef struct {
  char name[128];      /* kernel (mangled or extern "C") name, truncated */
  uint64_t start, end; /* ns, CUPTI timestamps; start == 0: not timed */
  uint32_t device, stream, correlation;
  int32_t grid[3], block[3];
  int32_t smem_static, smem_dynamic;
  uint16_t registers;
} kl_kernel_record;

/* Enables CONCURRENT_KERNEL activity. Returns 0, or -1 with *err set to a
 * static message. Idempotent. */
int kl_activity_start(const char **err);

/* Flushes CUPTI's buffers and moves every kernel record collected since the
 * last call into *out (malloc'd; the caller frees it). Returns the count,
 * or -1 with *err. *dropped receives the number of records CUPTI dropped. */
int kl_activity_collect(kl_kernel_record **out, uint64_t *dropped, const char **err);

/* Disables kernel activity; pending records are discarded. */
void kl_activity_stop(void);

#endif
