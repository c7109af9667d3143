/* The matcher: runs a compiled pattern's steps against a unit's tokens from
 * a candidate start, backtracking over the extents a metavariable or `...`
 * may take, within a step budget. km_match_set finds the candidates for a
 * whole set of patterns in one walk of the node array (dispatch on kind,
 * literal-word prefilter) plus one scan of the opaque regions. */
#include <stdlib.h>
#include <string.h>

#include "match/match.h"

#define KM_TYPE_RUN_MAX 12

typedef struct mstate {
  const km_index *ix;
  const kl_unit *u;
  const kl_token *tk;
  const km_pattern *p;
  km_binding *b;        /* [p->nslots] current bindings                   */
  uint8_t *bound;
  uint64_t steps, max_steps;
  int capped;
  uint64_t total_left;  /* steps the whole run has left before this attempt */
  uint32_t start, limit;
  uint32_t root;        /* EXPR shape: the node the match must be          */
  uint32_t top;         /* STMTS shape: outermost statement at start       */
  uint32_t deep;        /* the block a `...` descended from, or KL_NONE     */
  uint32_t end, node;   /* the result                                      */
} mstate;

static int run(mstate *ms, uint32_t i, uint32_t t);

/* One unit of work outside run() (a token scanned while extending a
 * binding); 0 when the cap is reached. */
static int charge(mstate *ms) {
  if (++ms->steps > ms->max_steps) {
    ms->capped = 1;
    return 0;
  }
  return 1;
}

static int text_eq(const kl_unit *u, uint32_t t, const char *s, uint32_t n) {
  const kl_token *k = &u->tokens[t];
  return k->len == n && memcmp(u->src + k->off, s, n) == 0;
}

static int punct_is(const kl_token *k, char c) {
  return k->kind == KL_TOK_PUNCT && k->sub == KL_P1(c);
}

static int is_closer(const kl_token *k) {
  return punct_is(k, ')') || punct_is(k, ']') || punct_is(k, '}');
}

/* Compares a preprocessor line with a pattern directive, whitespace runs
 * (and line continuations) counting as one space, trailing space ignored. */
static int pp_eq(const kl_unit *u, uint32_t t, const char *s, uint32_t n) {
  const kl_token *k = &u->tokens[t];
  if (k->kind != KL_TOK_PP) return 0;
  const char *a = u->src + k->off, *ae = a + k->len, *be = s + n;
  for (;;) {
    int sa = 0, sb = 0;
    for (;;) {
      if (a < ae && (*a == ' ' || *a == '\t' || *a == '\r' || *a == '\n' || *a == '\\')) {
        a++, sa = 1;
      } else if (a + 1 < ae && a[0] == '/' && a[1] == '/') {
        a = ae; /* a line comment runs to the end of the directive */
        sa = 1;
      } else if (a + 1 < ae && a[0] == '/' && a[1] == '*') {
        a += 2;
        while (a + 1 < ae && !(a[0] == '*' && a[1] == '/')) a++;
        a = a + 2 <= ae ? a + 2 : ae;
        sa = 1;
      } else {
        break;
      }
    }
    while (s < be && (*s == ' ' || *s == '\t' || *s == '\n')) s++, sb = 1;
    if (a == ae || s == be) return a == ae && s == be;
    if (sa != sb || *a != *s) return 0;
    a++, s++;
  }
}

/* The token after the token tree starting at t. */
static uint32_t next_tree(const mstate *ms, uint32_t t) {
  const kl_token *k = &ms->tk[t];
  if (k->kind == KL_TOK_PUNCT && k->match != KL_NONE && k->match > t &&
      (k->sub == KL_P1('(') || k->sub == KL_P1('[') || k->sub == KL_P1('{') || (k->flags & KL_TF_ANGLE)))
    return k->match + 1 <= ms->limit ? k->match + 1 : ms->limit;
  return t + 1;
}

static int at_end(const mstate *ms, uint32_t t) {
  return t >= ms->limit || ms->tk[t].kind == KL_TOK_EOF || is_closer(&ms->tk[t]);
}

static int same_run(const mstate *ms, const km_binding *b, uint32_t t) {
  uint32_t n = b->tok_end - b->tok_begin;
  if (t + n > ms->limit) return 0;
  for (uint32_t k = 0; k < n; k++)
    if (!kl_token_equal(ms->u, b->tok_begin + k, ms->u, t + k)) return 0;
  return 1;
}

