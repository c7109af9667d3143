/* A GumTree-like structural diff of two units.
 *
 *   1. top-down: the largest isomorphic subtrees (equal kind and tokens,
 *      kl_node_equal) are matched first, B in pre-order so an ancestor wins
 *      over its descendants; among several candidates the one whose parent
 *      already corresponds is preferred;
 *   2. bottom-up: an unmatched container of A is matched to the unmatched
 *      B node of the same kind, in the same kind of parent, that holds most
 *      of its matched descendants (dice >= 0.5);
 *   3. recovery: unmatched children of matched pairs are matched in order
 *      when kind and (for leaves) text agree;
 *   4. the script: unmatched B roots are inserts, unmatched A roots
 *      deletes, matched leaves with other text (or nodes with another
 *      operator) updates, matched nodes under another parent or out of
 *      order among their siblings moves.
 * Statements, expressions, top-level items and the parts of declarations
 * (parameters, declarators, types, qualifiers) are reported.
 *
 * Scope: a node inside a function pairs only with a node inside the
 * function of the same name (nodes outside functions with each other), so
 * code that moved into a new helper is a delete and an insert, not a move
 * across functions. A subtree is paired top-down only when none of its
 * nodes is paired yet, so the maps stay inverse of each other (a stale
 * one-sided pair made every child of a moved node a move of its own).
 * Each insert, delete and move carries the byte offset on the other side
 * where its node goes or was (a_at, b_at), for inverting the script. */
#include <stdlib.h>
#include <string.h>

#include "match/match.h"

typedef struct hent {
  uint64_t h;
  uint32_t n;
} hent;

static int by_hash(const void *a, const void *b) {
  const hent *x = a, *y = b;
  if (x->h != y->h) return x->h < y->h ? -1 : 1;
  return x->n < y->n ? -1 : x->n > y->n;
}

/* Statements and expressions, plus the parts of declarations and
 * signatures an optimization changes (a parameter's type, a qualifier). */
static int reported(unsigned kind) {
  return km_kind_is_expr(kind) || km_kind_is_stmt(kind) || kind == KL_N_PARAM || kind == KL_N_DECLARATOR ||
         kind == KL_N_TEMPLATE_PARAM || kind == KL_N_TYPE || kind == KL_N_QUALIFIERS;
}

static int push_op(km_diff *d, uint8_t kind, uint32_t a, uint32_t b) {
  if (d->n == d->cap) {
    uint32_t cap = d->cap ? d->cap * 2 : 32;
    km_diff_op *o = realloc(d->ops, cap * sizeof *o);
    if (!o) return 0;
    d->ops = o, d->cap = cap;
  }
  d->ops[d->n++] = (km_diff_op){ kind, a, b, KL_NONE, KL_NONE };
  return 1;
}

/* A Fenwick tree over A's nodes counting the paired ones, so a candidate
 * subtree with a paired node inside is skipped in O(log n). */
static void bit_add(uint32_t *bit, uint32_t n, uint32_t i) {
  for (uint32_t k = i + 1; k <= n; k += k & (0u - k)) bit[k]++;
}

static uint32_t bit_prefix(const uint32_t *bit, uint32_t i) { /* paired among [0, i) */
  uint32_t s = 0;
  for (uint32_t k = i; k > 0; k -= k & (0u - k)) s += bit[k];
  return s;
}

static void map_subtrees(km_diff *d, const kl_unit *a, uint32_t x, uint32_t y, uint32_t *bit) {
  uint32_t size = a->nodes[x].subtree_end - x;
  for (uint32_t k = 0; k < size; k++) {
    d->a_to_b[x + k] = y + k;
    d->b_to_a[y + k] = x + k;
    bit_add(bit, a->nnodes, x + k);
  }
}

static void map_pair(km_diff *d, const kl_unit *a, uint32_t x, uint32_t y, uint32_t *bit) {
  d->a_to_b[x] = y;
  d->b_to_a[y] = x;
  bit_add(bit, a->nnodes, x);
}

/* fn[n]: the function node n is in (n itself for a function), or KL_NONE;
 * nodes are in pre-order, so a parent's entry is set before its child's. */
static void function_scopes(const kl_unit *u, uint32_t *fn) {
  if (!u->nnodes) return;
  fn[0] = KL_NONE;
  for (uint32_t n = 1; n < u->nnodes; n++)
    fn[n] = u->nodes[n].kind == KL_N_FUNCTION ? n : fn[u->nodes[n].parent];
}

