/* Node construction for the parser: a pending stack of finished children
 * that the next finished node adopts (tree-sitter style), so the parser
 * never links pointers. */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

/* The first capacity of the node and kid arrays: about one node per token
 * (0.8 on real code), sized once from the token count so that a large unit
 * grows no chain of copies. The pending stack starts small: it holds one
 * entry per open level and per top-level item. */
enum { FIRST_PENDING = 1024 };
static uint32_t first_cap(const kl_parser *p) {
  uint32_t n = p->u->ntokens;
  return n < UINT32_MAX - 64 ? n + 64 : UINT32_MAX;
}

/* The nodes and their ranges share one block, nodes first then ranges at
 * nodes + ncap, so that whoever frees p->nodes frees both. */
static int grow_nodes(kl_parser *p) {
  const size_t per = sizeof *p->nodes + sizeof *p->ranges;
  uint32_t first = first_cap(p);
  size_t want = p->nnodes + 1 > first ? (size_t)p->nnodes + 1 : first;
  if (p->ncap && want < (size_t)p->ncap + p->ncap / 2) want = (size_t)p->ncap + p->ncap / 2;
  if (want > UINT32_MAX) want = UINT32_MAX;
  size_t bytes;
  kl_node *q = kl_src_alloc(want * per, &bytes);
  if (!q) return 0;
  uint32_t cap = (uint32_t)(bytes / per < UINT32_MAX ? bytes / per : UINT32_MAX);
  kl_p_range *r = (kl_p_range *)(q + cap);
  if (p->nodes) {
    memcpy(q, p->nodes, (size_t)p->nnodes * sizeof *p->nodes);
    memcpy(r, p->ranges, (size_t)p->nnodes * sizeof *p->ranges);
    kl_src_free(p->nodes, (size_t)p->ncap * per);
  }
  p->nodes = q;
  p->ranges = r;
  p->ncap = cap;
  return 1;
}

/* Grows two parallel arrays that share one capacity. */
static int grow2_slow(void **a, size_t ea, void **b, size_t eb, uint32_t *cap, uint32_t need,
                      uint32_t first, uint32_t used) {
  size_t bytes_a = (size_t)*cap * ea, bytes_b = (size_t)*cap * eb;
  size_t want = need > first ? need : first;
  void *qa = kl_src_grow(*a, (size_t)used * ea, &bytes_a, want * ea);
  if (!qa) return 0;
  *a = qa;
  /* both arrays get the same element count: the smaller of the two */
  uint32_t ca = (uint32_t)(bytes_a / ea < UINT32_MAX ? bytes_a / ea : UINT32_MAX);
  void *qb = kl_src_grow(*b, (size_t)used * eb, &bytes_b, (size_t)ca * eb);
  if (!qb) return 0;
  *b = qb;
  uint32_t cb = (uint32_t)(bytes_b / eb < UINT32_MAX ? bytes_b / eb : UINT32_MAX);
  *cap = ca < cb ? ca : cb;
  return 1;
}

static inline int grow2(void **a, size_t ea, void **b, size_t eb, uint32_t *cap, uint32_t need,
                        uint32_t first, uint32_t used) {
  return need <= *cap || grow2_slow(a, ea, b, eb, cap, need, first, used);
}

uint32_t kl_p_push(kl_parser *p, uint32_t node, kl_field f) {
  if (node == KL_NONE) return KL_NONE;
  if (!grow2((void **)&p->pend, sizeof *p->pend, (void **)&p->pfield, sizeof *p->pfield,
             &p->pcap, p->npend + 1, FIRST_PENDING, p->npend)) {
    p->oom = 1;
    return KL_NONE;
  }
  p->pend[p->npend] = node;
  p->pfield[p->npend] = (uint8_t)f;
  p->npend++;
  return node;
}

void kl_p_set_last_field(kl_parser *p, kl_field f) {
  if (p->npend) p->pfield[p->npend - 1] = (uint8_t)f;
}

