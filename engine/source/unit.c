/* The unit's lifecycle: parse (lex, balance, structure, layout) and free. */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

int kl_diag_add(kl_unit *u, const char *id, const char *message, uint32_t tok_begin,
                uint32_t tok_end) {
  /* capacity doubles at powers of two */
  if ((u->ndiags & (u->ndiags - 1)) == 0 && u->ndiags >= 8) {
    kl_diag *d = realloc(u->diags, (size_t)u->ndiags * 2 * sizeof *d);
    if (!d) return 0;
    u->diags = d;
  } else if (u->ndiags == 0) {
    u->diags = malloc(8 * sizeof *u->diags);
    if (!u->diags) return 0;
  }
  u->diags[u->ndiags++] = (kl_diag){id, message, tok_begin, tok_end, 0, 0};
  return 1;
}

/* diagnostics in source order; ties keep the stage order (lexer first) */
static int diag_order(const void *a, const void *b) {
  const kl_diag *x = a, *y = b;
  if (x->tok_begin != y->tok_begin) return x->tok_begin < y->tok_begin ? -1 : 1;
  return strcmp(x->id, y->id);
}

kl_unit *kl_source_parse(const char *text, size_t len, const char *name) {
  if (len >= UINT32_MAX) return NULL;
  kl_unit_impl *ui = calloc(1, sizeof *ui);
  if (!ui) return NULL;
  kl_unit *u = &ui->u;
  if (!name) name = "<input>";
  u->name = strdup(name);
  u->src = kl_src_alloc(len + 1, &ui->src_cap);
  if (!u->name || !u->src) goto fail;
  if (len) memcpy(u->src, text, len);
  u->src[len] = '\0';
  u->len = (uint32_t)len;
  if (!kl_lex(u) || !kl_balance(u) || !kl_parse(u)) goto fail;
  if (u->ndiags > 1) qsort(u->diags, u->ndiags, sizeof *u->diags, diag_order);
  for (uint32_t i = 0; i < u->ndiags; i++) {
    uint32_t t = u->diags[i].tok_begin < u->ntokens ? u->diags[i].tok_begin : u->ntokens - 1;
    u->diags[i].line = u->tokens[t].line;
    u->diags[i].col = u->tokens[t].col;
  }
  return u;
fail:
  kl_unit_free(u);
  return NULL;
}

void kl_unit_free(kl_unit *u) {
  if (!u) return;
  kl_unit_impl *ui = kl_unit_impl_of(u);
  free(u->name);
  kl_src_free(u->src, ui->src_cap);
  kl_src_free(u->tokens, ui->tokens_cap);
  kl_src_free(u->nodes, ui->nodes_cap);
  kl_src_free(u->kids, ui->kids_cap);
  kl_src_free(u->kid_field, ui->kid_field_cap);
  kl_src_free(u->by_kind, ui->by_kind_cap);
  free(u->diags);
  free(u->annotations);
  free(u->word_tok);
  free(u->word_hash);
  free(u->consts);
  free(ui);
}
