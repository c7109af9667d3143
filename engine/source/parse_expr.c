/* Expressions by precedence climbing. Every function returns a node id that
 * is NOT yet pushed (the caller pushes it with its field), or KL_NONE on
 * failure, after which the caller abandons the statement: the statement
 * layer resets the pending stack and turns the tokens into an opaque node. */
#include "source/internal.h"

/* depth guard shared by expression and statement recursion */
static int enter(kl_parser *p) {
  if (p->depth >= KL_SOURCE_MAX_DEPTH) {
    p->too_deep = 1;
    return 0;
  }
  p->depth++;
  return 1;
}

static uint32_t leave(kl_parser *p, uint32_t r) {
  p->depth--;
  return r;
}

/* Binary operator precedence of a punctuator; 0 when it is none. */
static int binary_prec(uint32_t sub, int *assign) {
  *assign = 0;
  switch (sub) {
  case ',': return 1;
  case '=': case KL_P2('+', '='): case KL_P2('-', '='): case KL_P2('*', '='):
  case KL_P2('/', '='): case KL_P2('%', '='): case KL_P3('<', '<', '='):
  case KL_P3('>', '>', '='): case KL_P2('&', '='): case KL_P2('|', '='): case KL_P2('^', '='):
    *assign = 1;
    return 2;
  case '?': return 3;
  case KL_P2('|', '|'): return 4;
  case KL_P2('&', '&'): return 5;
  case '|': return 6;
  case '^': return 7;
  case '&': return 8;
  case KL_P2('=', '='): case KL_P2('!', '='): return 9;
  case '<': case '>': case KL_P2('<', '='): case KL_P2('>', '='): case KL_P3('<', '=', '>'):
    return 10;
  case KL_P2('<', '<'): case KL_P2('>', '>'): return 11;
  case '+': case '-': return 12;
  case '*': case '/': case '%': return 13;
  case KL_P2('.', '*'): case KL_P3('-', '>', '*'): return 14;
  default: return 0;
  }
}

static uint32_t unary(kl_parser *p);

/* expr (',' expr)* up to the token `close`; pushes each with field f.
 * Preprocessor lines between the expressions (`f(a,\n#if X\n b,\n#endif\n
 * c)`) become positional PREPROC children, as in parameter lists: after a
 * directive an expression may follow without a comma (the branches of a
 * conditional each hold their own). */
static int list_until(kl_parser *p, uint32_t close, kl_field f, int allow_trailing) {
  int want = 1, saw_pp = 0;
  while (p->pos < close) {
    uint32_t b = p->pos;
    if (p->t[b].kind == KL_TOK_PP) {
      p->pos++;
      kl_p_push(p, kl_p_leaf(p, KL_N_PREPROC, b, b + 1), KL_F_NONE);
      saw_pp = 1;
      continue;
    }
    if (!want) {
      if (kl_p_is(p, b, ',')) {
        p->pos++;
        want = 1;
        if (allow_trailing && p->pos == close) break;
        continue;
      }
      if (!saw_pp) return 0;
    }
    want = 0;
    saw_pp = 0;
    uint32_t e = kl_p_expr(p, KL_PREC_ASSIGN);
    if (e == KL_NONE) return 0;
    kl_p_push(p, e, f);
  }
  return p->pos == close;
}

/* { a, b, c } at pos; `type` (KL_NONE or a node) becomes its TYPE field. */
static uint32_t init_list(kl_parser *p, uint32_t begin, uint32_t type) {
  uint32_t mark = p->npend;
  uint32_t close = p->t[p->pos].match;
  if (close == KL_NONE) return KL_NONE;
  if (type != KL_NONE) kl_p_push(p, type, KL_F_TYPE);
  p->pos++;
  /* designated initializers (.x = 1) are accepted as assignments to members */
  while (p->pos < close) {
    uint32_t e;
    if (kl_p_is(p, p->pos, '.') && p->t[p->pos + 1].kind == KL_TOK_IDENT) {
      uint32_t b = p->pos;
      p->pos += 2;
      if (!kl_p_is(p, p->pos, '=')) goto fail;
      uint32_t m2 = p->npend;
      kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, b + 1, b + 2), KL_F_LHS);
      uint32_t op = p->pos++;
      uint32_t v = kl_p_expr(p, KL_PREC_ASSIGN);
      if (v == KL_NONE) goto fail;
      kl_p_push(p, v, KL_F_RHS);
      e = kl_p_finish(p, KL_N_ASSIGN, m2, b, p->pos);
      if (e != KL_NONE) {
        p->nodes[e].op = '=';
        p->nodes[e].op_tok = op;
      }
    } else {
      e = kl_p_expr(p, KL_PREC_ASSIGN);
      if (e == KL_NONE) goto fail;
    }
    kl_p_push(p, e, KL_F_ARG);
    if (p->pos == close) break;
    if (!kl_p_is(p, p->pos, ',')) goto fail;
    p->pos++;
  }
  if (p->pos != close) goto fail;
  p->pos = close + 1;
  return kl_p_finish(p, KL_N_INIT_LIST, mark, begin, p->pos);
