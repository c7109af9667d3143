/* Hardware metrics through the CUPTI Range Profiler and the Profiler Host
 * API (CUDA 12.6+; the Event/Metric APIs are gone in 13.0). One session
 * profiles the kernels launched between begin and end, one range per
 * kernel (auto range), replaying each kernel as many passes as the metric
 * set needs (kernel replay), and evaluates the metrics by their ncu names
 * ("dram__bytes_read.sum", ...). */
#ifndef KL_CUPTI_METRICS_H
#define KL_CUPTI_METRICS_H

#include <stddef.h>

#include <cuda.h>

typedef struct kl_metrics_session kl_metrics_session;

/* Opens a session on ctx, which is current, for device ordinal `device`.
 * metrics[0..n) stay owned by the caller and must outlive the session.
 * Returns NULL with a message in err (e.g. an unknown metric name). */
kl_metrics_session *kl_metrics_open(CUcontext ctx, int device, const char *const *metrics,
                                    size_t n, size_t max_ranges, char *err, size_t errsize);

/* Replay passes each kernel needs for this metric set. */
int kl_metrics_passes(const kl_metrics_session *s);

/* The chip name CUPTI reports for the device ("GH100"). */
const char *kl_metrics_chip(const kl_metrics_session *s);

/* Starts collecting: every kernel launched until kl_metrics_end is one range. */
int kl_metrics_begin(kl_metrics_session *s, char *err, size_t errsize);

/* Stops and decodes. Returns the number of ranges collected, or -1. */
int kl_metrics_end(kl_metrics_session *s, char *err, size_t errsize);

/* Evaluates every metric of range i into values[0..n). *name gets the
 * range's name (the kernel's launch order in auto range mode), valid until
 * the next call. Returns 0 or -1. */
int kl_metrics_values(kl_metrics_session *s, size_t i, double *values, const char **name,
                      char *err, size_t errsize);

/* Frees everything; safe on NULL and twice on the same session pointer is
 * not allowed (the caller clears its pointer). */
void kl_metrics_close(kl_metrics_session *s);

#endif