static uint32_t outermost_stmt_at(const mstate *ms, uint32_t t) {
  uint32_t best = KL_NONE;
  for (uint32_t n = ms->ix->start_node[t]; n != KL_NONE && ms->u->nodes[n].tok_begin == t;
       n = ms->u->nodes[n].parent)
    if (km_kind_is_stmt(ms->u->nodes[n].kind) && n != 0) best = n;
  return best;
}

static int try_bind(mstate *ms, uint32_t i, uint32_t t, uint32_t e, uint32_t node) {
  const km_step *st = &ms->p->steps[i];
  km_binding *b = &ms->b[st->slot];
  b->tok_begin = t;
  b->tok_end = e;
  b->node = node;
  b->deep = 0;
  ms->bound[st->slot] = 1;
  if (run(ms, i + 1, e)) return 1;
  ms->bound[st->slot] = 0;
  return 0;
}

static int type_token(const kl_token *k) {
  if (k->kind == KL_TOK_IDENT) return 1;
  if (k->kind == KL_TOK_KEYWORD) {
    switch (k->sub) {
    case KL_KW_CONST: case KL_KW_VOLATILE: case KL_KW_AUTO: case KL_KW_VOID: case KL_KW_CHAR:
    case KL_KW_SHORT: case KL_KW_INT: case KL_KW_LONG: case KL_KW_FLOAT: case KL_KW_DOUBLE:
    case KL_KW_SIGNED: case KL_KW_UNSIGNED: case KL_KW_BOOL: case KL_KW_RESTRICT:
    case KL_KW_STRUCT: case KL_KW_TYPENAME:
      return 1;
    default:
      return 0;
    }
  }
  return k->kind == KL_TOK_PUNCT && (k->sub == KL_P1('*') || k->sub == KL_P1('&') || k->sub == KL_P2(':', ':'));
}

static int type_node_at(const mstate *ms, uint32_t t, uint32_t e) {
  for (uint32_t n = ms->ix->start_node[t]; n != KL_NONE && ms->u->nodes[n].tok_begin == t; n = ms->u->nodes[n].parent)
    if (ms->u->nodes[n].kind == KL_N_TYPE && ms->u->nodes[n].tok_end == e) return 1;
  return 0;
}

/* Whether pragma node n stands before the body of a control statement
 * (rather than among the statements of a block). */
static int pragma_leads_body(const kl_unit *u, uint32_t n) {
  uint32_t par = u->nodes[n].parent;
  if (par == KL_NONE) return 0;
  switch (u->nodes[par].kind) {
  case KL_N_FOR: case KL_N_RANGE_FOR: case KL_N_WHILE: case KL_N_DO: case KL_N_IF: case KL_N_SWITCH:
    return 1;
  default:
    return 0;
  }
}

