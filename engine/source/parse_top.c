/* Top-level items: functions (qualifiers, template headers, parameters,
 * body), declarations, structs, linkage blocks, preprocessor lines; and the
 * driver that parses a whole unit. */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

/* Names CUDA code uses as types without declaring them. */
static const char *const known_types[] = {
    "size_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t",
    "uint32_t", "uint64_t", "uintptr_t", "intptr_t", "half", "__half", "__half2", "half2",
    "__nv_bfloat16", "__nv_bfloat162", "nv_bfloat16", "float1", "float2", "float3", "float4",
    "double1", "double2", "double3", "double4", "int1", "int2", "int3", "int4", "uint1",
    "uint2", "uint3", "uint4", "char1", "char2", "char3", "char4", "uchar1", "uchar2",
    "uchar3", "uchar4", "short2", "short4", "ushort2", "ushort4", "long2", "longlong2",
    "ulonglong2", "dim3", "cudaStream_t", "cudaError_t", "cudaEvent_t", "wchar_t",
    "__nv_fp8_e4m3", "__nv_fp8_e5m2", "cuComplex", "cuDoubleComplex", "bool",
    /* <sys/types.h>, <time.h> and the CUDA libraries' own */
    "clock_t", "time_t", "uint", "ushort", "ulong", "cudaTextureObject_t",
    "cudaSurfaceObject_t", "cudaArray_t", "curandState", "curandState_t", "cufftComplex",
    "cufftReal", "cufftDoubleComplex", "cufftDoubleReal",
};

static int is_function_specifier(const kl_parser *p, uint32_t i) {
  const kl_token *t = &p->t[i];
  if (t->kind != KL_TOK_KEYWORD) return 0;
  switch (t->sub) {
  case KL_KW_GLOBAL: case KL_KW_DEVICE: case KL_KW_HOST: case KL_KW_FORCEINLINE:
  case KL_KW_STATIC: case KL_KW_INLINE: case KL_KW_EXTERN: case KL_KW_CONSTEXPR:
  case KL_KW_LAUNCH_BOUNDS: case KL_KW_ATTRIBUTE: case KL_KW_ALIGN:
    return 1;
  default:
    return 0;
  }
}

/* Skips function specifiers from i; returns the index after them. */
static uint32_t skip_specifiers(const kl_parser *p, uint32_t i) {
  for (;;) {
    if (is_function_specifier(p, i)) {
      const kl_token *t = &p->t[i];
      i++;
      if (t->sub == KL_KW_EXTERN && p->t[i].kind == KL_TOK_STRING) i++;
      if ((t->sub == KL_KW_LAUNCH_BOUNDS || t->sub == KL_KW_ATTRIBUTE || t->sub == KL_KW_ALIGN) &&
          kl_p_is(p, i, '(') &&
          p->t[i].match != KL_NONE)
        i = p->t[i].match + 1;
      continue;
    }
    if (kl_p_is(p, i, '[') && kl_p_is(p, i + 1, '[') && p->t[i].match != KL_NONE) {
      i = p->t[i].match + 1;
      continue;
    }
    return i;
  }
}

