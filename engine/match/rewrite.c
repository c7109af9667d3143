/* Rewriting: a template instantiated with a match's bindings becomes a
 * replacement of the match's text; replacements are checked for overlap
 * and applied bottom-up. Each replacement carries an edit script found by
 * aligning the old text (bindings as atoms, other code as small tokens)
 * with the new text (template uses as atoms, template code as small
 * tokens): unaligned atoms are moves, unaligned code runs are inserts,
 * deletes or updates. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match/match.h"

#define KM_ALIGN_MAX 1500 /* units per side beyond which the script is one update */

static void set_err(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

int km_script_push(km_edit_script *s, km_edit e) {
  if (s->n == s->cap) {
    uint32_t cap = s->cap ? s->cap * 2 : 16;
    km_edit *ne = realloc(s->e, cap * sizeof *ne);
    if (!ne) return 0;
    s->e = ne, s->cap = cap;
  }
  s->e[s->n++] = e;
  return 1;
}

void km_script_free(km_edit_script *s) {
  if (!s) return;
  free(s->e);
  memset(s, 0, sizeof *s);
}

void km_replacement_free(km_replacement *r) {
  if (!r) return;
  free(r->text);
  free(r->script);
  r->text = NULL;
  r->script = NULL;
  r->nscript = 0;
}

/* ---- a growable byte buffer ---------------------------------------------- */

typedef struct buf {
  char *p;
  size_t n, cap;
  int oom;
} buf;

static void buf_add(buf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 128;
    while (cap < b->n + n + 1) cap *= 2;
    char *np = realloc(b->p, cap);
    if (!np) {
      b->oom = 1;
      return;
    }
    b->p = np, b->cap = cap;
  }
  memcpy(b->p + b->n, s, n);
  b->n += n;
  b->p[b->n] = '\0';
}

/* ---- alignment units ------------------------------------------------------- */

typedef struct unit_ {
  int slot;            /* >= 0: a metavariable atom; -1: a small token      */
  uint32_t begin, end; /* byte range (old: in src; new: in the new text)    */
} aunit;

typedef struct units {
  aunit *u;
  uint32_t n, cap;
} units;

static int units_add(units *us, int slot, uint32_t b, uint32_t e) {
  if (us->n == us->cap) {
    uint32_t cap = us->cap ? us->cap * 2 : 32;
    aunit *nu = realloc(us->u, cap * sizeof *nu);
    if (!nu) return 0;
    us->u = nu, us->cap = cap;
  }
  us->u[us->n++] = (aunit){ slot, b, e };
  return 1;
}

static int word_char(unsigned char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
         c == '.' || c >= 0x80;
}

/* Splits text[b, e) into small tokens: words (identifier and number
 * characters) and single other characters, whitespace dropped. */
static int split_code(units *us, const char *text, uint32_t b, uint32_t e) {
  uint32_t i = b;
  while (i < e) {
    unsigned char c = (unsigned char)text[i];
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') {
      i++;
      continue;
    }
    /* Comments are not code: they never make an edit of their own. */
    if (c == '/' && i + 1 < e && text[i + 1] == '/') {
      while (i < e && text[i] != '\n') i++;
      continue;
    }
    if (c == '/' && i + 1 < e && text[i + 1] == '*') {
      i += 2;
      while (i + 1 < e && !(text[i] == '*' && text[i + 1] == '/')) i++;
      i = i + 2 < e ? i + 2 : e;
      continue;
    }
    uint32_t j = i + 1;
    if (word_char(c))
      while (j < e && word_char((unsigned char)text[j])) j++;
    if (!units_add(us, -1, i, j)) return 0;
    i = j;
  }
  return 1;
}

static int same_unit(const aunit *a, const char *at, const aunit *b, const char *bt) {
  if (a->slot >= 0 || b->slot >= 0) return a->slot == b->slot;
  return a->end - a->begin == b->end - b->begin && memcmp(at + a->begin, bt + b->begin, a->end - a->begin) == 0;
}

