/* kl.source under inputs shaped to hit superlinear paths: what each bound
 * guarantees (bounded diagnostics, linear bracket matching, recycled
 * memory that leaks no state) and that the indexed lookups of the affine
 * analysis answer exactly as the scans they replaced (a golden recorded
 * before the change, on every repository kernel). Never timing: the
 * times are bench/source_bounds.lua's. */
#include <glob.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "affine_dump.h"
#include "harness.h"
#include "source/source.h"

static kl_unit *parse_n(const char *s, size_t n) { return kl_source_parse(s, n, "bounds.cu"); }

static int round_trips(const kl_unit *u, const char *s, size_t n) {
  size_t len;
  char *out = kl_unit_print(u, &len);
  int ok = out && len == n && memcmp(out, s, n) == 0;
  free(out);
  return ok;
}

static uint32_t count_id(const kl_unit *u, const char *id) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < u->ndiags; i++) n += strcmp(u->diags[i].id, id) == 0;
  return n;
}

/* Every id at most KL_SOURCE_DIAG_CAP times, KLS006 at most once and last,
 * present exactly when something was suppressed. */
static int diags_bounded(const kl_unit *u) {
  static const char *const ids[] = {"KLS001", "KLS002", "KLS003", "KLS004", "KLS005"};
  for (size_t k = 0; k < sizeof ids / sizeof ids[0]; k++)
    if (count_id(u, ids[k]) > KL_SOURCE_DIAG_CAP) return 0;
  uint32_t n6 = count_id(u, "KLS006");
  if (n6 != (u->ndiags_suppressed ? 1u : 0u)) return 0;
  if (n6 && strcmp(u->diags[u->ndiags - 1].id, "KLS006") != 0) return 0;
  return u->ndiags <= 5 * KL_SOURCE_DIAG_CAP + 1;
}

static char *random_bytes(size_t n, uint32_t seed) {
  char *s = malloc(n);
  uint32_t x = seed;
  for (size_t i = 0; i < n; i++) {
    x = x * 1103515245u + 12345u;
    s[i] = (char)(x >> 16);
  }
  return s;
}

static void test_diagnostics(test_batch *t) {
  size_t n = 1 << 20;
  char *s = random_bytes(n, 7);
  kl_unit *u = parse_n(s, n);
  OK(t, u && round_trips(u, s, n), "1 MB of random bytes round-trips");
  OK(t, u && diags_bounded(u), "random bytes: every id capped, KLS006 last");
  OK(t, u && u->ndiags_suppressed > 0 && count_id(u, "KLS006") == 1,
     "random bytes: the suppressed ones are counted and said");
  /* the suppressed range lies within the unit */
  if (u && u->ndiags) {
    const kl_diag *last = &u->diags[u->ndiags - 1];
    OK(t, last->tok_begin <= last->tok_end && last->tok_end <= u->ntokens,
       "KLS006 covers a token range of the unit");
  }
  kl_unit_free(u);
  free(s);

  s = malloc(n);
  memset(s, 0xff, n);
  u = parse_n(s, n);
  OK(t, u && round_trips(u, s, n), "1 MB of 0xFF round-trips");
  INT_EQ(t, u ? count_id(u, "KLS004") : 0, 1, "1 MB of 0xFF is one invalid-byte diagnostic");
  for (uint32_t i = 0; u && i < u->ndiags; i++)
    if (strcmp(u->diags[i].id, "KLS004") == 0)
      OK(t, u->diags[i].tok_begin == 0 && u->diags[i].tok_end == u->ntokens - 1,
         "the KLS004 run covers every invalid byte");
  OK(t, u && u->ndiags <= 3 && u->ndiags_suppressed == 0, "0xFF: a handful of diagnostics");
  kl_unit_free(u);
  free(s);

  /* runs merge only when the tokens are adjacent */
  const char *two = "a \xff x \xfe b \xff\xfe\xfd c";
  u = parse_n(two, strlen(two));
  INT_EQ(t, count_id(u, "KLS004"), 3, "separate invalid bytes stay separate, a run is one");
  kl_unit_free(u);

  /* 10k unclosed brackets separated by names: capped, not one each */
  size_t m = 0;
  s = malloc(20000 * 2 + 1);
  for (int i = 0; i < 20000; i++) {
    s[m++] = '(';
    s[m++] = 'x';
  }
  u = parse_n(s, m);
  OK(t, u && diags_bounded(u) && count_id(u, "KLS003") == KL_SOURCE_DIAG_CAP,
     "unclosed brackets are capped at KL_SOURCE_DIAG_CAP");
  OK(t, u && u->ndiags_suppressed == 20000 - KL_SOURCE_DIAG_CAP, "and the rest are counted");
  OK(t, u && round_trips(u, s, m), "unclosed brackets round-trip");
  kl_unit_free(u);
  free(s);
}