static int same_scope(const kl_unit *a, const uint32_t *fa, uint32_t x, const kl_unit *b, const uint32_t *fb,
                      uint32_t y) {
  uint32_t f = fa[x], g = fb[y];
  if (f == KL_NONE || g == KL_NONE) return f == g;
  kl_function_info fi, gi;
  if (!kl_function_info_get(a, f, &fi) || !kl_function_info_get(b, g, &gi)) return 0;
  if (fi.name_tok == KL_NONE || gi.name_tok == KL_NONE) return fi.name_tok == gi.name_tok;
  const kl_token *s = &a->tokens[fi.name_tok], *t = &b->tokens[gi.name_tok];
  return s->len == t->len && memcmp(a->src + s->off, b->src + t->off, s->len) == 0;
}

/* Where node n of unit p would sit in unit q, whose nodes pair with p's
 * through map (a byte offset of q): see km_diff_op. */
static uint32_t position_in(const kl_unit *p, const kl_unit *q, const uint32_t *map, uint32_t n) {
  uint32_t c = n, par = p->nodes[n].parent;
  while (par != KL_NONE && map[par] == KL_NONE) c = par, par = p->nodes[par].parent;
  if (par == KL_NONE) return 0;
  uint32_t qp = map[par], b, e;
  const kl_node *np = &p->nodes[par];
  uint32_t at = 0;
  while (at < np->child_count && kl_child(p, par, at) != c) at++;
  for (uint32_t i = at; i-- > 0;) {
    uint32_t s = map[kl_child(p, par, i)];
    if (s != KL_NONE && q->nodes[s].parent == qp) {
      kl_node_span(q, s, &b, &e);
      return e;
    }
  }
  for (uint32_t i = at + 1; i < np->child_count; i++) {
    uint32_t s = map[kl_child(p, par, i)];
    if (s != KL_NONE && q->nodes[s].parent == qp) {
      kl_node_span(q, s, &b, &e);
      return b;
    }
  }
  if (qp == 0) return 0;
  const kl_node *nq = &q->nodes[qp];
  if (nq->kind == KL_N_COMPOUND && nq->tok_end > nq->tok_begin) {
    const kl_token *t = &q->tokens[nq->tok_begin]; /* after the `{` */
    return t->off + t->len;
  }
  kl_node_span(q, qp, &b, &e);
  return b;
}

static int same_label(const kl_unit *a, uint32_t x, const kl_unit *b, uint32_t y) {
  const kl_node *nx = &a->nodes[x], *ny = &b->nodes[y];
  if (nx->kind != ny->kind || nx->op != ny->op) return 0;
  if (nx->child_count == 0 && ny->child_count == 0) return kl_node_equal(a, x, b, y);
  return 1;
}

void km_diff_free(km_diff *d) {
  if (!d) return;
  free(d->ops);
  free(d->a_to_b);
  free(d->b_to_a);
  memset(d, 0, sizeof *d);
}