static int push_piece(km_replacement *out, uint32_t *cap, km_edit e) {
  if (out->nscript == *cap) {
    uint32_t nc = *cap ? *cap * 2 : 8;
    km_edit *ns = realloc(out->script, nc * sizeof *ns);
    if (!ns) return 0;
    out->script = ns, *cap = nc;
  }
  out->script[out->nscript++] = e;
  return 1;
}

/* Emits the edits for one unaligned stretch: old units o[0..no), new n[0..nn). */
static int emit_stretch(km_replacement *out, uint32_t *cap, const aunit *o, uint32_t no,
                        const aunit *n, uint32_t nn, const aunit *all_old, uint32_t nold,
                        const aunit *all_new, uint32_t nnew, uint32_t old_anchor, uint32_t new_anchor) {
  /* Atoms: a new atom whose slot the old side has is a move, else an insert
   * (a copy); an old atom whose slot the new side lacks is a delete. */
  for (uint32_t k = 0; k < nn; k++) {
    if (n[k].slot < 0) continue;
    const aunit *from = NULL;
    for (uint32_t j = 0; j < nold; j++)
      if (all_old[j].slot == n[k].slot) from = &all_old[j];
    km_edit e = { from ? KM_EDIT_MOVE : KM_EDIT_INSERT, from ? from->begin : old_anchor,
                  from ? from->end : old_anchor, n[k].begin, n[k].end };
    if (!push_piece(out, cap, e)) return 0;
  }
  for (uint32_t k = 0; k < no; k++) {
    if (o[k].slot < 0) continue;
    int kept = 0;
    for (uint32_t j = 0; j < nnew; j++)
      if (all_new[j].slot == o[k].slot) kept = 1;
    if (!kept) {
      km_edit e = { KM_EDIT_DELETE, o[k].begin, o[k].end, new_anchor, new_anchor };
      if (!push_piece(out, cap, e)) return 0;
    }
  }
  /* Code: the small tokens of each side as one range. */
  uint32_t ob = UINT32_MAX, oe = 0, nb = UINT32_MAX, ne = 0;
  for (uint32_t k = 0; k < no; k++)
    if (o[k].slot < 0) {
      if (o[k].begin < ob) ob = o[k].begin;
      if (o[k].end > oe) oe = o[k].end;
    }
  for (uint32_t k = 0; k < nn; k++)
    if (n[k].slot < 0) {
      if (n[k].begin < nb) nb = n[k].begin;
      if (n[k].end > ne) ne = n[k].end;
    }
  if (ob != UINT32_MAX && nb != UINT32_MAX) {
    if (!push_piece(out, cap, (km_edit){ KM_EDIT_UPDATE, ob, oe, nb, ne })) return 0;
  } else if (ob != UINT32_MAX) {
    if (!push_piece(out, cap, (km_edit){ KM_EDIT_DELETE, ob, oe, new_anchor, new_anchor })) return 0;
  } else if (nb != UINT32_MAX) {
    if (!push_piece(out, cap, (km_edit){ KM_EDIT_INSERT, old_anchor, old_anchor, nb, ne })) return 0;
  }
  return 1;
}

/* Equal ignoring whitespace. */
static int same_code(const char *a, uint32_t an, const char *b, uint32_t bn) {
  uint32_t i = 0, j = 0;
  for (;;) {
    while (i < an && (a[i] == ' ' || a[i] == '\t' || a[i] == '\n' || a[i] == '\r')) i++;
    while (j < bn && (b[j] == ' ' || b[j] == '\t' || b[j] == '\n' || b[j] == '\r')) j++;
    if (i == an || j == bn) return i == an && j == bn;
    if (a[i++] != b[j++]) return 0;
  }
}

/* Code deleted in one place and inserted unchanged in another moved: the
 * delete becomes a move to the insert's place, and the insert goes. */
