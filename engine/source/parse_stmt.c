/* Statements and declarations. A statement that fails to parse is rewound
 * and kept as one opaque node over its tokens (to its ';' or the end of its
 * brace group), so one bad construct never loses the rest of the body. */
#include <string.h>

#include "source/internal.h"

/* The end of an unparseable region from `start`: its ';', the end of a brace
 * group, a preprocessor line or a closer that belongs to an outer level. */
static uint32_t recover_end(const kl_parser *p, uint32_t start) {
  uint32_t i = start;
  while (i < p->end) {
    const kl_token *t = &p->t[i];
    if (t->kind == KL_TOK_PP && i > start) break;
    if (t->kind == KL_TOK_PUNCT) {
      uint32_t s = t->sub;
      if (s == ';') return i + 1;
      if ((s == '(' || s == '[' || s == '{') && t->match != KL_NONE && t->match > i) {
        i = t->match + 1;
        if (s == '{') return kl_p_is(p, i, ';') ? i + 1 : i;
        continue;
      }
      if (s == ')' || s == ']' || s == '}') {
        if (i == start) return i + 1;
        break;
      }
    }
    i++;
  }
  return i > start ? i : start + 1;
}

uint32_t kl_p_recover(kl_parser *p, uint32_t start, uint32_t mark) {
  p->npend = mark;
  uint32_t end = recover_end(p, start);
  if (end > p->end) end = p->end;
  p->pos = end;
  uint32_t n = kl_p_opaque(p, start, end, p->too_deep);
  p->too_deep = 0;
  return n;
}

static int enter(kl_parser *p) {
  if (p->depth >= KL_SOURCE_MAX_DEPTH) {
    p->too_deep = 1;
    return 0;
  }
  p->depth++;
  return 1;
}

static int is_pragma(const kl_parser *p, uint32_t i) {
  const kl_token *t = &p->t[i];
  const char *s = p->u->src + t->off + 1, *e = p->u->src + t->off + t->len;
  while (s < e && (*s == ' ' || *s == '\t')) s++;
  return e - s >= 6 && memcmp(s, "pragma", 6) == 0;
}

static uint32_t preproc(kl_parser *p) {
  uint32_t b = p->pos++;
  return kl_p_leaf(p, is_pragma(p, b) ? KL_N_PRAGMA : KL_N_PREPROC, b, b + 1);
}

/* Declarators after a type: name [dims] [= init | (args) | {init}], ... ;
 * `terminated` requires and consumes the final ';'. */
uint32_t kl_p_decl(kl_parser *p, kl_node_kind wrap) {
  uint32_t start = p->pos, mark = p->npend;
  uint32_t e = kl_p_scan_type(p, p->pos, 0);
  if (e == KL_NONE) return KL_NONE;
  kl_p_push(p, kl_p_type(p, e), KL_F_TYPE);
  for (;;) {
    uint32_t dmark = p->npend, dstart = p->pos;
    while (kl_p_is(p, p->pos, '*') || kl_p_is(p, p->pos, '&') ||
           kl_p_kw(p, p->pos, KL_KW_CONST) || kl_p_kw(p, p->pos, KL_KW_RESTRICT))
      p->pos++;
    uint32_t ne = kl_p_scan_qualified_name(p, p->pos);
    if (ne == KL_NONE) goto fail;
    kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, p->pos, ne), KL_F_NAME);
    p->pos = ne;
    while (kl_p_is(p, p->pos, '[')) {
      uint32_t close = p->t[p->pos].match;
      if (close == KL_NONE) goto fail;
      p->pos++;
      if (p->pos < close) {
        uint32_t d = kl_p_expr(p, KL_PREC_COMMA);
        if (d == KL_NONE || p->pos != close) goto fail;
        kl_p_push(p, d, KL_F_INDEX);
      }
      p->pos = close + 1;
    }
    while (p->t[p->pos].kind == KL_TOK_KEYWORD && p->t[p->pos].sub == KL_KW_ATTRIBUTE &&
           kl_p_is(p, p->pos + 1, '(') && p->t[p->pos + 1].match != KL_NONE)
      p->pos = p->t[p->pos + 1].match + 1;
    if (kl_p_is(p, p->pos, '=')) {
      p->pos++;
      uint32_t v = kl_p_expr(p, KL_PREC_ASSIGN);
      if (v == KL_NONE) goto fail;
      kl_p_push(p, v, KL_F_VALUE);
    } else if (kl_p_is(p, p->pos, '(') || kl_p_is(p, p->pos, '{')) {
      /* direct initialization: the argument list is an INIT_LIST */
      uint32_t open = p->pos, close = p->t[open].match;
      if (close == KL_NONE) goto fail;
      uint32_t imark = p->npend;
      p->pos++;
      while (p->pos < close) {
        uint32_t a = kl_p_expr(p, KL_PREC_ASSIGN);
        if (a == KL_NONE) goto fail;
        kl_p_push(p, a, KL_F_ARG);
        if (p->pos == close) break;
        if (!kl_p_is(p, p->pos, ',')) goto fail;
        p->pos++;
      }
      if (p->pos != close) goto fail;
      p->pos = close + 1;
      kl_p_push(p, kl_p_finish(p, KL_N_INIT_LIST, imark, open, p->pos), KL_F_VALUE);
    }
    kl_p_push(p, kl_p_finish(p, KL_N_DECLARATOR, dmark, dstart, p->pos), KL_F_DECLARATOR);
    kl_p_mark_value_word(p, ne - 1);
    if (!kl_p_is(p, p->pos, ',')) break;
    p->pos++;
  }
  if (!kl_p_is(p, p->pos, ';')) goto fail;
  p->pos++;
  uint32_t d = kl_p_finish(p, KL_N_DECL, mark, start, p->pos);
  if (wrap == KL_N_DECL_STMT && d != KL_NONE) {
    uint32_t m2 = p->npend;
    kl_p_push(p, d, KL_F_NONE);
    d = kl_p_finish(p, KL_N_DECL_STMT, m2, start, p->pos);
  }
  return d;
