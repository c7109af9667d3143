/* libFuzzer target for kl.source: any input must parse, print back byte for
 * byte, keep its tree invariants and survive every analysis. Build with
 * -DKL_FUZZ=ON and clang (tests/CMakeLists.txt, the kl.source block). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "source/source.h"

static int visit(const kl_unit *u, uint32_t n, void *ud) {
  (void)ud;
  size_t len;
  const char *s = kl_node_text(u, n, &len);
  if (len && (s < u->src || s + len > u->src + u->len)) abort();
  if (!kl_node_equal(u, n, u, n)) abort();
  return KL_WALK_CONTINUE;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  kl_unit *u = kl_source_parse((const char *)data, size, "fuzz");
  if (!u) return 0;
  size_t len;
  char *out = kl_unit_print(u, &len);
  if (!out || len != size || (size && memcmp(out, data, size) != 0)) abort();
  free(out);
  for (uint32_t n = 1; n < u->nnodes; n++) {
    const kl_node *nd = &u->nodes[n];
    if (nd->parent >= n || nd->subtree_end > u->nodes[nd->parent].subtree_end) abort();
    if (nd->tok_end > u->ntokens || nd->tok_begin > nd->tok_end) abort();
  }
  kl_walk(u, 0, visit, NULL);
  /* bounded diagnostics: at most KL_SOURCE_DIAG_CAP per id (5 ids), one
   * KLS006 and last exactly when some were suppressed, ranges in the unit */
  if (u->ndiags > 5 * KL_SOURCE_DIAG_CAP + 1) abort();
  uint32_t n6 = 0;
  for (uint32_t i = 0; i < u->ndiags; i++) {
    const kl_diag *d = &u->diags[i];
    if (d->tok_begin > d->tok_end || d->tok_end > u->ntokens) abort();
    if (strcmp(d->id, "KLS006") == 0 && (n6++ || i != u->ndiags - 1)) abort();
  }
  if ((n6 != 0) != (u->ndiags_suppressed != 0)) abort();
  uint32_t nc;
  kl_unit_constants(u, &nc);
  uint32_t nf;
  const uint32_t *fns = kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &nf);
  for (uint32_t i = 0; i < nf; i++) {
    uint32_t na;
    kl_access *as = kl_access_patterns(u, fns[i], &na);
    free(as);
    as = kl_shared_accesses(u, fns[i], &na);
    free(as);
  }
  /* every subscript's affine form, alternating functions: the lookup index
   * cached on the unit is rebuilt for each */
  for (uint32_t i = 0; i < nf; i++) {
    uint32_t fn = fns[nf - 1 - i];
    for (uint32_t n = fn; n < u->nodes[fn].subtree_end; n++) {
      if (u->nodes[n].kind != KL_N_INDEX) continue;
      uint32_t idx = kl_node_field(u, n, KL_F_INDEX);
      kl_affine f;
      if (idx != KL_NONE) kl_affine_of(u, fn, idx, &f);
      if (idx != KL_NONE && nf > 1) kl_affine_of(u, fns[0], idx, &f); /* a site outside fn */
    }
  }
  kl_unit_free(u);
  return 0;
}
