/* Anti-unification: the most specific pattern that covers every instance.
 *
 * Walking the instances' trees in parallel: subtrees equal in all of them
 * stay as code (the first instance's text); nodes of one kind, operator and
 * arity whose own tokens (those outside their children) agree are kept and
 * their children generalized; anything else becomes a metavariable. The
 * same tuple of differing subtrees always gets the same metavariable, so
 * repeated differences stay linked. Blocks (and statement lists) of
 * different lengths keep the statements all instances share, in order, with
 * `...` where some instance has more. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match/match.h"

#define KM_AU_MAX_INST 64

typedef struct au {
  const km_instance *inst;
  uint32_t n;
  km_generalization *g;
  char *out;
  size_t len, cap;
  int oom;
  int after_side;      /* generalizing the after side of edits */
  uint32_t counter[5]; /* per sort family, for names */
} au;

static void put(au *s, const char *p, size_t n) {
  if (s->oom) return;
  if (s->len + n + 1 > s->cap) {
    size_t cap = s->cap ? s->cap : 256;
    while (cap < s->len + n + 1) cap *= 2;
    char *np = realloc(s->out, cap);
    if (!np) {
      s->oom = 1;
      return;
    }
    s->out = np, s->cap = cap;
  }
  memcpy(s->out + s->len, p, n);
  s->len += n;
  s->out[s->len] = '\0';
}

static void put_trivia(au *s, const kl_unit *u, uint32_t t) {
  put(s, u->src + u->tokens[t].trivia_off, u->tokens[t].trivia_len);
}

/* Tokens [t0, t1) of u: text, with the trivia of each token after the
 * first token of the node being printed (`from`). */
static void put_run(au *s, const kl_unit *u, uint32_t t0, uint32_t t1, uint32_t from) {
  for (uint32_t t = t0; t < t1; t++) {
    if (t > from) put_trivia(s, u, t);
    put(s, u->src + u->tokens[t].off, u->tokens[t].len);
  }
}

static void put_tokens(au *s, const kl_unit *u, uint32_t t0, uint32_t t1) { put_run(s, u, t0, t1, t0); }

static int all_equal(const au *s, const uint32_t *nodes) {
  for (uint32_t k = 1; k < s->n; k++)
    if (!kl_node_equal(s->inst[0].u, nodes[0], s->inst[k].u, nodes[k])) return 0;
  return 1;
}

static void hole(au *s, const uint32_t *nodes) {
  km_generalization *g = s->g;
  for (uint32_t h = 0; h < g->nholes; h++) {
    int same = 1;
    for (uint32_t k = 0; k < s->n && same; k++)
      same = kl_node_equal(g->holes[h].units[k], g->holes[h].nodes[k], s->inst[k].u, nodes[k]);
    if (same) {
      put(s, g->holes[h].name, strlen(g->holes[h].name));
      return;
    }
  }
  int all_int = 1, all_ident = 1, all_stmt = 1, all_type = 1;
  for (uint32_t k = 0; k < s->n; k++) {
    const kl_unit *u = s->inst[k].u;
    const kl_node *nd = &u->nodes[nodes[k]];
    all_int &= nd->kind == KL_N_INT_LIT;
    all_ident &= nd->kind == KL_N_IDENT && nd->tok_end - nd->tok_begin == 1;
    all_stmt &= km_kind_is_stmt(nd->kind);
    all_type &= nd->kind == KL_N_TYPE;
  }
  if (g->nholes == g->cap) {
    uint32_t cap = g->cap ? g->cap * 2 : 8;
    km_hole *nh = realloc(g->holes, cap * sizeof *nh);
    if (!nh) {
      s->oom = 1;
      return;
    }
    g->holes = nh, g->cap = cap;
  }
  km_hole *h = &g->holes[g->nholes];
  memset(h, 0, sizeof *h);
  h->nodes = malloc(s->n * sizeof *h->nodes);
  h->tok_begin = malloc(s->n * sizeof *h->tok_begin);
  h->tok_end = malloc(s->n * sizeof *h->tok_end);
  h->units = malloc(s->n * sizeof *h->units);
  if (!h->nodes || !h->tok_begin || !h->tok_end || !h->units) {
    free(h->nodes), free(h->tok_begin), free(h->tok_end), free(h->units);
    s->oom = 1;
    return;
  }
  g->nholes++;
  h->after_only = (uint8_t)s->after_side;
  for (uint32_t k = 0; k < s->n; k++) {
    const kl_node *nd = &s->inst[k].u->nodes[nodes[k]];
    h->units[k] = s->inst[k].u;
    h->nodes[k] = nodes[k];
    h->tok_begin[k] = nd->tok_begin;
    h->tok_end[k] = nd->tok_end;
  }
  if (all_int) {
    h->sort = KM_SORT_INT;
    snprintf(h->name, sizeof h->name, "$N%u:int", ++s->counter[0]);
  } else if (all_ident) {
    h->sort = KM_SORT_IDENT;
    snprintf(h->name, sizeof h->name, "$I%u:ident", ++s->counter[1]);
  } else if (all_type) {
    h->sort = KM_SORT_TYPE;
    snprintf(h->name, sizeof h->name, "$T%u:type", ++s->counter[2]);
  } else if (all_stmt) {
    h->sort = KM_SORT_STMT;
    snprintf(h->name, sizeof h->name, "$S%u", ++s->counter[3]);
  } else {
    h->sort = KM_SORT_EXPR;
    snprintf(h->name, sizeof h->name, "$X%u", ++s->counter[4]);
  }
  put(s, h->name, strlen(h->name));
}

