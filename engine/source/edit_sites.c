/* Edit sites: the byte spans a transform reads and rewrites where patterns
 * do not reach (#define lines, #pragma lines, __launch_bounds__, parameter
 * qualifiers, declaration qualifiers), and the insertion points where such
 * a construct can be added. Read-only over the unit. */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

static kl_byte_span span(uint32_t b, uint32_t e) { return (kl_byte_span){b, e - b}; }

static int is_blank(char c) { return c == ' ' || c == '\t'; }

static int tok_is_p(const kl_unit *u, uint32_t i, uint32_t punct) {
  return u->tokens[i].kind == KL_TOK_PUNCT && u->tokens[i].sub == punct;
}

static int tok_is_kw(const kl_unit *u, uint32_t i, kl_kw kw) {
  return u->tokens[i].kind == KL_TOK_KEYWORD && u->tokens[i].sub == (uint32_t)kw;
}

static uint32_t tok_end(const kl_token *t) { return t->off + t->len; }

void kl_unit_pos(const kl_unit *u, uint32_t off, uint32_t *line, uint32_t *col) {
  if (off > u->len) off = u->len;
  /* the last token whose text starts at or before off */
  uint32_t lo = 0, hi = u->ntokens;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (u->tokens[mid].off <= off) lo = mid + 1;
    else hi = mid;
  }
  uint32_t l = 1, c = 1, at = 0;
  if (lo > 0) {
    const kl_token *t = &u->tokens[lo - 1];
    l = t->line;
    c = t->col;
    at = t->off;
  }
  for (; at < off; at++) {
    if (u->src[at] == '\n') l++, c = 1;
    else c++;
  }
  *line = l;
  *col = c;
}

/* Where token tok's line starts, when only blanks precede it on that line
 * (*own = 1); else tok's own offset (*own = 0). */
static uint32_t line_start(const kl_unit *u, uint32_t tok, int *own) {
  const kl_token *t = &u->tokens[tok];
  uint32_t b = t->off;
  while (b > t->trivia_off && is_blank(u->src[b - 1])) b--;
  /* only blanks back to a newline (or the file's start) make an own line;
   * a backslash before that newline would splice the lines together */
  *own = b == 0 || (b > t->trivia_off && u->src[b - 1] == '\n');
  if (*own && b >= 2 && u->src[b - 2] == '\\') *own = 0;
  if (*own && b >= 3 && u->src[b - 2] == '\r' && u->src[b - 3] == '\\') *own = 0;
  return *own ? b : t->off;
}

kl_byte_span kl_line_span(const kl_unit *u, uint32_t tok, uint32_t last_end) {
  int own;
  uint32_t b = line_start(u, tok, &own);
  uint32_t e = last_end;
  if (e < u->len && u->src[e] == '\r' && e + 1 < u->len && u->src[e + 1] == '\n') e += 2;
  else if (e < u->len && u->src[e] == '\n') e++;
  return span(b, e);
}

/* ---- directives: the words after '#', lexed on their own -------------------- */

/* A directive's text after '#' as a unit of its own: continuations and
 * comments become trivia. Its offsets plus `base` are offsets in u->src. */
typedef struct directive {
  kl_unit *d;
  uint32_t base;
  uint32_t n;       /* tokens without the EOF                              */
} directive;

static int directive_open(const kl_unit *u, uint32_t tok, directive *out) {
  const kl_token *t = &u->tokens[tok];
  out->d = NULL;
  if (t->kind != KL_TOK_PP || t->len < 1) return 0;
  out->base = t->off + 1;
  out->d = kl_source_parse(u->src + out->base, t->len - 1, "<directive>");
  if (!out->d) return 0;
  out->n = out->d->ntokens - 1;
  return 1;
}

static void directive_close(directive *dv) {
  kl_unit_free(dv->d);
  dv->d = NULL;
}

/* Token i of the directive is the word w. */
static int dv_word(const directive *dv, uint32_t i, const char *w) {
  if (i >= dv->n) return 0;
  const kl_token *t = &dv->d->tokens[i];
  size_t n = strlen(w);
  return (t->kind == KL_TOK_IDENT || t->kind == KL_TOK_KEYWORD) && t->len == n &&
         memcmp(dv->d->src + t->off, w, n) == 0;
}

