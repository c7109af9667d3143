/* Read-only questions about a parsed unit: names of kinds and fields, field
 * lookup, the kind index, walks, functions and parameters. */
#include <string.h>

#include "source/internal.h"

static const char *const kind_names[KL_N__COUNT] = {
    [KL_N_UNIT] = "unit", [KL_N_FUNCTION] = "function", [KL_N_PARAM_LIST] = "param_list",
    [KL_N_PARAM] = "param", [KL_N_TEMPLATE] = "template",
    [KL_N_TEMPLATE_PARAM] = "template_param", [KL_N_DECL] = "decl",
    [KL_N_DECLARATOR] = "declarator", [KL_N_STRUCT] = "struct", [KL_N_PREPROC] = "preproc",
    [KL_N_PRAGMA] = "pragma", [KL_N_LINKAGE] = "linkage", [KL_N_QUALIFIERS] = "qualifiers",
    [KL_N_COMPOUND] = "compound", [KL_N_FOR] = "for", [KL_N_WHILE] = "while",
    [KL_N_DO] = "do", [KL_N_IF] = "if", [KL_N_RETURN] = "return", [KL_N_BREAK] = "break",
    [KL_N_CONTINUE] = "continue", [KL_N_DECL_STMT] = "decl_stmt",
    [KL_N_EXPR_STMT] = "expr_stmt", [KL_N_EMPTY_STMT] = "empty_stmt", [KL_N_IDENT] = "ident",
    [KL_N_INT_LIT] = "int_lit", [KL_N_FLOAT_LIT] = "float_lit", [KL_N_CHAR_LIT] = "char_lit",
    [KL_N_STRING_LIT] = "string_lit", [KL_N_BOOL_LIT] = "bool_lit", [KL_N_BINARY] = "binary",
    [KL_N_UNARY] = "unary", [KL_N_POSTFIX] = "postfix", [KL_N_ASSIGN] = "assign",
    [KL_N_TERNARY] = "ternary", [KL_N_CALL] = "call", [KL_N_LAUNCH] = "launch",
    [KL_N_INDEX] = "index", [KL_N_MEMBER] = "member", [KL_N_CAST] = "cast",
    [KL_N_CXX_CAST] = "cxx_cast", [KL_N_SIZEOF] = "sizeof", [KL_N_TYPE] = "type",
    [KL_N_INIT_LIST] = "init_list", [KL_N_PAREN] = "paren", [KL_N_LAMBDA] = "lambda",
    [KL_N_TEMPLATE_ARGS] = "template_args", [KL_N_OPAQUE] = "opaque",
    [KL_N_SWITCH] = "switch", [KL_N_CASE] = "case", [KL_N_LABEL] = "label",
    [KL_N_GOTO] = "goto", [KL_N_ASM] = "asm", [KL_N_RANGE_FOR] = "range_for",
    [KL_N_NEW] = "new", [KL_N_DELETE] = "delete", [KL_N_THROW] = "throw",
    [KL_N_TRY] = "try", [KL_N_CATCH] = "catch",
};

static const char *const field_names[KL_F__COUNT] = {
    [KL_F_NONE] = "none", [KL_F_LHS] = "lhs", [KL_F_RHS] = "rhs",
    [KL_F_OPERAND] = "operand", [KL_F_COND] = "cond", [KL_F_THEN] = "then",
    [KL_F_ELSE] = "else", [KL_F_INIT] = "init", [KL_F_STEP] = "step", [KL_F_BODY] = "body",
    [KL_F_CALLEE] = "callee", [KL_F_ARG] = "arg", [KL_F_OBJECT] = "object",
    [KL_F_INDEX] = "index", [KL_F_MEMBER] = "member", [KL_F_TYPE] = "type",
    [KL_F_NAME] = "name", [KL_F_VALUE] = "value", [KL_F_PARAMS] = "params",
    [KL_F_TEMPLATE] = "template", [KL_F_QUALIFIERS] = "qualifiers",
    [KL_F_TEMPLATE_ARGS] = "template_args", [KL_F_CONFIG] = "config",
    [KL_F_DECLARATOR] = "declarator", [KL_F_PLACEMENT] = "placement",
};