static void pair_moves(km_replacement *out, const char *src) {
  for (uint32_t d = 0; d < out->nscript; d++) {
    km_edit *del = &out->script[d];
    if (del->kind != KM_EDIT_DELETE || del->old_end == del->old_begin) continue;
    for (uint32_t k = 0; k < out->nscript; k++) {
      km_edit *ins = &out->script[k];
      if (ins->kind != KM_EDIT_INSERT || ins->new_end == ins->new_begin) continue;
      if (!same_code(src + del->old_begin, del->old_end - del->old_begin, out->text + ins->new_begin,
                     ins->new_end - ins->new_begin))
        continue;
      del->kind = KM_EDIT_MOVE;
      del->new_begin = ins->new_begin;
      del->new_end = ins->new_end;
      memmove(ins, ins + 1, (out->nscript - k - 1) * sizeof *ins);
      out->nscript--;
      if (k < d) d--;
      break;
    }
  }
}

/* A move inside a bigger move (an atom of a statement that moved whole)
 * says nothing more: drop it. */
static void drop_inner_moves(km_replacement *out) {
  for (uint32_t k = 0; k < out->nscript;) {
    const km_edit *e = &out->script[k];
    int inner = 0;
    for (uint32_t j = 0; j < out->nscript && !inner && e->kind == KM_EDIT_MOVE; j++) {
      const km_edit *big = &out->script[j];
      inner = j != k && big->kind == KM_EDIT_MOVE && big->old_begin <= e->old_begin &&
              e->old_end <= big->old_end && big->new_begin <= e->new_begin && e->new_end <= big->new_end &&
              (big->old_end - big->old_begin) > (e->old_end - e->old_begin);
    }
    if (inner) {
      memmove(&out->script[k], &out->script[k + 1], (out->nscript - k - 1) * sizeof *out->script);
      out->nscript--;
    } else {
      k++;
    }
  }
}

/* Weighted LCS (atoms weigh more than code tokens) and the script. */
static int align(km_replacement *out, const char *src, const units *o, const units *n) {
  uint32_t cap = 0;
  uint32_t no = o->n, nn = n->n;
  if (no > KM_ALIGN_MAX || nn > KM_ALIGN_MAX) {
    return push_piece(out, &cap, (km_edit){ KM_EDIT_UPDATE, out->begin, out->end, 0, (uint32_t)out->len });
  }
  uint32_t *w = calloc((size_t)(no + 1) * (nn + 1), sizeof *w);
  if (!w) return 0;
#define W(i, j) w[(size_t)(i) * (nn + 1) + (j)]
  for (uint32_t i = no; i-- > 0;)
    for (uint32_t j = nn; j-- > 0;) {
      uint32_t best = W(i + 1, j) > W(i, j + 1) ? W(i + 1, j) : W(i, j + 1);
      if (same_unit(&o->u[i], src, &n->u[j], out->text)) {
        uint32_t take = W(i + 1, j + 1) + (o->u[i].slot >= 0 ? 16 : 1);
        if (take > best) best = take;
      }
      W(i, j) = best;
    }
  uint32_t i = 0, j = 0, si = 0, sj = 0;
  int ok = 1;
  while (ok && (i < no || j < nn)) {
    int aligned = i < no && j < nn && same_unit(&o->u[i], src, &n->u[j], out->text) &&
                  W(i, j) == W(i + 1, j + 1) + (o->u[i].slot >= 0 ? 16u : 1u);
    if (aligned) {
      uint32_t oa = i > 0 ? o->u[i - 1].end : out->begin;
      uint32_t na = j > 0 ? n->u[j - 1].end : 0;
      if (si < i || sj < j)
        ok = emit_stretch(out, &cap, o->u + si, i - si, n->u + sj, j - sj, o->u, no, n->u, nn, oa, na);
      i++, j++;
      si = i, sj = j;
    } else if (j >= nn || (i < no && W(i + 1, j) >= W(i, j + 1))) {
      i++;
    } else {
      j++;
    }
  }
  if (ok && (si < no || sj < nn)) {
    uint32_t oa = no ? o->u[no - 1].end : out->begin;
    uint32_t na = nn ? n->u[nn - 1].end : 0;
    ok = emit_stretch(out, &cap, o->u + si, no - si, n->u + sj, nn - sj, o->u, no, n->u, nn, oa, na);
  }
#undef W
  free(w);
  if (ok) {
    pair_moves(out, src);
    drop_inner_moves(out);
  }
  return ok;
}

