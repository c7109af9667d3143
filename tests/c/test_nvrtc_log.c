/* The NVRTC log readers: ptxas resource reports and diagnostics, on logs
 * captured from NVRTC 13.0. */
#include "core/nvrtc_log.h"
#include "harness.h"

static const char *TWO_KERNELS =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'tiled' for 'sm_90'\n"
    "ptxas info    : Function properties for tiled\n"
    "ptxas         .     16 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n"
    "ptxas info    : Used 168 registers, used 1 barriers, 8192 bytes smem, 400 bytes cmem[0]\n"
    "ptxas info    : Compiling entry function '_Z5saxpyifPKfPf' for 'sm_90'\n"
    "ptxas info    : Function properties for _Z5saxpyifPKfPf\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 0 barriers\n"
    "ptxas info    : Compile time = 4.211 ms\n";

static void ptxas_report(test_batch *t) {
  kl_ptxas_function f[4];
  int n = kl_ptxas_parse(TWO_KERNELS, f, 4);
  INT_EQ(t, n, 2, "two functions");
  STR_EQ(t, f[0].name, "tiled", "first name");
  INT_EQ(t, f[0].is_entry, 1, "entry");
  INT_EQ(t, f[0].registers, 168, "registers");
  INT_EQ(t, f[0].barriers, 1, "barriers");
  INT_EQ(t, f[0].smem, 8192, "smem");
  INT_EQ(t, f[0].cmem0, 400, "cmem0");
  INT_EQ(t, f[0].stack, 16, "stack");
  INT_EQ(t, f[0].spill_stores, 8, "spill stores");
  INT_EQ(t, f[0].spill_loads, 12, "spill loads");
  STR_EQ(t, f[1].name, "_Z5saxpyifPKfPf", "mangled name");
  INT_EQ(t, f[1].registers, 10, "second registers");
  INT_EQ(t, f[1].smem, 0, "no smem line means 0");
}

static void ptxas_device_function(test_batch *t) {
  /* A non-inlined device function has properties but is no entry. */
  const char *log =
      "ptxas info    : Function properties for _Z6helperi\n"
      "ptxas         .     24 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Compiling entry function 'k' for 'sm_80'\n"
      "ptxas info    : Function properties for k\n"
      "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 32 registers, used 0 barriers, 384 bytes cmem[0]\n";
  kl_ptxas_function f[4];
  int n = kl_ptxas_parse(log, f, 4);
  INT_EQ(t, n, 2, "helper and entry");
  INT_EQ(t, f[0].is_entry, 0, "helper is no entry");
  INT_EQ(t, f[0].stack, 24, "helper stack");
  INT_EQ(t, f[1].is_entry, 1, "k is an entry");
  INT_EQ(t, f[1].registers, 32, "k registers");
}

static void ptxas_overflow(test_batch *t) {
  kl_ptxas_function f[1];
  int n = kl_ptxas_parse(TWO_KERNELS, f, 1);
  INT_EQ(t, n, 2, "count reports all functions");
  STR_EQ(t, f[0].name, "tiled", "only the first is written");
  INT_EQ(t, kl_ptxas_parse("", f, 1), 0, "empty log");
}

static void diagnostic_with_caret(test_batch *t) {
  const char *log =
      "bad.cu(1): warning #177-D: variable \"y\" was declared but never referenced\n"
      "  int y;\n"
      "      ^\n"
      "\n"
      "bad.cu(3): error: identifier \"q\" is undefined\n"
      "    out[i] = q;\n"
      "             ^\n"
      "\n"
      "1 error detected in the compilation of \"bad.cu\".\n";
  kl_diagnostic d;
  INT_EQ(t, kl_nvrtc_first_diagnostic(log, &d), 1, "found");
  STR_EQ(t, d.file, "bad.cu", "file");
  INT_EQ(t, d.line, 3, "line of the error, not the warning");
  INT_EQ(t, d.col, 12, "column from the caret, less EDG's indent");
  STR_EQ(t, d.severity, "error", "severity");
  STR_EQ(t, d.message, "identifier \"q\" is undefined", "message");
}

