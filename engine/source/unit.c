/* The unit's lifecycle: parse (lex, balance, structure, layout) and free. */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

/* Diagnostics are bounded: a run of the same token diagnostic over
 * adjacent or overlapping tokens is one diagnostic over the whole run (1 MB
 * of 0xFF is one KLS004, not a million), and at most KL_SOURCE_DIAG_CAP of
 * each id are kept; the rest are counted, and one KLS006 at the end says
 * so. Diagnostics of nodes (KLS001, KLS002: one per opaque node) are never
 * merged: two adjacent opaque statements stay two regions. */
static int is_token_diag(const char *id) {
  return strcmp(id, "KLS003") == 0 || strcmp(id, "KLS004") == 0 || strcmp(id, "KLS005") == 0;
}

static uint32_t *diag_id_count(kl_unit_impl *ui, const char *id) {
  for (uint32_t i = 0; i < ui->ndiag_ids; i++)
    if (ui->diag_id[i] == id || strcmp(ui->diag_id[i], id) == 0) return &ui->diag_id_count[i];
  /* more distinct ids than slots (none today): the last slot is shared */
  if (ui->ndiag_ids == KL_DIAG_ID_SLOTS) return &ui->diag_id_count[KL_DIAG_ID_SLOTS - 1];
  ui->diag_id[ui->ndiag_ids] = id;
  ui->diag_id_count[ui->ndiag_ids] = 0;
  return &ui->diag_id_count[ui->ndiag_ids++];
}

int kl_diag_add(kl_unit *u, const char *id, const char *message, uint32_t tok_begin,
                uint32_t tok_end) {
  kl_unit_impl *ui = kl_unit_impl_of(u);
  if (tok_end < tok_begin) tok_end = tok_begin;
  if (u->ndiags && is_token_diag(id)) {
    kl_diag *last = &u->diags[u->ndiags - 1];
    if ((last->id == id || strcmp(last->id, id) == 0) &&
        (last->message == message || strcmp(last->message, message) == 0) &&
        tok_begin >= last->tok_begin && tok_begin <= last->tok_end) {
      if (tok_end > last->tok_end) last->tok_end = tok_end;
      return 1;
    }
  }
  uint32_t *count = diag_id_count(ui, id);
  if (*count >= KL_SOURCE_DIAG_CAP) {
    if (!u->ndiags_suppressed || tok_begin < ui->suppressed_begin) ui->suppressed_begin = tok_begin;
    if (!u->ndiags_suppressed || tok_end > ui->suppressed_end) ui->suppressed_end = tok_end;
    u->ndiags_suppressed++;
    return 1;
  }
  if (u->ndiags == ui->diags_cap) {
    uint32_t cap = ui->diags_cap ? ui->diags_cap * 2 : 8;
    kl_diag *d = realloc(u->diags, (size_t)cap * sizeof *d);
    if (!d) return 0;
    u->diags = d;
    ui->diags_cap = cap;
  }
  (*count)++;
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
  if (u->ndiags_suppressed) {
    /* the array has room: a suppressed diagnostic means a full id */
    if (u->ndiags == ui->diags_cap) {
      kl_diag *d = realloc(u->diags, ((size_t)u->ndiags + 1) * sizeof *d);
      if (!d) goto fail;
      u->diags = d;
      ui->diags_cap = u->ndiags + 1;
    }
    u->diags[u->ndiags++] =
        (kl_diag){"KLS006",
                  "further diagnostics suppressed: at most " KL_SOURCE_STR(KL_SOURCE_DIAG_CAP)
                  " of each id are kept (kl_unit.ndiags_suppressed counts the others)",
                  ui->suppressed_begin, ui->suppressed_end, 0, 0};
  }
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
  free(ui->const_index);
  free(ui->const_order);
  free(ui->const_run_start);
  free(ui->const_run_len);
  kl_affine_cache_free(u);
  free(ui);
}