/* The indentation of the line holding byte off. */
static void line_indent(const char *src, uint32_t off, uint32_t *b, uint32_t *e) {
  uint32_t s = off;
  while (s > 0 && src[s - 1] != '\n') s--;
  uint32_t k = s;
  while (k < off && (src[k] == ' ' || src[k] == '\t')) k++;
  *b = s, *e = k;
}

/* Copies src[from, to) (a binding) into b. When its lines were indented
 * more or less than where the template puts it, each following line that
 * starts with the old indentation gets the new one instead, so a block
 * moved in or out of a brace keeps its shape. */
static void add_reindented(buf *b, const char *src, uint32_t from, uint32_t to) {
  uint32_t ob, oe;
  line_indent(src, from, &ob, &oe);
  char indent[256];
  size_t ls = b->n, le;
  while (ls > 0 && b->p[ls - 1] != '\n') ls--;
  for (le = ls; le < b->n && (b->p[le] == ' ' || b->p[le] == '\t'); le++) {}
  size_t ni = le - ls < sizeof indent ? le - ls : sizeof indent;
  if (ni) memcpy(indent, b->p + ls, ni);
  uint32_t oi = oe - ob;
  if (ni == oi && (oi == 0 || memcmp(indent, src + ob, oi) == 0)) {
    buf_add(b, src + from, to - from); /* same indentation: verbatim */
    return;
  }
  uint32_t c = from;
  while (c < to) {
    const char *nl = memchr(src + c, '\n', to - c);
    uint32_t end = nl ? (uint32_t)(nl - src) + 1 : to;
    buf_add(b, src + c, end - c);
    c = end;
    if (nl && c < to && to - c >= oi && memcmp(src + c, src + ob, oi) == 0) {
      buf_add(b, indent, ni);
      c += oi;
    }
  }
}

/* ---- keeping a substituted expression's meaning ----------------------------- */

static int tpl_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
static int tpl_word(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '$';
}

/* Operators by length, longest first: what a template's text next to a
 * metavariable use is. */
static const char *const tpl_ops[] = {
  "<<=", ">>=", "->*", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "+=", "-=", "*=", "/=", "%=",
  "&=", "|=", "^=", "->", "++", "--", "::", ".*", "*", "/", "%", "+", "-", "<", ">", "&", "^", "|",
  "=", "?", ":", "!", "~", ".", NULL,
};

/* The strength of operator o as a binary operator (0: none). */
static unsigned tpl_binary(const char *o) {
  static const struct { const char *op; unsigned s; } tab[] = {
    { "<<=", 2 }, { ">>=", 2 }, { "+=", 2 }, { "-=", 2 }, { "*=", 2 }, { "/=", 2 }, { "%=", 2 },
    { "&=", 2 }, { "|=", 2 }, { "^=", 2 }, { "=", 2 }, { "?", 2 }, { ":", 2 }, { "||", 3 }, { "&&", 4 },
    { "|", 5 }, { "^", 6 }, { "&", 7 }, { "==", 8 }, { "!=", 8 }, { "<", 9 }, { ">", 9 }, { "<=", 9 },
    { ">=", 9 }, { "<<", 10 }, { ">>", 10 }, { "+", 11 }, { "-", 11 }, { "*", 12 }, { "/", 12 },
    { "%", 12 }, { ".*", 13 }, { "->*", 13 },
  };
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strcmp(tab[i].op, o) == 0) return tab[i].s;
  return 0;
}