static int bind(mstate *ms, uint32_t i, uint32_t t) {
  const km_step *st = &ms->p->steps[i];
  const kl_unit *u = ms->u;
  if (ms->bound[st->slot]) {
    const km_binding *b = &ms->b[st->slot];
    return same_run(ms, b, t) && run(ms, i + 1, t + (b->tok_end - b->tok_begin));
  }
  if (t >= ms->limit || ms->tk[t].kind == KL_TOK_EOF) return 0;
  const kl_token *k = &ms->tk[t];
  switch (st->sort) {
  case KM_SORT_INT:
  case KM_SORT_IDENT: {
    if (k->kind != (st->sort == KM_SORT_INT ? KL_TOK_INT : KL_TOK_IDENT)) return 0;
    uint32_t node = ms->ix->start_node[t];
    if (node != KL_NONE && u->nodes[node].tok_end != t + 1) node = KL_NONE;
    return try_bind(ms, i, t, t + 1, node);
  }
  case KM_SORT_EXPR:
  case KM_SORT_STMT:
  case KM_SORT_TYPE: {
    int (*cat)(unsigned) = st->sort == KM_SORT_STMT ? km_kind_is_stmt : km_kind_is_expr;
    int found_type = 0;
    if (!ms->ix->opaque[t]) {
      /* The pragmas before an unbraced body belong to it (a positional
       * child before BODY/THEN/ELSE): $S of `for (...) $S` binds them
       * with the statement they apply to, never a pragma alone. */
      uint32_t first = ms->ix->start_node[t];
      if (st->sort == KM_SORT_STMT && first != KL_NONE && u->nodes[first].kind == KL_N_PRAGMA &&
          pragma_leads_body(u, first)) {
        uint32_t target = kl_pragma_target(u, first);
        if (target == KL_NONE || u->nodes[target].tok_end > ms->limit) return 0;
        return try_bind(ms, i, t, u->nodes[target].tok_end, KL_NONE);
      }
      uint32_t prev = KL_NONE;
      for (uint32_t n = ms->ix->start_node[t]; n != KL_NONE && u->nodes[n].tok_begin == t;
           n = u->nodes[n].parent) {
        const kl_node *nd = &u->nodes[n];
        int ok = st->sort == KM_SORT_TYPE ? nd->kind == KL_N_TYPE : cat(nd->kind);
        if (!ok || nd->tok_end > ms->limit || nd->tok_end == prev || n == 0) continue;
        prev = nd->tok_end;
        found_type = 1;
        if (try_bind(ms, i, t, nd->tok_end, n)) return 1;
        if (ms->capped) return 0;
      }
      if (st->sort != KM_SORT_TYPE) return 0;
    }
    if (st->sort == KM_SORT_TYPE) {
      /* A type the parser did not make a node of, or a part of one (the
       * pattern spells the `*` or `const` itself): a run of type words. */
      uint32_t e = t;
      for (int len = 0; len < KM_TYPE_RUN_MAX && e < ms->limit; len++) {
        const kl_token *x = &ms->tk[e];
        if ((x->flags & KL_TF_ANGLE) && x->match != KL_NONE && x->match > e) {
          e = next_tree(ms, e);
        } else if (type_token(x)) {
          e++;
        } else {
          break;
        }
        if (found_type && type_node_at(ms, t, e)) continue; /* tried above */
        if (try_bind(ms, i, t, e, KL_NONE)) return 1;
        if (ms->capped) return 0;
      }
      return 0;
    }
    /* Opaque region: balanced token runs, shortest first. An expression
     * is a run that is one expression and that binds tighter than the
     * operators on both sides of it (operand.c): the binding must be a
     * subexpression of the code, never a piece cut across an operator.
     * Once the run cannot be one, or is already too weak for its left
     * side, no longer run can: stop there. */
    uint32_t e = t;
    if (st->sort == KM_SORT_STMT) {
      /* Statement ends, one step each: the index knows the next one. */
      while (!at_end(ms, e)) {
        if (!charge(ms)) return 0;
        uint32_t s = ms->ix->stop[e];
        if (s >= ms->limit || at_end(ms, s)) break;
        e = next_tree(ms, s);
        if (try_bind(ms, i, t, e, KL_NONE)) return 1;
        if (ms->capped) return 0;
      }
      return 0;
    }
    km_run rs;
    km_run_init(&rs);
    km_ctx_side left = km_left_side(u, t);
    while (!at_end(ms, e)) {
      const kl_token *x = &ms->tk[e];
      int brace = punct_is(x, '{');
      if (punct_is(x, ';') || brace) break;
      if (!charge(ms)) return 0;
      uint32_t next = next_tree(ms, e);
      km_run_feed(&rs, u, e, next);
      e = next;
      if (rs.bad || !km_fits_left(rs.min, rs.first_amb, left)) break;
      if (!km_run_complete(&rs) || !km_fits_right(rs.min, km_right_side(u, e))) continue;
      if (try_bind(ms, i, t, e, KL_NONE)) return 1;
      if (ms->capped) return 0;
    }
    return 0;
  }
  default:
    return 0;
  }
}

/* The end of one statement starting at t, or t when there is none. */
static uint32_t next_stmt(mstate *ms, uint32_t t) {
  if (at_end(ms, t)) return t;
  if (!ms->ix->opaque[t]) {
    uint32_t n = outermost_stmt_at(ms, t);
    if (n == KL_NONE || ms->u->nodes[n].tok_end > ms->limit) return t;
    return ms->u->nodes[n].tok_end;
  }
  if (!charge(ms)) return t;
  uint32_t s = ms->ix->stop[t];
  if (s >= ms->limit) return ms->limit;
  if (at_end(ms, s)) return s;
  return next_tree(ms, s);
}

