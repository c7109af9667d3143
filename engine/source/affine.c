/* Affine analysis of index expressions: a linear form over threadIdx.*,
 * blockIdx.* and loop induction variables whose coefficients are integers
 * times uniform symbols (blockDim.*, gridDim.*, kernel parameters), plus a
 * list of non-affine addends. From it, per pointer-parameter access, the
 * stride along threadIdx.x (coalescing) and along the innermost loop. */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

typedef struct context {
  kl_unit *u;
  uint32_t fn;
  const kl_fn_index *ix; /* locals, assignments and parameters by name */
  /* Work left for one access: substituting locals can repeat subtrees
   * (b = a + a; c = b + b; ...), so the analysis is capped. */
  uint32_t *work;
} context;

#define KL_AFFINE_WORK 4096

static int text_eq(const kl_unit *u, uint32_t off, uint32_t len, const char *s, size_t n) {
  return len == n && memcmp(u->src + off, s, n) == 0;
}

static void ident_text(const kl_unit *u, uint32_t node, uint32_t *off, uint32_t *len) {
  uint32_t b, e;
  kl_node_span(u, node, &b, &e);
  *off = b;
  *len = e - b;
}

/* ---- forms ----------------------------------------------------------------------- */

static int sym_cmp(const kl_unit *u, const kl_asym *a, const kl_asym *b) {
  if (a->len != b->len) return a->len < b->len ? -1 : 1;
  return memcmp(u->src + a->off, u->src + b->off, a->len);
}

static int same_monomial(const kl_unit *u, const kl_aterm *a, const kl_aterm *b) {
  if (a->var != b->var || a->nsyms != b->nsyms) return 0;
  if (a->var == KL_AV_LOOP && a->loop_node != b->loop_node) return 0;
  for (uint32_t i = 0; i < a->nsyms; i++)
    if (sym_cmp(u, &a->syms[i], &b->syms[i]) != 0) return 0;
  return 1;
}

static int add_term(const kl_unit *u, kl_affine *f, const kl_aterm *t) {
  if (t->coef == 0) return 1;
  for (uint32_t i = 0; i < f->nterms; i++) {
    if (!same_monomial(u, &f->terms[i], t)) continue;
    f->terms[i].coef = (int64_t)((uint64_t)f->terms[i].coef + (uint64_t)t->coef);
    if (f->terms[i].coef == 0) f->terms[i] = f->terms[--f->nterms];
    return 1;
  }
  if (f->nterms == KL_AFFINE_MAX_TERMS) return 0;
  f->terms[f->nterms++] = *t;
  return 1;
}

static int add_form(const kl_unit *u, kl_affine *dst, const kl_affine *src, int64_t sign) {
  dst->flags |= src->flags;
  for (uint32_t i = 0; i < src->nterms; i++) {
    kl_aterm t = src->terms[i];
    t.coef = (int64_t)((uint64_t)t.coef * (uint64_t)sign);
    if (!add_term(u, dst, &t)) return 0;
  }
  for (uint32_t i = 0; i < src->nrest; i++) {
    if (dst->nrest < 8) dst->rest[dst->nrest] = src->rest[i];
    dst->nrest++;
  }
  return 1;
}

static int uniform(const kl_affine *f) {
  for (uint32_t i = 0; i < f->nterms; i++)
    if (f->terms[i].var != KL_AV_CONST) return 0;
  return f->nrest == 0;
}

static int pure_const(const kl_affine *f, int64_t *v) {
  *v = 0;
  for (uint32_t i = 0; i < f->nterms; i++) {
    if (f->terms[i].var != KL_AV_CONST || f->terms[i].nsyms) return 0;
    *v = f->terms[i].coef;
  }
  return f->nrest == 0;
}

static int multiply(const kl_unit *u, const kl_affine *a, const kl_affine *b, kl_affine *out) {
  if (a->nrest || b->nrest) return 0; /* a non-affine factor: not affine */
  if (!uniform(a) && !uniform(b)) return 0;
  if (!uniform(a)) {
    const kl_affine *t = a;
    a = b;
    b = t;
  }
  /* a is uniform: distribute it over b's terms */
  memset(out, 0, sizeof *out);
  out->flags = a->flags | b->flags;
  for (uint32_t i = 0; i < b->nterms; i++) {
    for (uint32_t j = 0; j < a->nterms; j++) {
      kl_aterm t = b->terms[i];
      const kl_aterm *c = &a->terms[j];
      if (t.nsyms + c->nsyms > KL_AFFINE_MAX_SYMS) return 0;
      t.coef = (int64_t)((uint64_t)t.coef * (uint64_t)c->coef);
      for (uint32_t k = 0; k < c->nsyms; k++) {
        /* insertion keeps symbols sorted, so equal monomials compare equal */
        uint32_t at = t.nsyms;
        while (at > 0 && sym_cmp(u, &t.syms[at - 1], &c->syms[k]) > 0) {
          t.syms[at] = t.syms[at - 1];
          at--;
        }
        t.syms[at] = c->syms[k];
        t.nsyms++;
      }
      if (!add_term(u, out, &t)) return 0;
    }
  }
  return 1;
}

static void constant(kl_affine *f, int64_t v) {
  memset(f, 0, sizeof *f);
  if (v) {
    f->nterms = 1;
    f->terms[0].var = KL_AV_CONST;
    f->terms[0].coef = v;
    f->terms[0].loop_node = KL_NONE;
  }
}

static void symbol(kl_affine *f, uint32_t off, uint32_t len) {
  memset(f, 0, sizeof *f);
  f->nterms = 1;
  f->terms[0].var = KL_AV_CONST;
  f->terms[0].coef = 1;
  f->terms[0].nsyms = 1;
  f->terms[0].syms[0] = (kl_asym){off, len};
  f->terms[0].loop_node = KL_NONE;
}