/* The directive's first word ("define", "pragma", "if", ...) is `w`. A
 * directive whose text lexes as one PP token (#define X #y splits; "# #"
 * does not) never starts with a word. */
static int directive_is(const kl_unit *u, uint32_t tok, const char *w) {
  const kl_token *t = &u->tokens[tok];
  if (t->kind != KL_TOK_PP) return 0;
  /* the common case without lexing: blanks, then the word */
  size_t n = strlen(w);
  const char *s = u->src + t->off + 1, *e = u->src + t->off + t->len;
  while (s < e && is_blank(*s)) s++;
  if ((size_t)(e - s) >= n && memcmp(s, w, n) == 0 &&
      ((size_t)(e - s) == n || !((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
                                 (s[n] >= '0' && s[n] <= '9') || s[n] == '_')))
    return 1;
  if (s < e && (*s == '/' || *s == '\\')) {
    /* a comment or a continuation before the word: lex to be sure */
    directive dv;
    if (!directive_open(u, tok, &dv)) return 0;
    int is = dv.n > 0 && dv_word(&dv, 0, w);
    directive_close(&dv);
    return is;
  }
  return 0;
}

/* Span of directive tokens [a, b) in u->src; empty at `at` when a == b. */
static kl_byte_span dv_span(const directive *dv, uint32_t a, uint32_t b, uint32_t at) {
  if (a >= b) return (kl_byte_span){at, 0};
  const kl_token *x = &dv->d->tokens[a], *y = &dv->d->tokens[b - 1];
  return span(dv->base + x->off, dv->base + tok_end(y));
}

/* +1 for a line that opens a conditional, -1 for #endif, else 0. */
static int cond_delta(const kl_unit *u, uint32_t tok) {
  if (directive_is(u, tok, "if") || directive_is(u, tok, "ifdef") ||
      directive_is(u, tok, "ifndef"))
    return 1;
  return directive_is(u, tok, "endif") ? -1 : 0;
}

/* The word after the directive's keyword (#ifndef NAME, #define NAME), len
 * 0 when there is none. */
static kl_byte_span directive_name(const kl_unit *u, uint32_t tok) {
  kl_byte_span none = {0, 0};
  directive dv;
  if (!directive_open(u, tok, &dv)) return none;
  kl_byte_span s = none;
  if (dv.n >= 2 && (dv.d->tokens[1].kind == KL_TOK_IDENT || dv.d->tokens[1].kind == KL_TOK_KEYWORD))
    s = dv_span(&dv, 1, 2, 0);
  directive_close(&dv);
  return s;
}

/* #ifndef G directly followed by #define G: an include guard, which makes
 * nothing conditional. */
static int is_include_guard(const kl_unit *u, uint32_t tok) {
  if (!directive_is(u, tok, "ifndef") || tok + 1 >= u->ntokens ||
      !directive_is(u, tok + 1, "define"))
    return 0;
  kl_byte_span a = directive_name(u, tok), b = directive_name(u, tok + 1);
  return a.len && a.len == b.len && memcmp(u->src + a.off, u->src + b.off, a.len) == 0;
}

/* ---- #define ------------------------------------------------------------------ */

static int parse_define(kl_unit *u, uint32_t tok, kl_define_info *out) {
  directive dv;
  if (!directive_open(u, tok, &dv)) return 0;
  int ok = 0;
  if (dv.n < 2 || !dv_word(&dv, 0, "define") ||
      (dv.d->tokens[1].kind != KL_TOK_IDENT && dv.d->tokens[1].kind != KL_TOK_KEYWORD))
    goto done;
  const kl_token *t = &u->tokens[tok];
  memset(out, 0, sizeof *out);
  out->tok = tok;
  out->directive = span(t->off, tok_end(t));
  out->line = kl_line_span(u, tok, tok_end(t));
  const kl_token *name = &dv.d->tokens[1];
  out->name = span(dv.base + name->off, dv.base + tok_end(name));
  uint32_t v = 2, after = out->name.off + out->name.len;
  if (v < dv.n && dv.d->tokens[v].kind == KL_TOK_PUNCT && dv.d->tokens[v].sub == '(' &&
      dv.d->tokens[v].trivia_len == 0) {
    out->function_like = 1;
    uint32_t close = dv.d->tokens[v].match;
    if (close == KL_NONE || close >= dv.n) close = dv.n - 1; /* unclosed: to the end */
    out->params = dv_span(&dv, v, close + 1, after);
    after = out->params.off + out->params.len;
    v = close + 1;
  }
  out->value = dv_span(&dv, v, dv.n, after);
  ok = 1;
done:
  directive_close(&dv);
  return ok;
}

/* A #define or #undef name, pointing at its text so that qsort needs no
 * context. */
typedef struct name_ref {
  const char *p;
  uint32_t len;
} name_ref;

static int name_cmp(const name_ref *a, const name_ref *b) {
  uint32_t n = a->len < b->len ? a->len : b->len;
  int c = memcmp(a->p, b->p, n);
  if (c) return c;
  return a->len < b->len ? -1 : a->len > b->len;
}

static int by_name(const void *x, const void *y) { return name_cmp(x, y); }

/* #undef NAME: the name's span, len 0 when the line is no #undef. */
static kl_byte_span undef_name(const kl_unit *u, uint32_t tok) {
  kl_byte_span none = {0, 0};
  return directive_is(u, tok, "undef") ? directive_name(u, tok) : none;
}

kl_define_info *kl_unit_defines(kl_unit *u, uint32_t *count) {
  *count = 0;
  uint32_t nc;
  const kl_const *cs = kl_unit_constants(u, &nc);
  uint32_t cap = 0, n = 0, nnames = 0, ncap = 0;
  kl_define_info *ds = NULL;
  name_ref *names = NULL; /* every #define and #undef name, for same_name */
  uint32_t nf;
  const uint32_t *fns = kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &nf);
  uint32_t fi = 0, cover = 0, ci = 0;
  /* conditional depth; guard = the depth of an include guard's #ifndef
   * (0 for none), which does not count */
  uint32_t depth = 0, guard = 0;
  for (uint32_t i = 0; i < u->ntokens; i++) {
    if (u->tokens[i].kind != KL_TOK_PP) continue;
    int delta = cond_delta(u, i);
    if (delta < 0 && depth > 0) {
      if (depth == guard) guard = 0;
      depth--;
    }
    kl_byte_span nm = {0, 0};
    kl_define_info d;
    int is_define = directive_is(u, i, "define") && parse_define(u, i, &d);
    if (is_define) {
      /* functions are in pre-order, so by first token; nested ones lie
       * inside outer ones: covered while tokens < the furthest end seen */
      while (fi < nf && u->nodes[fns[fi]].tok_begin <= i) {
        if (u->nodes[fns[fi]].tok_end > cover) cover = u->nodes[fns[fi]].tok_end;
        fi++;
      }
      d.in_function = i < cover;
      d.conditional = depth > (guard ? 1u : 0u);
      /* kl_unit_constants saw the same lines in the same order */
      while (ci < nc && cs[ci].name_off < d.name.off) ci++;
      if (ci < nc && cs[ci].name_off == d.name.off && cs[ci].kind == KL_CONST_DEFINE &&
          !d.function_like) {
        d.known = cs[ci].known;
        d.number = cs[ci].value;
      }
      if (n == cap) {
        uint32_t c2 = cap ? cap * 2 : 16;
        kl_define_info *bigger = realloc(ds, c2 * sizeof *bigger);
        if (!bigger) goto oom;
        ds = bigger;
        cap = c2;
      }
      ds[n++] = d;
      nm = d.name;
    } else {
      nm = undef_name(u, i);
    }
    if (delta > 0) {
      depth++;
      if (!guard && depth == 1 && is_include_guard(u, i)) guard = depth;
    }
    if (nm.len) {
      if (nnames == ncap) {
        uint32_t c2 = ncap ? ncap * 2 : 16;
        name_ref *bigger = realloc(names, c2 * sizeof *bigger);
        if (!bigger) goto oom;
        names = bigger;
        ncap = c2;
      }
      names[nnames++] = (name_ref){u->src + nm.off, nm.len};
    }
  }
  if (nnames > 1) qsort(names, nnames, sizeof *names, by_name);
  /* names sorted by text: each define's run of equal names is between two
   * bisections (a name defined 100k times costs no more than 100k names) */
  for (uint32_t k = 0; k < n; k++) {
    name_ref key = {u->src + ds[k].name.off, ds[k].name.len};
    uint32_t bound[2];
    for (int upper = 0; upper < 2; upper++) {
      uint32_t lo = 0, hi = nnames;
      while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        int c = name_cmp(&names[mid], &key);
        if (c < 0 || (upper && c == 0)) lo = mid + 1;
        else hi = mid;
      }
      bound[upper] = lo;
    }
    ds[k].same_name = bound[1] - bound[0];
  }
  free(names);
  *count = n;
  if (!n) {
    free(ds);
    return NULL;
  }
  return ds;