fail:
  p->npend = mark;
  return KL_NONE;
}

uint32_t kl_p_template_args(kl_parser *p) {
  uint32_t open = p->pos, close = p->t[open].match;
  uint32_t mark = p->npend;
  p->pos++;
  while (p->pos < close) {
    /* a type when it scans as one up to ',' or '>', else an expression */
    uint32_t e = kl_p_scan_type(p, p->pos, 0);
    uint32_t arg;
    if (e != KL_NONE && (e == close || kl_p_is(p, e, ',')) &&
        (kl_p_scan_type(p, p->pos, 1) != KL_NONE || e - p->pos > 1 ||
         p->t[p->pos].kind == KL_TOK_IDENT)) {
      arg = kl_p_type(p, e);
    } else {
      arg = kl_p_expr(p, KL_PREC_ASSIGN);
    }
    if (arg == KL_NONE) goto fail;
    kl_p_push(p, arg, KL_F_ARG);
    if (p->pos == close) break;
    if (!kl_p_is(p, p->pos, ',')) goto fail;
    p->pos++;
  }
  if (p->pos != close) goto fail;
  p->pos = kl_p_angle_end(p, open);
  return kl_p_finish(p, KL_N_TEMPLATE_ARGS, mark, open, close + 1);
fail:
  p->npend = mark;
  return KL_NONE;
}

/* A qualified identifier: a::b<T>::c. Template args directly before '::'
 * belong to the name; trailing ones are left for the caller. */
static uint32_t ident(kl_parser *p) {
  uint32_t b = p->pos, i = p->pos;
  if (kl_p_is(p, i, KL_P2(':', ':'))) i++;
  for (;;) {
    if (kl_p_kw(p, i, KL_KW_TEMPLATE)) i++;
    if (p->t[i].kind != KL_TOK_IDENT && !kl_p_kw(p, i, KL_KW_THIS)) return KL_NONE;
    i++;
    uint32_t j = i;
    if (kl_p_is(p, j, '<') && (p->t[j].flags & KL_TF_ANGLE)) j = kl_p_angle_end(p, j);
    if (!kl_p_is(p, j, KL_P2(':', ':'))) break;
    i = j + 1;
  }
  p->pos = i;
  return kl_p_leaf(p, KL_N_IDENT, b, i);
}

static int is_builtin_type_start(const kl_token *t) {
  if (t->kind != KL_TOK_KEYWORD) return 0;
  switch (t->sub) {
  case KL_KW_CHAR: case KL_KW_SHORT: case KL_KW_INT: case KL_KW_LONG: case KL_KW_FLOAT:
  case KL_KW_DOUBLE: case KL_KW_SIGNED: case KL_KW_UNSIGNED: case KL_KW_BOOL:
    return 1;
  default:
    return 0;
  }
}