static void variable(kl_affine *f, uint8_t var, uint32_t off, uint32_t len, uint32_t loop) {
  memset(f, 0, sizeof *f);
  f->nterms = 1;
  f->terms[0].var = var;
  f->terms[0].coef = 1;
  f->terms[0].var_off = off;
  f->terms[0].var_len = len;
  f->terms[0].loop_node = loop;
}

/* ---- the function's facts ----------------------------------------------------------- */

static uint32_t find_param(const context *c, uint32_t off, uint32_t len) {
  return kl_fn_param(c->ix, kl_fn_name(c->ix, c->u, off, len));
}

/* Sets c up for function fn; 0 when out of memory. The index is the
 * unit's (kept for the next query on fn), nothing to free. */
static int context_init(context *c, kl_unit *u, uint32_t fn, uint32_t *work) {
  memset(c, 0, sizeof *c);
  c->u = u;
  c->fn = fn;
  c->work = work;
  uint32_t nconsts;
  kl_unit_constants(u, &nconsts); /* computed before the index is taken */
  c->ix = kl_fn_index_get(u, fn);
  return c->ix != NULL;
}

static void context_free(context *c) { (void)c; }

/* The for-loop enclosing `site` whose induction variable is named by the
 * text at off/len, or KL_NONE. Only loops at most 511 levels above the
 * site count (the bound of the walk this lookup replaces). */
static uint32_t loop_of_var(const context *c, uint32_t site, uint32_t off, uint32_t len) {
  return kl_fn_loop(c->ix, c->u, kl_fn_name(c->ix, c->u, off, len), site, 511);
}

/* ---- locals in scope ------------------------------------------------------------- */

static int is_name(const kl_unit *u, uint32_t node, uint32_t off, uint32_t len);

/* The declaration of `name` visible at `site`: the last declarator of that
 * name in a statement before the site in an enclosing block (or a for-loop
 * init). Returns 0 when none is in scope, 1 with *value (its initializer)
 * when the variable is never assigned again within its block, and -1 when
 * it is (or has no initializer). The walk goes up the site's ancestors
 * (the tree's depth is capped by the parser); each level is one lookup in
 * the function's index, whatever the number of statements. A site outside
 * fn sees no locals. */
static int resolve_local(const context *c, uint32_t site, uint32_t off, uint32_t len,
                         uint32_t *value) {
  const kl_unit *u = c->u;
  uint32_t name = kl_fn_name(c->ix, u, off, len);
  if (!kl_fn_has_decl(c->ix, name)) return 0; /* parameters, constants */
  uint32_t decl = KL_NONE, scope = KL_NONE, levels = 0;
  for (uint32_t child = site, n = u->nodes[site].parent; n != KL_NONE && decl == KL_NONE;
       child = n, n = u->nodes[n].parent) {
    const kl_node *nd = &u->nodes[n];
    /* a use deep below its declaration costs the walk: each level past
     * the eighth is charged to the access's work, so deep nesting cannot
     * make an access unbounded */
    if (++levels > 8) {
      if (*c->work == 0) return -1; /* out of work: treat as unknown */
      (*c->work)--;
    }
    if (nd->kind == KL_N_COMPOUND) {
      /* declarations of the block's statements before the site's */
      decl = kl_fn_last_decl(c->ix, name, n, child);
    } else if (nd->kind == KL_N_FOR || nd->kind == KL_N_RANGE_FOR) {
      /* the loop's init declares for the rest of the loop, not for itself */
      if (kl_node_field(u, n, KL_F_INIT) != child) decl = kl_fn_last_decl(c->ix, name, n, KL_NONE);
    }
    if (decl != KL_NONE) scope = n;
    if (n == c->fn) break;
  }
  if (decl == KL_NONE) return 0;
  *value = kl_node_field(u, decl, KL_F_VALUE);
  if (*value == KL_NONE) return -1;
  /* reassigned anywhere in its block? (x = .., x += .., x++, --x) */
  if (kl_fn_written(c->ix, name, scope, u->nodes[scope].subtree_end)) return -1;
  return 1;
}

/* ---- the analysis ------------------------------------------------------------------ */

static int form_of(const context *c, uint32_t site, uint32_t n, int depth, kl_affine *out);
static int sum_of(const context *c, uint32_t site, uint32_t n, int depth, int64_t sign,
                  kl_affine *acc);

static int is_name(const kl_unit *u, uint32_t node, uint32_t off, uint32_t len) {
  if (node == KL_NONE || u->nodes[node].kind != KL_N_IDENT) return 0;
  uint32_t o, l;
  ident_text(u, node, &o, &l);
  return l == len && memcmp(u->src + o, u->src + off, len) == 0;
}

/* The per-iteration step of induction variable `name` in a for-loop's
 * STEP expression (i++, --i, i += s, i -= s, i = i + s) as a uniform form;
 * 0 when the step is not of that shape. */
