#include "core/cupti_metrics.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cupti.h>
#include <cupti_profiler_host.h>
#include <cupti_range_profiler.h>
#include <cupti_target.h>

struct kl_metrics_session {
  CUcontext ctx;
  const char *const *metrics;
  size_t nmetrics, max_ranges;
  char chip[64];
  CUpti_Profiler_Host_Object *host;
  CUpti_RangeProfiler_Object *profiler;
  uint8_t *availability; /* kept: the host object reads it after Initialize */
  uint8_t *config;
  size_t config_size;
  uint8_t *counter_data;
  size_t counter_data_size;
  int passes;
  char *last_range_name;
};

static int fail(char *err, size_t n, const char *what, CUptiResult r) {
  const char *msg = NULL;
  cuptiGetResultString(r, &msg);
  snprintf(err, n, "%s: %s", what, msg ? msg : "CUPTI error");
  return -1;
}

/* The profiler interface is initialized once per process. */
static int ensure_profiler_initialized(char *err, size_t n) {
  static int done;
  if (done) return 0;
  CUpti_Profiler_Initialize_Params p = {CUpti_Profiler_Initialize_Params_STRUCT_SIZE, NULL};
  CUptiResult r = cuptiProfilerInitialize(&p);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiProfilerInitialize", r);
  done = 1;
  return 0;
}

static int host_setup(kl_metrics_session *s, int device, char *err, size_t n) {
  CUpti_Device_GetChipName_Params chip = {CUpti_Device_GetChipName_Params_STRUCT_SIZE, NULL, (size_t)device, NULL};
  CUptiResult r = cuptiDeviceGetChipName(&chip);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiDeviceGetChipName", r);
  snprintf(s->chip, sizeof s->chip, "%s", chip.pChipName);

  CUpti_Profiler_GetCounterAvailability_Params avail = {
      CUpti_Profiler_GetCounterAvailability_Params_STRUCT_SIZE, NULL, s->ctx, 0, NULL};
  r = cuptiProfilerGetCounterAvailability(&avail);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiProfilerGetCounterAvailability", r);
  s->availability = malloc(avail.counterAvailabilityImageSize);
  if (!s->availability) return snprintf(err, n, "out of memory"), -1;
  avail.pCounterAvailabilityImage = s->availability;
  r = cuptiProfilerGetCounterAvailability(&avail);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiProfilerGetCounterAvailability", r);

  CUpti_Profiler_Host_Initialize_Params init = {.structSize = CUpti_Profiler_Host_Initialize_Params_STRUCT_SIZE};
  init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
  init.pChipName = s->chip;
  init.pCounterAvailabilityImage = s->availability;
  r = cuptiProfilerHostInitialize(&init);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiProfilerHostInitialize", r);
  s->host = init.pHostObject;

  CUpti_Profiler_Host_ConfigAddMetrics_Params add = {.structSize = CUpti_Profiler_Host_ConfigAddMetrics_Params_STRUCT_SIZE};
  add.pHostObject = s->host;
  add.ppMetricNames = (const char **)s->metrics;
  add.numMetrics = s->nmetrics;
  r = cuptiProfilerHostConfigAddMetrics(&add);
  if (r != CUPTI_SUCCESS) return fail(err, n, "unknown or unsupported metric (cuptiProfilerHostConfigAddMetrics)", r);

  CUpti_Profiler_Host_GetConfigImageSize_Params size = {.structSize = CUpti_Profiler_Host_GetConfigImageSize_Params_STRUCT_SIZE};
  size.pHostObject = s->host;
  r = cuptiProfilerHostGetConfigImageSize(&size);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiProfilerHostGetConfigImageSize", r);
  s->config_size = size.configImageSize;
  s->config = malloc(s->config_size);
  if (!s->config) return snprintf(err, n, "out of memory"), -1;
  CUpti_Profiler_Host_GetConfigImage_Params get = {.structSize = CUpti_Profiler_Host_GetConfigImage_Params_STRUCT_SIZE};
  get.pHostObject = s->host;
  get.configImageSize = s->config_size;
  get.pConfigImage = s->config;
  r = cuptiProfilerHostGetConfigImage(&get);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiProfilerHostGetConfigImage", r);

  CUpti_Profiler_Host_GetNumOfPasses_Params passes = {.structSize = CUpti_Profiler_Host_GetNumOfPasses_Params_STRUCT_SIZE};
  passes.configImageSize = s->config_size;
  passes.pConfigImage = s->config;
  r = cuptiProfilerHostGetNumOfPasses(&passes);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiProfilerHostGetNumOfPasses", r);
  s->passes = (int)passes.numOfPasses;
  return 0;
}