oom:
  free(ds);
  free(names);
  return NULL;
}

uint32_t kl_define_params(const kl_unit *u, const kl_define_info *d, kl_byte_span *out,
                          uint32_t max) {
  if (!d->function_like || d->params.len < 2) return 0;
  kl_unit *p = kl_source_parse(u->src + d->params.off, d->params.len, "<params>");
  if (!p) return 0;
  uint32_t n = 0;
  for (uint32_t i = 1; i + 1 < p->ntokens; i++) {
    const kl_token *t = &p->tokens[i];
    if (t->kind == KL_TOK_IDENT || t->kind == KL_TOK_KEYWORD ||
        (t->kind == KL_TOK_PUNCT && t->sub == KL_P3('.', '.', '.'))) {
      if (n < max) out[n] = span(d->params.off + t->off, d->params.off + tok_end(t));
      n++;
    }
  }
  kl_unit_free(p);
  return n;
}

/* ---- #pragma --------------------------------------------------------------------- */

int kl_pragma_info_get(kl_unit *u, uint32_t tok, kl_pragma_info *out) {
  if (tok >= u->ntokens || !directive_is(u, tok, "pragma")) return 0;
  directive dv;
  if (!directive_open(u, tok, &dv)) return 0;
  int ok = dv.n >= 1 && dv_word(&dv, 0, "pragma");
  if (ok) {
    const kl_token *t = &u->tokens[tok];
    memset(out, 0, sizeof *out);
    out->tok = tok;
    out->directive = span(t->off, tok_end(t));
    out->line = kl_line_span(u, tok, tok_end(t));
    uint32_t after = dv.base + tok_end(&dv.d->tokens[0]);
    out->name = dv_span(&dv, 1, dv.n >= 2 ? 2 : 1, after);
    if (out->name.len) after = out->name.off + out->name.len;
    out->args = dv_span(&dv, dv.n >= 2 ? 2 : 1, dv.n, after);
    out->is_unroll = dv.n >= 2 && dv_word(&dv, 1, "unroll");
    if (out->is_unroll && dv.n > 2) {
      out->has_count = 1;
      int64_t v;
      if (kl_eval_tokens_before(u, dv.d->tokens, 2, dv.n, dv.d->src, t->off, &v)) {
        out->known = 1;
        out->count = v;
      }
    }
  }
  directive_close(&dv);
  return ok;
}