/* Do the nodes' own tokens (outside their children) agree? */
static int same_skeleton(const au *s, const uint32_t *nodes) {
  const kl_unit *u0 = s->inst[0].u;
  const kl_node *n0 = &u0->nodes[nodes[0]];
  for (uint32_t k = 1; k < s->n; k++) {
    const kl_unit *u = s->inst[k].u;
    const kl_node *nk = &u->nodes[nodes[k]];
    if (nk->kind != n0->kind || nk->op != n0->op || nk->child_count != n0->child_count) return 0;
    uint32_t t0 = n0->tok_begin, tk = nk->tok_begin;
    for (uint32_t c = 0; c <= n0->child_count; c++) {
      uint32_t e0 = c < n0->child_count ? u0->nodes[kl_child(u0, nodes[0], c)].tok_begin : n0->tok_end;
      uint32_t ek = c < nk->child_count ? u->nodes[kl_child(u, nodes[k], c)].tok_begin : nk->tok_end;
      if (e0 < t0 || ek < tk || e0 - t0 != ek - tk) return 0;
      for (uint32_t q = 0; q < e0 - t0; q++)
        if (!kl_token_equal(u0, t0 + q, u, tk + q)) return 0;
      if (c < n0->child_count) {
        if (kl_child_field(u0, nodes[0], c) != kl_child_field(u, nodes[k], c)) return 0;
        t0 = u0->nodes[kl_child(u0, nodes[0], c)].tok_end;
        tk = u->nodes[kl_child(u, nodes[k], c)].tok_end;
      }
    }
  }
  return 1;
}

static void gen_node(au *s, const uint32_t *nodes);

