/* The structured edit API of kl.source: #define lines, __launch_bounds__,
 * parameter qualifiers, template arguments, #pragma lines and declarations
 * as tables of spans and insertion points (engine/source/edit_sites.c does
 * the finding). The API and its conventions are documented at the top of
 * engine/lua/source.c. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "lua/source.h"
#include "lua/scratch.h"
#include "lua/source_edit.h"


static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static void set_bool(lua_State *L, const char *k, int v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, k);
}

static kl_byte_span node_span(const kl_unit *u, uint32_t n) {
  uint32_t b, e;
  kl_node_span(u, n, &b, &e);
  return (kl_byte_span){b, e - b};
}

static kl_byte_span tok_span(const kl_unit *u, uint32_t b, uint32_t e) {
  if (e <= b) return (kl_byte_span){u->tokens[b].off, 0};
  const kl_token *last = &u->tokens[e - 1];
  return (kl_byte_span){u->tokens[b].off, last->off + last->len - u->tokens[b].off};
}

/* A span as { begin, end, line, col, text }: 1-based inclusive bytes, the
 * convention of node:range() (empty: end = begin - 1, text ""). */
static void push_span(lua_State *L, const kl_unit *u, kl_byte_span s) {
  lua_createtable(L, 0, 6);
  set_int(L, "begin", (lua_Integer)s.off + 1);
  set_int(L, "end", (lua_Integer)s.off + s.len);
  uint32_t line, col;
  kl_unit_pos(u, s.off, &line, &col);
  set_int(L, "line", line);
  set_int(L, "col", col);
  lua_pushlstring(L, u->src + s.off, s.len);
  lua_setfield(L, -2, "text");
}

static void set_span(lua_State *L, const char *k, const kl_unit *u, kl_byte_span s) {
  push_span(L, u, s);
  lua_setfield(L, -2, k);
}

/* An expression's span with its integer value (`int`) when it has one,
 * evaluated with the constants defined before it. */
static void set_expr_span(lua_State *L, const char *k, kl_unit *u, uint32_t tb, uint32_t te) {
  kl_byte_span s = tok_span(u, tb, te);
  push_span(L, u, s);
  int64_t v;
  if (te > tb && kl_eval_tokens_before(u, u->tokens, tb, te, u->src, s.off, &v))
    set_int(L, "int", v);
  if (k) lua_setfield(L, -2, k);
}

/* An insertion point as { begin, end = begin - 1, line, col, prefix,
 * suffix }: write prefix .. construct .. suffix there. Nothing when
 * p->off is KL_NONE. */
static void set_insert(lua_State *L, const char *k, const kl_unit *u, const kl_insert_point *p) {
  if (p->off == KL_NONE) return;
  push_span(L, u, (kl_byte_span){p->off, 0});
  lua_pushstring(L, p->prefix);
  lua_pushlstring(L, u->src + p->indent.off, p->indent.len);
  lua_concat(L, 2);
  lua_setfield(L, -2, "prefix");
  lua_pushstring(L, p->suffix);
  lua_setfield(L, -2, "suffix");
  lua_setfield(L, -2, k);
}

/* The span of token i with `remove`: kl_token_removal. */
static void push_token_removable(lua_State *L, const kl_unit *u, uint32_t i) {
  push_span(L, u, tok_span(u, i, i + 1));
  set_span(L, "remove", u, kl_token_removal(u, i));
}

/* ---- #define ------------------------------------------------------------------------ */

static void push_define(lua_State *L, const kl_unit *u, const kl_define_info *d) {
  lua_createtable(L, 0, 12);
  set_span(L, "name", u, d->name);
  push_span(L, u, d->value);
  if (d->known) set_int(L, "int", d->number);
  lua_setfield(L, -2, "value");
  set_span(L, "directive", u, d->directive);
  set_span(L, "line", u, d->line);
  set_bool(L, "function_like", d->function_like);
  if (d->function_like) {
    set_span(L, "param_list", u, d->params);
    uint32_t n = kl_define_params(u, d, NULL, 0);
    kl_byte_span *ps = lua_newuserdatauv(L, (n ? n : 1) * sizeof *ps, 0);
    kl_define_params(u, d, ps, n);
    lua_createtable(L, (int)n, 0);
    for (uint32_t i = 0; i < n; i++) {
      push_span(L, u, ps[i]);
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -3, "params");
    lua_pop(L, 1);
  }
  set_bool(L, "in_function", d->in_function);
  set_bool(L, "conditional", d->conditional);
  set_int(L, "same_name", d->same_name);
  set_bool(L, "redefined", d->same_name > 1);
}

