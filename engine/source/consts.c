/* Integer constants of a unit: #define NAME expr, constexpr/const integral
 * declarations and template parameters with defaults, evaluated in source
 * order (a later constant may use an earlier one). */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

typedef struct evaluator {
  kl_unit *u;              /* for constant lookup                         */
  const kl_token *t;
  const char *src;         /* text the tokens point into                  */
  uint32_t pos, end;
  uint32_t limit;          /* constants visible: consts[0, limit)         */
  int depth;
  int ok;
} evaluator;

static int is_p(const evaluator *ev, uint32_t sub) {
  return ev->pos < ev->end && ev->t[ev->pos].kind == KL_TOK_PUNCT && ev->t[ev->pos].sub == sub;
}

static int parse_int(const char *s, uint32_t len, int64_t *out) {
  uint64_t v = 0;
  uint32_t i = 0, base = 10;
  if (len > 1 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) base = 16, i = 2;
  else if (len > 1 && s[0] == '0' && (s[1] == 'b' || s[1] == 'B')) base = 2, i = 2;
  else if (len > 1 && s[0] == '0') base = 8, i = 1;
  int digits = 0;
  for (; i < len; i++) {
    char c = s[i];
    unsigned d;
    if (c == '\'') continue;
    if (c >= '0' && c <= '9') d = (unsigned)(c - '0');
    else if (base == 16 && c >= 'a' && c <= 'f') d = (unsigned)(c - 'a' + 10);
    else if (base == 16 && c >= 'A' && c <= 'F') d = (unsigned)(c - 'A' + 10);
    else break;
    if (d >= base) return 0;
    v = v * base + d;
    digits++;
  }
  if (!digits && base != 8) return 0;
  for (; i < len; i++) {
    char c = s[i];
    if (!(c == 'u' || c == 'U' || c == 'l' || c == 'L' || c == 'z' || c == 'Z')) return 0;
  }
  *out = (int64_t)v;
  return 1;
}

/* ---- the name index: the last constant of each name ---------------------- */

static uint32_t name_hash(const char *s, uint32_t len) {
  return (uint32_t)kl_hash_bytes(14695981039346656037ull, s, len);
}

/* Slot of `name` in the index: its entry, or the empty slot to fill. */
static uint32_t *index_slot(const kl_unit *u, const char *name, uint32_t len) {
  const kl_unit_impl *ui = (const kl_unit_impl *)u;
  uint32_t mask = ui->const_index_cap - 1;
  for (uint32_t h = name_hash(name, len);; h++) {
    uint32_t *slot = &ui->const_index[h & mask];
    if (!*slot) return slot;
    const kl_const *c = &u->consts[*slot - 1];
    if (c->name_len == len && memcmp(u->src + c->name_off, name, len) == 0) return slot;
  }
}

/* Makes constant k the one its name finds (a later definition wins). */
static void index_add(kl_unit *u, uint32_t k) {
  const kl_const *c = &u->consts[k];
  *index_slot(u, u->src + c->name_off, c->name_len) = k + 1;
}

uint32_t kl_const_find(const kl_unit *u, const char *name, uint32_t len) {
  const kl_unit_impl *ui = (const kl_unit_impl *)u;
  if (!ui->const_index_cap) return KL_NONE;
  uint32_t slot = *index_slot(u, name, len);
  return slot ? slot - 1 : KL_NONE;
}

/* The constant a name means where ev evaluates: constants are indexed as
 * they are defined, so the index holds exactly consts[0, limit) and finds
 * the last of them with the name in O(1), as a scan back from limit would
 * (which was quadratic over a unit of many #defines). */
static uint32_t before_limit(kl_unit *u, uint32_t last, uint32_t limit);

static int lookup(const evaluator *ev, const char *name, uint32_t len, int64_t *v) {
  uint32_t k = kl_const_find(ev->u, name, len);
  if (k != KL_NONE && k >= ev->limit) k = before_limit(ev->u, k, ev->limit); /* redefined later */
  if (k == KL_NONE) return 0;
  const kl_const *c = &ev->u->consts[k];
  if (!c->known) return 0;
  *v = c->value;
  return 1;
}

static int64_t expr(evaluator *ev, int min_prec);

static int is_type_kw(uint32_t kw) {
  return kw == KL_KW_INT || kw == KL_KW_UNSIGNED || kw == KL_KW_LONG || kw == KL_KW_SHORT ||
         kw == KL_KW_CHAR || kw == KL_KW_SIGNED || kw == KL_KW_BOOL || kw == KL_KW_CONST;
}