/* Statement lists: children[k][0..count[k]) per instance. */
static void gen_list(au *s, uint32_t *const *kids, const uint32_t *count) {
  const kl_unit *u0 = s->inst[0].u;
  uint32_t c0 = count[0];
  /* common[i]: for each instance, the partner of instance 0's child i, or
   * KL_NONE; aligned greedily in order by kind (equal code preferred). */
  uint32_t *part = malloc(((size_t)c0 + 1) * s->n * sizeof *part);
  uint32_t *tuple = malloc(s->n * sizeof *tuple);
  if (!part || !tuple) {
    free(part), free(tuple);
    s->oom = 1;
    return;
  }
  for (uint32_t i = 0; i < c0; i++) part[i * s->n] = kids[0][i];
  /* Each instance is aligned with instance 0 by a weighted longest common
   * subsequence: equal statements weigh more than statements of one kind. */
  for (uint32_t k = 1; k < s->n; k++) {
    const kl_unit *u = s->inst[k].u;
    uint32_t ck = count[k];
    uint32_t *w = calloc((size_t)(c0 + 1) * (ck + 1), sizeof *w);
    if (!w) {
      free(part), free(tuple);
      s->oom = 1;
      return;
    }
#define WW(i, j) w[(size_t)(i) * (ck + 1) + (j)]
#define GAIN(i, j)                                                                  \
  (kl_node_equal(u0, kids[0][i], u, kids[k][j]) ? 4u                                \
   : u->nodes[kids[k][j]].kind == u0->nodes[kids[0][i]].kind ? 1u : 0u)
    for (uint32_t i = c0; i-- > 0;)
      for (uint32_t j = ck; j-- > 0;) {
        uint32_t best = WW(i + 1, j) > WW(i, j + 1) ? WW(i + 1, j) : WW(i, j + 1);
        uint32_t g = GAIN(i, j);
        if (g && WW(i + 1, j + 1) + g > best) best = WW(i + 1, j + 1) + g;
        WW(i, j) = best;
      }
    for (uint32_t i = 0; i < c0; i++) part[i * s->n + k] = KL_NONE;
    uint32_t i = 0, j = 0;
    while (i < c0 && j < ck) {
      uint32_t g = GAIN(i, j);
      if (g && WW(i, j) == WW(i + 1, j + 1) + g) {
        part[i * s->n + k] = kids[k][j];
        i++, j++;
      } else if (WW(i + 1, j) >= WW(i, j + 1)) {
        i++;
      } else {
        j++;
      }
    }
#undef GAIN
#undef WW
    free(w);
  }
  /* Emit: kept statements in order, `...` wherever any instance skips. */
  uint32_t *prev = calloc(s->n, sizeof *prev); /* index after the last kept, per instance */
  if (!prev) {
    free(part), free(tuple);
    s->oom = 1;
    return;
  }
  int first = 1;
  for (uint32_t i = 0; i <= c0; i++) {
    int kept = i < c0;
    for (uint32_t k = 1; k < s->n && kept; k++) kept = part[i * s->n + k] != KL_NONE;
    if (!kept && i < c0) continue;
    int gap = 0;
    for (uint32_t k = 0; k < s->n; k++) {
      uint32_t upto = count[k];
      if (i < c0) {
        uint32_t target = part[i * s->n + k];
        for (upto = 0; upto < count[k] && kids[k][upto] != target; upto++) {}
      }
      if (upto > prev[k]) gap = 1;
      prev[k] = upto + 1;
    }
    if (gap) {
      put(s, first ? "" : " ", first ? 0 : 1);
      put(s, "...", 3);
      first = 0;
    }
    if (i == c0) break;
    if (!first) {
      /* The trivia before this statement in instance 0, as written. */
      put_trivia(s, u0, u0->nodes[kids[0][i]].tok_begin);
    }
    for (uint32_t k = 0; k < s->n; k++) tuple[k] = part[i * s->n + k];
    gen_node(s, tuple);
    first = 0;
  }
  free(prev), free(part), free(tuple);
}

static void gen_node(au *s, const uint32_t *nodes) {
  if (s->oom) return;
  const kl_unit *u0 = s->inst[0].u;
  const kl_node *n0 = &u0->nodes[nodes[0]];
  if (all_equal(s, nodes)) {
    put_tokens(s, u0, n0->tok_begin, n0->tok_end);
    return;
  }
  int all_block = 1;
  for (uint32_t k = 0; k < s->n; k++) all_block &= s->inst[k].u->nodes[nodes[k]].kind == KL_N_COMPOUND;
  if (n0->child_count > 0 && same_skeleton(s, nodes)) {
    uint32_t *tuple = malloc(s->n * sizeof *tuple);
    if (!tuple) {
      s->oom = 1;
      return;
    }
    uint32_t t = n0->tok_begin;
    for (uint32_t c = 0; c < n0->child_count; c++) {
      uint32_t ch = kl_child(u0, nodes[0], c);
      put_run(s, u0, t, u0->nodes[ch].tok_begin, n0->tok_begin);
      if (u0->nodes[ch].tok_begin > n0->tok_begin) put_trivia(s, u0, u0->nodes[ch].tok_begin);
      for (uint32_t k = 0; k < s->n; k++) tuple[k] = kl_child(s->inst[k].u, nodes[k], c);
      gen_node(s, tuple);
      t = u0->nodes[ch].tok_end;
    }
    put_run(s, u0, t, n0->tok_end, n0->tok_begin);
    free(tuple);
    return;
  }
  if (all_block) {
    uint32_t **kids = malloc(s->n * sizeof *kids);
    uint32_t *count = malloc(s->n * sizeof *count);
    if (!kids || !count) {
      free(kids), free(count);
      s->oom = 1;
      return;
    }
    for (uint32_t k = 0; k < s->n; k++) {
      const kl_unit *u = s->inst[k].u;
      kids[k] = u->kids + u->nodes[nodes[k]].child_begin;
      count[k] = u->nodes[nodes[k]].child_count;
    }
    put(s, "{ ", 2);
    gen_list(s, kids, count);
    put(s, " }", 2);
    free(kids), free(count);
    return;
  }
  hole(s, nodes);
}