static int loop_step(const context *c, uint32_t site, uint32_t step, uint32_t off, uint32_t len,
                     int depth, kl_affine *out) {
  const kl_unit *u = c->u;
  if (step == KL_NONE) return 0;
  const kl_node *sn = &u->nodes[step];
  if ((sn->kind == KL_N_POSTFIX || sn->kind == KL_N_UNARY) &&
      is_name(u, kl_child(u, step, 0), off, len)) {
    if (sn->op == KL_P2('+', '+')) return constant(out, 1), 1;
    if (sn->op == KL_P2('-', '-')) return constant(out, -1), 1;
    return 0;
  }
  if (sn->kind != KL_N_ASSIGN || !is_name(u, kl_child(u, step, 0), off, len)) return 0;
  uint32_t rhs = kl_child(u, step, 1);
  kl_affine f;
  int64_t sign = 1;
  if (sn->op == KL_P2('+', '=') || sn->op == KL_P2('-', '=')) {
    if (!form_of(c, site, rhs, depth + 1, &f)) return 0;
    if (sn->op == KL_P2('-', '=')) sign = -1;
  } else if (sn->op == '=' && u->nodes[rhs].kind == KL_N_BINARY && u->nodes[rhs].op == '+' &&
             is_name(u, kl_child(u, rhs, 0), off, len)) {
    if (!form_of(c, site, kl_child(u, rhs, 1), depth + 1, &f)) return 0;
  } else {
    return 0;
  }
  if (!uniform(&f)) return 0;
  memset(out, 0, sizeof *out);
  return add_form(u, out, &f, sign);
}

/* An induction variable as init + step * (iteration): its dependence on
 * threadIdx/blockIdx comes from the initializer (grid-stride loops), and
 * the KL_AV_LOOP term carries the per-iteration step. A step of another
 * shape keeps the plain variable. */
static int loop_form(const context *c, uint32_t site, uint32_t loop, uint32_t off, uint32_t len,
                     int depth, kl_affine *out) {
  const kl_unit *u = c->u;
  kl_affine step, iter, init;
  variable(&iter, KL_AV_LOOP, off, len, loop);
  if (!loop_step(c, site, kl_node_field(u, loop, KL_F_STEP), off, len, depth, &step)) {
    *out = iter;
    return 1;
  }
  uint32_t init_expr = KL_NONE, in = kl_node_field(u, loop, KL_F_INIT);
  if (in != KL_NONE && u->nodes[in].kind == KL_N_DECL) {
    for (uint32_t i = 0; i < u->nodes[in].child_count; i++) {
      uint32_t d = kl_child(u, in, i);
      if (u->nodes[d].kind == KL_N_DECLARATOR &&
          is_name(u, kl_node_field(u, d, KL_F_NAME), off, len))
        init_expr = kl_node_field(u, d, KL_F_VALUE);
    }
  } else if (in != KL_NONE && u->nodes[in].kind == KL_N_ASSIGN && u->nodes[in].op == '=' &&
             is_name(u, kl_child(u, in, 0), off, len)) {
    init_expr = kl_child(u, in, 1);
  }
  memset(&init, 0, sizeof init);
  if (init_expr != KL_NONE) {
    /* the initializer is read outside the loop: its own loop variables
     * are those of the enclosing loops, found from the same site */
    if (!sum_of(c, site, init_expr, depth + 1, 1, &init) || init.nrest) return 0;
  }
  kl_affine moved;
  if (!multiply(u, &iter, &step, &moved)) return 0;
  *out = init;
  return add_form(u, out, &moved, 1);
}

static int sum_of(const context *c, uint32_t site, uint32_t n, int depth, int64_t sign,
                  kl_affine *acc) {
  const kl_unit *u = c->u;
  if (*c->work == 0) {
    if (acc->nrest < 8) acc->rest[acc->nrest] = n;
    acc->nrest++;
    return 1;
  }
  (*c->work)--;
  const kl_node *nd = &u->nodes[n];
  if (nd->kind == KL_N_BINARY && (nd->op == '+' || nd->op == '-')) {
    if (!sum_of(c, site, kl_child(u, n, 0), depth, sign, acc)) return 0;
    return sum_of(c, site, kl_child(u, n, 1), depth, nd->op == '-' ? -sign : sign, acc);
  }
  if (nd->kind == KL_N_PAREN) return sum_of(c, site, kl_child(u, n, 0), depth, sign, acc);
  kl_affine f;
  if (form_of(c, site, n, depth, &f)) return add_form(u, acc, &f, sign);
  if (acc->nrest < 8) acc->rest[acc->nrest] = n;
  acc->nrest++;
  return 1;
}

/* x / C and x % C (is_div 0) at warp level, see KL_AF_WARP. x must hold
 * threadIdx.x with coefficient 1. Its other terms with integer coefficients
 * that C divides pass through exactly ((tid + C*k) / C = tid / C + k, and
 * vanish mod C); the remaining warp-uniform ones fold into the symbol (for
 * /) or into the dropped offset (for %). A loop term that C does not divide
 * would hide a loop dependence: not affine then. */
static int warp_divmod(const kl_unit *u, uint32_t n, const kl_affine *x, int64_t divisor,
                       int is_div, kl_affine *out) {
  if (divisor <= 0 || divisor % 32 != 0 || x->nrest) return 0;
  int lanes = 0;
  kl_affine exact;
  memset(&exact, 0, sizeof exact);
  for (uint32_t i = 0; i < x->nterms; i++) {
    const kl_aterm *t = &x->terms[i];
    if (t->var == KL_AV_THREAD_X) {
      if (t->coef != 1 || t->nsyms) return 0;
      lanes = 1;
    } else if (!t->nsyms && t->coef % divisor == 0) {
      kl_aterm q = *t;
      q.coef = t->coef / divisor;
      if (is_div && !add_term(u, &exact, &q)) return 0;
    } else if (t->var == KL_AV_LOOP) {
      return 0;
    }
  }
  if (!lanes) return 0;
  if (is_div) {
    uint32_t b, e;
    kl_node_span(u, n, &b, &e);
    symbol(out, b, e - b);
    if (!add_form(u, out, &exact, 1)) return 0;
  } else {
    variable(out, KL_AV_THREAD_X, 0, 0, KL_NONE);
  }
  out->flags |= KL_AF_WARP;
  return 1;
}