uint32_t kl_p_params(kl_parser *p) {
  uint32_t open = p->pos, close = p->t[open].match;
  if (!kl_p_is(p, open, '(') || close == KL_NONE) return KL_NONE;
  uint32_t mark = p->npend;
  p->pos++;
  /* Preprocessor lines between parameters are PREPROC children in token
   * order (`int n\n#if A\n, float *x\n#endif\n)`). Each branch of a
   * conditional holds its own parameters, so after a directive a parameter
   * may follow without a comma. */
  int want_param = 1, saw_pp = 0;
  while (p->pos < close) {
    uint32_t pb = p->pos, pmark = p->npend;
    if (p->t[pb].kind == KL_TOK_PP) {
      p->pos++;
      kl_p_push(p, kl_p_leaf(p, KL_N_PREPROC, pb, pb + 1), KL_F_NONE);
      saw_pp = 1;
      continue;
    }
    if (!want_param) {
      if (kl_p_is(p, pb, ',')) {
        p->pos++;
        want_param = 1;
        continue;
      }
      if (!saw_pp) goto fail;
    }
    want_param = 0;
    saw_pp = 0;
    if (kl_p_is(p, pb, KL_P3('.', '.', '.'))) {
      p->pos++;
    } else {
      uint32_t e = kl_p_scan_type(p, pb, 0);
      if (e == KL_NONE) goto fail;
      /* `int x` vs `T` alone: the last identifier is the name when it is
       * not the whole type */
      kl_p_push(p, kl_p_type(p, e), KL_F_TYPE);
      if (kl_p_is(p, p->pos, KL_P3('.', '.', '.'))) p->pos++;
      if (p->t[p->pos].kind == KL_TOK_IDENT) {
        kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, p->pos, p->pos + 1), KL_F_NAME);
        kl_p_mark_value_word(p, p->pos);
        p->pos++;
      } else if (kl_p_is(p, p->pos, '(') && p->t[p->pos].match != KL_NONE) {
        /* pointer to array or function: float (*tile)[32], void (*fn)(int) */
        uint32_t close = p->t[p->pos].match, i = p->pos + 1;
        while (i < close && (kl_p_is(p, i, '*') || kl_p_is(p, i, '&') ||
                             kl_p_kw(p, i, KL_KW_CONST) || kl_p_kw(p, i, KL_KW_RESTRICT)))
          i++;
        if (i + 1 != close || p->t[i].kind != KL_TOK_IDENT || i == p->pos + 1) goto fail;
        kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, i, i + 1), KL_F_NAME);
        kl_p_mark_value_word(p, i);
        p->pos = close + 1;
        if (kl_p_is(p, p->pos, '(') && p->t[p->pos].match != KL_NONE)
          p->pos = p->t[p->pos].match + 1;
      }
      while (kl_p_is(p, p->pos, '[') && p->t[p->pos].match != KL_NONE)
        p->pos = p->t[p->pos].match + 1;
      if (kl_p_is(p, p->pos, '=')) {
        p->pos++;
        uint32_t v = kl_p_expr(p, KL_PREC_ASSIGN);
        if (v == KL_NONE) goto fail;
        kl_p_push(p, v, KL_F_VALUE);
      }
    }
    kl_p_push(p, kl_p_finish(p, KL_N_PARAM, pmark, pb, p->pos), KL_F_NONE);
  }
  if (p->pos != close) goto fail;
  p->pos = close + 1;
  return kl_p_finish(p, KL_N_PARAM_LIST, mark, open, p->pos);
fail:
  p->npend = mark;
  return KL_NONE;
}

/* template < params > */
static uint32_t template_header(kl_parser *p) {
  uint32_t b = p->pos, lt = b + 1;
  if (!kl_p_is(p, lt, '<') || !(p->t[lt].flags & KL_TF_ANGLE)) return KL_NONE;
  uint32_t gt = p->t[lt].match, mark = p->npend;
  p->pos = lt + 1;
  while (p->pos < gt) {
    uint32_t pb = p->pos, pmark = p->npend;
    int is_typename = kl_p_kw(p, pb, KL_KW_TYPENAME) || kl_p_kw(p, pb, KL_KW_CLASS);
    uint32_t e;
    if (is_typename) {
      e = pb + 1;
      if (kl_p_is(p, e, KL_P3('.', '.', '.'))) e++;
    } else {
      e = kl_p_scan_type(p, pb, 0);
      if (e == KL_NONE) goto fail;
    }
    kl_p_push(p, kl_p_type(p, e), KL_F_TYPE);
    if (p->t[p->pos].kind == KL_TOK_IDENT) {
      if (is_typename) kl_p_mark_type_word(p, p->pos);
      else kl_p_mark_value_word(p, p->pos);
      kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, p->pos, p->pos + 1), KL_F_NAME);
      p->pos++;
    }
    if (kl_p_is(p, p->pos, '=')) {
      p->pos++;
      uint32_t v;
      uint32_t te = kl_p_scan_type(p, p->pos, 0);
      if (is_typename && te != KL_NONE) {
        v = kl_p_type(p, te);
      } else {
        v = kl_p_expr(p, KL_PREC_ASSIGN);
      }
      if (v == KL_NONE) goto fail;
      kl_p_push(p, v, KL_F_VALUE);
    }
    kl_p_push(p, kl_p_finish(p, KL_N_TEMPLATE_PARAM, pmark, pb, p->pos), KL_F_NONE);
    if (p->pos == gt) break;
    if (!kl_p_is(p, p->pos, ',')) goto fail;
    p->pos++;
  }
  if (p->pos != gt) goto fail;
  p->pos = gt + 1;
  return kl_p_finish(p, KL_N_TEMPLATE, mark, b, p->pos);