void km_generalization_free(km_generalization *g) {
  if (!g) return;
  for (uint32_t h = 0; h < g->nholes; h++) {
    free(g->holes[h].nodes);
    free(g->holes[h].tok_begin);
    free(g->holes[h].tok_end);
    free(g->holes[h].units);
  }
  free(g->holes);
  free(g->text);
  free(g->after_text);
  memset(g, 0, sizeof *g);
}

/* Generalizes the instances into s->out. */
static int gen_all(au *s, const km_instance *inst, uint32_t n) {
  if (n == 0 || n > KM_AU_MAX_INST) return 0;
  s->inst = inst;
  s->n = n;
  int seq = inst[0].node == KL_NONE;
  for (uint32_t k = 1; k < n; k++)
    if ((inst[k].node == KL_NONE) != seq) return 0;
  if (seq) {
    uint32_t *kids[KM_AU_MAX_INST];
    uint32_t count[KM_AU_MAX_INST];
    for (uint32_t k = 0; k < n; k++) {
      kids[k] = (uint32_t *)inst[k].seq;
      count[k] = inst[k].nseq;
    }
    int same_len = 1;
    for (uint32_t k = 1; k < n; k++) same_len &= count[k] == count[0];
    if (same_len) {
      uint32_t tuple[KM_AU_MAX_INST];
      for (uint32_t i = 0; i < count[0]; i++) {
        if (i > 0) put_trivia(s, inst[0].u, inst[0].u->nodes[kids[0][i]].tok_begin);
        for (uint32_t k = 0; k < n; k++) tuple[k] = kids[k][i];
        gen_node(s, tuple);
      }
    } else {
      gen_list(s, kids, count);
    }
  } else {
    uint32_t nodes[KM_AU_MAX_INST];
    for (uint32_t k = 0; k < n; k++) nodes[k] = inst[k].node;
    gen_node(s, nodes);
  }
  if (!s->out) put(s, "", 0);
  return !s->oom;
}

int km_generalize(const km_instance *inst, uint32_t n, km_generalization *g) {
  memset(g, 0, sizeof *g);
  if (n == 0 || n > KM_AU_MAX_INST) return 0;
  au s = { .g = g };
  g->ninstances = n;
  if (!gen_all(&s, inst, n)) {
    free(s.out);
    km_generalization_free(g);
    return 0;
  }
  g->text = s.out;
  g->len = s.len;
  return 1;
}

int km_generalize_edits(const km_instance *before, const km_instance *after, uint32_t n,
                        km_generalization *g) {
  memset(g, 0, sizeof *g);
  if (n == 0 || n > KM_AU_MAX_INST) return 0;
  au s = { .g = g };
  g->ninstances = n;
  if (!gen_all(&s, before, n)) goto fail;
  g->text = s.out;
  g->len = s.len;
  /* The after side: same hole table and counters, a fresh text. */
  s.out = NULL;
  s.len = s.cap = 0;
  s.after_side = 1;
  if (!gen_all(&s, after, n)) goto fail;
  g->after_text = s.out;
  g->after_len = s.len;
  return 1;
fail:
  free(s.out);
  km_generalization_free(g);
  return 0;
}