/* Records the extent [t, e) of a `...` or `$...XS` in its slot, if any. */
static void set_span(mstate *ms, const km_step *st, uint32_t t, uint32_t e, int deep) {
  if (st->slot == KM_NO_SLOT) return;
  km_binding *b = &ms->b[st->slot];
  b->tok_begin = t;
  b->tok_end = e;
  b->node = KL_NONE;
  b->deep = (uint32_t)deep;
  ms->bound[st->slot] = 1;
}

/* Runs the rest from each extent, shallowest first: e, then one more
 * statement (or token tree) at a time. A `...` where an expression goes
 * takes, beyond nothing, only runs that are one expression fitting the
 * operators around it, as a metavariable does in opaque code. */
static int span_from(mstate *ms, uint32_t i, uint32_t t, uint32_t e, int deep) {
  const km_step *st = &ms->p->steps[i];
  int expr = st->ctx == KM_CTX_EXPR && e == t;
  km_run rs;
  km_run_init(&rs);
  rs.comma_ok = 1;
  km_ctx_side left = expr ? km_left_side(ms->u, t) : (km_ctx_side){ KM_SIDE_DELIM, 0 };
  int here = 1;
  for (;;) {
    if (here) {
      set_span(ms, st, t, e, deep);
      if (run(ms, i + 1, e)) return 1;
      if (st->slot != KM_NO_SLOT) ms->bound[st->slot] = 0;
    }
    if (ms->capped || !charge(ms)) return 0;
    uint32_t next;
    if (st->ctx == KM_CTX_STMTS) {
      next = next_stmt(ms, e);
    } else {
      if (at_end(ms, e)) break;
      const kl_token *x = &ms->tk[e];
      if (st->ctx == KM_CTX_EXPR && (punct_is(x, ';') || punct_is(x, '{'))) break;
      next = next_tree(ms, e);
    }
    if (next == e) break;
    if (expr) {
      km_run_feed(&rs, ms->u, e, next);
      if (rs.bad || !km_fits_left(rs.min, rs.first_amb, left)) break;
      here = km_run_complete(&rs) && km_fits_right(rs.min, km_right_side(ms->u, next));
    }
    e = next;
  }
  return 0;
}

/* The child of block `deep` that holds token t, or KL_NONE. */
static uint32_t child_holding(const mstate *ms, uint32_t deep, uint32_t t) {
  const kl_unit *u = ms->u;
  uint32_t x = ms->ix->end_node[t];
  if (x == KL_NONE) x = ms->ix->start_node[t];
  while (x != KL_NONE && !(u->nodes[x].tok_begin <= t && t < u->nodes[x].tok_end)) x = u->nodes[x].parent;
  while (x != KL_NONE && u->nodes[x].parent != deep) x = u->nodes[x].parent;
  return x;
}

/* `...` and `$...XS`: extents from empty upward. A `...` between
 * statements also looks inside the statements it would skip (semgrep's
 * deep statement matching): the rest of the pattern may start at a nested
 * statement, and the next `...` climbs back out to the block it started
 * in. Until it has, no `}` and no end of pattern may be matched. */
static int span(mstate *ms, uint32_t i, uint32_t t) {
  const km_step *st = &ms->p->steps[i];
  const kl_unit *u = ms->u;
  if (st->op == KM_OP_SEQ && ms->bound[st->slot]) {
    const km_binding *b = &ms->b[st->slot];
    return same_run(ms, b, t) && run(ms, i + 1, t + (b->tok_end - b->tok_begin));
  }
  int deep_ok = st->op == KM_OP_SKIP && st->ctx == KM_CTX_STMTS && t < ms->limit && !ms->ix->opaque[t];
  if (deep_ok && ms->deep != KL_NONE) {
    /* Climb: skip the rest of the nested statement, then go on shallow. */
    uint32_t deep = ms->deep;
    uint32_t s = t > 0 ? child_holding(ms, deep, t - 1) : KL_NONE;
    if (s == KL_NONE) return 0;
    ms->deep = KL_NONE;
    int ok = span_from(ms, i, t, u->nodes[s].tok_end, 1);
    ms->deep = deep;
    return ok;
  }
  if (span_from(ms, i, t, t, 0)) return 1;
  if (!deep_ok || ms->deep != KL_NONE || ms->capped) return 0;
  /* Descend: every statement nested in the statements ahead. */
  uint32_t first = outermost_stmt_at(ms, t);
  if (first == KL_NONE) return 0;
  uint32_t block = u->nodes[first].parent;
  uint32_t last = block != KL_NONE ? u->nodes[block].subtree_end : u->nnodes;
  for (uint32_t x = first; x < last; x++) {
    const kl_node *nd = &u->nodes[x];
    if (nd->parent == block || !km_kind_is_stmt(nd->kind) || nd->tok_begin < t) continue;
    if (nd->tok_end > ms->limit || outermost_stmt_at(ms, nd->tok_begin) != x) continue;
    set_span(ms, st, t, nd->tok_begin, 1);
    ms->deep = block;
    int ok = run(ms, i + 1, nd->tok_begin);
    ms->deep = KL_NONE;
    if (ok) return 1;
    if (st->slot != KM_NO_SLOT) ms->bound[st->slot] = 0;
    if (ms->capped) return 0;
  }
  return 0;
}

