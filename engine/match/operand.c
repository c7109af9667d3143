/* Operator precedence at the token level, for code the parser did not
 * structure (KL_N_OPAQUE). A metavariable there binds a token run; the run
 * is only a valid binding when it is one complete expression whose every
 * depth-0 operator binds tighter than the operators around it, so that the
 * run is a subexpression of the code and not a piece cut across an
 * operator: `$i * $n` must not take `SharedIdx + 4` in `SharedIdx + 4 *
 * ib`. Where the grammar is ambiguous without types (`(a) - b` is a
 * subtraction or a cast of `-b`; `x } y` ends a block or an init list), the
 * reading that accepts less is taken.
 *
 * Strengths follow C++: 1 comma, 2 assignment and ?: (right to left),
 * 3 ||, 4 &&, 5 |, 6 ^, 7 &, 8 == !=, 9 < > <= >=, 10 << >>, 11 + -,
 * 12 * / %, 13 .* ->*, 14 prefix operators and casts (right to left),
 * 15 postfix (call, index, member, x++), 16 ::, 17 an atom. */
#include <string.h>

#include "match/match.h"

static int is_punct(const kl_token *k, uint32_t sub) { return k->kind == KL_TOK_PUNCT && k->sub == sub; }

static int right_assoc(unsigned s) { return s == KM_PREC_ASSIGN || s == KM_PREC_PREFIX; }

/* The binary strength of a punctuator after an operand, 0 if it is none. */
static unsigned binary_strength(const kl_token *k) {
  if (k->kind != KL_TOK_PUNCT) return 0;
  if (k->flags & KL_TF_ANGLE) return 0; /* a template bracket */
  switch (k->sub) {
  case KL_P1(','): return KM_PREC_COMMA;
  case KL_P1('='): case KL_P2('+', '='): case KL_P2('-', '='): case KL_P2('*', '='):
  case KL_P2('/', '='): case KL_P2('%', '='): case KL_P2('&', '='): case KL_P2('|', '='):
  case KL_P2('^', '='): case KL_P3('<', '<', '='): case KL_P3('>', '>', '='):
  case KL_P1('?'): case KL_P1(':'):
    return KM_PREC_ASSIGN;
  case KL_P2('|', '|'): return 3;
  case KL_P2('&', '&'): return 4;
  case KL_P1('|'): return 5;
  case KL_P1('^'): return 6;
  case KL_P1('&'): return 7;
  case KL_P2('=', '='): case KL_P2('!', '='): return 8;
  case KL_P1('<'): case KL_P1('>'): case KL_P2('<', '='): case KL_P2('>', '='): return 9;
  case KL_P2('<', '<'): case KL_P2('>', '>'): return 10;
  case KL_P1('+'): case KL_P1('-'): return 11;
  case KL_P1('*'): case KL_P1('/'): case KL_P1('%'): return 12;
  case KL_P2('.', '*'): case KL_P3('-', '>', '*'): return 13;
  default: return 0;
  }
}

/* A token that is a prefix operator where an operand is expected; *amb
 * says it would be binary (or postfix) after an operand. */
static int prefix_op(const kl_token *k, int *amb) {
  *amb = 0;
  if (k->kind == KL_TOK_KEYWORD)
    return k->sub == KL_KW_SIZEOF || k->sub == KL_KW_ALIGNOF || k->sub == KL_KW_NEW || k->sub == KL_KW_DELETE;
  if (k->kind != KL_TOK_PUNCT) return 0;
  switch (k->sub) {
  case KL_P1('!'): case KL_P1('~'):
    return 1;
  case KL_P1('+'): case KL_P1('-'): case KL_P1('*'): case KL_P1('&'): case KL_P2('+', '+'):
  case KL_P2('-', '-'):
    *amb = 1;
    return 1;
  default:
    return 0;
  }
}