fail:
  p->npend = mark;
  p->pos = b;
  return KL_NONE;
}

/* Items between braces (struct bodies, linkage blocks) as a COMPOUND. */
static uint32_t item_block(kl_parser *p) {
  uint32_t b = p->pos, close = p->t[b].match;
  if (!kl_p_is(p, b, '{') || close == KL_NONE) return KL_NONE;
  uint32_t mark = p->npend;
  p->pos++;
  while (p->pos < close && !p->oom) kl_p_push(p, kl_p_item(p), KL_F_NONE);
  p->pos = close + 1;
  return kl_p_finish(p, KL_N_COMPOUND, mark, b, p->pos);
}

/* struct/class/union/enum [name] [: bases] { ... } [declarators] ; */
static uint32_t struct_item(kl_parser *p, uint32_t start, uint32_t mark) {
  uint32_t kw = p->t[p->pos].sub;
  uint32_t i = p->pos + 1;
  i = skip_specifiers(p, i);
  uint32_t name_b = i, name_e = i;
  if (p->t[i].kind == KL_TOK_IDENT) {
    name_e = kl_p_scan_qualified_name(p, i);
    if (name_e == KL_NONE) return KL_NONE;
  }
  uint32_t j = name_e;
  if (kl_p_is(p, j, ':')) {
    while (j < p->end && !kl_p_is(p, j, '{') && !kl_p_is(p, j, ';')) j = kl_p_skip_group(p, j);
  }
  if (!kl_p_is(p, j, '{') && !kl_p_is(p, j, ';')) return KL_NONE;
  if (name_e > name_b) {
    kl_p_mark_type_word(p, name_e - 1);
    kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, name_b, name_e), KL_F_NAME);
  }
  p->pos = j;
  if (kl_p_is(p, j, '{')) {
    uint32_t body;
    if (kw == KL_KW_ENUM) {
      /* enumerators stay as one block without statements */
      uint32_t close = p->t[j].match;
      if (close == KL_NONE) return KL_NONE;
      p->pos = close + 1;
      body = kl_p_leaf(p, KL_N_COMPOUND, j, p->pos);
    } else {
      body = item_block(p);
    }
    if (body == KL_NONE) return KL_NONE;
    kl_p_push(p, body, KL_F_BODY);
    /* trailing declarators: struct S {...} a, *b; */
    while (p->pos < p->end && !kl_p_is(p, p->pos, ';')) {
      const kl_token *t = &p->t[p->pos];
      if (t->kind == KL_TOK_PP || kl_p_is(p, p->pos, '}') || kl_p_is(p, p->pos, '{'))
        return KL_NONE;
      p->pos = kl_p_skip_group(p, p->pos);
    }
  }
  if (!kl_p_is(p, p->pos, ';')) return KL_NONE;
  p->pos++;
  return kl_p_finish(p, KL_N_STRUCT, mark, start, p->pos);
}

/* typedef ... ; and using X = ... ; record the new type name. */
static uint32_t alias_item(kl_parser *p, uint32_t start, uint32_t mark) {
  uint32_t i = p->pos, last_ident = KL_NONE;
  int is_using = kl_p_kw(p, i, KL_KW_USING);
  if (is_using && p->t[i + 1].kind == KL_TOK_IDENT && kl_p_is(p, i + 2, '='))
    last_ident = i + 1;
  while (i < p->end && !kl_p_is(p, i, ';')) {
    const kl_token *t = &p->t[i];
    if (t->kind == KL_TOK_PP || kl_p_is(p, i, '}')) return KL_NONE;
    if (!is_using && t->kind == KL_TOK_IDENT) last_ident = i;
    i = kl_p_skip_group(p, i);
  }
  if (!kl_p_is(p, i, ';')) return KL_NONE;
  if (last_ident != KL_NONE) kl_p_mark_type_word(p, last_ident);
  p->pos = i + 1;
  return kl_p_finish(p, KL_N_DECL, mark, start, p->pos);
}