static int finish(mstate *ms, uint32_t t) {
  const kl_unit *u = ms->u;
  if (t == ms->start) return 0;
  ms->node = KL_NONE;
  if (ms->p->shape == KM_SHAPE_EXPR) {
    if (ms->root != KL_NONE) {
      if (t != u->nodes[ms->root].tok_end) return 0;
      ms->node = ms->root;
    } else if (ms->ix->opaque[ms->start]) {
      /* Opaque code: the whole match must be a subexpression too. */
      unsigned s = ms->p->root_strength;
      if (s == KM_PREC_UNKNOWN) {
        ms->steps += t - ms->start;
        s = km_run_strength(u, ms->start, t, 0);
        if (s == KM_PREC_UNKNOWN ||
            !km_fits_left(s, km_tok_ambiguous(&ms->tk[ms->start]), km_left_side(u, ms->start)))
          return 0;
      }
      if (!km_fits_right(s, km_right_side(u, t))) return 0;
    } else {
      uint32_t n = ms->ix->start_node[ms->start];
      for (; n != KL_NONE && u->nodes[n].tok_begin == ms->start; n = u->nodes[n].parent)
        if (u->nodes[n].tok_end == t && km_kind_is_expr(u->nodes[n].kind)) break;
      if (n == KL_NONE || u->nodes[n].tok_begin != ms->start) return 0;
      ms->node = n;
    }
  } else if (!ms->ix->opaque[ms->start]) {
    if (ms->top == KL_NONE) return 0;
    uint32_t parent = u->nodes[ms->top].parent, n;
    for (n = ms->ix->end_node[t - 1]; n != KL_NONE && u->nodes[n].tok_end == t; n = u->nodes[n].parent)
      if (km_kind_is_stmt(u->nodes[n].kind) && u->nodes[n].parent == parent) break;
    if (n == KL_NONE || u->nodes[n].tok_end != t) return 0;
    ms->node = n == ms->top ? n : KL_NONE;
  }
  ms->end = t;
  return 1;
}

static int run(mstate *ms, uint32_t i, uint32_t t) {
  for (;;) {
    if (++ms->steps > ms->max_steps) {
      ms->capped = 1;
      return 0;
    }
    const km_step *st = &ms->p->steps[i];
    switch (st->op) {
    case KM_OP_TOKEN:
      if (t >= ms->limit || ms->tk[t].kind == KL_TOK_EOF ||
          !text_eq(ms->u, t, ms->p->pool + st->text, st->len))
        return 0;
      if (ms->deep != KL_NONE && punct_is(&ms->tk[t], '}')) return 0; /* climb out with `...` first */
      i++, t++;
      continue;
    case KM_OP_PP:
      if (t >= ms->limit || !pp_eq(ms->u, t, ms->p->pool + st->text, st->len)) return 0;
      i++, t++;
      continue;
    case KM_OP_BIND:
      return bind(ms, i, t);
    case KM_OP_SEQ:
    case KM_OP_SKIP:
      return span(ms, i, t);
    case KM_OP_END:
      return ms->deep == KL_NONE && finish(ms, t);
    default:
      return 0;
    }
  }
}