static int form_of(const context *c, uint32_t site, uint32_t n, int depth, kl_affine *out) {
  kl_unit *u = c->u;
  const kl_node *nd = &u->nodes[n];
  if (depth > 24 || *c->work == 0) return 0;
  (*c->work)--;
  switch (nd->kind) {
  case KL_N_INT_LIT: {
    int64_t v;
    if (!kl_eval_tokens(u, u->tokens, nd->tok_begin, nd->tok_end, u->src, &v)) return 0;
    constant(out, v);
    return 1;
  }
  case KL_N_PAREN:
  case KL_N_CAST:
  case KL_N_CXX_CAST:
    return form_of(c, site, kl_node_field(u, n, KL_F_OPERAND), depth + 1, out);
  case KL_N_MEMBER: {
    uint32_t obj = kl_node_field(u, n, KL_F_OBJECT), mem = kl_node_field(u, n, KL_F_MEMBER);
    if (obj == KL_NONE || mem == KL_NONE || u->nodes[obj].kind != KL_N_IDENT) return 0;
    uint32_t oo, ol, mo, ml;
    ident_text(u, obj, &oo, &ol);
    ident_text(u, mem, &mo, &ml);
    if (ml != 1 || u->src[mo] < 'x' || u->src[mo] > 'z') return 0;
    int axis = u->src[mo] - 'x';
    if (text_eq(u, oo, ol, "threadIdx", 9)) {
      variable(out, (uint8_t)(KL_AV_THREAD_X + axis), 0, 0, KL_NONE);
      return 1;
    }
    if (text_eq(u, oo, ol, "blockIdx", 8)) {
      variable(out, (uint8_t)(KL_AV_BLOCK_X + axis), 0, 0, KL_NONE);
      return 1;
    }
    if (text_eq(u, oo, ol, "blockDim", 8) || text_eq(u, oo, ol, "gridDim", 7)) {
      uint32_t b, e;
      kl_node_span(u, n, &b, &e);
      symbol(out, b, e - b);
      return 1;
    }
    return 0;
  }
  case KL_N_IDENT: {
    uint32_t off, len;
    ident_text(u, n, &off, &len);
    uint32_t loop = loop_of_var(c, site, off, len);
    if (loop != KL_NONE) return loop_form(c, site, loop, off, len, depth, out);
    uint32_t value;
    int local = resolve_local(c, site, off, len, &value);
    if (local < 0) return 0;
    if (local > 0) {
      memset(out, 0, sizeof *out);
      if (!sum_of(c, site, value, depth + 1, 1, out)) return 0;
      return out->nrest == 0;
    }
    if (find_param(c, off, len) != KL_NONE) {
      symbol(out, off, len);
      return 1;
    }
    uint32_t k = kl_const_find(u, u->src + off, len);
    if (k != KL_NONE) {
      if (u->consts[k].known) constant(out, u->consts[k].value);
      else symbol(out, off, len);
      return 1;
    }
    return 0;
  }
  case KL_N_UNARY:
    if (nd->op == '-' || nd->op == '+') {
      kl_affine f;
      if (!form_of(c, site, kl_child(u, n, 0), depth + 1, &f)) return 0;
      memset(out, 0, sizeof *out);
      return add_form(u, out, &f, nd->op == '-' ? -1 : 1);
    }
    return 0;
  case KL_N_BINARY: {
    kl_affine a, b;
    if (nd->op == '+' || nd->op == '-') {
      memset(out, 0, sizeof *out);
      if (!sum_of(c, site, n, depth + 1, 1, out)) return 0;
      return out->nrest == 0;
    }
    if (!form_of(c, site, kl_child(u, n, 0), depth + 1, &a) ||
        !form_of(c, site, kl_child(u, n, 1), depth + 1, &b))
      return 0;
    int64_t x, y;
    switch (nd->op) {
    case '*':
      return multiply(u, &a, &b, out);
    case KL_P2('<', '<'):
      if (!pure_const(&b, &y) || y < 0 || y > 62) return 0;
      {
        kl_affine k;
        constant(&k, (int64_t)1 << y);
        return multiply(u, &a, &k, out);
      }
    case '/': case '%': case KL_P2('>', '>'): case '&':
      if (uniform(&a) && uniform(&b) && !(pure_const(&a, &x) && pure_const(&b, &y))) {
        /* n / 4, N >> 2: a value all threads share is a symbol */
        uint32_t sb, se;
        kl_node_span(u, n, &sb, &se);
        symbol(out, sb, se - sb);
        return 1;
      }
      if (!pure_const(&b, &y)) return 0;
      if (!pure_const(&a, &x)) {
        /* lane/warp arithmetic on thread indices */
        if (nd->op == '/') return warp_divmod(u, n, &a, y, 1, out);
        if (nd->op == '%') return warp_divmod(u, n, &a, y, 0, out);
        if (nd->op == KL_P2('>', '>'))
          return y >= 5 && y < 62 && warp_divmod(u, n, &a, (int64_t)1 << y, 1, out);
        /* x & (2^k - 1) is x % 2^k */
        return y > 0 && (y & (y + 1)) == 0 && warp_divmod(u, n, &a, y + 1, 0, out);
      }
      if (nd->op == '&') {
        constant(out, x & y);
        return 1;
      }
      if (nd->op == KL_P2('>', '>')) {
        if (y < 0 || y > 63) return 0;
        constant(out, x >> y);
        return 1;
      }
      if (y == 0 || (x == INT64_MIN && y == -1)) return 0;
      constant(out, nd->op == '/' ? x / y : x % y);
      return 1;
    default:
      return 0;
    }
  }
  default:
    return 0;
  }
}