static void diagnostic_paths_and_fallbacks(test_batch *t) {
  kl_diagnostic d;
  const char *log = "dir(x)/k.cu(12): catastrophic error: cannot open source file \"nope.h\"\n";
  INT_EQ(t, kl_nvrtc_first_diagnostic(log, &d), 1, "catastrophic");
  STR_EQ(t, d.file, "dir(x)/k.cu", "parentheses inside the path");
  INT_EQ(t, d.line, 12, "line");
  INT_EQ(t, d.col, 0, "no caret line");
  STR_EQ(t, d.severity, "catastrophic error", "severity");

  INT_EQ(t, kl_nvrtc_first_diagnostic("nvrtc: error: invalid value for --gpu-architecture\n", &d), 0,
         "no located diagnostic");
  STR_EQ(t, d.message, "nvrtc: error: invalid value for --gpu-architecture", "first line kept");

  log = "k.cu(2): warning #550-D: set but never used\n  x = 1;\n  ^\n";
  INT_EQ(t, kl_nvrtc_first_diagnostic(log, &d), 1, "a warning when no error");
  STR_EQ(t, d.severity, "warning", "warning severity");
  INT_EQ(t, d.col, 1, "warning column");
}

/* NVRTC 13.0 leaves ptxas's error out of the log when ptxas runs with -v:
 * the verbose log alone shows no error, and kl.nvrtc compiles again
 * without -v, putting the error line before the report. */
static const char *SMEM_TOO_LARGE_VERBOSE =
    "ptxas info    : 0 bytes gmem\n"
    "ptxas info    : Compiling entry function 'k' for 'sm_90'\n"
    "ptxas info    : Function properties for k\n"
    "ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
    "ptxas info    : Used 10 registers, used 1 barriers, 67108864 bytes smem\n"
    "ptxas info    : Compile time = 4.116 ms\n";
#define SMEM_ERROR "ptxas error   : Entry function 'k' uses too much shared data (0x4000000 bytes, 0xc000 max)"

static void ptxas_error_lines(test_batch *t) {
  kl_diagnostic d;
  INT_EQ(t, kl_nvrtc_log_has_error(SMEM_TOO_LARGE_VERBOSE), 0, "the verbose log hides the error");
  INT_EQ(t, kl_nvrtc_first_diagnostic(SMEM_TOO_LARGE_VERBOSE, &d), 0, "no diagnostic in the verbose log");
  STR_EQ(t, d.message, "ptxas info    : 0 bytes gmem", "only its first line (what kl.nvrtc used to show)");

  char both[2048];
  snprintf(both, sizeof both, "%s\n%s", SMEM_ERROR, SMEM_TOO_LARGE_VERBOSE);
  INT_EQ(t, kl_nvrtc_log_has_error(both), 1, "the quiet log's error");
  INT_EQ(t, kl_nvrtc_first_diagnostic(both, &d), 0, "no location");
  STR_EQ(t, d.message, SMEM_ERROR, "ptxas's own line, not the report's first");

  /* after the report, and after a warning of the front end: still the cause */
  snprintf(both, sizeof both, "k.cu(2): warning #550-D: set but never used\n  x = 1;\n  ^\n%s%s\n",
           SMEM_TOO_LARGE_VERBOSE, SMEM_ERROR);
  INT_EQ(t, kl_nvrtc_first_diagnostic(both, &d), 0, "an unlocated error outranks a warning");
  STR_EQ(t, d.message, SMEM_ERROR, "the error line");

  INT_EQ(t, kl_nvrtc_log_has_error("ptxas info    : Compiling entry function 'error' for 'sm_90'\n"
                                   "ptxas info    : Function properties for error\n"
                                   "ptxas info    : Used 8 registers, used 0 barriers\n"), 0,
         "a kernel named error is no error");
  INT_EQ(t, kl_nvrtc_log_has_error("ptxas fatal   : Unresolved extern function 'f'\n"), 1, "fatal");
  INT_EQ(t, kl_nvrtc_log_has_error("bad.cu(3): error: identifier \"q\" is undefined\n"), 1, "located error");
  INT_EQ(t, kl_nvrtc_log_has_error("k.cu(2): warning #550-D: set but never used\n"), 0, "a warning only");
}

int main(void) {
  test_batch t = {0, 0};
  ptxas_report(&t);
  ptxas_device_function(&t);
  ptxas_overflow(&t);
  diagnostic_with_caret(&t);
  diagnostic_paths_and_fallbacks(&t);
  ptxas_error_lines(&t);
  return kl_test_finish(&t);
}
