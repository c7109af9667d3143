/* Types: scanning a type name's extent (no nodes) and the TYPE node, plus
 * the declaration-or-expression decision. */
#include "source/internal.h"

static int is_builtin_type_kw(uint32_t kw) {
  switch (kw) {
  case KL_KW_VOID: case KL_KW_CHAR: case KL_KW_SHORT: case KL_KW_INT: case KL_KW_LONG:
  case KL_KW_FLOAT: case KL_KW_DOUBLE: case KL_KW_SIGNED: case KL_KW_UNSIGNED:
  case KL_KW_BOOL: case KL_KW_AUTO:
    return 1;
  default:
    return 0;
  }
}

/* Specifiers that may precede or follow a type and only make sense in
 * declarations. */
static int is_decl_specifier_kw(uint32_t kw) {
  switch (kw) {
  case KL_KW_CONST: case KL_KW_VOLATILE: case KL_KW_STATIC: case KL_KW_CONSTEXPR:
  case KL_KW_EXTERN: case KL_KW_INLINE: case KL_KW_SHARED: case KL_KW_CONSTANT:
  case KL_KW_DEVICE: case KL_KW_HOST: case KL_KW_GLOBAL: case KL_KW_FORCEINLINE:
  case KL_KW_RESTRICT: case KL_KW_TYPENAME: case KL_KW_GRID_CONSTANT:
    return 1;
  default:
    return 0;
  }
}

/* Skips attribute-like groups: __attribute__((..)), __align__(n), alignas(n),
 * __launch_bounds__(..), [[...]]. Returns the index after, or i. */
static uint32_t skip_attributes(const kl_parser *p, uint32_t i) {
  for (;;) {
    const kl_token *t = &p->t[i];
    if (t->kind == KL_TOK_KEYWORD &&
        (t->sub == KL_KW_ATTRIBUTE || t->sub == KL_KW_ALIGN || t->sub == KL_KW_LAUNCH_BOUNDS) &&
        kl_p_is(p, i + 1, '(') && p->t[i + 1].match != KL_NONE) {
      i = p->t[i + 1].match + 1;
      continue;
    }
    if (kl_p_is(p, i, '[') && kl_p_is(p, i + 1, '[') && p->t[i].match != KL_NONE) {
      i = p->t[i].match + 1;
      continue;
    }
    return i;
  }
}

uint32_t kl_p_scan_qualified_name(const kl_parser *p, uint32_t i) {
  if (kl_p_is(p, i, KL_P2(':', ':'))) i++;
  for (;;) {
    if (kl_p_kw(p, i, KL_KW_TEMPLATE)) i++;
    if (p->t[i].kind != KL_TOK_IDENT) return KL_NONE;
    i++;
    if (kl_p_is(p, i, '<') && (p->t[i].flags & KL_TF_ANGLE)) i = kl_p_angle_end(p, i);
    if (!kl_p_is(p, i, KL_P2(':', ':'))) return i;
    i++;
  }
}

/* Extent of a type starting at i: specifiers, a base type, then cv, '*',
 * '&' and restrict. *sure is set when something proves it is a type
 * (a builtin type keyword, a specifier, a known type name, a '*'). */
static uint32_t scan_type_ex(const kl_parser *p, uint32_t i, int *sure) {
  *sure = 0;
  int have_base = 0;
  for (;;) {
    i = skip_attributes(p, i);
    const kl_token *t = &p->t[i];
    if (t->kind == KL_TOK_KEYWORD && is_decl_specifier_kw(t->sub)) {
      *sure = 1;
      i++;
      /* extern "C" const uint N = 4; */
      if (t->sub == KL_KW_EXTERN && p->t[i].kind == KL_TOK_STRING) i++;
      continue;
    }
    if (t->kind == KL_TOK_KEYWORD && is_builtin_type_kw(t->sub)) {
      *sure = 1;
      have_base = 1;
      i++;
      continue;
    }
    if (!have_base && t->kind == KL_TOK_KEYWORD &&
        (t->sub == KL_KW_STRUCT || t->sub == KL_KW_CLASS || t->sub == KL_KW_UNION ||
         t->sub == KL_KW_ENUM)) {
      uint32_t e = kl_p_scan_qualified_name(p, i + 1);
      if (e == KL_NONE) return KL_NONE;
      *sure = 1;
      have_base = 1;
      i = e;
      continue;
    }
    if (!have_base && t->kind == KL_TOK_KEYWORD && t->sub == KL_KW_DECLTYPE &&
        kl_p_is(p, i + 1, '(') && p->t[i + 1].match != KL_NONE) {
      *sure = 1;
      have_base = 1;
      i = p->t[i + 1].match + 1;
      continue;
    }
    if (!have_base && (t->kind == KL_TOK_IDENT || kl_p_is(p, i, KL_P2(':', ':')))) {
      uint32_t e = kl_p_scan_qualified_name(p, i);
      if (e == KL_NONE) return KL_NONE;
      if (kl_p_is_type_word(p, e - 1) || (p->t[e - 1].flags & KL_TF_ANGLE) ||
          kl_p_is_type_word(p, i))
        *sure = 1;
      have_base = 1;
      i = e;
      continue;
    }
    break;
  }
  if (!have_base) return KL_NONE;
  for (;;) {
    const kl_token *t = &p->t[i];
    if (t->kind == KL_TOK_KEYWORD &&
        (t->sub == KL_KW_CONST || t->sub == KL_KW_VOLATILE || t->sub == KL_KW_RESTRICT)) {
      i++;
      continue;
    }
    if (t->kind == KL_TOK_PUNCT && (t->sub == '*' || t->sub == '&' || t->sub == KL_P2('&', '&'))) {
      if (t->sub == '*') *sure = 1;
      i++;
      continue;
    }
    uint32_t a = skip_attributes(p, i);
    if (a != i) {
      i = a;
      continue;
    }
    return i;
  }
}