static int push_match(km_results *r, uint32_t pat, const mstate *ms) {
  if (r->n == r->cap) {
    uint32_t cap = r->cap ? r->cap * 2 : 64;
    km_match *m = realloc(r->m, cap * sizeof *m);
    if (!m) return 0;
    r->m = m, r->cap = cap;
  }
  uint32_t ns = ms->p->nslots;
  if (r->nb + ns > r->capb) {
    uint32_t cap = r->capb ? r->capb : 256;
    while (cap < r->nb + ns) cap *= 2;
    km_binding *b = realloc(r->b, cap * sizeof *b);
    if (!b) return 0;
    r->b = b, r->capb = cap;
  }
  km_match *m = &r->m[r->n++];
  m->pattern = pat;
  m->tok_begin = ms->start;
  m->tok_end = ms->end;
  m->node = ms->node;
  m->bind = r->nb;
  for (uint32_t s = 0; s < ns; s++) {
    km_binding b = ms->b[s];
    if (!ms->bound[s]) b.tok_begin = b.tok_end = b.node = KL_NONE, b.deep = 0;
    r->b[r->nb++] = b;
  }
  return 1;
}

/* The pattern's structural checks against node n (prefilter). */
static int checks_hold(const kl_unit *u, const km_pattern *p, uint32_t n) {
  for (uint32_t c = 0; c < p->nchecks; c++) {
    const km_check *k = &p->checks[c];
    uint32_t x = n;
    for (uint32_t q = 0; q < k->depth; q++) {
      if (k->path[q] >= u->nodes[x].child_count) return 0;
      x = kl_child(u, x, k->path[q]);
    }
    if (u->nodes[x].kind != k->kind || (k->op && u->nodes[x].op != k->op)) return 0;
  }
  return 1;
}

/* One attempt of pattern p from token start. */
static int attempt(mstate *ms, km_results *r, uint32_t pat, uint32_t start, uint32_t limit,
                   uint32_t root, uint32_t top) {
  const km_step *first = &ms->p->steps[0];
  r->candidates++;
  if (first->op == KM_OP_TOKEN && !text_eq(ms->u, start, ms->p->pool + first->text, first->len))
    return 1;
  if (ms->ix->opaque[start]) {
    /* Where code is not structured, a match starts where its root could:
     * an expression after an operator weaker than its root (so `b * c`
     * is not taken from `a - b * c`... but `a * b` is not taken from
     * `x / a * b`), a statement where a statement can start. */
    if (ms->p->shape == KM_SHAPE_STMTS) {
      if (!km_stmt_boundary(ms->u, start)) return 1;
    } else if (ms->p->root_strength == KM_PREC_COMMA) {
      return 1; /* `a, b` there may be two arguments, not a comma expression */
    } else if (ms->p->root_strength != KM_PREC_UNKNOWN &&
               !km_fits_left(ms->p->root_strength, km_tok_ambiguous(&ms->tk[start]), km_left_side(ms->u, start))) {
      return 1;
    }
  }
  if (ms->total_left == 0) {
    r->stopped = 1;
    return 1;
  }
  memset(ms->bound, 0, ms->p->nslots ? ms->p->nslots : 1);
  ms->start = start;
  ms->limit = limit;
  ms->root = root;
  ms->top = top;
  ms->deep = KL_NONE;
  ms->capped = 0;
  ms->steps = 0;
  uint64_t per = ms->max_steps;
  if (ms->max_steps > ms->total_left) ms->max_steps = ms->total_left;
  int ok = run(ms, 0, start);
  ms->max_steps = per;
  if (ms->steps > ms->total_left) ms->steps = ms->total_left;
  ms->total_left -= ms->steps;
  r->steps += ms->steps;
  if (ms->capped) {
    r->capped++;
    if (ms->total_left == 0) r->stopped = 1;
  }
  if (ok && !push_match(r, pat, ms)) return 0;
  return 1;
}

void km_results_free(km_results *r) {
  if (!r) return;
  free(r->m);
  free(r->b);
  memset(r, 0, sizeof *r);
}

void km_set_free(km_set *s) {
  if (!s) return;
  free(s->pats);
  free(s->lists);
  free(s->live);
  free(s->found);
  free(s->b);
  free(s->bound);
  free(s);
}