/* The first token of node n that is no #pragma line: n's own first token,
 * unless n's range starts with pragma lines (a parser may keep them inside
 * the statement they apply to). */
static uint32_t first_code_token(const kl_unit *u, uint32_t n) {
  const kl_node *nd = &u->nodes[n];
  uint32_t b = nd->tok_begin;
  if (nd->kind == KL_N_PRAGMA || nd->kind == KL_N_PREPROC || nd->kind == KL_N_UNIT) return b;
  while (b + 1 < nd->tok_end && directive_is(u, b, "pragma")) b++;
  return b;
}

/* Parts of a statement or a declaration, which a pragma before them does
 * not apply to: the statement they begin has it. */
static int is_part(const kl_unit *u, uint32_t n) {
  switch (u->nodes[n].kind) {
  case KL_N_UNIT: case KL_N_PRAGMA: case KL_N_PREPROC: case KL_N_PARAM_LIST: case KL_N_PARAM:
  case KL_N_TEMPLATE: case KL_N_TEMPLATE_PARAM: case KL_N_DECLARATOR: case KL_N_QUALIFIERS:
  case KL_N_IDENT: case KL_N_INT_LIT: case KL_N_FLOAT_LIT: case KL_N_CHAR_LIT:
  case KL_N_STRING_LIT: case KL_N_BOOL_LIT: case KL_N_BINARY: case KL_N_UNARY:
  case KL_N_POSTFIX: case KL_N_ASSIGN: case KL_N_TERNARY: case KL_N_CALL: case KL_N_LAUNCH:
  case KL_N_INDEX: case KL_N_MEMBER: case KL_N_CAST: case KL_N_CXX_CAST: case KL_N_SIZEOF:
  case KL_N_TYPE: case KL_N_INIT_LIST: case KL_N_PAREN: case KL_N_LAMBDA:
  case KL_N_TEMPLATE_ARGS:
    return 1;
  case KL_N_DECL: {
    /* the DECL of a DECL_STMT, or a for's init */
    uint32_t par = u->nodes[n].parent;
    return par != KL_NONE && u->nodes[par].kind != KL_N_UNIT && u->nodes[par].kind != KL_N_COMPOUND &&
           u->nodes[par].kind != KL_N_DECL;
  }
  default:
    return 0;
  }
}