const char *kl_kind_name(kl_node_kind k) {
  return (unsigned)k < KL_N__COUNT && kind_names[k] ? kind_names[k] : "?";
}
const char *kl_field_name(kl_field f) {
  return (unsigned)f < KL_F__COUNT && field_names[f] ? field_names[f] : "?";
}

kl_node_kind kl_kind_from_name(const char *name) {
  for (int k = 0; k < KL_N__COUNT; k++)
    if (kind_names[k] && strcmp(kind_names[k], name) == 0) return (kl_node_kind)k;
  return KL_N__COUNT;
}

kl_field kl_field_from_name(const char *name) {
  for (int f = 0; f < KL_F__COUNT; f++)
    if (field_names[f] && strcmp(field_names[f], name) == 0) return (kl_field)f;
  return KL_F__COUNT;
}

uint32_t kl_node_field(const kl_unit *u, uint32_t n, kl_field f) {
  const kl_node *nd = &u->nodes[n];
  for (uint32_t i = 0; i < nd->child_count; i++)
    if (u->kid_field[nd->child_begin + i] == f) return u->kids[nd->child_begin + i];
  return KL_NONE;
}

const uint32_t *kl_unit_nodes_of_kind(const kl_unit *u, kl_node_kind k, uint32_t *count) {
  if ((unsigned)k >= KL_N__COUNT) {
    *count = 0;
    return u->by_kind;
  }
  *count = u->kind_start[k + 1] - u->kind_start[k];
  return u->by_kind + u->kind_start[k];
}

uint32_t kl_pragma_target(const kl_unit *u, uint32_t pragma) {
  const kl_node *nd = &u->nodes[pragma];
  if (nd->kind != KL_N_PRAGMA || nd->parent == KL_NONE) return KL_NONE;
  const kl_node *par = &u->nodes[nd->parent];
  for (uint32_t i = 0; i + 1 < par->child_count; i++) {
    if (u->kids[par->child_begin + i] != pragma) continue;
    /* skip further pragmas: they all apply to the same statement */
    for (uint32_t j = i + 1; j < par->child_count; j++) {
      uint32_t c = u->kids[par->child_begin + j];
      if (u->nodes[c].kind != KL_N_PRAGMA) return c;
    }
  }
  return KL_NONE;
}

int kl_walk(const kl_unit *u, uint32_t n, kl_visit_fn visit, void *ud) {
  uint32_t end = u->nodes[n].subtree_end;
  for (uint32_t i = n; i < end;) {
    int r = visit(u, i, ud);
    if (r == KL_WALK_STOP) return 1;
    i = r == KL_WALK_SKIP ? u->nodes[i].subtree_end : i + 1;
  }
  return 0;
}

static int tok_kw(const kl_unit *u, uint32_t i, kl_kw kw) {
  return u->tokens[i].kind == KL_TOK_KEYWORD && u->tokens[i].sub == (uint32_t)kw;
}