int kl_affine_of(kl_unit *u, uint32_t fn, uint32_t expr, kl_affine *out) {
  memset(out, 0, sizeof *out);
  context c;
  uint32_t work = KL_AFFINE_WORK;
  if (!context_init(&c, u, fn, &work)) return 0;
  sum_of(&c, expr, expr, 0, 1, out);
  context_free(&c);
  return out->nrest == 0;
}

/* ---- access patterns ---------------------------------------------------------------- */

static void stride(const kl_affine *f, int (*pick)(const kl_aterm *, uint32_t), uint32_t key,
                   uint8_t *kind, int64_t *value) {
  int64_t s = 0;
  int symbolic = 0, any = 0;
  for (uint32_t i = 0; i < f->nterms; i++) {
    if (!pick(&f->terms[i], key)) continue;
    any = 1;
    if (f->terms[i].nsyms) symbolic = 1;
    else s += f->terms[i].coef;
  }
  *value = symbolic ? 0 : s;
  if (f->nrest) *kind = KL_STRIDE_UNKNOWN;
  else if (symbolic) *kind = KL_STRIDE_SYMBOLIC;
  else if (!any || s == 0) *kind = KL_STRIDE_ZERO;
  else *kind = KL_STRIDE_CONST;
}

static int pick_tx(const kl_aterm *t, uint32_t key) {
  (void)key;
  return t->var == KL_AV_THREAD_X;
}

static int pick_loop(const kl_aterm *t, uint32_t key) {
  return t->var == KL_AV_LOOP && t->loop_node == key;
}

static uint32_t innermost_loop(const kl_unit *u, uint32_t fn, uint32_t n) {
  for (uint32_t p = u->nodes[n].parent; p != KL_NONE && p != fn; p = u->nodes[p].parent) {
    uint16_t k = u->nodes[p].kind;
    if (k == KL_N_FOR || k == KL_N_WHILE || k == KL_N_DO) return p;
  }
  return KL_NONE;
}

/* The node that stands for the access as a value: &p[i] cast to a vector
 * pointer and dereferenced (*reinterpret_cast<float4 *>(&p[i])) is the
 * access itself, W elements wide. */
static uint32_t access_value(const kl_unit *u, uint32_t n, uint8_t *width) {
  *width = 1;
  uint32_t amp = u->nodes[n].parent;
  if (amp == KL_NONE || u->nodes[amp].kind != KL_N_UNARY || u->nodes[amp].op != '&') return n;
  uint32_t cast = u->nodes[amp].parent;
  while (cast != KL_NONE && u->nodes[cast].kind == KL_N_PAREN) cast = u->nodes[cast].parent;
  if (cast == KL_NONE ||
      (u->nodes[cast].kind != KL_N_CXX_CAST && u->nodes[cast].kind != KL_N_CAST))
    return n;
  uint32_t type = kl_node_field(u, cast, KL_F_TYPE);
  if (type == KL_NONE) return n;
  /* the vector type's name ends in its width: float4, int2, __half2 */
  const kl_node *tn = &u->nodes[type];
  uint8_t w = 0;
  for (uint32_t i = tn->tok_begin; i < tn->tok_end; i++) {
    const kl_token *t = &u->tokens[i];
    if (t->kind != KL_TOK_IDENT) continue;
    char last = u->src[t->off + t->len - 1];
    if (last >= '2' && last <= '4' && t->len > 1) w = (uint8_t)(last - '0');
  }
  if (!w) return n;
  uint32_t deref = u->nodes[cast].parent;
  while (deref != KL_NONE && u->nodes[deref].kind == KL_N_PAREN) deref = u->nodes[deref].parent;
  if (deref == KL_NONE || u->nodes[deref].kind != KL_N_UNARY || u->nodes[deref].op != '*')
    return n;
  *width = w;
  return deref;
}

static int is_written(const kl_unit *u, uint32_t n) {
  uint32_t p = u->nodes[n].parent;
  if (p == KL_NONE) return 0;
  const kl_node *pn = &u->nodes[p];
  if (pn->kind == KL_N_ASSIGN) return kl_child(u, p, 0) == n;
  if (pn->kind == KL_N_POSTFIX) return 1;
  if (pn->kind == KL_N_UNARY && (pn->op == KL_P2('+', '+') || pn->op == KL_P2('-', '-'))) return 1;
  return 0;
}

/* The width W of a vector pointer type (float4 *, const int2 *), else 0. */
static int64_t vector_type_width(const kl_unit *u, uint32_t type) {
  if (type == KL_NONE) return 0;
  const kl_node *tn = &u->nodes[type];
  int64_t w = 0;
  int stars = 0;
  for (uint32_t i = tn->tok_begin; i < tn->tok_end; i++) {
    const kl_token *t = &u->tokens[i];
    if (t->kind == KL_TOK_PUNCT && t->sub == '*') stars++;
    if (t->kind != KL_TOK_IDENT || t->len < 2) continue;
    char last = u->src[t->off + t->len - 1];
    if (last >= '2' && last <= '4') w = last - '0';
  }
  return stars == 1 ? w : 0;
}

/* A pointer expression as (pointer parameter, element offset, scale): P,
 * P + e, e + P, P - e, &P[e], (P), a cast of P to a vector pointer
 * (reinterpret_cast<const float4 *>(P): scale 4, one step = 4 elements),
 * and locals defined once from those. Offsets count the parameter's
 * elements. Returns the PARAM node or KL_NONE. */