static uint32_t lambda(kl_parser *p) {
  uint32_t b = p->pos, mark = p->npend;
  uint32_t close = p->t[b].match;
  if (close == KL_NONE) return KL_NONE;
  p->pos = close + 1;
  /* [captures] __device__ (params) mutable -> T { body }: the parameter
   * list may follow specifiers */
  int have_params = 0;
  while (p->pos < p->end && !kl_p_is(p, p->pos, '{')) {
    const kl_token *t = &p->t[p->pos];
    if (!have_params && kl_p_is(p, p->pos, '(')) {
      uint32_t params = kl_p_params(p);
      if (params == KL_NONE) goto fail;
      kl_p_push(p, params, KL_F_PARAMS);
      have_params = 1;
      continue;
    }
    if (t->kind == KL_TOK_PUNCT && t->sub != KL_P2('-', '>') && t->sub != '*' &&
        t->sub != '&' && t->sub != KL_P2(':', ':') && !(t->flags & KL_TF_ANGLE) &&
        t->sub != '(')
      goto fail;
    p->pos = kl_p_skip_group(p, p->pos);
  }
  if (!kl_p_is(p, p->pos, '{')) goto fail;
  uint32_t body = kl_p_compound(p);
  if (body == KL_NONE) goto fail;
  kl_p_push(p, body, KL_F_BODY);
  return kl_p_finish(p, KL_N_LAMBDA, mark, b, p->pos);
fail:
  p->npend = mark;
  return KL_NONE;
}

static uint32_t primary(kl_parser *p) {
  const kl_token *t = &p->t[p->pos];
  uint32_t b = p->pos;
  switch (t->kind) {
  case KL_TOK_INT: p->pos++; return kl_p_leaf(p, KL_N_INT_LIT, b, b + 1);
  case KL_TOK_FLOAT: p->pos++; return kl_p_leaf(p, KL_N_FLOAT_LIT, b, b + 1);
  case KL_TOK_CHAR: p->pos++; return kl_p_leaf(p, KL_N_CHAR_LIT, b, b + 1);
  case KL_TOK_STRING:
    while (p->t[p->pos].kind == KL_TOK_STRING) p->pos++;
    return kl_p_leaf(p, KL_N_STRING_LIT, b, p->pos);
  case KL_TOK_IDENT: {
    uint32_t id = ident(p);
    if (id == KL_NONE) return KL_NONE;
    if (kl_p_is(p, p->pos, '<') && (p->t[p->pos].flags & KL_TF_ANGLE)) {
      /* name<args>(...) or name<args>{...} */
      uint32_t mark = p->npend;
      kl_p_push(p, id, KL_F_CALLEE);
      uint32_t ta = kl_p_template_args(p);
      if (ta == KL_NONE) goto tfail;
      kl_p_push(p, ta, KL_F_TEMPLATE_ARGS);
      if (kl_p_is(p, p->pos, '(') && p->t[p->pos].match != KL_NONE) {
        uint32_t close = p->t[p->pos].match;
        p->pos++;
        if (!list_until(p, close, KL_F_ARG, 0)) goto tfail;
        p->pos = close + 1;
        return kl_p_finish(p, KL_N_CALL, mark, b, p->pos);
      }
      if (kl_p_is(p, p->pos, '{') && p->t[p->pos].match != KL_NONE) {
        /* Name<args>{...}: an initializer list of that type, as T{...} */
        uint32_t e = p->pos;
        p->npend = mark;
        p->pos = b;
        uint32_t type = kl_p_type(p, e);
        return init_list(p, b, type);
      }
      if (kl_p_is(p, p->pos, KL_P3('<', '<', '<')) || kl_p_is(p, p->pos, ')') ||
          kl_p_is(p, p->pos, ',')) {
        /* kernel<T><<<...>>>: the launch sees a callee with template args;
         * f(&a, kernel<Real>): a template-id as a value, as an argument
         * (a '>' before ')' or ',' closes no comparison) */
        uint32_t callee = kl_p_finish(p, KL_N_IDENT, mark, b, p->pos);
        return callee;
      }
    tfail:
      p->npend = mark;
      return KL_NONE;
    }
    return id;
  }
  case KL_TOK_KEYWORD:
    switch (t->sub) {
    case KL_KW_TRUE: case KL_KW_FALSE: case KL_KW_NULLPTR:
      p->pos++;
      return kl_p_leaf(p, KL_N_BOOL_LIT, b, b + 1);
    case KL_KW_THIS:
      return ident(p);
    case KL_KW_STATIC_CAST: case KL_KW_REINTERPRET_CAST: case KL_KW_CONST_CAST:
    case KL_KW_DYNAMIC_CAST: {
      uint32_t lt = b + 1;
      if (!kl_p_is(p, lt, '<') || !(p->t[lt].flags & KL_TF_ANGLE)) return KL_NONE;
      uint32_t gt = p->t[lt].match;
      uint32_t e = kl_p_scan_type(p, lt + 1, 0);
      if (e != gt || !kl_p_is(p, gt + 1, '(') || p->t[gt + 1].match == KL_NONE) return KL_NONE;
      uint32_t mark = p->npend;
      p->pos = lt + 1;
      kl_p_push(p, kl_p_type(p, gt), KL_F_TYPE);
      uint32_t close = p->t[gt + 1].match;
      p->pos = gt + 2;
      uint32_t e2 = kl_p_expr(p, KL_PREC_COMMA);
      if (e2 == KL_NONE || p->pos != close) {
        p->npend = mark;
        return KL_NONE;
      }
      kl_p_push(p, e2, KL_F_OPERAND);
      p->pos = close + 1;
      uint32_t n = kl_p_finish(p, KL_N_CXX_CAST, mark, b, p->pos);
      if (n != KL_NONE) p->nodes[n].op_tok = b;
      return n;
    }
    default:
      if (is_builtin_type_start(t)) {
        /* functional cast: float(x), unsigned int{y} */
        uint32_t e = b;
        while (is_builtin_type_start(&p->t[e])) e++;
        uint32_t type = kl_p_type(p, e);
        if (kl_p_is(p, p->pos, '{')) return init_list(p, b, type);
        if (!kl_p_is(p, p->pos, '(') || p->t[p->pos].match == KL_NONE) return KL_NONE;
        uint32_t mark = p->npend;
        kl_p_push(p, type, KL_F_CALLEE);
        uint32_t close = p->t[p->pos].match;
        p->pos++;
        if (!list_until(p, close, KL_F_ARG, 0)) {
          p->npend = mark;
          return KL_NONE;
        }
        p->pos = close + 1;
        return kl_p_finish(p, KL_N_CALL, mark, b, p->pos);
      }
      return KL_NONE;
    }
  case KL_TOK_PUNCT:
    if (t->sub == KL_P2(':', ':')) return ident(p);
    if (t->sub == '(' && t->match != KL_NONE) {
      uint32_t close = t->match, mark = p->npend;
      p->pos++;
      uint32_t e = kl_p_expr(p, KL_PREC_COMMA);
      if (e == KL_NONE || p->pos != close) {
        p->npend = mark;
        return KL_NONE;
      }
      kl_p_push(p, e, KL_F_OPERAND);
      p->pos = close + 1;
      return kl_p_finish(p, KL_N_PAREN, mark, b, p->pos);
    }
    if (t->sub == '{') return init_list(p, b, KL_NONE);
    if (t->sub == '[') return lambda(p);
    return KL_NONE;
  default:
    return KL_NONE;
  }
}