fail:
  p->npend = mark;
  p->pos = start;
  return KL_NONE;
}

uint32_t kl_p_compound(kl_parser *p) {
  uint32_t b = p->pos, close = p->t[b].match;
  if (!kl_p_is(p, b, '{') || close == KL_NONE) return KL_NONE;
  uint32_t mark = p->npend;
  p->pos++;
  while (p->pos < close && !p->oom) kl_p_push(p, kl_p_stmt(p), KL_F_NONE);
  p->pos = close + 1;
  return kl_p_finish(p, KL_N_COMPOUND, mark, b, p->pos);
}

/* '(' expr ')' pushed with field f. */
static int paren_cond(kl_parser *p, kl_field f) {
  if (!kl_p_is(p, p->pos, '(')) return 0;
  uint32_t close = p->t[p->pos].match;
  if (close == KL_NONE) return 0;
  p->pos++;
  uint32_t c = kl_p_expr(p, KL_PREC_COMMA);
  if (c == KL_NONE || p->pos != close) return 0;
  kl_p_push(p, c, f);
  p->pos++;
  return 1;
}

static int semicolon(kl_parser *p) {
  if (!kl_p_is(p, p->pos, ';')) return 0;
  p->pos++;
  return 1;
}

/* A sub-statement (a loop's body, THEN, ELSE): a failure inside it stays
 * inside. `#pragma` lines before it (`for (...)\n#pragma unroll\nfor ...`)
 * become positional PRAGMA children of the owner, just before the field,
 * so the field is the real statement and kl_pragma_target (the next
 * sibling) reaches it. Any other preprocessor line there (#if, #define)
 * would make the body depend on the preprocessor: the owner fails and is
 * kept opaque rather than given a body that may be wrong. */
static int sub_stmt(kl_parser *p, kl_field f) {
  while (p->t[p->pos].kind == KL_TOK_PP) {
    if (!is_pragma(p, p->pos)) return 0;
    kl_p_push(p, preproc(p), KL_F_NONE);
  }
  /* nothing left for a body: the pragmas end a block or the file */
  if (p->pos >= p->end || kl_p_is(p, p->pos, '}')) return 0;
  uint32_t s = kl_p_stmt(p);
  if (s == KL_NONE) return 0;
  kl_p_push(p, s, f);
  return 1;
}

/* for (T x : range) body, after the '(' */
static uint32_t range_for(kl_parser *p, uint32_t b, uint32_t close, uint32_t colon,
                          uint32_t mark) {
  uint32_t db = p->pos, dmark = p->npend;
  uint32_t e = kl_p_scan_type(p, db, 0);
  if (e == KL_NONE) return KL_NONE;
  kl_p_push(p, kl_p_type(p, e), KL_F_TYPE);
  uint32_t nmark = p->npend, nb = p->pos;
  while (kl_p_is(p, p->pos, '&') || kl_p_is(p, p->pos, KL_P2('&', '&')) || kl_p_is(p, p->pos, '*'))
    p->pos++;
  if (p->t[p->pos].kind != KL_TOK_IDENT || p->pos + 1 != colon) return KL_NONE;
  kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, p->pos, p->pos + 1), KL_F_NAME);
  kl_p_mark_value_word(p, p->pos);
  p->pos++;
  kl_p_push(p, kl_p_finish(p, KL_N_DECLARATOR, nmark, nb, p->pos), KL_F_DECLARATOR);
  kl_p_push(p, kl_p_finish(p, KL_N_DECL, dmark, db, p->pos), KL_F_INIT);
  p->pos = colon + 1;
  uint32_t r = kl_p_expr(p, KL_PREC_COMMA);
  if (r == KL_NONE || p->pos != close) return KL_NONE;
  kl_p_push(p, r, KL_F_VALUE);
  p->pos = close + 1;
  if (!sub_stmt(p, KL_F_BODY)) return KL_NONE;
  uint32_t n = kl_p_finish(p, KL_N_RANGE_FOR, mark, b, p->pos);
  if (n != KL_NONE) p->nodes[n].op_tok = b;
  return n;
}