static int64_t primary(evaluator *ev) {
  if (ev->pos >= ev->end || ++ev->depth > 200) {
    ev->ok = 0;
    return 0;
  }
  const kl_token *t = &ev->t[ev->pos];
  int64_t v = 0;
  if (t->kind == KL_TOK_INT) {
    if (!parse_int(ev->src + t->off, t->len, &v)) ev->ok = 0;
    ev->pos++;
  } else if (t->kind == KL_TOK_CHAR && t->len == 3) {
    v = (unsigned char)ev->src[t->off + 1];
    ev->pos++;
  } else if (t->kind == KL_TOK_KEYWORD && (t->sub == KL_KW_TRUE || t->sub == KL_KW_FALSE)) {
    v = t->sub == KL_KW_TRUE;
    ev->pos++;
  } else if (t->kind == KL_TOK_KEYWORD &&
             (t->sub == KL_KW_STATIC_CAST || t->sub == KL_KW_CONST_CAST) && ev->pos + 1 < ev->end &&
             (ev->t[ev->pos + 1].flags & KL_TF_ANGLE)) {
    /* static_cast<int>(e): the integer value passes through */
    ev->pos = ev->t[ev->pos + 1].match + 1;
    if (!is_p(ev, '(')) {
      ev->ok = 0;
      return 0;
    }
    ev->pos++;
    v = expr(ev, 1);
    if (!is_p(ev, ')')) ev->ok = 0;
    ev->pos++;
  } else if (t->kind == KL_TOK_IDENT) {
    /* a qualified name A::b is looked up by its last part */
    uint32_t last = ev->pos;
    while (ev->pos + 2 < ev->end && ev->t[ev->pos + 1].kind == KL_TOK_PUNCT &&
           ev->t[ev->pos + 1].sub == KL_P2(':', ':') && ev->t[ev->pos + 2].kind == KL_TOK_IDENT) {
      ev->pos += 2;
      last = ev->pos;
    }
    const kl_token *n = &ev->t[last];
    if (!lookup(ev, ev->src + n->off, n->len, &v)) ev->ok = 0;
    ev->pos++;
  } else if (t->kind == KL_TOK_PUNCT && t->sub == '(') {
    ev->pos++;
    /* (int) e: a cast to an integral type */
    uint32_t k = ev->pos;
    while (k < ev->end && ev->t[k].kind == KL_TOK_KEYWORD && is_type_kw(ev->t[k].sub)) k++;
    if (k > ev->pos && k < ev->end && ev->t[k].kind == KL_TOK_PUNCT && ev->t[k].sub == ')') {
      ev->pos = k + 1;
      v = primary(ev);
    } else {
      v = expr(ev, 1);
      if (!is_p(ev, ')')) ev->ok = 0;
      ev->pos++;
    }
  } else if (t->kind == KL_TOK_PUNCT &&
             (t->sub == '-' || t->sub == '+' || t->sub == '!' || t->sub == '~')) {
    ev->pos++;
    int64_t o = primary(ev);
    v = t->sub == '-' ? (int64_t)(0 - (uint64_t)o) : t->sub == '+' ? o : t->sub == '!' ? !o : ~o;
  } else {
    ev->ok = 0;
  }
  ev->depth--;
  return v;
}

static int prec_of(uint32_t sub) {
  switch (sub) {
  case '?': return 3;
  case KL_P2('|', '|'): return 4;
  case KL_P2('&', '&'): return 5;
  case '|': return 6;
  case '^': return 7;
  case '&': return 8;
  case KL_P2('=', '='): case KL_P2('!', '='): return 9;
  case '<': case '>': case KL_P2('<', '='): case KL_P2('>', '='): return 10;
  case KL_P2('<', '<'): case KL_P2('>', '>'): return 11;
  case '+': case '-': return 12;
  case '*': case '/': case '%': return 13;
  default: return 0;
  }
}

static int64_t apply(evaluator *ev, uint32_t op, int64_t a, int64_t b) {
  uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
  switch (op) {
  case '+': return (int64_t)(ua + ub);
  case '-': return (int64_t)(ua - ub);
  case '*': return (int64_t)(ua * ub);
  case '/': case '%':
    if (b == 0 || (a == INT64_MIN && b == -1)) {
      ev->ok = 0;
      return 0;
    }
    return op == '/' ? a / b : a % b;
  case KL_P2('<', '<'): return b < 0 || b > 63 ? (ev->ok = 0, 0) : (int64_t)(ua << b);
  case KL_P2('>', '>'): return b < 0 || b > 63 ? (ev->ok = 0, 0) : a >> b;
  case '<': return a < b;
  case '>': return a > b;
  case KL_P2('<', '='): return a <= b;
  case KL_P2('>', '='): return a >= b;
  case KL_P2('=', '='): return a == b;
  case KL_P2('!', '='): return a != b;
  case '&': return a & b;
  case '^': return a ^ b;
  case '|': return a | b;
  case KL_P2('&', '&'): return a && b;
  case KL_P2('|', '|'): return a || b;
  default: ev->ok = 0; return 0;
  }
}