int km_diff_units(const kl_unit *a, const kl_unit *b, km_diff *d) {
  memset(d, 0, sizeof *d);
  uint32_t na = a->nnodes, nb = b->nnodes;
  d->a_to_b = malloc((na ? na : 1) * sizeof *d->a_to_b);
  d->b_to_a = malloc((nb ? nb : 1) * sizeof *d->b_to_a);
  hent *ha = malloc((na ? na : 1) * sizeof *ha);
  uint32_t *lis = malloc(((na > nb ? na : nb) + 1) * 3 * sizeof *lis);
  uint32_t *bit = calloc((size_t)na + 1, sizeof *bit);
  uint32_t *fa = malloc((na ? na : 1) * sizeof *fa), *fb = malloc((nb ? nb : 1) * sizeof *fb);
  if (!d->a_to_b || !d->b_to_a || !ha || !lis || !bit || !fa || !fb) goto oom;
  for (uint32_t i = 0; i < na; i++) d->a_to_b[i] = KL_NONE;
  for (uint32_t i = 0; i < nb; i++) d->b_to_a[i] = KL_NONE;
  if (na == 0 || nb == 0) goto script;
  function_scopes(a, fa);
  function_scopes(b, fb);

  /* 1. top-down isomorphic subtrees. */
  for (uint32_t i = 0; i < na; i++) ha[i] = (hent){ kl_node_hash(a, i), i };
  qsort(ha, na, sizeof *ha, by_hash);
  for (uint32_t y = 1; y < nb; y++) {
    if (d->b_to_a[y] != KL_NONE) {
      continue;
    }
    const kl_node *ny = &b->nodes[y];
    if (ny->subtree_end - y < 2) continue; /* leaves wait for recovery */
    uint64_t h = kl_node_hash(b, y);
    size_t lo = 0, hi = na;
    while (lo < hi) {
      size_t mid = (lo + hi) / 2;
      if (ha[mid].h < h) lo = mid + 1;
      else hi = mid;
    }
    uint32_t best = KL_NONE;
    for (size_t k = lo; k < na && ha[k].h == h; k++) {
      uint32_t x = ha[k].n;
      if (x == 0 || d->a_to_b[x] != KL_NONE) continue;
      if (a->nodes[x].subtree_end - x != ny->subtree_end - y) continue;
      if (bit_prefix(bit, a->nodes[x].subtree_end) != bit_prefix(bit, x)) continue; /* part paired */
      if (!same_scope(a, fa, x, b, fb, y)) continue;
      if (!kl_node_equal(a, x, b, y)) continue;
      /* Skip a node inside an already matched subtree of A. */
      uint32_t p = a->nodes[x].parent;
      int inside = 0;
      for (uint32_t q = p; q != KL_NONE && q != 0; q = a->nodes[q].parent)
        if (d->a_to_b[q] != KL_NONE) { inside = 1; break; }
      if (inside) continue;
      if (best == KL_NONE) best = x;
      if (p != KL_NONE && d->a_to_b[p] == ny->parent) { best = x; break; }
    }
    if (best != KL_NONE) {
      map_subtrees(d, a, best, y, bit);
      y = ny->subtree_end - 1; /* descendants are mapped with it */
    }
  }
  d->a_to_b[0] = 0;
  d->b_to_a[0] = 0;

  /* 2. bottom-up containers, children before parents. */
  for (uint32_t x = na; x-- > 1;) {
    const kl_node *nx = &a->nodes[x];
    if (d->a_to_b[x] != KL_NONE || nx->child_count == 0) continue;
    uint32_t best = KL_NONE, best_common = 0;
    uint32_t desc_a = nx->subtree_end - x - 1;
    for (uint32_t z = x + 1; z < nx->subtree_end; z++) {
      uint32_t w = d->a_to_b[z];
      if (w == KL_NONE) continue;
      for (uint32_t c = b->nodes[w].parent; c != KL_NONE && c != 0; c = b->nodes[c].parent) {
        if (d->b_to_a[c] != KL_NONE || b->nodes[c].kind != nx->kind || c == best) continue;
        if (!same_scope(a, fa, x, b, fb, c)) continue;
        /* A container sits in the same kind of parent (a loop's block is
         * not a function's body), so a moved statement does not drag its
         * old block onto its new one. */
        if (a->nodes[nx->parent].kind != b->nodes[b->nodes[c].parent].kind) continue;
        uint32_t common = 0;
        for (uint32_t q = x + 1; q < nx->subtree_end; q++) {
          uint32_t m = d->a_to_b[q];
          if (m != KL_NONE && m > c && m < b->nodes[c].subtree_end) common++;
        }
        if (common > best_common) best = c, best_common = common;
      }
      /* Candidates come from the partners of the first matched
       * descendants; a handful is enough to find the container. */
      if (best != KL_NONE && z > x + 64) break;
    }
    if (best != KL_NONE) {
      uint32_t desc_b = b->nodes[best].subtree_end - best - 1;
      if (2.0 * best_common / (double)(desc_a + desc_b) >= 0.5) map_pair(d, a, x, best, bit);
    }
  }

  /* 3. recovery among children of matched pairs, in order. */
  for (uint32_t x = 0; x < na; x++) {
    uint32_t y = d->a_to_b[x];
    if (y == KL_NONE) continue;
    const kl_node *nx = &a->nodes[x], *ny = &b->nodes[y];
    uint32_t j = 0;
    for (uint32_t i = 0; i < nx->child_count; i++) {
      uint32_t cx = kl_child(a, x, i);
      if (d->a_to_b[cx] != KL_NONE) continue;
      for (uint32_t jj = j; jj < ny->child_count; jj++) {
        uint32_t cy = kl_child(b, y, jj);
        if (d->b_to_a[cy] != KL_NONE) continue;
        if (a->nodes[cx].kind == b->nodes[cy].kind && same_scope(a, fa, cx, b, fb, cy) &&
            (a->nodes[cx].child_count > 0 || same_label(a, cx, b, cy) ||
             kl_child_field(a, x, i) == kl_child_field(b, y, jj))) {
          map_pair(d, a, cx, cy, bit);
          j = jj + 1;
          break;
        }
      }
    }
  }

script:
  /* 4. the edit script, in B order for inserts/updates/moves, then A's deletes. */
  for (uint32_t y = 1; y < nb; y++) {
    const kl_node *ny = &b->nodes[y];
    uint32_t x = d->b_to_a[y];
    if (x == KL_NONE) {
      if (d->b_to_a[ny->parent] != KL_NONE && reported(ny->kind) && !push_op(d, KM_EDIT_INSERT, KL_NONE, y))
        goto oom;
      continue;
    }
    if (!reported(ny->kind)) continue;
    const kl_node *nx = &a->nodes[x];
    if (d->a_to_b[nx->parent] != ny->parent) {
      if (!push_op(d, KM_EDIT_MOVE, x, y)) goto oom;
    } else if (!same_label(a, x, b, y) && (nx->child_count == 0 || nx->op != ny->op)) {
      if (!push_op(d, KM_EDIT_UPDATE, x, y)) goto oom;
    }
  }
  /* Moves within one parent: matched children outside the longest run
   * that keeps their order. */
  for (uint32_t y = 0; y < nb; y++) {
    uint32_t x = d->b_to_a[y];
    if (x == KL_NONE) continue;
    const kl_node *ny = &b->nodes[y];
    uint32_t m = 0;
    uint32_t *pos = lis, *tail = lis + (na > nb ? na : nb) + 1, *who = tail + (na > nb ? na : nb) + 1;
    for (uint32_t j = 0; j < ny->child_count; j++) {
      uint32_t cy = kl_child(b, y, j), cx = d->b_to_a[cy];
      if (cx == KL_NONE || a->nodes[cx].parent != x) continue;
      pos[m] = cx;
      who[m] = cy;
      m++;
    }
    if (m < 2) continue;
    /* O(m^2) longest increasing subsequence: sibling lists are short. */
    uint32_t *len = tail;
    uint32_t best = 0;
    for (uint32_t i = 0; i < m; i++) {
      len[i] = 1;
      for (uint32_t k = 0; k < i; k++)
        if (pos[k] < pos[i] && len[k] + 1 > len[i]) len[i] = len[k] + 1;
      if (len[i] > best) best = len[i];
    }
    /* Walk back to mark one longest run; the rest moved. */
    uint32_t want = best, last = UINT32_MAX;
    uint8_t keep_mark[512];
    int marked = m <= sizeof keep_mark;
    if (marked) memset(keep_mark, 0, m);
    for (uint32_t i = m; i-- > 0 && want > 0;)
      if (len[i] == want && pos[i] < last) {
        if (marked) keep_mark[i] = 1;
        last = pos[i];
        want--;
      }
    if (!marked) continue;
    for (uint32_t i = 0; i < m; i++)
      if (!keep_mark[i] && reported(b->nodes[who[i]].kind) && !push_op(d, KM_EDIT_MOVE, pos[i], who[i]))
        goto oom;
  }
  for (uint32_t x = 1; x < na; x++) {
    const kl_node *nx = &a->nodes[x];
    if (d->a_to_b[x] == KL_NONE && d->a_to_b[nx->parent] != KL_NONE && reported(nx->kind) &&
        !push_op(d, KM_EDIT_DELETE, x, KL_NONE))
      goto oom;
  }
  /* The other side's position of each insert, delete and move. */
  for (uint32_t i = 0; i < d->n; i++) {
    km_diff_op *op = &d->ops[i];
    if (op->kind == KM_EDIT_INSERT || op->kind == KM_EDIT_MOVE) op->a_at = position_in(b, a, d->b_to_a, op->b_node);
    if (op->kind == KM_EDIT_DELETE || op->kind == KM_EDIT_MOVE) op->b_at = position_in(a, b, d->a_to_b, op->a_node);
  }
  free(ha);
  free(lis);
  free(bit);
  free(fa);
  free(fb);
  return 1;

oom:
  free(ha);
  free(lis);
  free(bit);
  free(fa);
  free(fb);
  km_diff_free(d);
  return 0;
}
