// expect: ok on emu (the worker's environment holds no secret to find)
// A saxpy whose thread 0 looks through its worker's environment (environ,
// and /proc/self/environ, which keeps the one the process started with)
// for a credential: a value holding "kl-secret-canary", a name ending in
// _API_KEY or starting with KLINEAGE_LLM_. Finding one, it says so on
// stderr and spoils every output, so the gate gives `wrong`.
#ifdef KL_EMU
#include <stdio.h>
#include <string.h>
#include <unistd.h>
extern char **environ;
static int kl_secret(const char *entry) {
  const char *eq = strchr(entry, '=');
  size_t name = eq ? (size_t)(eq - entry) : strlen(entry);
  if (strstr(entry, "kl-secret-canary")) return 1;
  if (strncmp(entry, "KLINEAGE_LLM_", 13) == 0) return 1;
  return name >= 8 && strncmp(entry + name - 8, "_API_KEY", 8) == 0;
}
static int kl_found_secret(void) {
  for (char **e = environ; *e; e++)
    if (kl_secret(*e)) return fprintf(stderr, "env_secrets.cu: environ holds %.40s\n", *e), 1;
  FILE *f = fopen("/proc/self/environ", "rb");
  if (!f) return 0;
  static char buf[1 << 16];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = 0;
  for (size_t at = 0; at < n; at += strlen(buf + at) + 1)
    if (kl_secret(buf + at)) return fprintf(stderr, "env_secrets.cu: /proc/self/environ holds %.40s\n", buf + at), 1;
  return 0;
}
#endif
#define BLOCK 256
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  float spoil = 0.0f;
#ifdef KL_EMU
  static int found = -1;
  if (found < 0) found = kl_found_secret(); // the first thread looks, before any writes
  if (found) spoil = 1.0f;
#endif
  if (i < n) y[i] = a * x[i] + y[i] + spoil;
}