static uint32_t pointer_base(const context *c, uint32_t site, uint32_t n, int depth,
                             kl_affine *offset, int64_t *scale) {
  const kl_unit *u = c->u;
  if (n == KL_NONE || depth > 8) return KL_NONE;
  const kl_node *nd = &u->nodes[n];
  switch (nd->kind) {
  case KL_N_PAREN:
    return pointer_base(c, site, kl_child(u, n, 0), depth + 1, offset, scale);
  case KL_N_IDENT: {
    uint32_t off, len;
    ident_text(u, n, &off, &len);
    uint32_t value;
    int local = resolve_local(c, site, off, len, &value);
    if (local < 0) return KL_NONE;
    if (local > 0) return pointer_base(c, site, value, depth + 1, offset, scale);
    uint32_t param = find_param(c, off, len);
    if (param == KL_NONE) return KL_NONE;
    kl_param_info pi;
    if (!kl_param_info_get(u, param, &pi) || pi.pointer_depth == 0) return KL_NONE;
    memset(offset, 0, sizeof *offset);
    *scale = 1;
    return param;
  }
  case KL_N_CAST:
  case KL_N_CXX_CAST: {
    int64_t w = vector_type_width(u, kl_node_field(u, n, KL_F_TYPE));
    uint32_t param =
        pointer_base(c, site, kl_node_field(u, n, KL_F_OPERAND), depth + 1, offset, scale);
    if (param == KL_NONE || !w || *scale != 1) return KL_NONE;
    *scale = w;
    return param;
  }
  case KL_N_BINARY:
  case KL_N_UNARY: {
    uint32_t ptr, step;
    int64_t sign = 1;
    if (nd->kind == KL_N_UNARY) {
      uint32_t inner = kl_child(u, n, 0);
      if (nd->op != '&' || u->nodes[inner].kind != KL_N_INDEX) return KL_NONE;
      ptr = kl_node_field(u, inner, KL_F_OBJECT);
      step = kl_node_field(u, inner, KL_F_INDEX);
    } else {
      if (nd->op != '+' && nd->op != '-') return KL_NONE;
      ptr = kl_child(u, n, 0);
      step = kl_child(u, n, 1);
      if (nd->op == '-') sign = -1;
    }
    kl_affine base;
    uint32_t param = pointer_base(c, site, ptr, depth + 1, &base, scale);
    if (param == KL_NONE && nd->kind == KL_N_BINARY && nd->op == '+') {
      /* e + P */
      uint32_t t = ptr;
      ptr = step;
      step = t;
      param = pointer_base(c, site, ptr, depth + 1, &base, scale);
    }
    if (param == KL_NONE) return KL_NONE;
    kl_affine add, k, scaled;
    memset(&add, 0, sizeof add);
    sum_of(c, site, step, 0, sign, &add);
    constant(&k, *scale);
    if (!multiply(u, &add, &k, &scaled)) return KL_NONE;
    *offset = base;
    if (!add_form(u, offset, &scaled, 1)) return KL_NONE;
    return param;
  }
  default:
    return KL_NONE;
  }
}

/* Strides along threadIdx.x and the innermost loop, from a->form. */
static void fill_strides(const kl_unit *u, uint32_t fn, kl_access *a) {
  stride(&a->form, pick_tx, 0, &a->tx_stride_kind, &a->tx_stride);
  /* consecutive lanes touch consecutive W-element vectors */
  int64_t w = a->vector_width ? a->vector_width : 1;
  a->coalesced =
      a->tx_stride_kind == KL_STRIDE_ZERO ||
      (a->tx_stride_kind == KL_STRIDE_CONST && (a->tx_stride == w || a->tx_stride == -w));
  a->loop_node = innermost_loop(u, fn, a->index_node);
  a->loop_stride_kind = KL_STRIDE_UNKNOWN;
  if (a->loop_node != KL_NONE && u->nodes[a->loop_node].kind == KL_N_FOR) {
    stride(&a->form, pick_loop, a->loop_node, &a->loop_stride_kind, &a->loop_stride);
    a->loop_invariant = a->loop_stride_kind == KL_STRIDE_ZERO;
  }
}

kl_access *kl_access_patterns(kl_unit *u, uint32_t fn, uint32_t *count) {
  *count = 0;
  if (u->nodes[fn].kind != KL_N_FUNCTION) return NULL;
  context c;
  uint32_t work = KL_AFFINE_WORK;
  if (!context_init(&c, u, fn, &work)) return NULL;
  kl_access *out = NULL;
  uint32_t n = 0, cap = 0;
  uint32_t end = u->nodes[fn].subtree_end;
  for (uint32_t i = fn; i < end; i++) {
    if (u->nodes[i].kind != KL_N_INDEX) continue;
    uint32_t obj = kl_node_field(u, i, KL_F_OBJECT), idx = kl_node_field(u, i, KL_F_INDEX);
    if (obj == KL_NONE || idx == KL_NONE || u->nodes[obj].kind != KL_N_IDENT) continue;
    kl_affine base;
    int64_t scale = 1;
    work = KL_AFFINE_WORK;
    uint32_t param = pointer_base(&c, i, obj, 0, &base, &scale);
    if (param == KL_NONE) continue;
    if (n == cap) {
      uint32_t nc = cap ? cap * 2 : 8;
      kl_access *bigger = realloc(out, nc * sizeof *bigger);
      if (!bigger) break;
      out = bigger;
      cap = nc;
    }
    kl_access *a = &out[n++];
    memset(a, 0, sizeof *a);
    a->param = param;
    a->index_node = i;
    a->is_write = (uint8_t)is_written(u, access_value(u, i, &a->vector_width));
    /* the element index from the parameter: alias offset + scale * subscript
     * (a vector alias such as float4 *x4 = ...(x) reads `scale` elements) */
    kl_affine sub, k, scaled;
    memset(&sub, 0, sizeof sub);
    sum_of(&c, i, idx, 0, 1, &sub);
    constant(&k, scale);
    a->form = base;
    if (multiply(u, &sub, &k, &scaled)) {
      add_form(u, &a->form, &scaled, 1);
    } else {
      /* a non-affine subscript: keep it as the rest */
      add_form(u, &a->form, &sub, 1);
    }
    if (scale > 1) a->vector_width = (uint8_t)scale;
    fill_strides(u, fn, a);
  }
  context_free(&c);
  *count = n;
  return out;
}