/* The operator ending just before byte end of text (after spaces), or NULL. */
static const char *op_ending(const char *text, uint32_t end, uint32_t *start) {
  for (int i = 0; tpl_ops[i]; i++) {
    uint32_t n = (uint32_t)strlen(tpl_ops[i]);
    if (end >= n && memcmp(text + end - n, tpl_ops[i], n) == 0) {
      *start = end - n;
      return tpl_ops[i];
    }
  }
  return NULL;
}

/* Whether the template text before byte `end` (spaces skipped) ends an
 * operand: 1 yes, 0 no. */
static int tpl_ends_operand(const char *text, uint32_t end) {
  while (end > 0 && tpl_space(text[end - 1])) end--;
  if (end == 0) return 0;
  char c = text[end - 1];
  return tpl_word(c) || c == ')' || c == ']';
}

static km_ctx_side side(uint8_t kind, unsigned prec) { return (km_ctx_side){ kind, (uint8_t)prec }; }

/* What the template has before a use starting at byte b. */
static km_ctx_side tpl_left(const char *text, uint32_t b) {
  while (b > 0 && tpl_space(text[b - 1])) b--;
  if (b == 0) return side(KM_SIDE_DELIM, 0);
  char c = text[b - 1];
  if (c == '(' || c == '[' || c == '{' || c == ';' || c == ',' || c == '}') return side(KM_SIDE_DELIM, 0);
  if (c == ')') return side(KM_SIDE_CAST, KM_PREC_PREFIX);
  if (tpl_word(c)) {
    uint32_t w = b;
    while (w > 0 && tpl_word(text[w - 1])) w--;
    if ((b - w == 6 && memcmp(text + w, "return", 6) == 0) || (b - w == 4 && memcmp(text + w, "case", 4) == 0))
      return side(KM_SIDE_DELIM, 0);
    return side(KM_SIDE_UNKNOWN, 0);
  }
  uint32_t at;
  const char *o = op_ending(text, b, &at);
  if (!o) return side(KM_SIDE_UNKNOWN, 0);
  if (strcmp(o, ".") == 0 || strcmp(o, "->") == 0 || strcmp(o, "::") == 0) return side(KM_SIDE_OP, KM_PREC_SCOPE);
  if (strcmp(o, "!") == 0 || strcmp(o, "~") == 0) return side(KM_SIDE_OP, KM_PREC_PREFIX);
  int operand_before = tpl_ends_operand(text, at);
  if (strcmp(o, "++") == 0 || strcmp(o, "--") == 0)
    return operand_before ? side(KM_SIDE_UNKNOWN, 0) : side(KM_SIDE_OP, KM_PREC_PREFIX);
  int amb = strcmp(o, "+") == 0 || strcmp(o, "-") == 0 || strcmp(o, "*") == 0 || strcmp(o, "&") == 0;
  if (amb && !operand_before) return side(KM_SIDE_OP, KM_PREC_PREFIX);
  unsigned s = tpl_binary(o);
  return s ? side(KM_SIDE_OP, s) : side(KM_SIDE_UNKNOWN, 0);
}