static uint32_t postfix(kl_parser *p, uint32_t e) {
  uint32_t mark = p->npend, chain = 0;
  for (;;) {
    if (e == KL_NONE) goto done;
    const kl_token *t = &p->t[p->pos];
    if (t->kind != KL_TOK_PUNCT || (t->flags & KL_TF_ANGLE)) goto done;
    uint32_t b = p->nodes[e].tok_begin;
    mark = p->npend;
    /* a[i][j]..., f()()...: each step nests the tree one level deeper */
    if (!enter(p)) {
      e = KL_NONE;
      goto done;
    }
    chain++;
    switch (t->sub) {
    case '(': {
      if (t->match == KL_NONE) goto fail;
      uint32_t close = t->match;
      kl_p_push(p, e, KL_F_CALLEE);
      p->pos++;
      if (!list_until(p, close, KL_F_ARG, 0)) goto fail;
      p->pos = close + 1;
      e = kl_p_finish(p, KL_N_CALL, mark, b, p->pos);
      break;
    }
    case KL_P3('<', '<', '<'): {
      kl_p_push(p, e, KL_F_CALLEE);
      p->pos++;
      uint32_t close = p->pos;
      while (close < p->end && !kl_p_is(p, close, KL_P3('>', '>', '>')))
        close = kl_p_skip_group(p, close);
      if (close >= p->end) goto fail;
      if (!list_until(p, close, KL_F_CONFIG, 0)) goto fail;
      p->pos = close + 1;
      if (!kl_p_is(p, p->pos, '(') || p->t[p->pos].match == KL_NONE) goto fail;
      uint32_t rp = p->t[p->pos].match;
      p->pos++;
      if (!list_until(p, rp, KL_F_ARG, 0)) goto fail;
      p->pos = rp + 1;
      e = kl_p_finish(p, KL_N_LAUNCH, mark, b, p->pos);
      break;
    }
    case '[': {
      if (t->match == KL_NONE) goto fail;
      uint32_t close = t->match;
      kl_p_push(p, e, KL_F_OBJECT);
      p->pos++;
      uint32_t i = kl_p_expr(p, KL_PREC_COMMA);
      if (i == KL_NONE || p->pos != close) goto fail;
      kl_p_push(p, i, KL_F_INDEX);
      p->pos = close + 1;
      e = kl_p_finish(p, KL_N_INDEX, mark, b, p->pos);
      break;
    }
    case '.': case KL_P2('-', '>'): {
      uint32_t op = p->pos;
      kl_p_push(p, e, KL_F_OBJECT);
      p->pos++;
      if (kl_p_kw(p, p->pos, KL_KW_TEMPLATE)) p->pos++;
      if (p->t[p->pos].kind != KL_TOK_IDENT) goto fail;
      kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, p->pos, p->pos + 1), KL_F_MEMBER);
      p->pos++;
      e = kl_p_finish(p, KL_N_MEMBER, mark, b, p->pos);
      if (e != KL_NONE) {
        p->nodes[e].op = t->sub;
        p->nodes[e].op_tok = op;
      }
      /* obj.f<true, 3>(x), p->template g<T>(): a call with template
       * arguments (the '<' was balanced as a template bracket) */
      if (e != KL_NONE && kl_p_is(p, p->pos, '<') && (p->t[p->pos].flags & KL_TF_ANGLE)) {
        kl_p_push(p, e, KL_F_CALLEE);
        uint32_t ta = kl_p_template_args(p);
        if (ta == KL_NONE) goto fail;
        kl_p_push(p, ta, KL_F_TEMPLATE_ARGS);
        if (!kl_p_is(p, p->pos, '(') || p->t[p->pos].match == KL_NONE) goto fail;
        uint32_t close = p->t[p->pos].match;
        p->pos++;
        if (!list_until(p, close, KL_F_ARG, 0)) goto fail;
        p->pos = close + 1;
        e = kl_p_finish(p, KL_N_CALL, mark, b, p->pos);
      }
      break;
    }
    case KL_P2('+', '+'): case KL_P2('-', '-'): {
      uint32_t op = p->pos;
      kl_p_push(p, e, KL_F_OPERAND);
      p->pos++;
      e = kl_p_finish(p, KL_N_POSTFIX, mark, b, p->pos);
      if (e != KL_NONE) {
        p->nodes[e].op = t->sub;
        p->nodes[e].op_tok = op;
      }
      break;
    }
    default:
      goto done;
    }
  }