/* The bracket matcher knows how many openers of each kind are open: a
 * closer of a kind none is open of fails at once (this was a scan of the
 * whole stack), and the matching itself is unchanged. */
static void test_brackets(test_batch *t) {
  kl_unit *u = parse_n("([)]", 4);
  OK(t, u->tokens[0].match == 2 && u->tokens[2].match == 0, "( pairs with ) across [");
  OK(t, u->tokens[1].match == KL_NONE && u->tokens[3].match == KL_NONE,
     "[ is left unclosed, ] unbalanced");
  kl_unit_free(u);
  u = parse_n("(] )", 4);
  OK(t, u->tokens[0].match == 2 && u->tokens[1].match == KL_NONE,
     "a closer of a kind not open skips nothing");
  kl_unit_free(u);

  size_t n = 1 << 19, len = 2 * n;
  char *s = malloc(len);
  memset(s, '(', n);
  memset(s + n, ']', n);
  u = parse_n(s, len);
  OK(t, u && round_trips(u, s, len), "512k ( then 512k ] round-trip");
  OK(t, u && u->tokens[0].match == KL_NONE && u->tokens[len - 1].match == KL_NONE,
     "no ] matches a (");
  OK(t, u && count_id(u, "KLS003") == 2, "one run of unbalanced ], one of unclosed (");
  kl_unit_free(u);
  free(s);
}

/* A hash of every array parse fills: recycled blocks carry old contents,
 * so anything read before written would show up as a difference. */
static uint64_t unit_hash(const kl_unit *u) {
  uint64_t h = 1469598103934665603ull;
#define MIX(p, n)                                                                        \
  do {                                                                                   \
    const unsigned char *b_ = (const unsigned char *)(p);                                \
    for (size_t i_ = 0; i_ < (size_t)(n); i_++) h = (h ^ b_[i_]) * 1099511628211ull;      \
  } while (0)
  MIX(u->tokens, (size_t)u->ntokens * sizeof *u->tokens);
  MIX(u->nodes, (size_t)u->nnodes * sizeof *u->nodes);
  MIX(u->kids, (size_t)u->nkids * sizeof *u->kids);
  MIX(u->kid_field, u->nkids);
  MIX(u->by_kind, (size_t)u->nnodes * sizeof *u->by_kind);
  MIX(u->kind_start, sizeof u->kind_start);
  for (uint32_t i = 0; i < u->ndiags; i++) {
    MIX(u->diags[i].id, strlen(u->diags[i].id));
    MIX(&u->diags[i].tok_begin, 4 * sizeof(uint32_t));
  }
#undef MIX
  return h;
}

static char *kernel_text(size_t copies, int variant, size_t *len) {
  const char *k = variant ? "template <int B> __device__ int g(int x) { return x * B + (x >> 2); }\n"
                            "__global__ void v(int *o) { o[threadIdx.x] = g<4>(threadIdx.x) @ 1; }\n"
                          : "#define TILE 32\n"
                  "__global__ void k(const float *__restrict__ a, float *b, int n) {\n"
                  "  __shared__ float s[TILE][TILE + 1];\n"
                  "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
                  "  for (int j = 0; j < n; j += TILE) { s[threadIdx.y][threadIdx.x] = a[i + j]; }\n"
                  "  if (i < n) b[i] = s[threadIdx.x][threadIdx.y] * 2.0f; /* c */\n"
                  "}\n";
  size_t kl = strlen(k);
  char *s = malloc(kl * copies + 1);
  for (size_t i = 0; i < copies; i++) memcpy(s + i * kl, k, kl);
  *len = kl * copies;
  s[*len] = '\0';
  return s;
}