uint32_t kl_p_scan_type(const kl_parser *p, uint32_t i, int strict) {
  int sure;
  uint32_t e = scan_type_ex(p, i, &sure);
  if (e == KL_NONE || (strict && !sure)) return KL_NONE;
  return e;
}

uint32_t kl_p_type(kl_parser *p, uint32_t end) {
  uint32_t b = p->pos;
  p->pos = end;
  return kl_p_leaf(p, KL_N_TYPE, b, end);
}

/* Could the argument tokens [b, e) of `T x(..., arg, ...)` be a parameter
 * declaration (`U`, `U *`, `const U &u`, `U v[4]`, `U = 3`)? Not when it
 * starts with a literal, an operator or a name the unit declares as a
 * value, nor when it holds a literal or an operator no declarator has. */
static int could_be_param(const kl_parser *p, uint32_t b, uint32_t e) {
  const kl_token *f = &p->t[b];
  if (f->kind == KL_TOK_IDENT) {
    if (kl_p_word_is(p, b) == KL_W_VALUE) return 0;
  } else if (f->kind == KL_TOK_KEYWORD) {
    if (f->sub == KL_KW_THIS || f->sub == KL_KW_TRUE || f->sub == KL_KW_FALSE ||
        f->sub == KL_KW_NULLPTR || f->sub == KL_KW_SIZEOF || f->sub == KL_KW_ALIGNOF ||
        f->sub == KL_KW_NEW || f->sub == KL_KW_STATIC_CAST || f->sub == KL_KW_REINTERPRET_CAST ||
        f->sub == KL_KW_CONST_CAST || f->sub == KL_KW_DYNAMIC_CAST)
      return 0;
  } else if (!kl_p_is(p, b, KL_P2(':', ':'))) {
    return 0;
  }
  for (uint32_t i = b; i < e; i = kl_p_skip_group(p, i)) {
    const kl_token *t = &p->t[i];
    if (t->kind == KL_TOK_INT || t->kind == KL_TOK_FLOAT || t->kind == KL_TOK_CHAR ||
        t->kind == KL_TOK_STRING)
      return 0;
    if (t->kind != KL_TOK_PUNCT || (t->flags & KL_TF_ANGLE)) continue;
    switch (t->sub) {
    case '*': case '&': case KL_P2('&', '&'): case KL_P2(':', ':'): case '(': case '[':
    case KL_P3('.', '.', '.'):
      continue;
    case '=':
      return 1; /* a default argument: anything may follow */
    default:
      return 0;
    }
  }
  return 1;
}

/* `T x(args);` at block scope with T not known as a type. C++ reads it as
 * a function declaration whenever it can be one (the most vexing parse):
 * `T f(U);`, `T f();`, `T f(g(y));` declare functions when U and g are
 * types. It is a variable only when some argument cannot be a parameter
 * declaration (`Foo x(1)`, `dim3 g(n / 256, 1)`, `T y(v)` with v a
 * declared variable); otherwise the statement stays opaque. */
static int direct_init(const kl_parser *p, uint32_t open) {
  uint32_t close = p->t[open].match;
  if (close == KL_NONE || close == open + 1) return 0;
  if (!kl_p_is(p, close + 1, ';') && !kl_p_is(p, close + 1, ',')) return 0;
  uint32_t ab = open + 1;
  for (uint32_t i = ab; i <= close; i = kl_p_skip_group(p, i)) {
    if (i < close && !kl_p_is(p, i, ',')) continue;
    if (i == ab || !could_be_param(p, ab, i)) return i > ab;
    ab = i + 1;
  }
  return 0;
}

/* A declaration starts at i when a type is followed by a declarator name
 * and something only a declarator can be followed by. */
int kl_p_starts_decl(const kl_parser *p, uint32_t i) {
  int sure;
  uint32_t e = scan_type_ex(p, i, &sure);
  if (e == KL_NONE) return 0;
  /* `int;` / `T;` is not useful either way; need a name */
  const kl_token *n = &p->t[e];
  if (n->kind != KL_TOK_IDENT) {
    /* `unsigned int x` handled above; `const T` with operator name etc. no */
    return 0;
  }
  if (sure) return 1;
  const kl_token *f = &p->t[e + 1];
  if (f->kind != KL_TOK_PUNCT) return 0;
  switch (f->sub) {
  case '=': case ';': case ',': case '[': case '{': case ':':
    return 1;
  case '(':
    return direct_init(p, e + 1);
  default:
    return 0;
  }
}