fail:
  p->npend = mark;
  e = KL_NONE;
done:
  p->depth -= chain;
  return e;
}

/* Can the token at i begin an operand (so a preceding "(T)" is a cast)? */
static int starts_operand(const kl_parser *p, uint32_t i) {
  const kl_token *t = &p->t[i];
  switch (t->kind) {
  case KL_TOK_IDENT: case KL_TOK_INT: case KL_TOK_FLOAT: case KL_TOK_CHAR: case KL_TOK_STRING:
    return 1;
  case KL_TOK_KEYWORD:
    return t->sub != KL_KW_CONST && t->sub != KL_KW_VOLATILE && t->sub != KL_KW_RESTRICT;
  case KL_TOK_PUNCT:
    return t->sub == '(' || t->sub == '-' || t->sub == '+' || t->sub == '!' || t->sub == '~' ||
           t->sub == '*' || t->sub == '&' || t->sub == KL_P2('+', '+') ||
           t->sub == KL_P2('-', '-') || t->sub == '{' || t->sub == KL_P2(':', ':');
  default:
    return 0;
  }
}

/* Can the token at i only begin an operand, never continue an expression?
 * Then `(Name)` before it is a C-style cast even when Name is declared in a
 * header we never see: `(fp)x`, `(real)1.0`, `(uint)ceil(d)`, `(T)!b`.
 * An identifier or a literal cannot follow a parenthesized expression, nor
 * can ! ~ :: or a keyword that starts an operand. Left out on purpose:
 * `(` (`(f)(x)` calls f), `-` `+` `*` `&` (`(a) - b` subtracts), `++` `--`
 * (`(a)++`), `{` and `[`: there `(Name)` stays a parenthesized expression
 * unless Name is known to be a type (see kl_p_scan_type's strict mode). */