static void test_pool(test_batch *t) {
  kl_source_trim();
  INT_EQ(t, kl_source_pooled_bytes(), 0, "trim empties the pool");
  size_t big_len, small_len;
  char *big = kernel_text(20000, 0, &big_len);     /* ~7 MB: blocks of tens of MB */
  char *small = kernel_text(30000, 1, &small_len); /* other text, blocks of the same classes */
  kl_unit *u = parse_n(big, big_len);
  uint64_t fresh = unit_hash(u);
  kl_unit_free(u);
  OK(t, kl_source_pooled_bytes() > 0, "a large unit's arrays are kept for reuse");
  OK(t, kl_source_pooled_bytes() <= KL_SOURCE_POOL_MAX, "the pool stays under its bound");
  /* another unit parsed into the big unit's recycled blocks equals its
   * fresh parse */
  kl_source_trim();
  kl_unit *s0 = parse_n(small, small_len);
  uint64_t small_fresh = unit_hash(s0);
  kl_unit_free(s0);
  kl_source_trim();
  u = parse_n(big, big_len);
  kl_unit_free(u);
  s0 = parse_n(small, small_len);
  OK(t, unit_hash(s0) == small_fresh, "a unit parsed into recycled blocks equals a fresh one");
  OK(t, round_trips(s0, small, small_len), "and round-trips");
  kl_unit_free(s0);
  for (int r = 0; r < 3; r++) {
    u = parse_n(big, big_len);
    OK(t, unit_hash(u) == fresh, "parsing again into recycled blocks gives the same unit");
    kl_unit_free(u);
    OK(t, kl_source_pooled_bytes() <= KL_SOURCE_POOL_MAX, "bounded after every free");
  }
  kl_source_trim();
  INT_EQ(t, kl_source_pooled_bytes(), 0, "trim gives everything back");
  free(big);
  free(small);
}

/* ---- the affine analysis ------------------------------------------------------- */

static const char *repo_root(void) {
  const char *env = getenv("KL_SOURCE_ROOT");
  if (env && *env) return env;
  /* this file is ROOT/tests/c/test_source_bounds.c (CMake compiles it by
   * its absolute path) */
  static char root[4096];
  const char *f = __FILE__, *tail = strstr(f, "/tests/c/test_source_bounds.c");
  if (!tail || (size_t)(tail - f) >= sizeof root) return ".";
  memcpy(root, f, (size_t)(tail - f));
  root[tail - f] = '\0';
  return root;
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t cap = 0, n = 0;
  for (;;) {
    if (n + 65536 + 1 > cap) {
      cap = (n + 65536 + 1) * 2;
      char *b = realloc(buf, cap);
      if (!b) break;
      buf = b;
    }
    size_t got = fread(buf + n, 1, 65536, f);
    n += got;
    if (got < 65536) break;
  }
  fclose(f);
  if (buf) buf[n] = '\0';
  *len = n;
  return buf;
}

/* Every repository kernel's constants, access patterns, shared accesses
 * and affine forms, dumped, equal the golden recorded with the scanning
 * lookups (commit 726d4ac). When a parser change moves the trees, rerun
 * with KL_WRITE_GOLDEN=1 and review the diff. */
static void test_golden(test_batch *t) {
  const char *root = repo_root();
  char pattern[4200];
  snprintf(pattern, sizeof pattern, "%s/gpu/workloads/*/*.cu", root);
  glob_t g;
  if (glob(pattern, 0, NULL, &g) != 0) {
    OK(t, 0, "repository kernels found");
    return;
  }
  OK(t, g.gl_pathc >= 20, "repository kernels found");
  char *dump = NULL;
  size_t dump_len = 0;
  FILE *out = open_memstream(&dump, &dump_len);
  size_t skip = strlen(root) + 1;
  for (size_t i = 0; out && i < g.gl_pathc; i++) {
    size_t len;
    char *text = read_file(g.gl_pathv[i], &len);
    if (!text) continue;
    kl_unit *u = kl_source_parse(text, len, g.gl_pathv[i] + skip);
    if (u) dump_unit(out, u, g.gl_pathv[i] + skip);
    kl_unit_free(u);
    free(text);
  }
  globfree(&g);
  if (out) fclose(out);
  char golden_path[4200];
  snprintf(golden_path, sizeof golden_path, "%s/tests/source/golden/affine.txt", root);
  if (getenv("KL_WRITE_GOLDEN")) {
    FILE *f = fopen(golden_path, "wb");
    OK(t, f && fwrite(dump, 1, dump_len, f) == dump_len, "golden written");
    if (f) fclose(f);
  }
  size_t glen = 0;
  char *golden = read_file(golden_path, &glen);
  OK(t, golden != NULL, "golden readable");
  int same = golden && dump && glen == dump_len && memcmp(golden, dump, glen) == 0;
  OK(t, same, "analyses of every repository kernel equal the golden of the scanning lookups");
  if (!same && golden && dump) {
    size_t k = 0;
    while (k < glen && k < dump_len && golden[k] == dump[k]) k++;
    size_t b = k > 200 ? k - 200 : 0;
    fprintf(stderr, "  first difference at byte %zu:\n  got  ...%.300s\n  want ...%.300s\n", k,
            dump + b, golden + b);
  }
  free(golden);
  free(dump);
}