/* The end of a function name at i: a qualified name, `operator` followed by
 * its operator tokens, or a destructor ~Name. KL_NONE when none. */
static uint32_t scan_function_name(const kl_parser *p, uint32_t i) {
  uint32_t e = i;
  if (kl_p_is(p, e, '~')) e++;
  /* A::operator+ and A::~A: walk the qualifiers first */
  for (;;) {
    if (kl_p_kw(p, e, KL_KW_OPERATOR)) {
      e++;
      if (kl_p_is(p, e, '(') && kl_p_is(p, e + 1, ')')) return e + 2;
      if (kl_p_is(p, e, '[') && kl_p_is(p, e + 1, ']')) return e + 2;
      if (p->t[e].kind == KL_TOK_PUNCT && !kl_p_is(p, e, '(')) return e + 1;
      /* conversion operators and new/delete: operator float, operator new */
      uint32_t te = kl_p_scan_type(p, e, 0);
      if (te != KL_NONE) return te;
      if (kl_p_kw(p, e, KL_KW_NEW) || kl_p_kw(p, e, KL_KW_DELETE)) return e + 1;
      return KL_NONE;
    }
    if (p->t[e].kind != KL_TOK_IDENT) return KL_NONE;
    e++;
    if (kl_p_is(p, e, '<') && (p->t[e].flags & KL_TF_ANGLE)) e = kl_p_angle_end(p, e);
    if (!kl_p_is(p, e, KL_P2(':', ':'))) return e;
    e++;
    if (kl_p_is(p, e, '~')) e++;
  }
}

/* Builds a FUNCTION over [start, ...) once its pieces are known: qualifiers
 * [q, qe), return type [qe, te) (empty for constructors), name [te, ne).
 * Returns KL_NONE (pending stack restored) when the rest does not fit. */
static uint32_t function_rest(kl_parser *p, uint32_t start, uint32_t mark, uint32_t q,
                              uint32_t qe, uint32_t te, uint32_t ne) {
  uint32_t fmark = p->npend;
  if (qe > q) kl_p_push(p, kl_p_leaf(p, KL_N_QUALIFIERS, q, qe), KL_F_QUALIFIERS);
  if (te > qe) {
    p->pos = qe;
    kl_p_push(p, kl_p_type(p, te), KL_F_TYPE);
  }
  kl_p_push(p, kl_p_leaf(p, KL_N_IDENT, te, ne), KL_F_NAME);
  p->pos = ne;
  uint32_t params = kl_p_params(p);
  if (params == KL_NONE) goto fail;
  kl_p_push(p, params, KL_F_PARAMS);
  /* trailing: const, noexcept(...), override, -> T, attributes, and a
   * constructor's member initializers `: a(x), b{y}` */
  int inits = 0;
  while (p->pos < p->end && !kl_p_is(p, p->pos, ';')) {
    const kl_token *t = &p->t[p->pos];
    if (kl_p_is(p, p->pos, '{')) {
      /* in an initializer list, name{...} is an initializer, not the body */
      if (!(inits && p->pos > 0 && p->t[p->pos - 1].kind == KL_TOK_IDENT)) break;
    }
    if (kl_p_is(p, p->pos, ':')) inits = 1;
    if (t->kind == KL_TOK_PP || kl_p_is(p, p->pos, '}') ||
        (kl_p_is(p, p->pos, '=') && !kl_p_kw(p, p->pos + 1, KL_KW_DEFAULT) &&
         !kl_p_kw(p, p->pos + 1, KL_KW_DELETE)) ||
        (kl_p_is(p, p->pos, ',') && !inits))
      goto fail;
    p->pos = kl_p_skip_group(p, p->pos);
  }
  /* the name is a value before the body: recursion, (f)(x) */
  if (kl_p_is(p, p->pos, '{') || kl_p_is(p, p->pos, ';')) kl_p_mark_value_word(p, ne - 1);
  if (kl_p_is(p, p->pos, '{')) {
    uint32_t body = kl_p_compound(p);
    if (body == KL_NONE) goto fail;
    kl_p_push(p, body, KL_F_BODY);
    return kl_p_finish(p, KL_N_FUNCTION, mark, start, p->pos);
  }
  if (kl_p_is(p, p->pos, ';')) {
    p->pos++;
    return kl_p_finish(p, KL_N_FUNCTION, mark, start, p->pos);
  }
fail:
  p->npend = fmark;
  return KL_NONE;
}