/* A token that is an operand by itself. */
static int operand_token(const kl_token *k) {
  switch (k->kind) {
  case KL_TOK_IDENT: case KL_TOK_INT: case KL_TOK_FLOAT: case KL_TOK_CHAR: case KL_TOK_STRING:
    return 1;
  case KL_TOK_KEYWORD:
    switch (k->sub) {
    case KL_KW_THIS: case KL_KW_TRUE: case KL_KW_FALSE: case KL_KW_NULLPTR: case KL_KW_INT:
    case KL_KW_FLOAT: case KL_KW_DOUBLE: case KL_KW_CHAR: case KL_KW_BOOL: case KL_KW_LONG:
    case KL_KW_SHORT: case KL_KW_UNSIGNED: case KL_KW_SIGNED: case KL_KW_STATIC_CAST:
    case KL_KW_REINTERPRET_CAST: case KL_KW_CONST_CAST: case KL_KW_DYNAMIC_CAST:
      return 1;
    default:
      return 0;
    }
  default:
    return 0;
  }
}

/* A builtin type word: an operand only as a functional cast, `float(x)`. */
static int type_word(const kl_token *k) {
  if (k->kind != KL_TOK_KEYWORD) return 0;
  switch (k->sub) {
  case KL_KW_INT: case KL_KW_FLOAT: case KL_KW_DOUBLE: case KL_KW_CHAR: case KL_KW_BOOL: case KL_KW_LONG:
  case KL_KW_SHORT: case KL_KW_UNSIGNED: case KL_KW_SIGNED:
    return 1;
  default:
    return 0;
  }
}

static int opens(const kl_token *k) {
  return k->kind == KL_TOK_PUNCT && (k->sub == KL_P1('(') || k->sub == KL_P1('[') || k->sub == KL_P1('{') ||
                                     (k->flags & KL_TF_ANGLE && k->sub == KL_P1('<')));
}

void km_run_init(km_run *r) {
  memset(r, 0, sizeof *r);
  r->expect = 1;
  r->min = KM_PREC_ATOM;
}

static void lower(km_run *r, unsigned s) {
  if (s < r->min) r->min = (uint8_t)s;
}

/* Feeds the token tree starting at t (tokens [t, next) of u). */
void km_run_feed(km_run *r, const kl_unit *u, uint32_t t, uint32_t next) {
  if (r->bad) return;
  const kl_token *k = &u->tokens[t];
  int group = opens(k) && k->match != KL_NONE && k->match > t && k->match < next;
  int amb;
  r->count++;
  if (r->member) {
    /* after `.`, `->` or `::`: a name (`~T`, `template f` are rare enough
     * to refuse) */
    r->member = 0;
    if (k->kind == KL_TOK_IDENT || (k->kind == KL_TOK_KEYWORD && k->sub == KL_KW_OPERATOR)) return;
    r->bad = 1;
    return;
  }
  if (r->expect) {
    if (group && is_punct(k, '{')) {
      r->bad = 1; /* an expression binding stops at a brace */
    } else if (group || operand_token(k)) {
      r->expect = 0;
      r->paren = group && is_punct(k, '(');
      r->typeword = !group && type_word(k);
    } else if (is_punct(k, KL_P2(':', ':'))) {
      r->member = 1; /* ::name */
      r->expect = 0;
    } else if (prefix_op(k, &amb)) {
      if (r->count == 1 && amb) r->first_amb = 1;
      lower(r, KM_PREC_PREFIX);
    } else {
      r->bad = 1;
    }
    return;
  }
  /* After an operand. */
  if (r->typeword) {
    /* `int *p` is a declaration, `float(x)` a cast */
    r->typeword = 0;
    if (!(group && is_punct(k, '('))) {
      r->bad = 1;
      return;
    }
  }
  int was_paren = r->paren;
  r->paren = 0;
  if (group && !is_punct(k, '{')) {
    /* call, index, template arguments; `(T)(x)` may be a cast */
    lower(r, was_paren && is_punct(k, '(') ? KM_PREC_PREFIX : KM_PREC_POSTFIX);
    return;
  }
  if (was_paren && (operand_token(k) || (prefix_op(k, &amb) && !amb))) {
    /* `(T)x`, `(T)!x`: a cast; `(T)-x` is read as a subtraction below */
    lower(r, KM_PREC_PREFIX);
    if (operand_token(k)) return;
    r->expect = 1;
    return;
  }
  if (is_punct(k, '.') || is_punct(k, KL_P2('-', '>'))) {
    lower(r, KM_PREC_POSTFIX);
    r->member = 1;
    return;
  }
  if (is_punct(k, KL_P2(':', ':'))) {
    lower(r, KM_PREC_SCOPE);
    r->member = 1;
    return;
  }
  if (is_punct(k, KL_P2('+', '+')) || is_punct(k, KL_P2('-', '-'))) {
    lower(r, KM_PREC_POSTFIX);
    return;
  }
  unsigned s = binary_strength(k);
  if (!s || (s == KM_PREC_COMMA && !r->comma_ok)) {
    r->bad = 1;
    return;
  }
  if (is_punct(k, '?')) {
    r->ternary++;
  } else if (is_punct(k, ':')) {
    if (r->ternary == 0) {
      r->bad = 1; /* a label, a case, a bit field: not an expression */
      return;
    }
    r->ternary--;
  }
  lower(r, s);
  r->expect = 1;
}