/* What the template has after a use ending at byte e. */
static km_ctx_side tpl_right(const char *text, size_t len, uint32_t e) {
  while (e < len && tpl_space(text[e])) e++;
  if (e >= len) return side(KM_SIDE_DELIM, 0);
  char c = text[e];
  if (c == ')' || c == ']' || c == '}' || c == ';' || c == ',' || c == '{') return side(KM_SIDE_DELIM, 0);
  if (c == '(' || c == '[') return side(KM_SIDE_OP, KM_PREC_POSTFIX);
  if (tpl_word(c) || c == '"' || c == '\'' || c == '#') return side(KM_SIDE_UNKNOWN, 0);
  for (int i = 0; tpl_ops[i]; i++) {
    size_t n = strlen(tpl_ops[i]);
    if (e + n <= len && memcmp(text + e, tpl_ops[i], n) == 0) {
      const char *o = tpl_ops[i];
      if (strcmp(o, ".") == 0 || strcmp(o, "->") == 0 || strcmp(o, "++") == 0 || strcmp(o, "--") == 0)
        return side(KM_SIDE_OP, KM_PREC_POSTFIX);
      if (strcmp(o, "::") == 0) return side(KM_SIDE_OP, KM_PREC_SCOPE);
      unsigned s = tpl_binary(o);
      return s ? side(KM_SIDE_OP, s) : side(KM_SIDE_UNKNOWN, 0);
    }
  }
  return side(KM_SIDE_UNKNOWN, 0);
}

/* Whether an expression binding [b, e) of u, put where template use k
 * stands, must be parenthesized to keep its meaning: when an operator of
 * the template next to it binds tighter than the binding's weakest one
 * (`$x * 2` with $x = `a + b`), or when it holds a depth-0 comma. */
static int op_char(char c) { return c && strchr("+-*/%<>=!~&|^.:?", c) != NULL; }

static int needs_parens(const kl_unit *u, uint32_t b, uint32_t e, const km_template *t, uint32_t k) {
  if (e <= b) return 0;
  /* `-$x` with $x = `-a` must not paste into `--a` */
  uint32_t ub = t->use_begin[k];
  if (ub > 0 && op_char(t->text[ub - 1]) && op_char(u->src[u->tokens[b].off])) return 1;
  unsigned min = km_run_strength(u, b, e, 1);
  if (min == KM_PREC_ATOM) return 0;
  if (min == KM_PREC_UNKNOWN || min == KM_PREC_COMMA) return 1;
  int amb = km_tok_ambiguous(&u->tokens[b]);
  return !km_fits_left(min, amb, tpl_left(t->text, t->use_begin[k])) ||
         !km_fits_right(min, tpl_right(t->text, t->len, t->use_end[k]));
}