/* ---- shared memory ------------------------------------------------------------- */

static int has_keyword(const kl_unit *u, uint32_t node, kl_kw kw) {
  const kl_node *nd = &u->nodes[node];
  for (uint32_t i = nd->tok_begin; i < nd->tok_end; i++)
    if (u->tokens[i].kind == KL_TOK_KEYWORD && u->tokens[i].sub == (uint32_t)kw) return 1;
  return 0;
}

/* Bytes of one element of a type: the scalar keywords and CUDA vector
 * types; 4 when unknown. */
static uint8_t element_bytes(const kl_unit *u, uint32_t type) {
  const kl_node *nd = &u->nodes[type];
  int longs = 0;
  uint8_t bytes = 0;
  for (uint32_t i = nd->tok_begin; i < nd->tok_end; i++) {
    const kl_token *t = &u->tokens[i];
    const char *s = u->src + t->off;
    if (t->kind == KL_TOK_KEYWORD) {
      switch (t->sub) {
      case KL_KW_DOUBLE: bytes = 8; break;
      case KL_KW_FLOAT: case KL_KW_INT: bytes = bytes ? bytes : 4; break;
      case KL_KW_SHORT: bytes = 2; break;
      case KL_KW_CHAR: case KL_KW_BOOL: bytes = 1; break;
      case KL_KW_LONG: longs++; break;
      default: break;
      }
    } else if (t->kind == KL_TOK_IDENT) {
      uint32_t n = t->len;
      int w = s[n - 1] >= '2' && s[n - 1] <= '4' ? s[n - 1] - '0' : 1;
      uint32_t base = w > 1 ? n - 1 : n;
      uint8_t b = 0;
      if ((base == 5 && memcmp(s, "float", 5) == 0) || (base == 3 && memcmp(s, "int", 3) == 0) ||
          (base == 4 && memcmp(s, "uint", 4) == 0))
        b = 4;
      else if (base == 6 && memcmp(s, "double", 6) == 0)
        b = 8;
      else if ((base == 4 && memcmp(s, "half", 4) == 0) ||
               (base == 6 && memcmp(s, "__half", 6) == 0) ||
               (base == 13 && memcmp(s, "__nv_bfloat16", 13) == 0))
        b = 2;
      if (b) bytes = (uint8_t)(b * w);
    }
  }
  if (longs >= 2 || (longs == 1 && !bytes)) bytes = 8;
  return bytes ? bytes : 4;
}

/* Lanes hitting distinct 4-byte words of one bank, worst bank, for a warp
 * whose lane l accesses `bytes` bytes at byte l * stride_bytes. Wide
 * accesses are served in phases of 128 bytes of requests. */
static uint8_t bank_ways(int64_t stride_bytes, uint32_t bytes) {
  uint32_t words = bytes < 4 ? 1 : bytes / 4;
  uint32_t per_phase = 32 / words ? 32 / words : 1;
  uint32_t worst = 1;
  for (uint32_t first = 0; first < 32; first += per_phase) {
    int64_t seen[32][32];
    uint32_t nseen[32] = {0};
    for (uint32_t l = first; l < first + per_phase && l < 32; l++) {
      int64_t start = (int64_t)l * stride_bytes;
      for (uint32_t k = 0; k < words; k++) {
        int64_t word = (start >= 0 ? start / 4 : -((-start + 3) / 4)) + k;
        uint32_t bank = (uint32_t)(((word % 32) + 32) % 32);
        uint32_t j = 0;
        while (j < nseen[bank] && seen[bank][j] != word) j++;
        if (j == nseen[bank] && nseen[bank] < 32) seen[bank][nseen[bank]++] = word;
      }
    }
    for (uint32_t b = 0; b < 32; b++)
      if (nseen[b] > worst) worst = nseen[b];
  }
  return (uint8_t)worst;
}

/* far above any block's shared memory, far below int64 products */
#define SHARED_ELEMS_MAX ((int64_t)1 << 32)

typedef struct shared_array {
  uint32_t decl;           /* KL_N_DECLARATOR */
  uint32_t name_off, name_len;
  uint32_t ndims;
  int64_t dims[4];
  uint8_t elem;
} shared_array;