/* The access of one statement of a 40k-statement kernel has the form it has
 * in a 4-statement kernel: no lookup gives up with size (the scans ran out
 * of work after 32k statements and dropped the accesses after them). */
static void test_many_statements(test_batch *t) {
  size_t cap = 64u << 20, n = 0;
  char *s = malloc(cap);
  n += (size_t)snprintf(s + n, cap - n,
                        "__global__ void k(const float *a, float *out, int n) {\n"
                        "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n  float acc = 0.0f;\n");
  for (int k = 1; k <= 20000; k++)
    n += (size_t)snprintf(s + n, cap - n, "  float v%d = a[i + %d];\n  acc += v%d * out[i * n + %d];\n",
                          k, k, k, k);
  n += (size_t)snprintf(s + n, cap - n, "  out[i] = acc;\n}\n");
  kl_unit *u = parse_n(s, n);
  uint32_t nf;
  const uint32_t *fns = kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &nf);
  uint32_t na = 0;
  kl_access *as = nf ? kl_access_patterns(u, fns[0], &na) : NULL;
  INT_EQ(t, na, 40001, "every access of 40k statements is found");
  int reads_ok = 1, symbolic_ok = 1;
  for (uint32_t i = 0; i + 1 < na; i += 2) {
    reads_ok &= as[i].tx_stride_kind == KL_STRIDE_CONST && as[i].tx_stride == 1 &&
                as[i].coalesced && !as[i].is_write;
    symbolic_ok &= as[i + 1].tx_stride_kind == KL_STRIDE_SYMBOLIC && !as[i + 1].coalesced;
  }
  OK(t, na && reads_ok, "a[i + k]: stride 1 along threadIdx.x, coalesced, all 20k of them");
  OK(t, na && symbolic_ok, "out[i * n + k]: symbolic stride n, all 20k of them");
  /* the last access, a write through the same local, as in a small kernel */
  OK(t, na && as[na - 1].is_write && as[na - 1].tx_stride == 1, "out[i] = acc: a coalesced write");
  free(as);
  kl_unit_free(u);
  free(s);
}

/* 20k parameters: each access finds its own parameter. */
static void test_many_params(test_batch *t) {
  size_t cap = 8u << 20, n = 0;
  char *s = malloc(cap);
  n += (size_t)snprintf(s + n, cap - n, "__global__ void k(");
  for (int k = 1; k <= 20000; k++)
    n += (size_t)snprintf(s + n, cap - n, "%sfloat *p%d", k > 1 ? ", " : "", k);
  n += (size_t)snprintf(s + n, cap - n, ", float *p1) {\n");
  for (int k = 1; k <= 20000; k++)
    n += (size_t)snprintf(s + n, cap - n, "  p%d[threadIdx.x] = 0;\n", k);
  n += (size_t)snprintf(s + n, cap - n, "}\n");
  kl_unit *u = parse_n(s, n);
  uint32_t nf;
  const uint32_t *fns = kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &nf);
  uint32_t na = 0;
  kl_access *as = nf ? kl_access_patterns(u, fns[0], &na) : NULL;
  INT_EQ(t, na, 20000, "one access per parameter");
  uint32_t params = nf ? kl_node_field(u, fns[0], KL_F_PARAMS) : KL_NONE;
  int own = na == 20000 && params != KL_NONE;
  for (uint32_t i = 0; own && i < na; i++) own = as[i].param == kl_child(u, params, i);
  OK(t, own, "each access is of its own parameter (a repeated name means the first)");
  free(as);
  kl_unit_free(u);
  free(s);
}