int km_run_complete(const km_run *r) {
  return !r->bad && !r->expect && !r->member && !r->typeword && r->ternary == 0 && r->count > 0;
}

/* ---- the code around a run ---------------------------------------------------- */

static km_ctx_side delim(void) { return (km_ctx_side){ KM_SIDE_DELIM, 0 }; }
static km_ctx_side op(unsigned s) { return (km_ctx_side){ KM_SIDE_OP, (uint8_t)s }; }
static km_ctx_side unknown(void) { return (km_ctx_side){ KM_SIDE_UNKNOWN, 0 }; }

/* Whether the token at t ends an operand: 1 surely, 0 surely not, 2 maybe. */
static int ends_operand(const kl_unit *u, uint32_t t);

/* What the `(`...`)` ending at t is: a control header (if/for/while/switch:
 * what follows is a statement), a call's arguments (an operand ends), or a
 * parenthesized expression or a cast (maybe an operand, maybe a prefix). */
enum { PAREN_CONTROL, PAREN_CALL, PAREN_EXPR_OR_CAST };
static int paren_kind(const kl_unit *u, uint32_t t) {
  uint32_t o = u->tokens[t].match;
  if (o == KL_NONE || o >= t || o == 0) return o == 0 ? PAREN_EXPR_OR_CAST : PAREN_CALL;
  const kl_token *b = &u->tokens[o - 1];
  if (b->kind == KL_TOK_KEYWORD) {
    switch (b->sub) {
    case KL_KW_IF: case KL_KW_FOR: case KL_KW_WHILE: case KL_KW_SWITCH:
      return PAREN_CONTROL;
    default:
      return operand_token(b) || b->sub == KL_KW_SIZEOF || b->sub == KL_KW_ALIGNOF ||
                     b->sub == KL_KW_DECLTYPE || b->sub == KL_KW_LAUNCH_BOUNDS || b->sub == KL_KW_ATTRIBUTE ||
                     b->sub == KL_KW_ALIGN
                 ? PAREN_CALL
                 : PAREN_EXPR_OR_CAST;
    }
  }
  return ends_operand(u, o - 1) ? PAREN_CALL : PAREN_EXPR_OR_CAST;
}

/* A `}` ending a block (1) or maybe something else (0): the token before
 * its `{` says. */
static int block_end(const kl_unit *u, uint32_t t) {
  uint32_t o = u->tokens[t].match;
  if (o == KL_NONE || o >= t) return 0;
  if (o == 0) return 1;
  const kl_token *b = &u->tokens[o - 1];
  if (b->kind == KL_TOK_PP) return 1;
  if (b->kind == KL_TOK_KEYWORD) return b->sub == KL_KW_ELSE || b->sub == KL_KW_DO;
  if (b->kind != KL_TOK_PUNCT) return 0;
  return b->sub == KL_P1(';') || b->sub == KL_P1('{') || b->sub == KL_P1('}') || b->sub == KL_P1(')') ||
         b->sub == KL_P1(':');
}