static uint32_t for_stmt(kl_parser *p, uint32_t mark) {
  uint32_t b = p->pos++;
  if (!kl_p_is(p, p->pos, '(')) return KL_NONE;
  uint32_t close = p->t[p->pos].match;
  if (close == KL_NONE) return KL_NONE;
  p->pos++;
  /* a ':' at this level with no ';' makes it a range-for */
  for (uint32_t i = p->pos; i < close; i = kl_p_skip_group(p, i)) {
    if (kl_p_is(p, i, ';')) break;
    if (kl_p_is(p, i, ':')) return range_for(p, b, close, i, mark);
  }
  if (!kl_p_is(p, p->pos, ';')) {
    uint32_t init;
    if (kl_p_starts_decl(p, p->pos)) {
      init = kl_p_decl(p, KL_N_DECL);
      if (init == KL_NONE) return KL_NONE;
    } else {
      init = kl_p_expr(p, KL_PREC_COMMA);
      if (init == KL_NONE || !semicolon(p)) return KL_NONE;
    }
    kl_p_push(p, init, KL_F_INIT);
  } else {
    p->pos++;
  }
  if (!kl_p_is(p, p->pos, ';')) {
    uint32_t c = kl_p_expr(p, KL_PREC_COMMA);
    if (c == KL_NONE) return KL_NONE;
    kl_p_push(p, c, KL_F_COND);
  }
  if (!semicolon(p)) return KL_NONE;
  if (p->pos != close) {
    uint32_t s = kl_p_expr(p, KL_PREC_COMMA);
    if (s == KL_NONE || p->pos != close) return KL_NONE;
    kl_p_push(p, s, KL_F_STEP);
  }
  p->pos = close + 1;
  if (!sub_stmt(p, KL_F_BODY)) return KL_NONE;
  uint32_t n = kl_p_finish(p, KL_N_FOR, mark, b, p->pos);
  if (n != KL_NONE) p->nodes[n].op_tok = b;
  return n;
}

static uint32_t asm_stmt(kl_parser *p, uint32_t b) {
  uint32_t i = b + 1;
  while (p->t[i].kind == KL_TOK_KEYWORD || p->t[i].kind == KL_TOK_IDENT) i++;
  if (!kl_p_is(p, i, '(') || p->t[i].match == KL_NONE) return KL_NONE;
  i = p->t[i].match + 1;
  if (!kl_p_is(p, i, ';')) return KL_NONE;
  p->pos = i + 1;
  return kl_p_leaf(p, KL_N_ASM, b, p->pos);
}