static int target_setup(kl_metrics_session *s, char *err, size_t n) {
  CUpti_RangeProfiler_Enable_Params en = {.structSize = CUpti_RangeProfiler_Enable_Params_STRUCT_SIZE};
  en.ctx = s->ctx;
  CUptiResult r = cuptiRangeProfilerEnable(&en);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiRangeProfilerEnable", r);
  s->profiler = en.pRangeProfilerObject;

  CUpti_RangeProfiler_GetCounterDataSize_Params size = {.structSize = CUpti_RangeProfiler_GetCounterDataSize_Params_STRUCT_SIZE};
  size.pRangeProfilerObject = s->profiler;
  size.pMetricNames = (const char **)s->metrics;
  size.numMetrics = s->nmetrics;
  size.maxNumOfRanges = s->max_ranges;
  size.maxNumRangeTreeNodes = (uint32_t)s->max_ranges;
  r = cuptiRangeProfilerGetCounterDataSize(&size);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiRangeProfilerGetCounterDataSize", r);
  s->counter_data_size = size.counterDataSize;
  s->counter_data = malloc(s->counter_data_size);
  if (!s->counter_data) return snprintf(err, n, "out of memory"), -1;
  return 0;
}

kl_metrics_session *kl_metrics_open(CUcontext ctx, int device, const char *const *metrics,
                                    size_t n, size_t max_ranges, char *err, size_t errsize) {
  if (n == 0) {
    snprintf(err, errsize, "no metrics asked for");
    return NULL;
  }
  if (ensure_profiler_initialized(err, errsize)) return NULL;
  kl_metrics_session *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(err, errsize, "out of memory");
    return NULL;
  }
  s->ctx = ctx;
  s->metrics = metrics;
  s->nmetrics = n;
  s->max_ranges = max_ranges ? max_ranges : 64;
  if (host_setup(s, device, err, errsize) || target_setup(s, err, errsize)) {
    kl_metrics_close(s);
    return NULL;
  }
  return s;
}

int kl_metrics_passes(const kl_metrics_session *s) { return s->passes; }
const char *kl_metrics_chip(const kl_metrics_session *s) { return s->chip; }

int kl_metrics_begin(kl_metrics_session *s, char *err, size_t n) {
  /* A fresh counter data image per collection: ranges never accumulate. */
  CUpti_RangeProfiler_CounterDataImage_Initialize_Params init = {
      .structSize = CUpti_RangeProfiler_CounterDataImage_Initialize_Params_STRUCT_SIZE};
  init.pRangeProfilerObject = s->profiler;
  init.counterDataSize = s->counter_data_size;
  init.pCounterData = s->counter_data;
  CUptiResult r = cuptiRangeProfilerCounterDataImageInitialize(&init);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiRangeProfilerCounterDataImageInitialize", r);

  CUpti_RangeProfiler_SetConfig_Params cfg = {.structSize = CUpti_RangeProfiler_SetConfig_Params_STRUCT_SIZE};
  cfg.pRangeProfilerObject = s->profiler;
  cfg.configSize = s->config_size;
  cfg.pConfig = s->config;
  cfg.counterDataImageSize = s->counter_data_size;
  cfg.pCounterDataImage = s->counter_data;
  cfg.range = CUPTI_AutoRange;
  cfg.replayMode = CUPTI_KernelReplay;
  cfg.maxRangesPerPass = s->max_ranges;
  cfg.numNestingLevels = 1;
  cfg.minNestingLevel = 1;
  cfg.passIndex = 0;
  cfg.targetNestingLevel = 1;
  r = cuptiRangeProfilerSetConfig(&cfg);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiRangeProfilerSetConfig", r);

  CUpti_RangeProfiler_Start_Params start = {.structSize = CUpti_RangeProfiler_Start_Params_STRUCT_SIZE};
  start.pRangeProfilerObject = s->profiler;
  r = cuptiRangeProfilerStart(&start);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiRangeProfilerStart", r);
  return 0;
}