static int ends_operand(const kl_unit *u, uint32_t t) {
  const kl_token *k = &u->tokens[t];
  if (operand_token(k)) return 1;
  if (k->kind != KL_TOK_PUNCT) return k->kind == KL_TOK_INVALID ? 2 : 0;
  if (k->sub == KL_P1(']')) return 1;
  if (k->sub == KL_P1('>') && (k->flags & KL_TF_ANGLE)) return 1;
  if (k->sub == KL_P2('>', '>') && (k->flags & KL_TF_ANGLE)) return 1;
  if (k->sub == KL_P1(')')) return paren_kind(u, t) == PAREN_CONTROL ? 0 : 2;
  if (k->sub == KL_P1('}')) return block_end(u, t) ? 0 : 2;
  if (k->sub == KL_P2('+', '+') || k->sub == KL_P2('-', '-')) return 2;
  return 0;
}

km_ctx_side km_left_side(const kl_unit *u, uint32_t t) {
  if (t == 0) return delim();
  const kl_token *k = &u->tokens[t - 1];
  switch (k->kind) {
  case KL_TOK_PP:
  case KL_TOK_EOF:
    return delim();
  case KL_TOK_KEYWORD:
    switch (k->sub) {
    case KL_KW_RETURN: case KL_KW_CASE: case KL_KW_ELSE: case KL_KW_DO:
      return delim();
    case KL_KW_SIZEOF: case KL_KW_ALIGNOF: case KL_KW_NEW: case KL_KW_DELETE:
      return op(KM_PREC_PREFIX);
    case KL_KW_VOID: case KL_KW_AUTO: case KL_KW_CONST: case KL_KW_VOLATILE: case KL_KW_STRUCT:
    case KL_KW_RESTRICT: case KL_KW_SHARED: case KL_KW_CONSTANT: case KL_KW_STATIC:
      return op(KM_PREC_ATOM); /* a declarator follows: no expression fits */
    default:
      return type_word(k) ? op(KM_PREC_ATOM) : unknown();
    }
  case KL_TOK_PUNCT:
    break;
  default:
    return unknown(); /* an operand, garbage: juxtaposed */
  }
  uint32_t sub = k->sub;
  if (k->flags & KL_TF_ANGLE) return sub == KL_P1('<') ? delim() : unknown();
  switch (sub) {
  case KL_P1(';'): case KL_P1('{'): case KL_P1('('): case KL_P1('['): case KL_P3('>', '>', '>'):
    return delim();
  case KL_P1('}'):
    return block_end(u, t - 1) ? delim() : unknown();
  case KL_P1(')'): {
    int pk = paren_kind(u, t - 1);
    if (pk == PAREN_CONTROL) return delim();
    if (pk == PAREN_CALL) return unknown();
    return (km_ctx_side){ KM_SIDE_CAST, KM_PREC_PREFIX };
  }
  case KL_P1(']'):
    return unknown();
  case KL_P1('.'): case KL_P2('-', '>'): case KL_P2(':', ':'):
    return op(KM_PREC_SCOPE);
  default:
    break;
  }
  int amb;
  if (prefix_op(k, &amb)) {
    if (!amb) return op(KM_PREC_PREFIX);
    int e = t >= 2 ? ends_operand(u, t - 2) : 0;
    if (e == 0) return op(KM_PREC_PREFIX);
    if (sub == KL_P2('+', '+') || sub == KL_P2('-', '-')) return unknown(); /* x++ y */
    if (e == 2) return (km_ctx_side){ KM_SIDE_CAST, KM_PREC_PREFIX };
    return op(binary_strength(k)); /* binary, as after an operand */
  }
  unsigned s = binary_strength(k);
  return s ? op(s) : unknown();
}

km_ctx_side km_right_side(const kl_unit *u, uint32_t e) {
  if (e >= u->ntokens) return delim();
  const kl_token *k = &u->tokens[e];
  switch (k->kind) {
  case KL_TOK_PP:
  case KL_TOK_EOF:
    return delim();
  case KL_TOK_PUNCT:
    break;
  default:
    return unknown();
  }
  uint32_t sub = k->sub;
  if (k->flags & KL_TF_ANGLE) return sub == KL_P1('<') ? op(KM_PREC_POSTFIX) : delim();
  switch (sub) {
  case KL_P1(';'): case KL_P1(')'): case KL_P1(']'): case KL_P1('}'): case KL_P3('>', '>', '>'):
    return delim();
  case KL_P1('('): case KL_P1('['): case KL_P1('.'): case KL_P2('-', '>'): case KL_P2('+', '+'):
  case KL_P2('-', '-'): case KL_P3('<', '<', '<'):
    return op(KM_PREC_POSTFIX);
  case KL_P2(':', ':'):
    return op(KM_PREC_SCOPE);
  default:
    break;
  }
  unsigned s = binary_strength(k);
  return s ? op(s) : unknown();
}