int km_instantiate(const kl_unit *u, const km_pattern *p, const km_results *r,
                   const km_match *m, const km_template *t, km_replacement *out,
                   char *err, size_t errlen) {
  memset(out, 0, sizeof *out);
  const km_binding *bs = r->b + m->bind;
  const kl_token *tk = u->tokens;
  out->begin = tk[m->tok_begin].off;
  out->end = tk[m->tok_end - 1].off + tk[m->tok_end - 1].len;

  int *use_slot = malloc((t->nuses ? t->nuses : 1) * sizeof *use_slot);
  uint32_t *nb = malloc((t->nuses ? t->nuses : 1) * sizeof *nb);
  uint32_t *ne = malloc((t->nuses ? t->nuses : 1) * sizeof *ne);
  if (!use_slot || !nb || !ne) goto oom;
  for (uint32_t k = 0; k < t->nuses; k++) {
    use_slot[k] = -1;
    for (uint32_t s = 0; s < p->nslots; s++)
      if (strcmp(km_slot_name(p, s), t->use_name[k]) == 0) use_slot[k] = (int)s;
    if (use_slot[k] < 0 || bs[use_slot[k]].tok_begin == KL_NONE) {
      set_err(err, errlen, "the template uses '%s%s', which the pattern does not bind",
              t->use_name[k][0] == '.' ? "" : "$", t->use_name[k]);
      free(use_slot), free(nb), free(ne);
      return 0;
    }
    if (bs[use_slot[k]].deep) {
      /* Its tokens open or close nested statements: copied alone, they
       * would unbalance the code. */
      set_err(err, errlen, "the template reuses `...` number %s, which matched into nested statements at line %u",
              t->use_name[k] + 3, (unsigned)u->tokens[m->tok_begin].line);
      free(use_slot), free(nb), free(ne);
      return 0;
    }
  }

  uint32_t ib, ie;
  line_indent(u->src, out->begin, &ib, &ie);
  buf b = {0};
  uint32_t pos = 0;
  for (uint32_t k = 0; k <= t->nuses; k++) {
    uint32_t lit_end = k < t->nuses ? t->use_begin[k] : (uint32_t)t->len;
    /* Template code, with the match's indentation after each newline. */
    for (uint32_t c = pos; c < lit_end; c++) {
      buf_add(&b, t->text + c, 1);
      if (t->text[c] == '\n' && c + 1 < t->len && t->text[c + 1] != '\n')
        buf_add(&b, u->src + ib, ie - ib);
    }
    if (k == t->nuses) break;
    const km_binding *bd = &bs[use_slot[k]];
    const char *uname = km_slot_name(p, (uint32_t)use_slot[k]);
    int paren = p->slot_sort[use_slot[k]] == KM_SORT_EXPR && uname[0] != '.' &&
                needs_parens(u, bd->tok_begin, bd->tok_end, t, k);
    if (paren) buf_add(&b, "(", 1);
    int runs = bd->tok_end > bd->tok_begin;
    /* A directive (a pragma the binding carries with its statement) must
     * start its own line and end it, or it stops being one. */
    if (runs && tk[bd->tok_begin].kind == KL_TOK_PP &&
        !(b.n ? b.p[b.n - 1] == '\n' : out->begin == 0 || u->src[out->begin - 1] == '\n')) {
      while (b.n && (b.p[b.n - 1] == ' ' || b.p[b.n - 1] == '\t')) b.n--; /* no trailing blank */
      buf_add(&b, "\n", 1);
      buf_add(&b, u->src + ib, ie - ib);
    }
    nb[k] = (uint32_t)b.n;
    if (runs) {
      uint32_t from = tk[bd->tok_begin].off;
      uint32_t to = tk[bd->tok_end - 1].off + tk[bd->tok_end - 1].len;
      add_reindented(&b, u->src, from, to);
    }
    ne[k] = (uint32_t)b.n;
    if (paren) buf_add(&b, ")", 1);
    pos = t->use_end[k];
    if (runs && tk[bd->tok_end - 1].kind == KL_TOK_PP) {
      char c = pos < t->len ? t->text[pos] : out->end < u->len ? u->src[out->end] : '\n';
      int next_nl = c == '\n' || c == '\r';
      if (!next_nl) {
        buf_add(&b, "\n", 1);
        buf_add(&b, u->src + ib, ie - ib);
      }
    }
  }
  if (!b.p) buf_add(&b, "", 0);
  if (b.oom) {
    free(b.p);
    goto oom;
  }
  out->text = b.p;
  out->len = b.n;

  /* Alignment units: old = the match's text with bindings as atoms (first
   * use of each slot), new = the text with template uses as atoms. */
  units o = {0}, n = {0};
  int ok = 1;
  uint32_t cur = out->begin;
  for (;;) {
    int next = -1;
    uint32_t nbeg = out->end;
    for (uint32_t s = 0; s < p->nslots; s++) {
      const km_binding *bd = &bs[s];
      if (bd->tok_begin == KL_NONE || bd->tok_end <= bd->tok_begin) continue;
      uint32_t bb = tk[bd->tok_begin].off;
      if (bb >= cur && bb < nbeg) nbeg = bb, next = (int)s;
    }
    ok = ok && split_code(&o, u->src, cur, nbeg);
    if (next < 0) break;
    const km_binding *bd = &bs[next];
    uint32_t be = tk[bd->tok_end - 1].off + tk[bd->tok_end - 1].len;
    ok = ok && units_add(&o, next, nbeg, be);
    cur = be;
  }
  /* Only the first use of a slot is an atom on either side; a repeated
   * use is code, as the repeated occurrence in the old text is. */
  uint8_t *seen = calloc(p->nslots ? p->nslots : 1, 1);
  ok = ok && seen;
  uint32_t c = 0;
  for (uint32_t k = 0; k < t->nuses && ok; k++) {
    ok = split_code(&n, out->text, c, nb[k]);
    if (ok && ne[k] > nb[k]) {
      if (seen[use_slot[k]]) ok = split_code(&n, out->text, nb[k], ne[k]);
      else ok = units_add(&n, use_slot[k], nb[k], ne[k]);
    }
    if (ok) seen[use_slot[k]] = 1;
    c = ne[k];
  }
  free(seen);
  ok = ok && split_code(&n, out->text, c, (uint32_t)out->len);
  ok = ok && align(out, u->src, &o, &n);
  free(o.u), free(n.u);
  free(use_slot), free(nb), free(ne);
  if (!ok) {
    km_replacement_free(out);
    set_err(err, errlen, "out of memory");
    return 0;
  }
  return 1;

oom:
  free(use_slot), free(nb), free(ne);
  set_err(err, errlen, "out of memory");
  return 0;
}