static int only_starts_operand(const kl_parser *p, uint32_t i) {
  const kl_token *t = &p->t[i];
  switch (t->kind) {
  case KL_TOK_IDENT: case KL_TOK_INT: case KL_TOK_FLOAT: case KL_TOK_CHAR: case KL_TOK_STRING:
    return 1;
  case KL_TOK_KEYWORD:
    switch (t->sub) {
    case KL_KW_THIS: case KL_KW_TRUE: case KL_KW_FALSE: case KL_KW_NULLPTR: case KL_KW_SIZEOF:
    case KL_KW_ALIGNOF: case KL_KW_STATIC_CAST: case KL_KW_REINTERPRET_CAST:
    case KL_KW_CONST_CAST: case KL_KW_DYNAMIC_CAST: case KL_KW_CHAR: case KL_KW_SHORT:
    case KL_KW_INT: case KL_KW_LONG: case KL_KW_FLOAT: case KL_KW_DOUBLE: case KL_KW_SIGNED:
    case KL_KW_UNSIGNED: case KL_KW_BOOL: case KL_KW_NEW:
      return 1;
    default:
      return 0;
    }
  case KL_TOK_PUNCT:
    return t->sub == '!' || t->sub == '~' || t->sub == KL_P2(':', ':');
  default:
    return 0;
  }
}

/* new-expression at the `new` keyword n (b: its first token, `::` for
 * ::new). The type extends as far as a type can ('*' included), so
 * `new int *[n]` allocates n pointers; `new (T)` with a parenthesized type
 * and a placement not followed by a type are refused. */
static uint32_t new_expr(kl_parser *p, uint32_t b, uint32_t n) {
  uint32_t mark = p->npend;
  p->pos = n + 1;
  if (kl_p_is(p, p->pos, '(')) {
    uint32_t close = p->t[p->pos].match;
    if (close == KL_NONE) goto fail;
    const kl_token *a = &p->t[close + 1];
    if (a->kind != KL_TOK_IDENT && a->kind != KL_TOK_KEYWORD && !kl_p_is(p, close + 1, KL_P2(':', ':')))
      goto fail;
    p->pos++;
    if (!list_until(p, close, KL_F_PLACEMENT, 0)) goto fail;
    p->pos = close + 1;
  }
  uint32_t e = kl_p_scan_type(p, p->pos, 0);
  if (e == KL_NONE) goto fail;
  kl_p_push(p, kl_p_type(p, e), KL_F_TYPE);
  while (kl_p_is(p, p->pos, '[')) {
    uint32_t close = p->t[p->pos].match;
    if (close == KL_NONE) goto fail;
    p->pos++;
    uint32_t d = kl_p_expr(p, KL_PREC_COMMA);
    if (d == KL_NONE || p->pos != close) goto fail;
    kl_p_push(p, d, KL_F_INDEX);
    p->pos = close + 1;
  }
  if ((kl_p_is(p, p->pos, '(') || kl_p_is(p, p->pos, '{')) && p->t[p->pos].match != KL_NONE) {
    uint32_t close = p->t[p->pos].match;
    p->pos++;
    if (!list_until(p, close, KL_F_ARG, 0)) goto fail;
    p->pos = close + 1;
  }
  uint32_t r = kl_p_finish(p, KL_N_NEW, mark, b, p->pos);
  if (r != KL_NONE) p->nodes[r].op_tok = n;
  return r;
fail:
  p->npend = mark;
  return KL_NONE;
}

/* delete p, delete[] p, ::delete p at the `delete` keyword n */
static uint32_t delete_expr(kl_parser *p, uint32_t b, uint32_t n) {
  uint32_t mark = p->npend, op = 0;
  p->pos = n + 1;
  if (kl_p_is(p, p->pos, '[') && p->t[p->pos].match == p->pos + 1) {
    p->pos += 2;
    op = KL_P2('[', ']');
  }
  uint32_t o = unary(p);
  if (o == KL_NONE) {
    p->npend = mark;
    return KL_NONE;
  }
  kl_p_push(p, o, KL_F_OPERAND);
  uint32_t r = kl_p_finish(p, KL_N_DELETE, mark, b, p->pos);
  if (r != KL_NONE) {
    p->nodes[r].op = op;
    p->nodes[r].op_tok = n;
  }
  return r;
}

