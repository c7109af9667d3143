/* libFuzzer target for the kl.match pattern compiler and matcher.
 *
 * The input encodes a pattern descriptor (what klineage/pattern.lua hands
 * to C) followed by CUDA text:
 *   byte 0      bit 0: shape (expr/stmts); bits 1-3: number of slots;
 *               bits 4-7: root kind, an index into root_names (>= count: none)
 *   then tokens until a 0xFF byte or the end, each:
 *     kind byte % 5: 0 literal, 1 directive, 2 meta, 3 sequence, 4 ellipsis
 *     literal/directive: a length byte (% 12 + 1), then the text
 *     meta: slot byte (may be out of range), sort byte (% 6)
 *     sequence: slot byte, ctx byte (% 4)
 *     ellipsis: slot byte (0xFE: none), ctx byte (% 4)
 *   after 0xFF: the source text, parsed with kl.source.
 * When bit 7 of byte 0 is set, bytes 1-6 also make one structural check.
 * A descriptor the compiler accepts is matched over that text and over a
 * fixed kernel with small work caps (per attempt and in all), and each
 * match is instantiated with a template naming every slot. Nothing may crash, leak or read out of
 * bounds; refusals are fine. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match/match.h"

static const char *const root_names[] = {"for", "if", "expr_stmt", "binary", "call", "index", "decl_stmt",
                                         "assign", "compound", "pragma", "ident", "while"};

static const char kernel[] =
    "__global__ void k(float *a, const float *b, int n) {\n"
    "  __shared__ float t[32][33];\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  #pragma unroll\n"
    "  for (int j = 0; j < n; ++j) { a[i] += b[j] * 2.0f; __syncthreads(); }\n"
    "  if (i < n) a[i] = a[i] + b[i];\n"
    "  @@ garbage f(a, b) @@;\n"
    "}\n";

static void exercise(km_pattern *p, const kl_unit *u) {
  km_index *ix = km_index_new(u);
  if (!ix) return;
  km_options o = {1, 2000, 64, 200000};
  km_results r = {0};
  if (km_match_set(ix, &p, 1, &o, &r) && r.n) {
    /* A template that uses every slot once, by name, separated by spaces. */
    char text[4096];
    uint32_t ub[256], ue[256];
    const char *un[256];
    size_t len = 0;
    uint32_t nu = 0;
    for (uint32_t s = 0; s < p->nslots && nu < 256; s++) {
      const char *name = km_slot_name(p, s);
      size_t n = strlen(name);
      if (len + n + 3 >= sizeof text) break;
      text[len++] = ' ';
      ub[nu] = (uint32_t)len;
      memcpy(text + len, name, n);
      len += n;
      ue[nu] = (uint32_t)len;
      un[nu++] = name;
    }
    km_template t = {text, len, nu, ub, ue, un};
    km_replacement reps[64];
    uint32_t nr = 0;
    char err[128];
    for (uint32_t m = 0; m < r.n && nr < 64; m++)
      if (km_instantiate(u, p, &r, &r.m[m], &t, &reps[nr], err, sizeof err)) nr++;
    size_t out_len;
    km_edit_script s = {0};
    char *out = km_apply(u->src, u->len, reps, nr, &out_len, &s, err, sizeof err);
    free(out);
    km_script_free(&s);
    for (uint32_t k = 0; k < nr; k++) km_replacement_free(&reps[k]);
  }
  km_results_free(&r);
  km_index_free(ix);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) return 0;
  km_ptoken tokens[256];
  char names[8][8];
  const char *name_ptrs[8];
  uint32_t nt = 0;
  size_t i = 1;
  uint8_t head = data[0];
  uint32_t nslots = (head >> 1) & 7;
  for (uint32_t s = 0; s < nslots; s++) {
    snprintf(names[s], sizeof names[s], "M%u", (unsigned)s);
    name_ptrs[s] = names[s];
  }
  while (i < size && data[i] != 0xFF && nt < 256) {
    km_ptoken *t = &tokens[nt];
    memset(t, 0, sizeof *t);
    t->row = 1;
    t->col = (uint32_t)nt + 1;
    t->slot = -1;
    uint8_t kind = data[i++] % 5;
    if (kind <= 1) {
      if (i >= size) break;
      size_t n = data[i++] % 12 + 1;
      if (i + n > size) break;
      t->kind = kind == 0 ? KM_PT_LITERAL : KM_PT_DIRECTIVE;
      t->text = (const char *)data + i;
      t->len = n;
      i += n;
    } else {
      if (i + 2 > size) break;
      uint8_t slot = data[i++], extra = data[i++];
      t->kind = kind == 2 ? KM_PT_META : kind == 3 ? KM_PT_SEQ : KM_PT_ELLIPSIS;
      t->slot = slot == 0xFE ? -1 : (int)(slot % 9) - 1;
      if (kind == 2) t->sort = (km_sort)(extra % 6);
      else t->sort = kind == 3 ? KM_SORT_SEQ : KM_SORT_EXPR;
      if (kind != 2) t->ctx = (km_ctx)(extra % 4);
    }
    nt++;
  }
  if (i < size && data[i] == 0xFF) i++;
  km_pattern_desc d = {0};
  d.tokens = tokens;
  d.ntokens = nt;
  d.shape = (head & 1) ? KM_SHAPE_STMTS : KM_SHAPE_EXPR;
  uint32_t root = head >> 4;
  d.root_kinds[0] = root < sizeof root_names / sizeof root_names[0] ? root_names[root] : NULL;
  d.slot_names = name_ptrs;
  d.nslots = nslots;
  /* One structural check, from the first bytes: any path, any kind. */
  int path[3] = { size > 1 ? data[1] % 4 : 0, size > 2 ? data[2] % 4 : 0, size > 3 ? data[3] % 4 : 0 };
  km_check_desc check = { path, size > 4 ? 1u + data[4] % 3 : 1u,
                          root_names[(size > 5 ? data[5] : 0) % (sizeof root_names / sizeof root_names[0])],
                          (size > 6 && (data[6] & 1)) ? "+" : NULL };
  d.checks = &check;
  d.nchecks = (head & 0x80) ? 1 : 0;
  char err[256];
  km_pattern *p = km_compile(&d, err, sizeof err);
  if (!p) return 0;
  kl_unit *u = kl_source_parse((const char *)data + i, size - i, "fuzz.cu");
  if (u) {
    exercise(p, u);
    kl_unit_free(u);
  }
  kl_unit *k = kl_source_parse(kernel, sizeof kernel - 1, "kernel.cu");
  if (k) {
    exercise(p, k);
    kl_unit_free(k);
  }
  km_pattern_free(p);
  return 0;
}
