/* A text dump of everything kl.source's analyses say about one unit:
 * constants, and per function kl_access_patterns, kl_shared_accesses and
 * kl_affine_of of every subscript, with every field. test_source_bounds
 * compares it with a golden recorded before the lookups were indexed
 * (tests/source/golden/affine.txt), so the faster analysis is shown to
 * give the very same answers on every repository kernel. */
#ifndef KL_TEST_AFFINE_DUMP_H
#define KL_TEST_AFFINE_DUMP_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "source/source.h"

static void dump_form(FILE *f, const kl_unit *u, const kl_affine *a) {
  fprintf(f, " terms=%u flags=%u rest=%u[", a->nterms, a->flags, a->nrest);
  for (uint32_t i = 0; i < a->nrest && i < 8; i++) fprintf(f, "%s%u", i ? "," : "", a->rest[i]);
  fprintf(f, "]");
  for (uint32_t i = 0; i < a->nterms; i++) {
    const kl_aterm *t = &a->terms[i];
    fprintf(f, " (v%u c%" PRId64, t->var, t->coef);
    if (t->var == KL_AV_LOOP)
      fprintf(f, " %.*s@%u", (int)t->var_len, u->src + t->var_off, t->loop_node);
    for (uint32_t s = 0; s < t->nsyms; s++)
      fprintf(f, " *%.*s", (int)t->syms[s].len, u->src + t->syms[s].off);
    fprintf(f, ")");
  }
}

static void dump_accesses(FILE *f, const kl_unit *u, const char *what, const kl_access *as,
                          uint32_t n) {
  for (uint32_t i = 0; i < n; i++) {
    const kl_access *a = &as[i];
    fprintf(f, "  %s p%u i%u w%u tx%u/%" PRId64 " co%u li%u loop%u ls%u/%" PRId64
               " vw%u eb%u bw%u",
            what, a->param, a->index_node, a->is_write, a->tx_stride_kind, a->tx_stride,
            a->coalesced, a->loop_invariant, a->loop_node, a->loop_stride_kind, a->loop_stride,
            a->vector_width, a->elem_bytes, a->bank_ways);
    dump_form(f, u, &a->form);
    fprintf(f, "\n");
  }
}

static void dump_unit(FILE *f, kl_unit *u, const char *name) {
  fprintf(f, "unit %s\n", name);
  uint32_t nc;
  const kl_const *cs = kl_unit_constants(u, &nc);
  for (uint32_t i = 0; i < nc; i++)
    fprintf(f, " const %.*s k%u known%u %" PRId64 "\n", (int)cs[i].name_len, u->src + cs[i].name_off,
            cs[i].kind, cs[i].known, cs[i].known ? cs[i].value : 0);
  uint32_t nf;
  const uint32_t *fns = kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &nf);
  for (uint32_t k = 0; k < nf; k++) {
    uint32_t fn = fns[k];
    fprintf(f, " function %u\n", fn);
    uint32_t n;
    kl_access *as = kl_access_patterns(u, fn, &n);
    dump_accesses(f, u, "global", as, n);
    free(as);
    as = kl_shared_accesses(u, fn, &n);
    dump_accesses(f, u, "shared", as, n);
    free(as);
    for (uint32_t i = fn; i < u->nodes[fn].subtree_end; i++) {
      if (u->nodes[i].kind != KL_N_INDEX) continue;
      uint32_t idx = kl_node_field(u, i, KL_F_INDEX);
      if (idx == KL_NONE) continue;
      kl_affine a;
      int ok = kl_affine_of(u, fn, idx, &a);
      fprintf(f, "  affine %u ok%d", idx, ok);
      dump_form(f, u, &a);
      fprintf(f, "\n");
    }
  }
}

#endif