static uint32_t unary(kl_parser *p) {
  if (!enter(p)) return KL_NONE;
  const kl_token *t = &p->t[p->pos];
  uint32_t b = p->pos, mark = p->npend;
  if (t->kind == KL_TOK_PUNCT) {
    switch (t->sub) {
    case '-': case '+': case '!': case '~': case '*': case '&': case KL_P2('+', '+'):
    case KL_P2('-', '-'): case KL_P2('&', '&'): {
      p->pos++;
      uint32_t o = unary(p);
      if (o == KL_NONE) return leave(p, KL_NONE);
      kl_p_push(p, o, KL_F_OPERAND);
      uint32_t n = kl_p_finish(p, KL_N_UNARY, mark, b, p->pos);
      if (n != KL_NONE) {
        p->nodes[n].op = t->sub;
        p->nodes[n].op_tok = b;
      }
      return leave(p, n);
    }
    case KL_P2(':', ':'):
      if (kl_p_kw(p, b + 1, KL_KW_NEW)) return leave(p, new_expr(p, b, b + 1));
      if (kl_p_kw(p, b + 1, KL_KW_DELETE)) return leave(p, delete_expr(p, b, b + 1));
      break;
    case '(': {
      uint32_t close = t->match;
      if (close == KL_NONE) return leave(p, KL_NONE);
      uint32_t e = kl_p_scan_type(p, b + 1, 1);
      int cast = e == close && starts_operand(p, close + 1);
      /* (Name) of a type we were not told about: only where nothing but a
       * cast can be meant */
      if (kl_p_scan_qualified_name(p, b + 1) == close && !only_starts_operand(p, close + 1)) {
        /* a name the unit declares both as a type and as a value */
        if (cast && kl_p_word_is(p, close - 1) == (KL_W_TYPE | KL_W_VALUE))
          return leave(p, KL_NONE);
      }
      if (!cast && kl_p_scan_qualified_name(p, b + 1) == close) {
        if (only_starts_operand(p, close + 1)) {
          cast = 1;
        } else if (starts_operand(p, close + 1) &&
                   kl_p_word_is(p, close - 1) != KL_W_VALUE) {
          /* `(x) - y`, `(x)(y)`, `(x) * y`: a parenthesized x only when the
           * unit declares x as a variable, function or number, a cast only
           * when it declares x as a type (above); otherwise refused. */
          return leave(p, KL_NONE);
        }
      }
      if (cast) {
        p->pos = b + 1;
        kl_p_push(p, kl_p_type(p, close), KL_F_TYPE);
        p->pos = close + 1;
        uint32_t o = unary(p);
        if (o == KL_NONE) {
          p->npend = mark;
          return leave(p, KL_NONE);
        }
        kl_p_push(p, o, KL_F_OPERAND);
        return leave(p, kl_p_finish(p, KL_N_CAST, mark, b, p->pos));
      }
      break;
    }
    default:
      break;
    }
  } else if (t->kind == KL_TOK_KEYWORD && t->sub == KL_KW_NEW) {
    return leave(p, new_expr(p, b, b));
  } else if (t->kind == KL_TOK_KEYWORD && t->sub == KL_KW_DELETE) {
    return leave(p, delete_expr(p, b, b));
  } else if (t->kind == KL_TOK_KEYWORD && t->sub == KL_KW_THROW) {
    /* throw [assignment-expression] */
    p->pos++;
    const kl_token *a = &p->t[p->pos];
    if (!(a->kind == KL_TOK_PUNCT && (a->sub == ';' || a->sub == ')' || a->sub == ',' ||
                                      a->sub == ':' || a->sub == ']' || a->sub == '}'))) {
      uint32_t o = kl_p_expr(p, KL_PREC_ASSIGN);
      if (o == KL_NONE) return leave(p, KL_NONE);
      kl_p_push(p, o, KL_F_OPERAND);
    }
    uint32_t n = kl_p_finish(p, KL_N_THROW, mark, b, p->pos);
    if (n != KL_NONE) p->nodes[n].op_tok = b;
    return leave(p, n);
  } else if (t->kind == KL_TOK_KEYWORD && (t->sub == KL_KW_SIZEOF || t->sub == KL_KW_ALIGNOF)) {
    p->pos++;
    if (kl_p_is(p, p->pos, KL_P3('.', '.', '.'))) p->pos++;
    if (kl_p_is(p, p->pos, '(') && p->t[p->pos].match != KL_NONE) {
      uint32_t close = p->t[p->pos].match;
      uint32_t e = kl_p_scan_type(p, p->pos + 1, 0);
      /* sizeof(Name) with Name undeclared: a TYPE (either reading gives
       * sizeof the same extent; a declared value is an OPERAND) */
      int name_type = e == close && kl_p_scan_qualified_name(p, p->pos + 1) == close &&
                      kl_p_word_is(p, close - 1) != KL_W_VALUE;
      if (e == close && (name_type || kl_p_scan_type(p, p->pos + 1, 1) != KL_NONE)) {
        p->pos++;
        kl_p_push(p, kl_p_type(p, close), KL_F_TYPE);
        p->pos = close + 1;
        uint32_t n = kl_p_finish(p, KL_N_SIZEOF, mark, b, p->pos);
        if (n != KL_NONE) p->nodes[n].op_tok = b;
        return leave(p, n);
      }
    }
    uint32_t o = unary(p);
    if (o == KL_NONE) return leave(p, KL_NONE);
    kl_p_push(p, o, KL_F_OPERAND);
    uint32_t n = kl_p_finish(p, KL_N_SIZEOF, mark, b, p->pos);
    if (n != KL_NONE) p->nodes[n].op_tok = b;
    return leave(p, n);
  }
  uint32_t r = postfix(p, primary(p));
  if (r == KL_NONE) p->npend = mark;
  return leave(p, r);
}