/* Statements that begin with a keyword; KL_NONE on failure. */
static uint32_t keyword_stmt(kl_parser *p, uint32_t b, uint32_t mark, int *handled) {
  *handled = 1;
  kl_node_kind kind;
  switch (p->t[b].sub) {
  case KL_KW_IF:
    p->pos++;
    if (kl_p_kw(p, p->pos, KL_KW_CONSTEXPR)) p->pos++;
    if (!paren_cond(p, KL_F_COND) || !sub_stmt(p, KL_F_THEN)) return KL_NONE;
    if (kl_p_kw(p, p->pos, KL_KW_ELSE)) {
      p->pos++;
      if (!sub_stmt(p, KL_F_ELSE)) return KL_NONE;
    }
    kind = KL_N_IF;
    break;
  case KL_KW_FOR:
    return for_stmt(p, mark);
  case KL_KW_WHILE:
    p->pos++;
    if (!paren_cond(p, KL_F_COND) || !sub_stmt(p, KL_F_BODY)) return KL_NONE;
    kind = KL_N_WHILE;
    break;
  case KL_KW_DO:
    p->pos++;
    if (!sub_stmt(p, KL_F_BODY) || !kl_p_kw(p, p->pos, KL_KW_WHILE)) return KL_NONE;
    p->pos++;
    if (!paren_cond(p, KL_F_COND) || !semicolon(p)) return KL_NONE;
    kind = KL_N_DO;
    break;
  case KL_KW_SWITCH:
    p->pos++;
    if (!paren_cond(p, KL_F_COND) || !sub_stmt(p, KL_F_BODY)) return KL_NONE;
    kind = KL_N_SWITCH;
    break;
  case KL_KW_RETURN:
    p->pos++;
    if (!kl_p_is(p, p->pos, ';')) {
      uint32_t v = kl_p_expr(p, KL_PREC_COMMA);
      if (v == KL_NONE) return KL_NONE;
      kl_p_push(p, v, KL_F_VALUE);
    }
    if (!semicolon(p)) return KL_NONE;
    kind = KL_N_RETURN;
    break;
  case KL_KW_BREAK:
  case KL_KW_CONTINUE:
    p->pos++;
    if (!semicolon(p)) return KL_NONE;
    kind = p->t[b].sub == KL_KW_BREAK ? KL_N_BREAK : KL_N_CONTINUE;
    break;
  case KL_KW_CASE:
  case KL_KW_DEFAULT:
    p->pos++;
    if (p->t[b].sub == KL_KW_CASE) {
      /* stop before the ':' (precedence above the ternary) */
      uint32_t v = kl_p_expr(p, 4);
      if (v == KL_NONE) return KL_NONE;
      kl_p_push(p, v, KL_F_VALUE);
    }
    if (!kl_p_is(p, p->pos, ':')) return KL_NONE;
    p->pos++;
    kind = KL_N_CASE;
    break;
  case KL_KW_GOTO:
    p->pos++;
    if (p->t[p->pos].kind != KL_TOK_IDENT) return KL_NONE;
    kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, p->pos, p->pos + 1), KL_F_NAME);
    p->pos++;
    if (!semicolon(p)) return KL_NONE;
    kind = KL_N_GOTO;
    break;
  case KL_KW_ASM:
    return asm_stmt(p, b);
  case KL_KW_TRY: {
    p->pos++;
    uint32_t body = kl_p_compound(p);
    if (body == KL_NONE) return KL_NONE;
    kl_p_push(p, body, KL_F_BODY);
    int handlers = 0;
    while (kl_p_kw(p, p->pos, KL_KW_CATCH)) {
      uint32_t cb = p->pos++, cmark = p->npend;
      uint32_t params = kl_p_params(p);
      if (params == KL_NONE) return KL_NONE;
      kl_p_push(p, params, KL_F_PARAMS);
      uint32_t cbody = kl_p_compound(p);
      if (cbody == KL_NONE) return KL_NONE;
      kl_p_push(p, cbody, KL_F_BODY);
      uint32_t c = kl_p_finish(p, KL_N_CATCH, cmark, cb, p->pos);
      if (c != KL_NONE) p->nodes[c].op_tok = cb;
      kl_p_push(p, c, KL_F_NONE);
      handlers++;
    }
    if (!handlers) return KL_NONE;
    kind = KL_N_TRY;
    break;
  }
  case KL_KW_STRUCT: case KL_KW_CLASS: case KL_KW_UNION: case KL_KW_ENUM:
  case KL_KW_TYPEDEF: case KL_KW_USING: case KL_KW_TEMPLATE: case KL_KW_NAMESPACE:
  case KL_KW_PUBLIC: case KL_KW_PRIVATE: case KL_KW_PROTECTED:
    return kl_p_item(p);
  default:
    *handled = 0;
    return KL_NONE;
  }
  uint32_t n = kl_p_finish(p, kind, mark, b, p->pos);
  if (n != KL_NONE) p->nodes[n].op_tok = b;
  return n;
}

uint32_t kl_p_stmt(kl_parser *p) {
  uint32_t b = p->pos, mark = p->npend;
  if (!enter(p)) return kl_p_recover(p, b, mark);
  const kl_token *t = &p->t[b];
  uint32_t n = KL_NONE;
  if (t->kind == KL_TOK_PP) {
    n = preproc(p);
  } else if (kl_p_is(p, b, '{')) {
    n = kl_p_compound(p);
  } else if (kl_p_is(p, b, ';')) {
    p->pos++;
    n = kl_p_leaf(p, KL_N_EMPTY_STMT, b, b + 1);
  } else if (t->kind == KL_TOK_KEYWORD) {
    int handled;
    n = keyword_stmt(p, b, mark, &handled);
    if (!handled) goto general;
  } else if (t->kind == KL_TOK_IDENT && kl_p_is(p, b + 1, ':')) {
    kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, b, b + 1), KL_F_NAME);
    p->pos = b + 2;
    n = kl_p_finish(p, KL_N_LABEL, mark, b, p->pos);
  } else {
  general:
    if (kl_p_starts_decl(p, b)) {
      n = kl_p_decl(p, KL_N_DECL_STMT);
    } else {
      uint32_t v = kl_p_expr(p, KL_PREC_COMMA);
      if (v != KL_NONE && semicolon(p)) {
        kl_p_push(p, v, KL_F_VALUE);
        n = kl_p_finish(p, KL_N_EXPR_STMT, mark, b, p->pos);
      }
    }
  }
  p->depth--;
  if (n == KL_NONE && !p->oom) n = kl_p_recover(p, b, mark);
  return n;
}