static int64_t expr(evaluator *ev, int min_prec) {
  int64_t lhs = primary(ev);
  while (ev->ok && ev->pos < ev->end && ev->t[ev->pos].kind == KL_TOK_PUNCT) {
    uint32_t op = ev->t[ev->pos].sub;
    int prec = prec_of(op);
    if (!prec || prec < min_prec) break;
    ev->pos++;
    if (op == '?') {
      int64_t a = expr(ev, 1);
      if (!is_p(ev, ':')) {
        ev->ok = 0;
        break;
      }
      ev->pos++;
      int64_t b = expr(ev, 3);
      lhs = lhs ? a : b;
      continue;
    }
    int64_t rhs = expr(ev, prec + 1);
    lhs = apply(ev, op, lhs, rhs);
  }
  return lhs;
}

int kl_eval_tokens(kl_unit *u, const kl_token *t, uint32_t b, uint32_t e, const char *src,
                   int64_t *value) {
  evaluator ev = {u, t, src, b, e, u->nconsts, 0, 1};
  if (b >= e) return 0;
  int64_t v = expr(&ev, 1);
  if (!ev.ok || ev.pos != e) return 0;
  *value = v;
  return 1;
}

/* ---- collecting the constants ------------------------------------------------ */

typedef struct candidate {
  uint32_t off;            /* source order                                */
  uint32_t kind;
  uint32_t a, b;           /* DEFINE: pp token; others: name node, value node */
} candidate;

static int by_offset(const void *x, const void *y) {
  const candidate *a = x, *b = y;
  return a->off < b->off ? -1 : a->off > b->off;
}

static int integral_type(const kl_unit *u, uint32_t type) {
  const kl_node *n = &u->nodes[type];
  int integral = 0;
  for (uint32_t i = n->tok_begin; i < n->tok_end; i++) {
    const kl_token *t = &u->tokens[i];
    if (t->kind == KL_TOK_PUNCT && (t->sub == '*' || t->sub == '&')) return 0;
    if (t->kind == KL_TOK_KEYWORD &&
        (t->sub == KL_KW_INT || t->sub == KL_KW_UNSIGNED || t->sub == KL_KW_LONG ||
         t->sub == KL_KW_SHORT || t->sub == KL_KW_CHAR || t->sub == KL_KW_SIGNED ||
         t->sub == KL_KW_BOOL || t->sub == KL_KW_AUTO))
      integral = 1;
    if (t->kind == KL_TOK_KEYWORD && (t->sub == KL_KW_FLOAT || t->sub == KL_KW_DOUBLE)) return 0;
    if (t->kind == KL_TOK_IDENT) {
      static const char *const names[] = {"size_t", "int32_t", "uint32_t", "int64_t",
                                          "uint64_t", "int16_t", "uint16_t", "int8_t",
                                          "uint8_t", "index_t", "ptrdiff_t"};
      for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
        if (strlen(names[k]) == t->len && memcmp(u->src + t->off, names[k], t->len) == 0)
          integral = 1;
    }
  }
  return integral;
}

static int type_has_kw(const kl_unit *u, uint32_t type, kl_kw kw) {
  const kl_node *n = &u->nodes[type];
  for (uint32_t i = n->tok_begin; i < n->tok_end; i++)
    if (u->tokens[i].kind == KL_TOK_KEYWORD && u->tokens[i].sub == (uint32_t)kw) return 1;
  return 0;
}

static int add_candidate(candidate **cs, uint32_t *n, uint32_t *cap, candidate c) {
  if (*n == *cap) {
    uint32_t nc = *cap ? *cap * 2 : 32;
    candidate *bigger = realloc(*cs, nc * sizeof *bigger);
    if (!bigger) return 0;
    *cs = bigger;
    *cap = nc;
  }
  (*cs)[(*n)++] = c;
  return 1;
}