uint32_t kl_p_expr(kl_parser *p, int min_prec) {
  if (!enter(p)) return KL_NONE;
  uint32_t mark = p->npend, chain = 0;
  uint32_t lhs = unary(p);
  while (lhs != KL_NONE) {
    const kl_token *t = &p->t[p->pos];
    if (t->kind != KL_TOK_PUNCT || (t->flags & KL_TF_ANGLE)) break;
    int assign;
    int prec = binary_prec(t->sub, &assign);
    if (!prec || prec < min_prec) break;
    /* each operator of a chain nests the tree one level deeper */
    if (!enter(p)) {
      lhs = KL_NONE;
      break;
    }
    chain++;
    uint32_t b = p->nodes[lhs].tok_begin, op = p->pos;
    kl_p_push(p, lhs, assign ? KL_F_LHS : t->sub == '?' ? KL_F_COND : KL_F_LHS);
    p->pos++;
    kl_node_kind kind;
    if (assign) {
      uint32_t r = kl_p_expr(p, KL_PREC_ASSIGN);
      if (r == KL_NONE) {
        lhs = KL_NONE;
        break;
      }
      kl_p_push(p, r, KL_F_RHS);
      kind = KL_N_ASSIGN;
    } else if (t->sub == '?') {
      uint32_t th = kl_p_expr(p, KL_PREC_COMMA);
      if (th == KL_NONE || !kl_p_is(p, p->pos, ':')) {
        lhs = KL_NONE;
        break;
      }
      kl_p_push(p, th, KL_F_THEN);
      p->pos++;
      uint32_t el = kl_p_expr(p, KL_PREC_ASSIGN);
      if (el == KL_NONE) {
        lhs = KL_NONE;
        break;
      }
      kl_p_push(p, el, KL_F_ELSE);
      kind = KL_N_TERNARY;
    } else {
      uint32_t r = kl_p_expr(p, prec + 1);
      if (r == KL_NONE) {
        lhs = KL_NONE;
        break;
      }
      kl_p_push(p, r, KL_F_RHS);
      kind = KL_N_BINARY;
    }
    lhs = kl_p_finish(p, kind, mark, b, p->pos);
    if (lhs != KL_NONE && kind != KL_N_TERNARY) {
      p->nodes[lhs].op = t->sub;
      p->nodes[lhs].op_tok = op;
    }
  }
  if (lhs == KL_NONE) p->npend = mark;
  p->depth -= chain;
  return leave(p, lhs);
}
