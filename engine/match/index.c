/* The matcher's view of a unit beyond what kl.source stores: for each token
 * the innermost node starting and ending on it (the nodes starting on one
 * token form one ancestor chain, so the rest follows through parent), and
 * the opaque regions, where matching falls back to balanced tokens. */
#include <stdlib.h>
#include <string.h>

#include "match/match.h"

int km_kind_is_expr(unsigned kind) {
  switch (kind) {
  case KL_N_IDENT: case KL_N_INT_LIT: case KL_N_FLOAT_LIT: case KL_N_CHAR_LIT:
  case KL_N_STRING_LIT: case KL_N_BOOL_LIT: case KL_N_BINARY: case KL_N_UNARY:
  case KL_N_POSTFIX: case KL_N_ASSIGN: case KL_N_TERNARY: case KL_N_CALL:
  case KL_N_LAUNCH: case KL_N_INDEX: case KL_N_MEMBER: case KL_N_CAST:
  case KL_N_CXX_CAST: case KL_N_SIZEOF: case KL_N_INIT_LIST: case KL_N_PAREN:
  case KL_N_LAMBDA: case KL_N_NEW: case KL_N_DELETE: case KL_N_THROW:
    return 1;
  default:
    return 0;
  }
}

/* Statements, and the items that stand where statements do at file scope. */
int km_kind_is_stmt(unsigned kind) {
  switch (kind) {
  case KL_N_COMPOUND: case KL_N_FOR: case KL_N_WHILE: case KL_N_DO: case KL_N_IF:
  case KL_N_RETURN: case KL_N_BREAK: case KL_N_CONTINUE: case KL_N_DECL_STMT:
  case KL_N_EXPR_STMT: case KL_N_EMPTY_STMT: case KL_N_SWITCH: case KL_N_CASE:
  case KL_N_LABEL: case KL_N_GOTO: case KL_N_ASM: case KL_N_PRAGMA: case KL_N_PREPROC:
  case KL_N_OPAQUE: case KL_N_FUNCTION: case KL_N_DECL: case KL_N_STRUCT: case KL_N_LINKAGE:
  case KL_N_TRY:
    return 1;
  default:
    return 0;
  }
}

km_index *km_index_new(const kl_unit *u) {
  km_index *ix = calloc(1, sizeof *ix);
  if (!ix) return NULL;
  uint32_t n = u->ntokens ? u->ntokens : 1;
  ix->u = u;
  ix->start_node = malloc(n * sizeof *ix->start_node);
  ix->end_node = malloc(n * sizeof *ix->end_node);
  ix->opaque = calloc(n, 1);
  ix->stop = malloc(n * sizeof *ix->stop);
  uint32_t nitems = u->nnodes ? u->nodes[0].child_count : 0;
  ix->item_sig = calloc(nitems ? nitems : 1, sizeof *ix->item_sig);
  ix->item_of = malloc((u->nnodes ? u->nnodes : 1) * sizeof *ix->item_of);
  km_sig *word_bit = calloc(u->nwords ? u->nwords : 1, sizeof *word_bit);
  if (!ix->start_node || !ix->end_node || !ix->opaque || !ix->stop || !ix->item_sig || !ix->item_of || !word_bit) {
    free(word_bit);
    km_index_free(ix);
    return NULL;
  }
  for (uint32_t t = 0; t < n; t++) ix->start_node[t] = ix->end_node[t] = KL_NONE;
  /* Statement stops, from the end: a bracket group other than a brace is
   * skipped whole (its stop is the one after it). */
  for (uint32_t t = n; t-- > 0;) {
    const kl_token *k = &u->tokens[t];
    uint32_t stop = t;
    if (u->ntokens && k->kind == KL_TOK_PUNCT && k->sub != KL_P1(';') && t + 1 < n) {
      int closer = k->sub == KL_P1(')') || k->sub == KL_P1(']') || k->sub == KL_P1('}');
      int group = (k->sub == KL_P1('(') || k->sub == KL_P1('[') || (k->flags & KL_TF_ANGLE)) &&
                  k->match != KL_NONE && k->match > t && k->match + 1 < n;
      if (group) stop = ix->stop[k->match + 1];
      else if (!closer && k->sub != KL_P1('{')) stop = ix->stop[t + 1];
    } else if (u->ntokens && k->kind != KL_TOK_PUNCT && k->kind != KL_TOK_EOF && t + 1 < n) {
      stop = ix->stop[t + 1];
    }
    ix->stop[t] = stop;
  }
  /* Pre-order: a descendant starting (ending) on the same token comes
   * after its ancestor, so the last writer is the innermost. */
  for (uint32_t i = 1; i < u->nnodes; i++) {
    const kl_node *nd = &u->nodes[i];
    if (nd->tok_begin >= nd->tok_end || nd->tok_end > u->ntokens) continue;
    ix->start_node[nd->tok_begin] = i;
    ix->end_node[nd->tok_end - 1] = i;
  }
  /* Word signatures: one hash per distinct word, then one OR per token of
   * each top-level item. */
  for (uint32_t w = 0; w < u->nwords; w++) {
    const kl_token *k = &u->tokens[u->word_tok[w]];
    km_sig_add(&word_bit[w], u->src + k->off, k->len);
    for (int q = 0; q < 4; q++) ix->unit_sig.w[q] |= word_bit[w].w[q];
  }
  for (uint32_t i = 0; i < u->nnodes; i++) ix->item_of[i] = KL_NONE;
  for (uint32_t c = 0; c < nitems; c++) {
    uint32_t item = kl_child(u, 0, c);
    const kl_node *nd = &u->nodes[item];
    km_sig *sig = &ix->item_sig[c];
    ix->item_of[item] = c;
    for (uint32_t t = nd->tok_begin; t < nd->tok_end && t < u->ntokens; t++) {
      uint32_t w = u->tokens[t].word;
      if (w == KL_NONE || w >= u->nwords) continue;
      for (int q = 0; q < 4; q++) sig->w[q] |= word_bit[w].w[q];
    }
  }
  free(word_bit);
  uint32_t count = 0;
  const uint32_t *op = kl_unit_nodes_of_kind(u, KL_N_OPAQUE, &count);
  for (uint32_t k = 0; k < count; k++) {
    const kl_node *nd = &u->nodes[op[k]];
    for (uint32_t t = nd->tok_begin; t < nd->tok_end && t < u->ntokens; t++) ix->opaque[t] = 1;
  }
  return ix;
}

void km_index_free(km_index *ix) {
  if (!ix) return;
  free(ix->start_node);
  free(ix->end_node);
  free(ix->opaque);
  free(ix->stop);
  free(ix->item_sig);
  free(ix->item_of);
  free(ix);
}