/* [qualifiers] type name ( params ) [trailing] { body } | ;
 * else a declaration. The template header, if any, is already pushed. */
static uint32_t function_or_decl(kl_parser *p, uint32_t start, uint32_t mark) {
  uint32_t q = p->pos;
  uint32_t qe = skip_specifiers(p, q);
  uint32_t te = kl_p_scan_type(p, qe, 0);
  if (te != KL_NONE) {
    uint32_t ne = scan_function_name(p, te);
    if (ne != KL_NONE && kl_p_is(p, ne, '(') && p->t[ne].match != KL_NONE) {
      uint32_t f = function_rest(p, start, mark, q, qe, te, ne);
      if (f != KL_NONE) return f;
    }
  }
  /* constructors, destructors and conversion operators have no return type */
  uint32_t ne = scan_function_name(p, qe);
  if (ne != KL_NONE && kl_p_is(p, ne, '(') && p->t[ne].match != KL_NONE) {
    uint32_t f = function_rest(p, start, mark, q, qe, qe, ne);
    if (f != KL_NONE) return f;
  }
  p->pos = q;
  uint32_t d = kl_p_decl(p, KL_N_DECL);
  if (d == KL_NONE) return KL_NONE;
  if (p->npend == mark) return d;
  /* a template header was pushed: the declaration adopts it */
  kl_p_push(p, d, KL_F_NONE);
  return kl_p_finish(p, KL_N_DECL, mark, start, p->pos);
}