/* 100k #defines, each naming the one before and the first. */
static void test_many_defines(test_batch *t) {
  size_t cap = 8u << 20, n = 0;
  char *s = malloc(cap);
  n += (size_t)snprintf(s + n, cap - n, "#define D0 1\n");
  for (int k = 1; k < 100000; k++)
    n += (size_t)snprintf(s + n, cap - n, "#define D%d (D%d + D0)\n", k, k - 1);
  n += (size_t)snprintf(s + n, cap - n,
                        "#define R 5\n#define S R\n#define R 7\n#define T R\n"
                        "__global__ void k(float *a) { a[threadIdx.x * R + D99999] = 0; }\n");
  kl_unit *u = parse_n(s, n);
  uint32_t nc;
  const kl_const *cs = kl_unit_constants(u, &nc);
  INT_EQ(t, nc, 100004, "every #define is a constant");
  OK(t, nc == 100004 && cs[99999].known && cs[99999].value == 100000, "D99999 = 100000");
  OK(t, nc == 100004 && cs[100001].value == 5 && cs[100003].value == 7,
     "a name means its latest definition before the use");
  uint32_t nf;
  const uint32_t *fns = kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &nf);
  uint32_t na = 0;
  kl_access *as = nf ? kl_access_patterns(u, fns[0], &na) : NULL;
  OK(t, na == 1 && as[0].tx_stride == 7, "code sees the last definition (R = 7)");
  int has_const = 0;
  for (uint32_t i = 0; na && i < as[0].form.nterms; i++)
    has_const |= as[0].form.terms[i].var == KL_AV_CONST && as[0].form.terms[i].coef == 100000;
  OK(t, has_const, "and folds D99999");
  free(as);
  kl_unit_free(u);
  free(s);
}

/* Deep nesting: 400 nested loops with wide subscripts below them. Each
 * access's work is capped, so the answers stay bounded; the shallow ones
 * are exact. */
static void test_deep_loops(test_batch *t) {
  size_t cap = 16u << 20, n = 0;
  char *s = malloc(cap);
  n += (size_t)snprintf(s + n, cap - n, "__global__ void k(float *a, int n) {\n  a[threadIdx.x] = 0;\n");
  for (int d = 1; d <= 400; d++)
    n += (size_t)snprintf(s + n, cap - n, "for (int j%d = 0; j%d < n; j%d++) {\n", d, d, d);
  /* 100 subscripts of the 12 innermost loops' variables (a form holds at
   * most KL_AFFINE_MAX_TERMS terms), then 100 of the 12 outermost ones
   * (800 levels up, past the 511 the lookup looks) */
  for (int r = 0; r < 200; r++) {
    n += (size_t)snprintf(s + n, cap - n, "a[j%d", r < 100 ? 400 : 1);
    for (int k = 1; k < 12; k++) n += (size_t)snprintf(s + n, cap - n, " + j%d", r < 100 ? 400 - k : 1 + k);
    n += (size_t)snprintf(s + n, cap - n, "] = 0;\n");
  }
  for (int d = 0; d < 400; d++) s[n++] = '}';
  n += (size_t)snprintf(s + n, cap - n, "}\n");
  kl_unit *u = parse_n(s, n);
  uint32_t nf;
  const uint32_t *fns = kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &nf);
  uint32_t na = 0;
  kl_access *as = nf ? kl_access_patterns(u, fns[0], &na) : NULL;
  INT_EQ(t, na, 201, "every access below 400 loops is found");
  OK(t, na && as[0].tx_stride_kind == KL_STRIDE_CONST && as[0].tx_stride == 1,
     "the shallow access is exact");
  int near = na == 201, far = na == 201;
  for (uint32_t i = 1; near && i <= 100; i++)
    near = as[i].form.nrest == 0 && as[i].form.nterms == 12 &&
           as[i].loop_stride_kind == KL_STRIDE_CONST && as[i].loop_stride == 1;
  for (uint32_t i = 101; far && i <= 200; i++)
    far = as[i].form.nrest > 0 && as[i].loop_stride_kind == KL_STRIDE_UNKNOWN;
  OK(t, near, "loop variables up to 24 levels up, 400 loops deep: exact, one term each");
  OK(t, far, "loop variables 800 levels up: not affine, a bounded verdict");
  free(as);
  kl_unit_free(u);
  free(s);
}

int main(void) {
  test_batch t = {0, 0};
  test_diagnostics(&t);
  test_brackets(&t);
  test_pool(&t);
  test_golden(&t);
  test_many_statements(&t);
  test_many_params(&t);
  test_many_defines(&t);
  test_deep_loops(&t);
  return kl_test_finish(&t);
}
