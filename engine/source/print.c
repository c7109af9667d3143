/* Printing and comparing: the unit rebuilt from its tokens, node text,
 * structural equality ignoring trivia, and hashes consistent with it. */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

size_t kl_unit_print_to(const kl_unit *u, char *out) {
  /* Tokens whose pieces are adjacent in the source are copied as one run;
   * a token that does not continue the run starts a new one. */
  char *w = out;
  uint32_t run_b = 0, run_e = 0;
  for (uint32_t i = 0; i < u->ntokens; i++) {
    const kl_token *t = &u->tokens[i];
    if (t->trivia_off != run_e) {
      memcpy(w, u->src + run_b, run_e - run_b);
      w += run_e - run_b;
      run_b = t->trivia_off;
    }
    run_e = t->trivia_off + t->trivia_len;
    if (t->off != run_e) { /* text not right after its trivia: copy apart */
      memcpy(w, u->src + run_b, run_e - run_b);
      w += run_e - run_b;
      run_b = t->off;
    }
    run_e = t->off + t->len;
  }
  memcpy(w, u->src + run_b, run_e - run_b);
  w += run_e - run_b;
  return (size_t)(w - out);
}

size_t kl_unit_print_size(const kl_unit *u) {
  size_t total = 0;
  for (uint32_t i = 0; i < u->ntokens; i++) total += u->tokens[i].trivia_len + u->tokens[i].len;
  return total;
}

char *kl_unit_print(const kl_unit *u, size_t *len_out) {
  size_t total = kl_unit_print_size(u);
  char *out = malloc(total + 1);
  if (!out) return NULL;
  size_t n = kl_unit_print_to(u, out);
  out[n] = '\0';
  if (len_out) *len_out = n;
  return out;
}

void kl_node_span(const kl_unit *u, uint32_t n, uint32_t *begin, uint32_t *end) {
  const kl_node *nd = &u->nodes[n];
  if (nd->tok_end <= nd->tok_begin) {
    *begin = *end = u->tokens[nd->tok_begin].off;
    return;
  }
  *begin = u->tokens[nd->tok_begin].off;
  const kl_token *last = &u->tokens[nd->tok_end - 1];
  *end = last->off + last->len;
}

const char *kl_node_text(const kl_unit *u, uint32_t n, size_t *len) {
  uint32_t b, e;
  kl_node_span(u, n, &b, &e);
  *len = e - b;
  return u->src + b;
}

void kl_node_end_pos(const kl_unit *u, uint32_t n, uint32_t *line, uint32_t *col) {
  const kl_node *nd = &u->nodes[n];
  uint32_t last = nd->tok_end > nd->tok_begin ? nd->tok_end - 1 : nd->tok_begin;
  const kl_token *t = &u->tokens[last];
  uint32_t l = t->line, c = t->col;
  /* walk the token's own text for newlines (raw strings, pp lines) */
  for (uint32_t i = 0; i < t->len; i++) {
    if (u->src[t->off + i] == '\n') {
      l++;
      c = 1;
    } else {
      c++;
    }
  }
  *line = l;
  *col = c;
}

int kl_token_equal(const kl_unit *ua, uint32_t ta, const kl_unit *ub, uint32_t tb) {
  const kl_token *a = &ua->tokens[ta], *b = &ub->tokens[tb];
  return a->kind == b->kind && a->len == b->len &&
         memcmp(ua->src + a->off, ub->src + b->off, a->len) == 0;
}

int kl_node_equal(const kl_unit *ua, uint32_t a, const kl_unit *ub, uint32_t b) {
  const kl_node *na = &ua->nodes[a], *nb = &ub->nodes[b];
  if (na->kind != nb->kind) return 0;
  uint32_t la = na->tok_end - na->tok_begin, lb = nb->tok_end - nb->tok_begin;
  if (la != lb) return 0;
  for (uint32_t i = 0; i < la; i++)
    if (!kl_token_equal(ua, na->tok_begin + i, ub, nb->tok_begin + i)) return 0;
  return 1;
}

uint64_t kl_node_hash(const kl_unit *u, uint32_t n) {
  const kl_node *nd = &u->nodes[n];
  uint64_t h = kl_hash_bytes(1469598103934665603ull, &nd->kind, sizeof nd->kind);
  for (uint32_t i = nd->tok_begin; i < nd->tok_end; i++) {
    const kl_token *t = &u->tokens[i];
    h = kl_hash_bytes(h, &t->kind, 1);
    h = kl_hash_bytes(h, u->src + t->off, t->len);
    h = kl_hash_bytes(h, "", 1); /* separator: "a b" differs from "ab" */
  }
  return h;
}