static void collect_shared(kl_unit *u, uint32_t root, shared_array *arrays, uint32_t *n,
                           uint32_t cap) {
  uint32_t end = u->nodes[root].subtree_end;
  for (uint32_t i = root; i < end && *n < cap; i++) {
    if (u->nodes[i].kind != KL_N_DECL) continue;
    uint32_t type = kl_node_field(u, i, KL_F_TYPE);
    if (type == KL_NONE || !has_keyword(u, type, KL_KW_SHARED)) continue;
    for (uint32_t k = 0; k < u->nodes[i].child_count && *n < cap; k++) {
      uint32_t d = kl_child(u, i, k);
      if (u->nodes[d].kind != KL_N_DECLARATOR) continue;
      shared_array *a = &arrays[*n];
      memset(a, 0, sizeof *a);
      a->decl = d;
      a->elem = element_bytes(u, type);
      uint32_t name = kl_node_field(u, d, KL_F_NAME);
      if (name == KL_NONE) continue;
      ident_text(u, name, &a->name_off, &a->name_len);
      int ok = 1;
      int64_t elems = 1;
      for (uint32_t c = 0; c < u->nodes[d].child_count; c++) {
        if (kl_child_field(u, d, c) != KL_F_INDEX) continue;
        int64_t v;
        if (a->ndims == 4 || !kl_eval_const(u, kl_child(u, d, c), &v) || v <= 0) ok = 0;
        else a->dims[a->ndims++] = v;
        /* no shared array holds more than a block's 228 KB: a larger one
         * is no shared array we can reason about, and its row products
         * would overflow */
        if (ok && (__builtin_mul_overflow(elems, v, &elems) || elems > SHARED_ELEMS_MAX)) ok = 0;
      }
      if (ok && a->ndims) (*n)++;
    }
  }
}

/* The file-scope __shared__ arrays (top-level items only), collected once
 * per unit: every function's query needs them, and scanning the top level
 * for each function was quadratic in a unit of many functions. */
struct kl_file_shared {
  shared_array arrays[64];
  uint32_t n;
};

static const struct kl_file_shared *file_shared(kl_unit *u) {
  kl_unit_impl *ui = kl_unit_impl_of(u);
  if (ui->file_shared) return ui->file_shared;
  struct kl_file_shared *fs = calloc(1, sizeof *fs);
  if (!fs) return NULL;
  for (uint32_t k = 0; k < u->nodes[0].child_count && fs->n < 64; k++) {
    uint32_t item = kl_child(u, 0, k);
    if (u->nodes[item].kind == KL_N_DECL) collect_shared(u, item, fs->arrays, &fs->n, 64);
  }
  ui->file_shared = fs;
  return fs;
}

void kl_affine_cache_free(kl_unit *u) {
  kl_unit_impl *ui = kl_unit_impl_of(u);
  kl_fn_index_free(u);
  free(ui->file_shared);
  ui->file_shared = NULL;
}

kl_access *kl_shared_accesses(kl_unit *u, uint32_t fn, uint32_t *count) {
  *count = 0;
  if (u->nodes[fn].kind != KL_N_FUNCTION) return NULL;
  shared_array arrays[64];
  uint32_t narrays = 0;
  collect_shared(u, fn, arrays, &narrays, 64);
  const struct kl_file_shared *fs = file_shared(u);
  if (!fs) return NULL;
  for (uint32_t k = 0; k < fs->n && narrays < 64; k++) arrays[narrays++] = fs->arrays[k];
  if (!narrays) return NULL;
  context c;
  uint32_t work = KL_AFFINE_WORK;
  if (!context_init(&c, u, fn, &work)) return NULL;
  kl_access *out = NULL;
  uint32_t n = 0, cap = 0;
  uint32_t end = u->nodes[fn].subtree_end;
  for (uint32_t i = fn; i < end; i++) {
    if (u->nodes[i].kind != KL_N_INDEX) continue;
    uint32_t par = u->nodes[i].parent;
    if (par != KL_NONE && u->nodes[par].kind == KL_N_INDEX && kl_child(u, par, 0) == i)
      continue; /* an inner subscript of a longer chain */
    uint32_t subs[4], nsubs = 0, obj = i;
    while (u->nodes[obj].kind == KL_N_INDEX && nsubs < 4) {
      subs[nsubs++] = kl_node_field(u, obj, KL_F_INDEX);
      obj = kl_node_field(u, obj, KL_F_OBJECT);
    }
    if (obj == KL_NONE || u->nodes[obj].kind != KL_N_IDENT) continue;
    uint32_t off, len;
    ident_text(u, obj, &off, &len);
    const shared_array *arr = NULL;
    for (uint32_t k = 0; k < narrays; k++)
      if (arrays[k].name_len == len && memcmp(u->src + arrays[k].name_off, u->src + off, len) == 0)
        arr = &arrays[k];
    if (!arr || nsubs != arr->ndims) continue;
    if (n == cap) {
      uint32_t nc = cap ? cap * 2 : 8;
      kl_access *bigger = realloc(out, nc * sizeof *bigger);
      if (!bigger) break;
      out = bigger;
      cap = nc;
    }
    kl_access *a = &out[n++];
    memset(a, 0, sizeof *a);
    work = KL_AFFINE_WORK;
    a->param = arr->decl;
    a->index_node = i;
    a->elem_bytes = arr->elem;
    a->is_write = (uint8_t)is_written(u, access_value(u, i, &a->vector_width));
    /* flat index: subs were collected from the last subscript outwards */
    int64_t row = 1;
    for (uint32_t k = 0; k < nsubs; k++) {
      kl_affine sub, m, scaled;
      memset(&sub, 0, sizeof sub);
      sum_of(&c, i, subs[k], 0, 1, &sub);
      constant(&m, row);
      if (multiply(u, &sub, &m, &scaled)) add_form(u, &a->form, &scaled, 1);
      else add_form(u, &a->form, &sub, 1);
      row *= arr->dims[arr->ndims - 1 - k];
    }
    fill_strides(u, fn, a);
    if (a->tx_stride_kind == KL_STRIDE_ZERO) a->bank_ways = 1;
    else if (a->tx_stride_kind == KL_STRIDE_CONST)
      a->bank_ways = bank_ways(a->tx_stride * arr->elem, (uint32_t)arr->elem * a->vector_width);
  }
  context_free(&c);
  *count = n;
  return out;
}