int kl_function_info_get(const kl_unit *u, uint32_t n, kl_function_info *out) {
  const kl_node *nd = &u->nodes[n];
  if (nd->kind != KL_N_FUNCTION) return 0;
  memset(out, 0, sizeof *out);
  out->node = n;
  out->template_node = kl_node_field(u, n, KL_F_TEMPLATE);
  out->return_type = kl_node_field(u, n, KL_F_TYPE);
  out->params = kl_node_field(u, n, KL_F_PARAMS);
  out->body = kl_node_field(u, n, KL_F_BODY);
  out->launch_bounds_tok = KL_NONE;
  uint32_t name = kl_node_field(u, n, KL_F_NAME);
  out->name_tok = name == KL_NONE ? KL_NONE : u->nodes[name].tok_end - 1;
  if (out->template_node != KL_NONE) out->qualifiers |= KL_FQ_TEMPLATE;
  uint32_t stop = out->params != KL_NONE ? u->nodes[out->params].tok_begin : nd->tok_end;
  for (uint32_t i = nd->tok_begin; i < stop; i++) {
    const kl_token *t = &u->tokens[i];
    if (t->kind != KL_TOK_KEYWORD) continue;
    switch (t->sub) {
    case KL_KW_GLOBAL: out->qualifiers |= KL_FQ_GLOBAL; break;
    case KL_KW_DEVICE: out->qualifiers |= KL_FQ_DEVICE; break;
    case KL_KW_HOST: out->qualifiers |= KL_FQ_HOST; break;
    case KL_KW_FORCEINLINE: out->qualifiers |= KL_FQ_FORCEINLINE; break;
    case KL_KW_STATIC: out->qualifiers |= KL_FQ_STATIC; break;
    case KL_KW_INLINE: out->qualifiers |= KL_FQ_INLINE; break;
    case KL_KW_EXTERN:
      out->qualifiers |= KL_FQ_EXTERN;
      if (u->tokens[i + 1].kind == KL_TOK_STRING) out->qualifiers |= KL_FQ_EXTERN_C;
      break;
    case KL_KW_LAUNCH_BOUNDS:
      out->qualifiers |= KL_FQ_LAUNCH_BOUNDS;
      if (u->tokens[i + 1].kind == KL_TOK_PUNCT && u->tokens[i + 1].sub == '(')
        out->launch_bounds_tok = i + 1;
      break;
    default: break;
    }
  }
  /* extern "C" { ... } around the function */
  for (uint32_t p = nd->parent; p != KL_NONE; p = u->nodes[p].parent) {
    const kl_node *pn = &u->nodes[p];
    if (pn->kind == KL_N_LINKAGE && tok_kw(u, pn->tok_begin, KL_KW_EXTERN))
      out->qualifiers |= KL_FQ_EXTERN_C;
  }
  return 1;
}

int kl_param_info_get(const kl_unit *u, uint32_t param, kl_param_info *out) {
  const kl_node *nd = &u->nodes[param];
  if (nd->kind != KL_N_PARAM) return 0;
  memset(out, 0, sizeof *out);
  out->node = param;
  out->type = kl_node_field(u, param, KL_F_TYPE);
  uint32_t name = kl_node_field(u, param, KL_F_NAME);
  out->name_tok = name == KL_NONE ? KL_NONE : u->nodes[name].tok_begin;
  out->base_tok_begin = out->base_tok_end = KL_NONE;
  uint32_t b = nd->tok_begin, e = nd->tok_end;
  uint32_t value = kl_node_field(u, param, KL_F_VALUE);
  if (value != KL_NONE) e = u->nodes[value].tok_begin;
  for (uint32_t i = b; i < e; i++) {
    if (i == out->name_tok) continue;
    const kl_token *t = &u->tokens[i];
    if (t->kind == KL_TOK_KEYWORD) {
      if (t->sub == KL_KW_CONST) { out->is_const = 1; continue; }
      if (t->sub == KL_KW_RESTRICT) { out->is_restrict = 1; continue; }
      if (t->sub == KL_KW_VOLATILE || t->sub == KL_KW_GRID_CONSTANT) continue;
    }
    if (t->kind == KL_TOK_PUNCT) {
      if (t->sub == '*') { out->pointer_depth++; continue; }
      if (t->sub == '&' || t->sub == KL_P2('&', '&')) { out->is_reference = 1; continue; }
      if (t->sub == '[') {
        out->pointer_depth++;
        if (t->match != KL_NONE) i = t->match;
        continue;
      }
      if (t->sub == '=') break;
      if (t->sub == '(' || t->sub == ')') continue; /* float (*p)[N] */
    }
    if (out->base_tok_begin == KL_NONE) out->base_tok_begin = i;
    out->base_tok_end = i + 1;
    if (t->kind == KL_TOK_PUNCT && (t->flags & KL_TF_ANGLE) && t->match != KL_NONE) {
      i = t->match;
      out->base_tok_end = i + 1;
    }
  }
  return 1;
}