uint32_t kl_pragmas_before(const kl_unit *u, uint32_t n, uint32_t *first) {
  uint32_t b = first_code_token(u, n);
  *first = b;
  if (is_part(u, n)) return 0;
  while (*first > 0 && directive_is(u, *first - 1, "pragma")) (*first)--;
  return b - *first;
}

void kl_pragma_insert_point(const kl_unit *u, uint32_t n, kl_insert_point *out) {
  uint32_t tok = first_code_token(u, n);
  const kl_token *t = &u->tokens[tok];
  int own;
  uint32_t b = line_start(u, tok, &own);
  if (own) {
    /* the statement begins its line: a new line above it, same indent,
     * ending as the line before it ends (CRLF files stay CRLF) */
    int crlf = b >= 2 && u->src[b - 1] == '\n' && u->src[b - 2] == '\r';
    *out = (kl_insert_point){b, "", span(b, t->off), crlf ? "\r\n" : "\n"};
  } else {
    /* `if (c) for (...)`: the directive needs a line of its own */
    *out = (kl_insert_point){t->off, "\n", {t->off, 0}, "\n"};
  }
}

/* ---- __launch_bounds__ ------------------------------------------------------------ */

/* The blanks (spaces, tabs) directly before byte b and after byte e, within
 * [lo, hi). */
static uint32_t blanks_before(const kl_unit *u, uint32_t b, uint32_t lo) {
  while (b > lo && is_blank(u->src[b - 1])) b--;
  return b;
}

static uint32_t blanks_after(const kl_unit *u, uint32_t e, uint32_t hi) {
  while (e < hi && is_blank(u->src[e])) e++;
  return e;
}