int km_fits_left(unsigned min, int first_amb, km_ctx_side l) {
  switch (l.kind) {
  case KM_SIDE_DELIM:
    return 1;
  case KM_SIDE_OP:
    return min > l.prec || (min == l.prec && right_assoc(l.prec));
  case KM_SIDE_CAST:
    return min >= KM_PREC_PREFIX && !first_amb;
  default:
    return min >= KM_PREC_POSTFIX && !first_amb;
  }
}

int km_fits_right(unsigned min, km_ctx_side r) {
  switch (r.kind) {
  case KM_SIDE_DELIM:
    return 1;
  case KM_SIDE_OP:
    return min > r.prec || (min == r.prec && !right_assoc(r.prec));
  default:
    return min >= KM_PREC_POSTFIX;
  }
}

/* Statement patterns in opaque code start where a statement can. */
int km_stmt_boundary(const kl_unit *u, uint32_t t) {
  if (t == 0) return 1;
  const kl_token *k = &u->tokens[t - 1];
  if (k->kind == KL_TOK_PP) return 1;
  if (k->kind == KL_TOK_KEYWORD) return k->sub == KL_KW_ELSE || k->sub == KL_KW_DO;
  if (k->kind != KL_TOK_PUNCT) return 0;
  switch (k->sub) {
  case KL_P1(';'): case KL_P1('{'):
    return 1;
  case KL_P1('}'):
    return block_end(u, t - 1);
  case KL_P1(')'):
    return paren_kind(u, t - 1) == PAREN_CONTROL;
  default:
    return 0;
  }
}

unsigned km_root_strength(unsigned kind, uint32_t op_sub) {
  switch (kind) {
  case KL_N_BINARY: {
    kl_token k = { 0 };
    k.kind = KL_TOK_PUNCT;
    k.sub = op_sub;
    unsigned s = binary_strength(&k);
    return s ? s : KM_PREC_UNKNOWN;
  }
  case KL_N_ASSIGN: case KL_N_TERNARY:
    return KM_PREC_ASSIGN;
  case KL_N_UNARY: case KL_N_CAST: case KL_N_SIZEOF:
    return KM_PREC_PREFIX;
  case KL_N_POSTFIX: case KL_N_CALL: case KL_N_INDEX: case KL_N_MEMBER: case KL_N_LAUNCH:
  case KL_N_CXX_CAST:
    return KM_PREC_POSTFIX;
  case KL_N_IDENT: case KL_N_INT_LIT: case KL_N_FLOAT_LIT: case KL_N_CHAR_LIT: case KL_N_STRING_LIT:
  case KL_N_BOOL_LIT: case KL_N_PAREN: case KL_N_INIT_LIST:
    return KM_PREC_ATOM;
  default:
    return KM_PREC_UNKNOWN;
  }
}

unsigned km_run_strength(const kl_unit *u, uint32_t b, uint32_t e, int comma_ok) {
  km_run r;
  km_run_init(&r);
  r.comma_ok = (uint8_t)comma_ok;
  uint32_t t = b;
  while (t < e) {
    const kl_token *k = &u->tokens[t];
    uint32_t next = t + 1;
    if (opens(k) && k->match != KL_NONE && k->match > t && k->match < e) next = k->match + 1;
    km_run_feed(&r, u, t, next);
    if (r.bad) return KM_PREC_UNKNOWN;
    t = next;
  }
  return km_run_complete(&r) ? r.min : KM_PREC_UNKNOWN;
}

int km_tok_ambiguous(const kl_token *k) {
  int amb;
  return prefix_op(k, &amb) && amb;
}