int kl_metrics_end(kl_metrics_session *s, char *err, size_t n) {
  CUpti_RangeProfiler_Stop_Params stop = {.structSize = CUpti_RangeProfiler_Stop_Params_STRUCT_SIZE};
  stop.pRangeProfilerObject = s->profiler;
  CUptiResult r = cuptiRangeProfilerStop(&stop);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiRangeProfilerStop", r);
  if (!stop.isAllPassSubmitted) {
    snprintf(err, n, "kernel replay did not submit all %d passes", s->passes);
    return -1;
  }
  CUpti_RangeProfiler_DecodeData_Params dec = {.structSize = CUpti_RangeProfiler_DecodeData_Params_STRUCT_SIZE};
  dec.pRangeProfilerObject = s->profiler;
  r = cuptiRangeProfilerDecodeData(&dec);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiRangeProfilerDecodeData", r);
  CUpti_RangeProfiler_GetCounterDataInfo_Params info = {.structSize = CUpti_RangeProfiler_GetCounterDataInfo_Params_STRUCT_SIZE};
  info.pCounterDataImage = s->counter_data;
  info.counterDataImageSize = s->counter_data_size;
  r = cuptiRangeProfilerGetCounterDataInfo(&info);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiRangeProfilerGetCounterDataInfo", r);
  if (dec.numOfRangeDropped) {
    snprintf(err, n, "%zu kernels were not profiled: more than %zu ranges", dec.numOfRangeDropped,
             s->max_ranges);
    return -1;
  }
  return (int)info.numTotalRanges;
}

int kl_metrics_values(kl_metrics_session *s, size_t i, double *values, const char **name,
                      char *err, size_t n) {
  CUpti_Profiler_Host_GetRangeName_Params rn = {.structSize = CUpti_Profiler_Host_GetRangeName_Params_STRUCT_SIZE};
  rn.pCounterDataImage = s->counter_data;
  rn.counterDataImageSize = s->counter_data_size;
  rn.rangeIndex = i;
  rn.delimiter = "/";
  CUptiResult r = cuptiProfilerHostGetRangeName(&rn);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiProfilerHostGetRangeName", r);
  free(s->last_range_name); /* CUPTI hands the name to us to free */
  s->last_range_name = (char *)rn.pRangeName;
  *name = s->last_range_name;

  CUpti_Profiler_Host_EvaluateToGpuValues_Params ev = {.structSize = CUpti_Profiler_Host_EvaluateToGpuValues_Params_STRUCT_SIZE};
  ev.pHostObject = s->host;
  ev.pCounterDataImage = s->counter_data;
  ev.counterDataImageSize = s->counter_data_size;
  ev.rangeIndex = i;
  ev.ppMetricNames = (const char **)s->metrics;
  ev.numMetrics = s->nmetrics;
  ev.pMetricValues = values;
  r = cuptiProfilerHostEvaluateToGpuValues(&ev);
  if (r != CUPTI_SUCCESS) return fail(err, n, "cuptiProfilerHostEvaluateToGpuValues", r);
  return 0;
}

void kl_metrics_close(kl_metrics_session *s) {
  if (!s) return;
  if (s->profiler) {
    CUpti_RangeProfiler_Disable_Params d = {.structSize = CUpti_RangeProfiler_Disable_Params_STRUCT_SIZE};
    d.pRangeProfilerObject = s->profiler;
    cuptiRangeProfilerDisable(&d);
  }
  if (s->host) {
    CUpti_Profiler_Host_Deinitialize_Params d = {.structSize = CUpti_Profiler_Host_Deinitialize_Params_STRUCT_SIZE};
    d.pHostObject = s->host;
    cuptiProfilerHostDeinitialize(&d);
  }
  free(s->availability);
  free(s->config);
  free(s->counter_data);
  free(s->last_range_name);
  free(s);
}