uint32_t kl_p_item(kl_parser *p) {
  uint32_t start = p->pos, mark = p->npend;
  if (p->depth >= KL_SOURCE_MAX_DEPTH) {
    p->too_deep = 1;
    return kl_p_recover(p, start, mark);
  }
  p->depth++;
  const kl_token *t = &p->t[start];
  uint32_t n = KL_NONE;
  if (t->kind == KL_TOK_PP) {
    p->pos++;
    const char *s = p->u->src + t->off + 1, *e = p->u->src + t->off + t->len;
    while (s < e && (*s == ' ' || *s == '\t')) s++;
    int pragma = e - s >= 6 && memcmp(s, "pragma", 6) == 0;
    n = kl_p_leaf(p, pragma ? KL_N_PRAGMA : KL_N_PREPROC, start, start + 1);
  } else if (kl_p_is(p, start, ';')) {
    p->pos++;
    n = kl_p_leaf(p, KL_N_EMPTY_STMT, start, start + 1);
  } else if (t->kind == KL_TOK_KEYWORD) {
    switch (t->sub) {
    case KL_KW_TEMPLATE: {
      if (!kl_p_is(p, start + 1, '<')) {
        const kl_token *k = &p->t[start + 1];
        if (k->kind == KL_TOK_KEYWORD && (k->sub == KL_KW_CLASS || k->sub == KL_KW_STRUCT ||
                                          k->sub == KL_KW_UNION)) {
          /* explicit instantiation of a class: template class C<float>; */
          uint32_t ne = kl_p_scan_qualified_name(p, start + 2);
          if (ne != KL_NONE && kl_p_is(p, ne, ';')) {
            p->pos = ne + 1;
            n = kl_p_leaf(p, KL_N_DECL, start, p->pos);
          }
          break;
        }
        /* explicit instantiation: template __global__ void k<float>(float *); */
        p->pos = start + 1;
        n = function_or_decl(p, start, mark);
        break;
      }
      uint32_t h = template_header(p);
      if (h == KL_NONE) break;
      kl_p_push(p, h, KL_F_TEMPLATE);
      if (p->t[p->pos].kind == KL_TOK_KEYWORD &&
          (p->t[p->pos].sub == KL_KW_STRUCT || p->t[p->pos].sub == KL_KW_CLASS ||
           p->t[p->pos].sub == KL_KW_UNION))
        n = struct_item(p, start, mark);
      else
        n = function_or_decl(p, start, mark);
      break;
    }
    case KL_KW_EXTERN:
      if (p->t[start + 1].kind == KL_TOK_STRING && kl_p_is(p, start + 2, '{')) {
        p->pos = start + 2;
        uint32_t body = item_block(p);
        if (body == KL_NONE) break;
        kl_p_push(p, body, KL_F_BODY);
        n = kl_p_finish(p, KL_N_LINKAGE, mark, start, p->pos);
        break;
      }
      n = function_or_decl(p, start, mark);
      break;
    case KL_KW_NAMESPACE: {
      uint32_t i = start + 1;
      if (p->t[i].kind == KL_TOK_IDENT && kl_p_is(p, i + 1, '=')) {
        /* namespace cg = cooperative_groups; */
        n = alias_item(p, start, mark);
        break;
      }
      while (p->t[i].kind == KL_TOK_IDENT || kl_p_is(p, i, KL_P2(':', ':'))) i++;
      if (!kl_p_is(p, i, '{')) break;
      p->pos = i;
      uint32_t body = item_block(p);
      if (body == KL_NONE) break;
      kl_p_push(p, body, KL_F_BODY);
      n = kl_p_finish(p, KL_N_LINKAGE, mark, start, p->pos);
      break;
    }
    case KL_KW_STRUCT: case KL_KW_CLASS: case KL_KW_UNION: case KL_KW_ENUM:
      n = struct_item(p, start, mark);
      if (n == KL_NONE) {
        p->npend = mark;
        p->pos = start;
        n = function_or_decl(p, start, mark);
      }
      break;
    case KL_KW_TYPEDEF: case KL_KW_USING:
      n = alias_item(p, start, mark);
      break;
    case KL_KW_PUBLIC: case KL_KW_PRIVATE: case KL_KW_PROTECTED:
      if (kl_p_is(p, start + 1, ':')) {
        p->pos = start + 2;
        n = kl_p_leaf(p, KL_N_LABEL, start, p->pos);
      }
      break;
    case KL_KW_ASM:
      n = kl_p_stmt(p);
      break;
    default:
      n = function_or_decl(p, start, mark);
      break;
    }
  } else {
    n = function_or_decl(p, start, mark);
    if (n == KL_NONE && !p->oom) {
      /* a macro invocation or static_assert(...): an expression statement */
      p->npend = mark;
      p->pos = start;
      uint32_t v = kl_p_expr(p, KL_PREC_COMMA);
      if (v != KL_NONE && kl_p_is(p, p->pos, ';')) {
        p->pos++;
        kl_p_push(p, v, KL_F_VALUE);
        n = kl_p_finish(p, KL_N_EXPR_STMT, mark, start, p->pos);
      }
    }
  }
  p->depth--;
  if (n == KL_NONE && !p->oom) n = kl_p_recover(p, start, mark);
  return n;
}