km_set *km_set_new(km_pattern *const *pats, uint32_t npats) {
  km_set *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  uint32_t n1 = npats ? npats : 1;
  s->npats = npats;
  s->maxslots = 1;
  for (uint32_t k = 0; k < npats; k++)
    if (pats[k]->nslots > s->maxslots) s->maxslots = pats[k]->nslots;
  s->pats = malloc(n1 * sizeof *s->pats);
  s->lists = malloc(2 * (size_t)n1 * sizeof *s->lists);
  s->live = malloc(n1);
  s->found = malloc(n1 * sizeof *s->found);
  s->b = malloc(s->maxslots * sizeof *s->b);
  s->bound = malloc(s->maxslots);
  if (!s->pats || !s->lists || !s->live || !s->found || !s->b || !s->bound) {
    km_set_free(s);
    return NULL;
  }
  if (npats) memcpy(s->pats, pats, npats * sizeof *pats);
  /* Dispatch lists: patterns by root kind, then those with none (ANY),
   * as counts turned into offsets. */
  const uint32_t ANY = KL_N__COUNT;
  uint32_t *start = s->start;
  memset(s->start, 0, sizeof s->start);
  for (uint32_t k = 0; k < npats; k++) {
    const km_pattern *p = pats[k];
    if (p->root_kind[0] == KL_N__COUNT) start[ANY + 1]++;
    for (int j = 0; j < 2; j++)
      if (p->root_kind[j] != KL_N__COUNT && (j == 0 || p->root_kind[1] != p->root_kind[0]))
        start[p->root_kind[j] + 1]++;
  }
  for (uint32_t k = 1; k <= KL_N__COUNT + 1; k++) start[k] += start[k - 1];
  uint32_t cursor[KL_N__COUNT + 1];
  memcpy(cursor, start, sizeof cursor);
  for (uint32_t k = 0; k < npats; k++) {
    const km_pattern *p = pats[k];
    if (p->root_kind[0] == KL_N__COUNT) s->lists[cursor[ANY]++] = k;
    for (int j = 0; j < 2; j++)
      if (p->root_kind[j] != KL_N__COUNT && (j == 0 || p->root_kind[1] != p->root_kind[0]))
        s->lists[cursor[p->root_kind[j]]++] = k;
  }
  return s;
}

int km_match_set(const km_index *ix, km_pattern *const *pats, uint32_t npats,
                 const km_options *opt, km_results *r) {
  km_set *s = km_set_new(pats, npats);
  if (!s) {
    r->oom = 1;
    return 0;
  }
  int ok = km_match_run(ix, s, opt, r);
  km_set_free(s);
  return ok;
}