int kl_launch_bounds_get(kl_unit *u, uint32_t fn, kl_launch_bounds_info *out) {
  kl_function_info fi;
  if (!kl_function_info_get(u, fn, &fi)) return 0;
  memset(out, 0, sizeof *out);
  out->keyword_tok = KL_NONE;
  out->insert.off = KL_NONE;
  const kl_node *nd = &u->nodes[fn];
  uint32_t stop = fi.params != KL_NONE ? u->nodes[fi.params].tok_begin : nd->tok_end;
  for (uint32_t i = nd->tok_begin; i < stop; i++) {
    if (!tok_is_kw(u, i, KL_KW_LAUNCH_BOUNDS)) continue;
    out->count++;
    if (out->keyword_tok == KL_NONE) out->keyword_tok = i;
  }
  if (out->keyword_tok != KL_NONE) {
    uint32_t k = out->keyword_tok, open = k + 1;
    const kl_token *kt = &u->tokens[k];
    uint32_t close = tok_is_p(u, open, '(') ? u->tokens[open].match : KL_NONE;
    if (close == KL_NONE || close < open) {
      /* a keyword without its (...): describe the keyword alone */
      out->present = 1;
      out->whole = span(kt->off, tok_end(kt));
      out->inner = (kl_byte_span){tok_end(kt), 0};
    } else {
      out->present = 1;
      out->whole = span(kt->off, tok_end(&u->tokens[close]));
      out->inner = span(tok_end(&u->tokens[open]), u->tokens[close].off);
      /* arguments split at the commas outside brackets */
      for (uint32_t a = open + 1; a < close;) {
        uint32_t e = a;
        while (e < close && !tok_is_p(u, e, ',')) {
          const kl_token *t = &u->tokens[e];
          e = t->match != KL_NONE && t->match > e && t->match < close ? t->match + 1 : e + 1;
        }
        uint32_t k2 = out->nargs;
        if (k2 < 3 && e > a) {
          out->arg[k2] = span(u->tokens[a].off, tok_end(&u->tokens[e - 1]));
          int64_t v;
          if (kl_eval_tokens_before(u, u->tokens, a, e, u->src, kt->off, &v)) {
            out->known[k2] = 1;
            out->value[k2] = v;
          }
        } else if (k2 < 3) {
          out->arg[k2] = (kl_byte_span){u->tokens[e].off, 0}; /* (, 2): empty */
        }
        if (out->nargs < 255) out->nargs++;
        if (e >= close) break;
        a = e + 1;
        if (a == close) { /* a trailing comma: one more, empty */
          if (out->nargs < 3) out->arg[out->nargs] = (kl_byte_span){u->tokens[close].off, 0};
          if (out->nargs < 255) out->nargs++;
        }
      }
    }
    uint32_t b = blanks_before(u, out->whole.off, kt->trivia_off);
    uint32_t end = out->whole.off + out->whole.len;
    if (b == out->whole.off) {
      uint32_t next = close != KL_NONE && close >= open ? close + 1 : k + 1;
      end = blanks_after(u, end, u->tokens[next].off);
    }
    out->remove = span(b, end);
    return 1;
  }
  /* a kernel returns void: a function without a return type (a
   * constructor, a conversion) is none and gets no insertion point */
  if (fi.return_type != KL_NONE) {
    uint32_t b, e;
    kl_node_span(u, fi.return_type, &b, &e);
    out->insert = (kl_insert_point){e, " ", {e, 0}, ""};
  }
  return 1;
}

/* ---- parameters -------------------------------------------------------------------- */

kl_byte_span kl_token_removal(const kl_unit *u, uint32_t i) {
  const kl_token *t = &u->tokens[i];
  uint32_t b = t->off, e = tok_end(t);
  if (i + 1 < u->ntokens && e < u->tokens[i + 1].off && is_blank(u->src[e])) e++;
  else if (b > t->trivia_off && is_blank(u->src[b - 1])) b--;
  return span(b, e);
}

int kl_param_sites_get(const kl_unit *u, uint32_t param, kl_param_sites *out) {
  memset(out, 0, sizeof *out);
  if (!kl_param_info_get(u, param, &out->info)) return 0;
  out->const_tok = out->restrict_tok = KL_NONE;
  out->const_insert.off = out->restrict_insert.off = KL_NONE;
  const kl_node *nd = &u->nodes[param];
  uint32_t e = nd->tok_end;
  uint32_t value = kl_node_field(u, param, KL_F_VALUE);
  if (value != KL_NONE) e = u->nodes[value].tok_begin;
  int before_declarator = 1;
  uint32_t last_star = KL_NONE;
  for (uint32_t i = nd->tok_begin; i < e; i++) {
    const kl_token *t = &u->tokens[i];
    if (t->kind == KL_TOK_PUNCT && (t->flags & KL_TF_ANGLE) && t->match != KL_NONE &&
        t->match > i) {
      i = t->match; /* const inside template arguments is not the param's */
      continue;
    }
    if (t->kind == KL_TOK_PUNCT &&
        (t->sub == '*' || t->sub == '&' || t->sub == KL_P2('&', '&') || t->sub == '(' ||
         t->sub == '['))
      before_declarator = 0;
    if (t->kind == KL_TOK_PUNCT && t->sub == '*') {
      out->stars++;
      last_star = i;
    }
    if (t->kind == KL_TOK_PUNCT && t->sub == '[' && t->match != KL_NONE && t->match > i)
      i = t->match;
    if (tok_is_kw(u, i, KL_KW_CONST) && before_declarator && out->const_tok == KL_NONE)
      out->const_tok = i;
    if (tok_is_kw(u, i, KL_KW_RESTRICT) && out->restrict_tok == KL_NONE) out->restrict_tok = i;
  }
  if (out->const_tok != KL_NONE) out->const_remove = kl_token_removal(u, out->const_tok);
  if (out->restrict_tok != KL_NONE) out->restrict_remove = kl_token_removal(u, out->restrict_tok);
  if (out->const_tok == KL_NONE && out->info.base_tok_begin != KL_NONE) {
    uint32_t o = u->tokens[out->info.base_tok_begin].off;
    out->const_insert = (kl_insert_point){o, "", {o, 0}, " "};
  }
  if (out->restrict_tok == KL_NONE && out->stars) {
    if (out->info.name_tok != KL_NONE) {
      uint32_t o = u->tokens[out->info.name_tok].off;
      out->restrict_insert = (kl_insert_point){o, "", {o, 0}, " "};
    } else {
      uint32_t o = tok_end(&u->tokens[last_star]);
      out->restrict_insert = (kl_insert_point){o, " ", {o, 0}, ""};
    }
  }
  return 1;
}