uint32_t kl_p_finish(kl_parser *p, kl_node_kind kind, uint32_t mark, uint32_t tok_begin,
                     uint32_t tok_end) {
  if (p->oom) return KL_NONE;
  uint32_t nk = p->npend - mark;
  if (!grow2((void **)&p->kids, sizeof *p->kids, (void **)&p->kfield, sizeof *p->kfield,
             &p->kcap, p->nkids + nk, first_cap(p), p->nkids))
    goto oom;
  if (p->nnodes + 1 > p->ncap && !grow_nodes(p)) goto oom;
  /* most nodes have 0-3 children: a loop beats memcpy calls. The subtree
   * size is summed while the children are hot (the layout numbers nodes
   * from it); a node shared by two parents (a parser bug) can only make
   * it too large, which the layout detects. */
  uint64_t size = 1;
  for (uint32_t i = 0; i < nk; i++) {
    uint32_t kid = p->pend[mark + i];
    p->kids[p->nkids + i] = kid;
    p->kfield[p->nkids + i] = p->pfield[mark + i];
    size += p->ranges[kid].size;
  }
  kl_node *n = &p->nodes[p->nnodes];
  n->kind = (uint16_t)kind;
  n->flags = 0;
  n->op = 0;
  n->op_tok = KL_NONE;
  n->subtree_end = 0;
  n->depth = 0;
  n->tok_begin = tok_begin;
  n->tok_end = tok_end;
  n->parent = KL_NONE;
  n->child_begin = p->nkids;
  n->child_count = nk;
  p->ranges[p->nnodes] = (kl_p_range){p->nkids, nk, size < UINT32_MAX ? (uint32_t)size : UINT32_MAX};
  p->nkids += nk;
  p->npend = mark;
  return p->nnodes++;
oom:
  p->oom = 1;
  return KL_NONE;
}

uint32_t kl_p_leaf(kl_parser *p, kl_node_kind kind, uint32_t tok_begin, uint32_t tok_end) {
  return kl_p_finish(p, kind, p->npend, tok_begin, tok_end);
}

uint32_t kl_p_opaque(kl_parser *p, uint32_t tok_begin, uint32_t tok_end, int truncated) {
  uint32_t n = kl_p_leaf(p, KL_N_OPAQUE, tok_begin, tok_end);
  if (n == KL_NONE) return n;
  if (truncated) {
    p->nodes[n].flags |= KL_NF_TRUNCATED;
    kl_diag_add(p->u, "KLS002", "nesting deeper than " KL_SOURCE_STR(KL_SOURCE_MAX_DEPTH)
                " levels: kept as an opaque region",
                tok_begin, tok_end);
  } else {
    kl_diag_add(p->u, "KLS001", "construct not understood: kept as an opaque region", tok_begin,
                tok_end);
  }
  return n;
}

uint32_t kl_p_skip_group(const kl_parser *p, uint32_t i) {
  const kl_token *t = &p->t[i];
  if (t->match != KL_NONE && t->match > i) return t->match + 1;
  return i + 1;
}

uint32_t kl_p_angle_end(const kl_parser *p, uint32_t open) {
  uint32_t close = p->t[open].match;
  return p->t[close].match == open ? close + 1 : close;
}

int kl_p_is_type_word(const kl_parser *p, uint32_t i) {
  uint32_t w = p->t[i].word;
  return w != KL_NONE && (p->type_word[w] & KL_W_TYPE);
}

void kl_p_mark_type_word(kl_parser *p, uint32_t i) {
  uint32_t w = p->t[i].word;
  if (w != KL_NONE) p->type_word[w] |= KL_W_TYPE;
}

int kl_p_word_is(const kl_parser *p, uint32_t i) {
  uint32_t w = p->t[i].word;
  return w != KL_NONE ? p->type_word[w] : 0;
}

void kl_p_mark_value_word(kl_parser *p, uint32_t i) {
  uint32_t w = p->t[i].word;
  if (w != KL_NONE && p->t[i].kind == KL_TOK_IDENT) p->type_word[w] |= KL_W_VALUE;
}