static int by_begin(const void *a, const void *b) {
  const km_replacement *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  return x->end < y->end ? -1 : x->end > y->end;
}

char *km_apply(const char *src, size_t len, km_replacement *reps, uint32_t nreps,
               size_t *out_len, km_edit_script *script, char *err, size_t errlen) {
  qsort(reps, nreps, sizeof *reps, by_begin);
  size_t total = len;
  for (uint32_t k = 0; k < nreps; k++) {
    if (reps[k].end < reps[k].begin || reps[k].end > len) {
      set_err(err, errlen, "edit %u has a bad range [%u, %u)", (unsigned)k, (unsigned)reps[k].begin,
              (unsigned)reps[k].end);
      return NULL;
    }
    if (k > 0 && (reps[k].begin < reps[k - 1].end ||
                  (reps[k].begin == reps[k - 1].begin && reps[k].end == reps[k - 1].end))) {
      set_err(err, errlen, "overlapping edits: bytes [%u, %u) and [%u, %u)", (unsigned)reps[k - 1].begin,
              (unsigned)reps[k - 1].end, (unsigned)reps[k].begin, (unsigned)reps[k].end);
      return NULL;
    }
    total = total - (reps[k].end - reps[k].begin) + reps[k].len;
  }
  char *out = malloc(total + 1);
  if (!out) {
    set_err(err, errlen, "out of memory");
    return NULL;
  }
  /* Bottom-up: from the last edit to the first, filling the output from
   * its end, so no offset of an earlier edit ever moves. */
  size_t w = total, r = len;
  for (uint32_t k = nreps; k-- > 0;) {
    size_t keep = r - reps[k].end;
    w -= keep;
    memcpy(out + w, src + reps[k].end, keep);
    w -= reps[k].len;
    if (reps[k].len) memcpy(out + w, reps[k].text, reps[k].len);
    r = reps[k].begin;
  }
  memcpy(out, src, r);
  out[total] = '\0';
  if (script) {
    long long delta = 0;
    for (uint32_t k = 0; k < nreps; k++) {
      uint32_t nstart = (uint32_t)((long long)reps[k].begin + delta);
      for (uint32_t q = 0; q < reps[k].nscript; q++) {
        km_edit e = reps[k].script[q];
        e.new_begin += nstart;
        e.new_end += nstart;
        if (!km_script_push(script, e)) {
          free(out);
          set_err(err, errlen, "out of memory");
          return NULL;
        }
      }
      delta += (long long)reps[k].len - (long long)(reps[k].end - reps[k].begin);
    }
  }
  *out_len = total;
  return out;
}

int km_replacement_script(const char *src, km_replacement *r) {
  units o = {0}, n = {0};
  r->nscript = 0;
  int ok = split_code(&o, src, r->begin, r->end) && split_code(&n, r->text ? r->text : "", 0, (uint32_t)r->len);
  ok = ok && align(r, src, &o, &n);
  free(o.u), free(n.u);
  return ok;
}