static void eval_define(kl_unit *u, const kl_token *pp, kl_const *c) {
  /* "#  define NAME body": find NAME and the body inside the pp token */
  const char *s = u->src + pp->off, *e = s + pp->len;
  const char *p = s + 1;
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  if (e - p < 6 || memcmp(p, "define", 6) != 0) return;
  p += 6;
  while (p < e && (*p == ' ' || *p == '\t')) p++;
  const char *nb = p;
  while (p < e && (*p == '_' || (*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
                   (*p >= '0' && *p <= '9')))
    p++;
  if (p == nb || (p < e && *p == '(')) return; /* function-like macro */
  c->name_off = (uint32_t)(nb - u->src);
  c->name_len = (uint32_t)(p - nb);
  c->expr_off = (uint32_t)(p - u->src);
  c->expr_len = (uint32_t)(e - p);
  c->kind = KL_CONST_DEFINE;
  /* the body is lexed on its own (continuations and comments are trivia) */
  kl_unit *body = kl_source_parse(p, (size_t)(e - p), "<define>");
  if (!body) return;
  int64_t v;
  /* constants of u stay visible: the body's tokens point into body->src */
  if (body->ntokens > 1 &&
      kl_eval_tokens(u, body->tokens, 0, body->ntokens - 1, body->src, &v)) {
    c->known = 1;
    c->value = v;
  }
  kl_unit_free(body);
}

static void eval_node(kl_unit *u, uint32_t name, uint32_t value, kl_const *c, uint8_t kind) {
  const kl_node *nn = &u->nodes[name];
  const kl_token *nt = &u->tokens[nn->tok_end - 1];
  c->name_off = nt->off;
  c->name_len = nt->len;
  c->kind = kind;
  if (value == KL_NONE) return;
  uint32_t b, e;
  kl_node_span(u, value, &b, &e);
  c->expr_off = b;
  c->expr_len = e - b;
  int64_t v;
  const kl_node *vn = &u->nodes[value];
  uint32_t tb = vn->tok_begin, te = vn->tok_end;
  if (vn->kind == KL_N_INIT_LIST) {
    /* constexpr int n{4}; / (4) */
    if (te - tb < 3) return;
    tb++;
    te--;
  }
  if (kl_eval_tokens(u, u->tokens, tb, te, u->src, &v)) {
    c->known = 1;
    c->value = v;
  }
}

const kl_const *kl_unit_constants(kl_unit *u, uint32_t *count) {
  if (u->consts_done) {
    *count = u->nconsts;
    return u->consts;
  }
  u->consts_done = 1;
  candidate *cs = NULL;
  uint32_t n = 0, cap = 0;
  for (uint32_t i = 0; i < u->ntokens; i++)
    if (u->tokens[i].kind == KL_TOK_PP &&
        !add_candidate(&cs, &n, &cap, (candidate){u->tokens[i].off, KL_CONST_DEFINE, i, 0}))
      goto out;
  uint32_t nd;
  const uint32_t *decls = kl_unit_nodes_of_kind(u, KL_N_DECL, &nd);
  for (uint32_t k = 0; k < nd; k++) {
    uint32_t d = decls[k];
    uint32_t type = kl_node_field(u, d, KL_F_TYPE);
    if (type == KL_NONE || !integral_type(u, type)) continue;
    int cx = type_has_kw(u, type, KL_KW_CONSTEXPR);
    if (!cx && !type_has_kw(u, type, KL_KW_CONST)) continue;
    const kl_node *dn = &u->nodes[d];
    for (uint32_t c = 0; c < dn->child_count; c++) {
      uint32_t decl = u->kids[dn->child_begin + c];
      if (u->nodes[decl].kind != KL_N_DECLARATOR) continue;
      if (kl_node_field(u, decl, KL_F_INDEX) != KL_NONE) continue;
      uint32_t name = kl_node_field(u, decl, KL_F_NAME);
      uint32_t value = kl_node_field(u, decl, KL_F_VALUE);
      if (name == KL_NONE || value == KL_NONE) continue;
      if (!add_candidate(&cs, &n, &cap,
                         (candidate){u->tokens[u->nodes[decl].tok_begin].off,
                                     cx ? KL_CONST_CONSTEXPR : KL_CONST_CONST, name, value}))
        goto out;
    }
  }
  const uint32_t *tps = kl_unit_nodes_of_kind(u, KL_N_TEMPLATE_PARAM, &nd);
  for (uint32_t k = 0; k < nd; k++) {
    uint32_t tp = tps[k];
    uint32_t type = kl_node_field(u, tp, KL_F_TYPE);
    uint32_t name = kl_node_field(u, tp, KL_F_NAME);
    if (type == KL_NONE || name == KL_NONE || !integral_type(u, type)) continue;
    if (!add_candidate(&cs, &n, &cap,
                       (candidate){u->tokens[u->nodes[tp].tok_begin].off,
                                   KL_CONST_TEMPLATE_PARAM, name,
                                   kl_node_field(u, tp, KL_F_VALUE)}))
      goto out;
  }
  if (n > 1) qsort(cs, n, sizeof *cs, by_offset);
  u->consts = calloc(n ? n : 1, sizeof *u->consts);
  if (!u->consts) goto out;
  {
    kl_unit_impl *ui = kl_unit_impl_of(u);
    uint32_t cap = 16;
    while (cap < 2 * (size_t)n + 2 && cap < (1u << 31)) cap *= 2;
    ui->const_index = calloc(cap, sizeof *ui->const_index);
    if (!ui->const_index) goto out;
    ui->const_index_cap = cap;
  }
  for (uint32_t k = 0; k < n; k++) {
    kl_const *c = &u->consts[u->nconsts];
    memset(c, 0, sizeof *c);
    if (cs[k].kind == KL_CONST_DEFINE) {
      const kl_token *pp = &u->tokens[cs[k].a];
      eval_define(u, pp, c);
      if (!c->name_len) continue;
      c->line = pp->line;
    } else {
      eval_node(u, cs[k].a, cs[k].b, c, (uint8_t)cs[k].kind);
      c->line = u->tokens[u->nodes[cs[k].a].tok_begin].line;
    }
    index_add(u, u->nconsts);
    u->nconsts++;
  }
out:
  free(cs);
  *count = u->nconsts;
  return u->consts;
}

int kl_eval_const(kl_unit *u, uint32_t expr_node, int64_t *value) {
  uint32_t n;
  kl_unit_constants(u, &n);
  const kl_node *nd = &u->nodes[expr_node];
  return kl_eval_tokens(u, u->tokens, nd->tok_begin, nd->tok_end, u->src, value);
}

/* Groups the constants by name (the name index gives each its last
 * definition), each group ascending: O(n), no sort. 0 on out of memory. */
static int group_by_name(kl_unit *u) {
  kl_unit_impl *ui = kl_unit_impl_of(u);
  if (ui->const_order) return 1;
  uint32_t n = u->nconsts, *last = malloc((n ? n : 1) * sizeof *last);
  uint32_t *order = malloc((n ? n : 1) * sizeof *order);
  uint32_t *start = calloc(n ? n : 1, sizeof *start), *len = calloc(n ? n : 1, sizeof *len);
  if (!last || !order || !start || !len) {
    free(last), free(order), free(start), free(len);
    return 0;
  }
  for (uint32_t k = 0; k < n; k++) {
    const kl_const *c = &u->consts[k];
    last[k] = kl_const_find(u, u->src + c->name_off, c->name_len);
    len[last[k]]++;
  }
  uint32_t at = 0;
  for (uint32_t k = 0; k < n; k++)
    if (last[k] == k) start[k] = at, at += len[k], len[k] = 0;
  for (uint32_t k = 0; k < n; k++) order[start[last[k]] + len[last[k]]++] = k;
  free(last);
  ui->const_order = order, ui->const_run_start = start, ui->const_run_len = len;
  return 1;
}

/* The last definition before constant index limit of the name whose last
 * definition is `last`, or KL_NONE: a bisection in the name's group. */
static uint32_t before_limit(kl_unit *u, uint32_t last, uint32_t limit) {
  if (!group_by_name(u)) return KL_NONE;
  const kl_unit_impl *ui = kl_unit_impl_of(u);
  const uint32_t *run = ui->const_order + ui->const_run_start[last];
  uint32_t lo = 0, hi = ui->const_run_len[last];
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (run[mid] < limit) lo = mid + 1;
    else hi = mid;
  }
  return lo ? run[lo - 1] : KL_NONE;
}

int kl_eval_tokens_before(kl_unit *u, const kl_token *t, uint32_t b, uint32_t e, const char *src,
                          uint32_t off, int64_t *value) {
  uint32_t n;
  const kl_const *cs = kl_unit_constants(u, &n);
  /* constants are in source order, so their names are too: the visible
   * ones are a prefix, found by bisection */
  uint32_t lo = 0, hi = n;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (cs[mid].name_off < off) lo = mid + 1;
    else hi = mid;
  }
  evaluator ev = {u, t, src, b, e, lo, 0, 1};
  if (b >= e) return 0;
  int64_t v = expr(&ev, 1);
  if (!ev.ok || ev.pos != e) return 0;
  *value = v;
  return 1;
}
