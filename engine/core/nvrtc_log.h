/* Reading the NVRTC program log: the ptxas resource report (from
 * --ptxas-options=-v) and the first diagnostic with its location. Pure
 * string parsing, no NVRTC calls, so it is unit-tested on canned logs. */
#ifndef KL_NVRTC_LOG_H
#define KL_NVRTC_LOG_H

#include <stddef.h>

/* Resources of one compiled function, as ptxas reports them. A field that
 * the report does not mention stays 0. */
typedef struct {
  char name[256];   /* mangled or extern "C" name */
  int is_entry;     /* a __global__ function ("Compiling entry function") */
  int registers;
  int barriers;
  long smem;        /* static shared memory, bytes */
  long cmem0;       /* constant bank 0, bytes (kernel parameters live here) */
  long stack;       /* stack frame, bytes */
  long spill_stores;
  long spill_loads;
} kl_ptxas_function;

/* Parses every function of the report into out[0..max). Returns how many
 * functions the report has (which can exceed max: only max are written). */
int kl_ptxas_parse(const char *log, kl_ptxas_function *out, int max);

/* The first "error" diagnostic of an NVRTC log. */
typedef struct {
  char file[256];
  int line;          /* 1-based; 0 when the log names no line */
  int col;           /* 1-based, from the caret line; 0 when absent */
  char severity[24]; /* "error", "warning", "catastrophic error" */
  char message[512];
} kl_diagnostic;

/* Fills d from the first error with a location in the log. Returns 1 when
 * one was found. Otherwise, when a line reports an error with no location
 * (ptxas: "ptxas error   : Entry function 'k' uses too much shared data
 * ..."), returns 0 with that line in d->message; failing that, returns 1
 * for the first located warning; else 0 with the first non-empty line of
 * the log in d->message. */
int kl_nvrtc_first_diagnostic(const char *log, kl_diagnostic *d);

/* 1 when the log reports an error (located or not), 0 when it holds only
 * warnings and reports. NVRTC leaves ptxas's error line out of the log of
 * a compile run with --ptxas-options=-v: kl.nvrtc checks with this and
 * compiles again without -v to get it. */
int kl_nvrtc_log_has_error(const char *log);

#endif