/* Leaves the define list, in a scratch box, on the stack; returns it and
 * its count. */
static kl_define_info *boxed_defines(lua_State *L, kl_unit *u, uint32_t *n) {
  kl_scratch *box = kl_scratch_new(L);
  return kl_scratch_adopt(box, kl_unit_defines(u, n));
}

static int unit_defines(lua_State *L) {
  kl_unit *u = kl_lua_check_unit(L, 1);
  uint32_t n;
  const kl_define_info *ds = boxed_defines(L, u, &n);
  lua_createtable(L, (int)n, 0);
  for (uint32_t i = 0; i < n; i++) {
    push_define(L, u, &ds[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* unit:define(name) -> the last #define of name, or nil */
static int unit_define(lua_State *L) {
  kl_unit *u = kl_lua_check_unit(L, 1);
  size_t len;
  const char *name = luaL_checklstring(L, 2, &len);
  uint32_t n;
  const kl_define_info *ds = boxed_defines(L, u, &n);
  for (uint32_t i = n; i-- > 0;) {
    if (ds[i].name.len == len && memcmp(u->src + ds[i].name.off, name, len) == 0) {
      push_define(L, u, &ds[i]);
      return 1;
    }
  }
  lua_pushnil(L);
  return 1;
}

/* ---- __launch_bounds__ ------------------------------------------------------------------ */

static uint32_t check_kind(lua_State *L, kl_unit **u, kl_node_kind kind, const char *what) {
  uint32_t id;
  *u = kl_lua_check_node(L, 1, &id);
  if ((*u)->nodes[id].kind != kind) luaL_argerror(L, 1, what);
  return id;
}

static int fn_launch_bounds(lua_State *L) {
  kl_unit *u;
  uint32_t fn = check_kind(L, &u, KL_N_FUNCTION, "not a function node");
  kl_launch_bounds_info lb;
  kl_launch_bounds_get(u, fn, &lb);
  lua_createtable(L, 0, 8);
  set_bool(L, "present", lb.present);
  if (lb.present) {
    set_int(L, "count", lb.count);
    push_span(L, u, lb.whole);
    set_span(L, "remove", u, lb.remove);
    lua_setfield(L, -2, "whole");
    set_span(L, "inner", u, lb.inner);
    static const char *const names[3] = {"max_threads", "min_blocks", "max_cluster"};
    lua_createtable(L, lb.nargs < 3 ? lb.nargs : 3, 0);
    for (uint32_t i = 0; i < lb.nargs && i < 3; i++) {
      push_span(L, u, lb.arg[i]);
      if (lb.known[i]) set_int(L, "int", lb.value[i]);
      lua_pushvalue(L, -1);
      lua_setfield(L, -4, names[i]);
      lua_rawseti(L, -2, (lua_Integer)i + 1);
    }
    lua_setfield(L, -2, "args");
    set_int(L, "nargs", lb.nargs);
  } else {
    set_insert(L, "insert", u, &lb.insert);
  }
  return 1;
}

/* ---- parameters ---------------------------------------------------------------------- */

void kl_lua_push_param_sites(lua_State *L, const kl_unit *u, uint32_t param) {
  kl_param_sites ps;
  if (!kl_param_sites_get(u, param, &ps)) return;
  if (ps.info.name_tok != KL_NONE)
    set_span(L, "name_span", u, tok_span(u, ps.info.name_tok, ps.info.name_tok + 1));
  if (ps.info.type != KL_NONE) set_span(L, "type_span", u, node_span(u, ps.info.type));
  if (ps.info.base_tok_begin != KL_NONE)
    set_span(L, "base_span", u, tok_span(u, ps.info.base_tok_begin, ps.info.base_tok_end));
  if (ps.const_tok != KL_NONE) {
    push_token_removable(L, u, ps.const_tok);
    lua_setfield(L, -2, "const_span");
  }
  if (ps.restrict_tok != KL_NONE) {
    push_token_removable(L, u, ps.restrict_tok);
    lua_setfield(L, -2, "restrict_span");
  }
  set_insert(L, "const_insert", u, &ps.const_insert);
  set_insert(L, "restrict_insert", u, &ps.restrict_insert);
  set_int(L, "stars", ps.stars);
}

/* ---- template arguments ------------------------------------------------------------------ */

static int node_template_args(lua_State *L) {
  uint32_t id;
  kl_unit *u = kl_lua_check_node(L, 1, &id);
  int ui = lua_gettop(L);
  /* the node's own <...>, else its callee's (a launch of k<T, 8>, and
   * obj.f<true>(x) whichever of the member and its name holds them) */
  uint32_t ta = u->nodes[id].kind == KL_N_TEMPLATE_ARGS ? id : kl_node_field(u, id, KL_F_TEMPLATE_ARGS);
  uint32_t callee = kl_node_field(u, id, KL_F_CALLEE);
  if (ta == KL_NONE && callee != KL_NONE && (u->nodes[id].kind == KL_N_CALL || u->nodes[id].kind == KL_N_LAUNCH)) {
    ta = kl_node_field(u, callee, KL_F_TEMPLATE_ARGS);
    uint32_t member = kl_node_field(u, callee, KL_F_MEMBER);
    if (ta == KL_NONE && member != KL_NONE) ta = kl_node_field(u, member, KL_F_TEMPLATE_ARGS);
  }
  if (ta == KL_NONE) {
    lua_pushnil(L);
    return 1;
  }
  const kl_node *nd = &u->nodes[ta];
  lua_createtable(L, 0, 3);
  kl_lua_push_node(L, ui, ta);
  lua_setfield(L, -2, "node");
  set_span(L, "whole", u, node_span(u, ta));
  lua_createtable(L, (int)nd->child_count, 0);
  for (uint32_t i = 0; i < nd->child_count; i++) {
    uint32_t a = kl_child(u, ta, i);
    set_expr_span(L, NULL, u, u->nodes[a].tok_begin, u->nodes[a].tok_end);
    kl_lua_push_node(L, ui, a);
    lua_setfield(L, -2, "node");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "args");
  return 1;
}

/* node:template_params() -> { node, whole, params = { { node, kind, name,
 * type, default, default_insert } } } for a template header or what it
 * heads (a function, a struct, a declaration) */
static int node_template_params(lua_State *L) {
  uint32_t id;
  kl_unit *u = kl_lua_check_node(L, 1, &id);
  int ui = lua_gettop(L);
  uint32_t th = u->nodes[id].kind == KL_N_TEMPLATE ? id : kl_node_field(u, id, KL_F_TEMPLATE);
  if (th == KL_NONE) {
    lua_pushnil(L);
    return 1;
  }
  const kl_node *nd = &u->nodes[th];
  lua_createtable(L, 0, 3);
  kl_lua_push_node(L, ui, th);
  lua_setfield(L, -2, "node");
  set_span(L, "whole", u, node_span(u, th));
  lua_createtable(L, (int)nd->child_count, 0);
  lua_Integer k = 0;
  for (uint32_t i = 0; i < nd->child_count; i++) {
    uint32_t tp = kl_child(u, th, i);
    if (u->nodes[tp].kind != KL_N_TEMPLATE_PARAM) continue;
    lua_createtable(L, 0, 6);
    kl_lua_push_node(L, ui, tp);
    lua_setfield(L, -2, "node");
    uint32_t type = kl_node_field(u, tp, KL_F_TYPE), name = kl_node_field(u, tp, KL_F_NAME);
    uint32_t value = kl_node_field(u, tp, KL_F_VALUE);
    const kl_token *first = type != KL_NONE ? &u->tokens[u->nodes[type].tok_begin] : NULL;
    int is_type = first && first->kind == KL_TOK_KEYWORD &&
                  (first->sub == KL_KW_TYPENAME || first->sub == KL_KW_CLASS);
    lua_pushstring(L, is_type ? "type" : "value");
    lua_setfield(L, -2, "kind");
    if (type != KL_NONE) set_span(L, "type", u, node_span(u, type));
    if (name != KL_NONE) set_span(L, "name", u, node_span(u, name));
    if (value != KL_NONE) {
      set_expr_span(L, "default", u, u->nodes[value].tok_begin, u->nodes[value].tok_end);
    } else {
      /* `int BM` gets ` = 128` after its name (or its type) */
      uint32_t last = name != KL_NONE ? name : type;
      if (last != KL_NONE) {
        kl_byte_span s = node_span(u, last);
        kl_insert_point ip = {s.off + s.len, " = ", {s.off + s.len, 0}, ""};
        set_insert(L, "default_insert", u, &ip);
      }
    }
    lua_rawseti(L, -2, ++k);
  }
  lua_setfield(L, -2, "params");
  return 1;
}

/* ---- #pragma ----------------------------------------------------------------------- */

static void push_pragma_info(lua_State *L, kl_unit *u, const kl_pragma_info *p) {
  lua_createtable(L, 0, 8);
  set_span(L, "name", u, p->name);
  set_span(L, "args", u, p->args);
  set_span(L, "directive", u, p->directive);
  set_span(L, "line", u, p->line);
  set_bool(L, "unroll", p->is_unroll);
  if (p->is_unroll && p->has_count) {
    push_span(L, u, p->args);
    if (p->known) set_int(L, "int", p->count);
    lua_setfield(L, -2, "count");
  } else if (p->is_unroll) {
    kl_insert_point ip = {p->args.off, " ", {p->args.off, 0}, ""};
    set_insert(L, "count_insert", u, &ip);
  }
}

/* The PRAGMA node of pragma token tok, or KL_NONE (a pragma inside an
 * opaque region has none). */
static uint32_t pragma_node(const kl_unit *u, uint32_t tok) {
  uint32_t n;
  const uint32_t *ids = kl_unit_nodes_of_kind(u, KL_N_PRAGMA, &n);
  uint32_t lo = 0, hi = n; /* pre-order of leaves is token order */
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (u->nodes[ids[mid]].tok_begin < tok) lo = mid + 1;
    else hi = mid;
  }
  return lo < n && u->nodes[ids[lo]].tok_begin == tok ? ids[lo] : KL_NONE;
}

static int node_pragma_info(lua_State *L) {
  kl_unit *u;
  uint32_t id = check_kind(L, &u, KL_N_PRAGMA, "not a pragma node");
  kl_pragma_info p;
  if (!kl_pragma_info_get(u, u->nodes[id].tok_begin, &p)) {
    lua_pushnil(L);
    return 1;
  }
  push_pragma_info(L, u, &p);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "node");
  return 1;
}

/* stmt:pragmas() -> { pragma nodes }, insert */
static int node_pragmas(lua_State *L) {
  uint32_t id;
  kl_unit *u = kl_lua_check_node(L, 1, &id);
  int ui = lua_gettop(L);
  uint32_t first;
  uint32_t n = kl_pragmas_before(u, id, &first);
  lua_createtable(L, (int)n, 0);
  lua_Integer k = 0;
  for (uint32_t t = first; t < first + n; t++) {
    uint32_t p = pragma_node(u, t);
    if (p == KL_NONE) continue;
    kl_lua_push_node(L, ui, p);
    lua_rawseti(L, -2, ++k);
  }
  kl_insert_point ip;
  kl_pragma_insert_point(u, id, &ip);
  lua_createtable(L, 0, 1);
  set_insert(L, "insert", u, &ip);
  lua_getfield(L, -1, "insert");
  lua_remove(L, -2);
  return 2;
}

/* stmt:unroll() -> the #pragma unroll before stmt (the last one) or nil,
 * and the insertion point for a new pragma line */
static int node_unroll(lua_State *L) {
  uint32_t id;
  kl_unit *u = kl_lua_check_node(L, 1, &id);
  int ui = lua_gettop(L);
  uint32_t first;
  uint32_t n = kl_pragmas_before(u, id, &first);
  int found = 0;
  for (uint32_t t = first + n; t-- > first;) {
    kl_pragma_info p;
    if (!kl_pragma_info_get(u, t, &p) || !p.is_unroll) continue;
    push_pragma_info(L, u, &p);
    kl_lua_push_node(L, ui, pragma_node(u, t));
    lua_setfield(L, -2, "node");
    found = 1;
    break;
  }
  if (!found) lua_pushnil(L);
  kl_insert_point ip;
  kl_pragma_insert_point(u, id, &ip);
  lua_createtable(L, 0, 1);
  set_insert(L, "insert", u, &ip);
  lua_getfield(L, -1, "insert");
  lua_remove(L, -2);
  return 2;
}

/* ---- declarations ------------------------------------------------------------------ */

static const struct {
  uint32_t bit;
  const char *name;
} qualifier_names[] = {
    {KL_DQ_SHARED, "shared"},     {KL_DQ_CONSTANT, "constant"}, {KL_DQ_DEVICE, "device"},
    {KL_DQ_STATIC, "static"},     {KL_DQ_CONSTEXPR, "constexpr"}, {KL_DQ_EXTERN, "extern"},
    {KL_DQ_CONST, "const"},       {KL_DQ_VOLATILE, "volatile"}, {KL_DQ_MANAGED, "managed"},
    {KL_DQ_INLINE, "inline"},
};

static void push_declarator(lua_State *L, int ui, kl_unit *u, uint32_t d, uint32_t type_stars) {
  const kl_node *nd = &u->nodes[d];
  lua_createtable(L, 0, 6);
  kl_lua_push_node(L, ui, d);
  lua_setfield(L, -2, "node");
  uint32_t name = kl_node_field(u, d, KL_F_NAME);
  uint32_t stars = type_stars, after = nd->tok_begin;
  if (name != KL_NONE) {
    set_span(L, "name", u, node_span(u, name));
    for (uint32_t i = nd->tok_begin; i < u->nodes[name].tok_begin; i++)
      if (u->tokens[i].kind == KL_TOK_PUNCT && u->tokens[i].sub == '*') stars++;
    after = u->nodes[name].tok_end;
  }
  set_int(L, "stars", stars);
  /* one entry per [...] after the name, an empty one for [] */
  lua_newtable(L);
  lua_Integer k = 0;
  uint32_t ci = 0;
  for (uint32_t i = after; i < nd->tok_end; ) {
    const kl_token *t = &u->tokens[i];
    if (!(t->kind == KL_TOK_PUNCT && t->sub == '[') || t->match == KL_NONE || t->match <= i ||
        t->match >= nd->tok_end)
      break;
    uint32_t close = t->match, dim = KL_NONE;
    for (; ci < nd->child_count; ci++) {
      uint32_t c = kl_child(u, d, ci);
      if (kl_child_field(u, d, ci) != KL_F_INDEX || u->nodes[c].tok_begin <= i) continue;
      if (u->nodes[c].tok_begin < close) dim = c, ci++;
      break;
    }
    if (dim != KL_NONE) set_expr_span(L, NULL, u, u->nodes[dim].tok_begin, u->nodes[dim].tok_end);
    else push_span(L, u, (kl_byte_span){u->tokens[close].off, 0});
    lua_rawseti(L, -2, ++k);
    i = close + 1;
  }
  lua_setfield(L, -2, "dims");
  uint32_t value = kl_node_field(u, d, KL_F_VALUE);
  if (value != KL_NONE) {
    const kl_node *vn = &u->nodes[value];
    set_expr_span(L, "init", u, vn->tok_begin, vn->tok_end);
  }
}

static void push_declaration(lua_State *L, int ui, kl_unit *u, uint32_t decl) {
  lua_createtable(L, 0, 16);
  kl_lua_push_node(L, ui, decl);
  lua_setfield(L, -2, "node");
  uint32_t tmpl = kl_node_field(u, decl, KL_F_TEMPLATE);
  if (tmpl != KL_NONE) {
    kl_lua_push_node(L, ui, tmpl);
    lua_setfield(L, -2, "template");
    /* template <...> DECL: the inner declaration says the rest */
    const kl_node *nd = &u->nodes[decl];
    for (uint32_t i = 0; i < nd->child_count; i++)
      if (u->nodes[kl_child(u, decl, i)].kind == KL_N_DECL) decl = kl_child(u, decl, i);
  }
  uint32_t type = kl_node_field(u, decl, KL_F_TYPE);
  set_bool(L, "alias", type == KL_NONE);
  uint32_t bits = 0, type_stars = 0;
  lua_newtable(L);
  if (type != KL_NONE) {
    const kl_node *tn = &u->nodes[type];
    lua_Integer k = 0;
    for (uint32_t i = tn->tok_begin; i < tn->tok_end; i++) {
      uint32_t bit = kl_decl_qualifier(u, i);
      if (u->tokens[i].kind == KL_TOK_PUNCT && u->tokens[i].sub == '*') type_stars++;
      if (!bit) continue;
      bits |= bit;
      push_token_removable(L, u, i);
      lua_rawseti(L, -2, ++k);
    }
  }
  lua_setfield(L, -2, "qualifiers");
  for (size_t q = 0; q < sizeof qualifier_names / sizeof qualifier_names[0]; q++)
    set_bool(L, qualifier_names[q].name, bits & qualifier_names[q].bit);
  if (type != KL_NONE) {
    set_span(L, "type", u, node_span(u, type));
    uint32_t b, e;
    if (kl_type_base(u, type, &b, &e)) set_span(L, "base", u, tok_span(u, b, e));
    uint32_t o = u->tokens[u->nodes[type].tok_begin].off;
    kl_insert_point ip = {o, "", {o, 0}, " "};
    set_insert(L, "qualifier_insert", u, &ip);
  }
  lua_newtable(L);
  lua_Integer k = 0;
  const kl_node *nd = &u->nodes[decl];
  for (uint32_t i = 0; i < nd->child_count; i++) {
    if (kl_child_field(u, decl, i) != KL_F_DECLARATOR) continue;
    push_declarator(L, ui, u, kl_child(u, decl, i), k == 0 ? type_stars : 0);
    lua_rawseti(L, -2, ++k);
  }
  lua_setfield(L, -2, "declarators");
}

static int unit_declarations(lua_State *L) {
  kl_unit *u = kl_lua_check_unit(L, 1);
  lua_newtable(L);
  lua_Integer k = 0;
  /* the unit's items, entering extern "C" { } and namespace { } bodies */
  for (uint32_t i = 1; i < u->nnodes;) {
    const kl_node *nd = &u->nodes[i];
    int enter = nd->kind == KL_N_LINKAGE ||
                (nd->kind == KL_N_COMPOUND && nd->parent != KL_NONE &&
                 u->nodes[nd->parent].kind == KL_N_LINKAGE);
    if (nd->kind == KL_N_DECL) {
      push_declaration(L, 1, u, i);
      lua_rawseti(L, -2, ++k);
    }
    i = enter ? i + 1 : nd->subtree_end;
  }
  return 1;
}

static int node_declaration(lua_State *L) {
  uint32_t id;
  kl_unit *u = kl_lua_check_node(L, 1, &id);
  int ui = lua_gettop(L);
  if (u->nodes[id].kind == KL_N_DECL_STMT && u->nodes[id].child_count)
    id = kl_child(u, id, 0);
  if (u->nodes[id].kind != KL_N_DECL) return luaL_argerror(L, 1, "not a decl or decl_stmt node");
  push_declaration(L, ui, u, id);
  return 1;
}

/* ---- registration ------------------------------------------------------------------- */

const luaL_Reg kl_source_edit_unit_methods[] = {
    {"defines", unit_defines},
    {"define", unit_define},
    {"declarations", unit_declarations},
    {NULL, NULL},
};

const luaL_Reg kl_source_edit_node_methods[] = {
    {"launch_bounds", fn_launch_bounds},
    {"template_args", node_template_args},
    {"template_params", node_template_params},
    {"pragma_info", node_pragma_info},
    {"pragmas", node_pragmas},
    {"unroll", node_unroll},
    {"declaration", node_declaration},
    {NULL, NULL},
};