/* ---- declarations ------------------------------------------------------------------ */

uint32_t kl_decl_qualifier(const kl_unit *u, uint32_t i) {
  const kl_token *t = &u->tokens[i];
  if (t->kind == KL_TOK_IDENT) {
    return t->len == 11 && memcmp(u->src + t->off, "__managed__", 11) == 0 ? KL_DQ_MANAGED : 0;
  }
  if (t->kind != KL_TOK_KEYWORD) return 0;
  switch (t->sub) {
  case KL_KW_SHARED: return KL_DQ_SHARED;
  case KL_KW_CONSTANT: return KL_DQ_CONSTANT;
  case KL_KW_DEVICE: return KL_DQ_DEVICE;
  case KL_KW_STATIC: return KL_DQ_STATIC;
  case KL_KW_CONSTEXPR: return KL_DQ_CONSTEXPR;
  case KL_KW_EXTERN: return KL_DQ_EXTERN;
  case KL_KW_CONST: return KL_DQ_CONST;
  case KL_KW_VOLATILE: return KL_DQ_VOLATILE;
  case KL_KW_INLINE: return KL_DQ_INLINE;
  default: return 0;
  }
}

int kl_type_base(const kl_unit *u, uint32_t type, uint32_t *b, uint32_t *e) {
  const kl_node *nd = &u->nodes[type];
  uint32_t first = KL_NONE, last = KL_NONE;
  for (uint32_t i = nd->tok_begin; i < nd->tok_end; i++) {
    const kl_token *t = &u->tokens[i];
    if (kl_decl_qualifier(u, i) || tok_is_kw(u, i, KL_KW_RESTRICT) ||
        tok_is_kw(u, i, KL_KW_HOST) || tok_is_kw(u, i, KL_KW_GLOBAL) ||
        tok_is_kw(u, i, KL_KW_FORCEINLINE) || tok_is_kw(u, i, KL_KW_TYPENAME))
      continue;
    if ((tok_is_kw(u, i, KL_KW_ALIGN) || tok_is_kw(u, i, KL_KW_ATTRIBUTE) ||
         tok_is_kw(u, i, KL_KW_LAUNCH_BOUNDS)) &&
        i + 1 < nd->tok_end && tok_is_p(u, i + 1, '(') && u->tokens[i + 1].match != KL_NONE &&
        u->tokens[i + 1].match < nd->tok_end) {
      i = u->tokens[i + 1].match;
      continue;
    }
    if (t->kind == KL_TOK_PUNCT && (t->sub == '*' || t->sub == '&' || t->sub == KL_P2('&', '&')))
      continue;
    if (first == KL_NONE) first = i;
    last = i;
    if (t->kind == KL_TOK_PUNCT && (t->flags & KL_TF_ANGLE) && t->match != KL_NONE &&
        t->match > i && t->match < nd->tok_end)
      last = i = t->match;
  }
  if (first == KL_NONE) {
    *b = *e = nd->tok_begin;
    return 0;
  }
  *b = first;
  *e = last + 1;
  return 1;
}