int km_match_run(const km_index *ix, km_set *set, const km_options *opt, km_results *r) {
  const kl_unit *u = ix->u;
  km_options dflt = { 1, 0, 0, 0 };
  if (!opt) opt = &dflt;
  const uint32_t ANY = KL_N__COUNT;
  const uint32_t *start = set->start, *lists = set->lists;
  km_pattern *const *pats = set->pats;
  uint32_t npats = set->npats;
  uint8_t *live = set->live;
  uint32_t *found = set->found;

  /* The literal-word prefilter, per unit: the signature first, then the
   * exact words. */
  for (uint32_t k = 0; k < npats; k++) {
    const km_pattern *p = pats[k];
    live[k] = 1;
    found[k] = 0;
    if (!opt->prefilter) continue;
    if (!km_sig_covers(&ix->unit_sig, &p->word_sig)) {
      live[k] = 0;
    } else {
      for (uint32_t w = 0; w < p->nwords && live[k]; w++) {
        const char *s = p->pool + p->words[w];
        if (!kl_unit_has_word(u, s, strlen(s))) live[k] = 0;
      }
    }
    if (!live[k]) r->prefiltered++;
  }

  mstate ms = { .ix = ix, .u = u, .tk = u->tokens, .b = set->b, .bound = set->bound };
  ms.max_steps = opt->max_steps ? opt->max_steps : KM_DEFAULT_MAX_STEPS;
  /* The whole run is bounded too, so that many candidates each capped (or
   * each just under the cap) cannot add up to more than linear work. */
  ms.total_left = opt->max_total_steps
                      ? opt->max_total_steps
                      : ((uint64_t)KM_DEFAULT_MAX_TOTAL + (uint64_t)KM_TOTAL_PER_TOKEN * u->ntokens) * (npats ? npats : 1);
  r->max_steps = ms.max_steps;
  r->max_total_steps = ms.total_left;
  uint32_t eof = u->ntokens ? u->ntokens - 1 : 0;
  int ok = 1;

  /* The one walk over the node array. Inside a top-level item, a pattern
   * needing a word the item lacks is skipped (a match there never leaves
   * the item); the item itself and file-level code check the unit only. */
  const km_sig *item = NULL;
  uint32_t item_end = 0;
  for (uint32_t n = 1; n < u->nnodes && ok && !r->stopped; n++) {
    const kl_node *nd = &u->nodes[n];
    if (ix->item_of[n] != KL_NONE) {
      item = opt->prefilter ? &ix->item_sig[ix->item_of[n]] : NULL;
      item_end = nd->subtree_end;
    }
    const km_sig *sig = n < item_end && nd->parent != 0 ? item : NULL;
    if (nd->tok_begin >= nd->tok_end || ix->opaque[nd->tok_begin]) continue;
    if (start[nd->kind] == start[nd->kind + 1] && start[ANY] == start[ANY + 1]) continue; /* nobody starts here */
    int is_stmt = km_kind_is_stmt(nd->kind), is_expr = km_kind_is_expr(nd->kind);
    if (!is_stmt && !is_expr) continue;
    /* A statement pattern starts once per start token: on the outermost
     * statement there. */
    int top_stmt = is_stmt && outermost_stmt_at(&ms, nd->tok_begin) == n;
    for (int pass = 0; pass < 2 && ok; pass++) {
      uint32_t key = pass == 0 ? nd->kind : ANY;
      for (uint32_t j = start[key]; j < start[key + 1] && ok; j++) {
        uint32_t k = lists[j];
        km_pattern *p = pats[k];
        if (!live[k] || (opt->max_matches && found[k] >= opt->max_matches)) continue;
        if (sig && !km_sig_covers(sig, &p->word_sig)) {
          r->prefiltered_items++;
          continue;
        }
        ms.p = p;
        uint32_t before = r->n;
        if (p->shape == KM_SHAPE_EXPR) {
          if (!is_expr) continue;
          if (pass == 0 && p->root_op && nd->op != p->root_op) continue;
          if (pass == 0 && opt->prefilter && p->nchecks && !checks_hold(u, p, n)) {
            r->prefiltered_items++;
            continue;
          }
          ok = attempt(&ms, r, k, nd->tok_begin, nd->tok_end, n, KL_NONE);
        } else {
          if (!top_stmt) continue;
          if (pass == 0 && p->child_kind != KL_N__COUNT) {
            /* Second-level dispatch: the statement's expression. */
            if (nd->child_count == 0) continue;
            const kl_node *c = &u->nodes[kl_child(u, n, 0)];
            if (c->kind != p->child_kind || (p->child_op && c->op != p->child_op)) continue;
          }
          uint32_t parent = nd->parent;
          uint32_t limit = parent != KL_NONE && parent != 0 ? u->nodes[parent].tok_end : eof;
          if (pass == 0 && p->root_op && nd->op != p->root_op) continue;
          if (pass == 0 && opt->prefilter && p->nchecks && !checks_hold(u, p, n)) {
            r->prefiltered_items++;
            continue;
          }
          ok = attempt(&ms, r, k, nd->tok_begin, limit, KL_NONE, n);
        }
        found[k] += r->n - before;
      }
    }
  }

  /* Opaque regions: token-level, every start. */
  uint32_t nop = 0;
  const uint32_t *op = kl_unit_nodes_of_kind(u, KL_N_OPAQUE, &nop);
  for (uint32_t q = 0; q < nop && ok && !r->stopped; q++) {
    const kl_node *nd = &u->nodes[op[q]];
    for (uint32_t t = nd->tok_begin; t < nd->tok_end && ok && !r->stopped; t++) {
      for (uint32_t k = 0; k < npats && ok; k++) {
        if (!live[k] || (opt->max_matches && found[k] >= opt->max_matches)) continue;
        ms.p = pats[k];
        uint32_t before = r->n;
        ok = attempt(&ms, r, k, t, nd->tok_end, KL_NONE, KL_NONE);
        found[k] += r->n - before;
      }
    }
  }
  if (!ok) r->oom = 1;
  return ok;
}