static int ident_char(char c) {
  return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* blanks of a directive's text, line continuations included */
static int blank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\\'; }

/* `#define fp float`, `#define real unsigned int`: a body of builtin type
 * keywords only. */
static int builtin_type_body(const char *s, const char *e) {
  int words = 0;
  while (s < e) {
    const char *b = s;
    while (s < e && *s >= 'a' && *s <= 'z') s++;
    kl_kw kw = s > b ? kl_keyword(b, (size_t)(s - b)) : KL_KW_NONE;
    if (!(kw == KL_KW_FLOAT || kw == KL_KW_DOUBLE || kw == KL_KW_INT || kw == KL_KW_UNSIGNED ||
          kw == KL_KW_SIGNED || kw == KL_KW_LONG || kw == KL_KW_SHORT || kw == KL_KW_CHAR ||
          kw == KL_KW_BOOL))
      return 0;
    words++;
    while (s < e && blank(*s)) s++;
  }
  return words;
}

/* What an object-like #define makes its name, from its body [s, e)
 * (comments cut off): KL_W_VALUE for a number (`128`, `(-4)`), a
 * parenthesized body (`(BLOCK * 2)`: `((BLOCK * 2)) - 1` subtracts whatever
 * BLOCK is) or a body with an operator no type has (+ - / % ^ | ! ~ ?);
 * KL_W_TYPE for builtin type keywords; the word's own kind for a single
 * name (`#define BM TILE`); else 0, unknown (`float *`, `f(x)`, `A<B>`). */
static int define_body_kind(const kl_parser *p, const char *s, const char *e) {
  for (const char *c = s; c + 1 < e; c++)
    if (c[0] == '/' && (c[1] == '/' || c[1] == '*')) {
      e = c;
      break;
    }
  while (e > s && blank(e[-1])) e--;
  if (s == e) return 0;
  const char *d = s;
  while (d < e && (blank(*d) || *d == '(' || *d == '-')) d++;
  if (d < e && *d >= '0' && *d <= '9') return KL_W_VALUE;
  if (*s == '(') return KL_W_VALUE;
  for (const char *c = s; c < e; c++)
    if (*c == '+' || *c == '-' || *c == '/' || *c == '%' || *c == '^' || *c == '|' || *c == '!' ||
        *c == '~' || *c == '?')
      return KL_W_VALUE;
  if (builtin_type_body(s, e)) return KL_W_TYPE;
  const char *n = s;
  while (n < e && ident_char(*n)) n++;
  if (n == e && !(*s >= '0' && *s <= '9')) {
    uint32_t w = kl_unit_word(p->u, s, (size_t)(e - s));
    return w != KL_NONE ? p->type_word[w] : 0;
  }
  return 0;
}

/* Object-like #defines, in order, tell what their names are wherever they
 * are used: `(NAME) * 2` is no cast when NAME is a number. The lexer keeps
 * a directive as one token, so this reads its text. */
static void mark_defined_numbers(kl_parser *p) {
  const char *src = p->u->src;
  for (uint32_t i = 0; i < p->end; i++) {
    const kl_token *t = &p->t[i];
    if (t->kind != KL_TOK_PP) continue;
    const char *s = src + t->off + 1, *e = src + t->off + t->len;
    while (s < e && blank(*s)) s++;
    if (e - s < 7 || memcmp(s, "define", 6) != 0 || !blank(s[6])) continue;
    s += 7;
    while (s < e && blank(*s)) s++;
    const char *n = s;
    while (s < e && ident_char(*s)) s++;
    const char *ne = s;
    if (s == n || s == e || !blank(*s)) continue; /* function-like or empty */
    while (s < e && blank(*s)) s++;
    uint32_t w = kl_unit_word(p->u, n, (size_t)(ne - n));
    if (w != KL_NONE) p->type_word[w] |= (uint8_t)define_body_kind(p, s, e);
  }
}

int kl_parse(kl_unit *u) {
  kl_parser p;
  memset(&p, 0, sizeof p);
  p.u = u;
  p.t = u->tokens;
  p.end = u->ntokens - 1;
  p.type_word = calloc(u->nwords + 1, 1);
  if (!p.type_word) return 0;
  for (size_t k = 0; k < sizeof known_types / sizeof known_types[0]; k++) {
    uint32_t w = kl_unit_word(u, known_types[k], strlen(known_types[k]));
    if (w != KL_NONE) p.type_word[w] = KL_W_TYPE;
  }
  mark_defined_numbers(&p);
  uint32_t mark = 0;
  while (p.pos < p.end && !p.oom) kl_p_push(&p, kl_p_item(&p), KL_F_NONE);
  uint32_t root = kl_p_finish(&p, KL_N_UNIT, mark, 0, u->ntokens);
  int ok = !p.oom && root != KL_NONE && kl_layout(&p, root);
  free(p.nodes);
  free(p.kids);
  free(p.kfield);
  free(p.pend);
  free(p.pfield);
  free(p.type_word);
  return ok;
}
