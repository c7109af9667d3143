/* kl.source: the lossless CUDA C/C++ model (engine/source) as Lua values.
 *
 *   source.parse(text [, name]) -> unit, diagnostics
 *     never fails on content; diagnostics = { {id, message, line, col, text,
 *     len} }: text is the first 256 bytes of the range, len its full length
 *     in bytes; the last one may be KLS006 with `suppressed` = the number of
 *     diagnostics the cap dropped (see source.h)
 *   source.kinds, source.fields: the node kind and field names; max_depth
 *   tostring(unit) == text                 byte for byte
 *   unit:root() unit:functions() unit:walk([kinds]) unit:constants()
 *   unit:constant(name) unit:annotations() unit:access_patterns(fn)
 *   unit:diagnostics() unit:has_word(w) unit:nodes(kind) unit.name unit.ntokens
 *   unit:tokens([first [, last]]) node:token_range() unit:shared_accesses(fn)
 *   node.kind node.id node.op node.line node.col node.unit
 *   node:text() node:range() node:children() node:parent() node:field(name)
 *   node:walk([kinds]) node:equals(other) node:hash()
 *   fn:params() fn:body() fn:name() fn:info() node:affine([fn])
 *   pragma:pragma_target() stmt:pragmas()
 *
 * A node userdata keeps its unit alive through its user value. Closing a
 * unit (`local u <close> = ...`) frees it at once; its nodes then raise.
 *
 * The structured edit API (engine/lua/source_edit.c): what a transform
 * edits where patterns do not reach. Positions are those of node:range()'s
 * elements 5 and 6, so every part can go straight to match.splice:
 *   span   = { begin, end, line, col, text }: bytes begin..end (1-based,
 *            inclusive) of the unit's text; line/col of byte `begin`. No
 *            leading or trailing trivia: a span runs from its first token
 *            to the end of its last, comments BETWEEN its tokens included.
 *            An empty span (end = begin - 1, text "") says where the part
 *            would go. An expression's span has `int` when it evaluates to
 *            an integer with the constants defined before it.
 *            A removable part (a qualifier, a __launch_bounds__) has
 *            span.remove: what to delete to drop it with its separator.
 *   insert = { begin, end = begin - 1, line, col, prefix, suffix }: an
 *            insertion point; the edit that adds construct C is
 *            { begin = i.begin, end = i["end"], text = i.prefix .. C .. i.suffix }
 *            and the matching remove span (a pragma's line) of the
 *            reparsed unit deletes exactly that text again, except the line
 *            break before a pragma put before a statement that did not
 *            begin its line.
 *
 *   unit:defines() -> { define... } every #define line in source order
 *     (`#  define`, a comment between `#` and `define`, inside functions and
 *     #if blocks too):
 *     define = { name = span, value = span (+ int: the value kl_unit_constants
 *       gives that line; nil for floats, strings, function-like macros),
 *       directive = span ('#' to the end of the line: continuations and a
 *       trailing comment in, the newline out), line = span (the whole line:
 *       indentation and newline in; delete it to drop the define),
 *       function_like, param_list = span "(a, b)", params = { span... }
 *       (function-like only; "..." included), in_function, conditional
 *       (between #if/#ifdef/#ifndef and #endif; an include guard does not
 *       count), same_name (#define and
 *       #undef lines of that name), redefined (same_name > 1) }.
 *     value spans first to last token of the replacement list: a trailing
 *     comment and the blanks and continuations around it stay outside; an
 *     empty value is an empty span just after the name.
 *   unit:define(name) -> the last define of name, or nil (each call reads
 *     every define: call unit:defines() once for many names).
 *   fn:launch_bounds() -> { present = false, insert } or { present = true,
 *     whole = span "__launch_bounds__(...)" (+ remove: with the blanks before
 *     it, or after it when none), inner = span between the parentheses,
 *     args = { span + int... }, max_threads, min_blocks, max_cluster (the
 *     same spans), nargs, count (more than one is an error for nvcc) }.
 *     insert: after the return type (prefix " "), where the CUDA guide
 *     writes it (`__global__ void __launch_bounds__(256) k(...)`); none for
 *     a function without a return type (a constructor is no kernel).
 *   fn:params() entries also carry: name_span, type_span (the TYPE node),
 *     base_span (the type without cv, restrict, '*' and '&'), stars ('*' in
 *     the declarator), const_span (the `const` of the base type, the one
 *     before the first '*', + remove), restrict_span (+ remove),
 *     const_insert (before the base type, suffix " "; absent when
 *     const_span is there), restrict_insert (before the name, suffix " ",
 *     or after the last '*' of an unnamed one, prefix " "; absent when
 *     restricted or no pointer). `const` stays true for a const anywhere.
 *   node:template_args() -> { node, whole = span "<...>", args = { span +
 *     node + int... } } for a call, a launch (of k<T, 8>), a template-id or
 *     a template_args node; nil if none.
 *   node:template_params() -> { node (the template header), whole = span,
 *     params = { { node, kind = "type" | "value", type = span, name = span,
 *     default = span + int, default_insert (no default: ` = X` after the
 *     name, prefix " = ") } } } for a template header or the function,
 *     struct or declaration it heads; nil if none.
 *   stmt:pragmas() -> { pragma nodes }, insert: the #pragma lines right
 *     before the statement (only trivia between; statements, functions and
 *     declarations have them, not their first expression or type),
 *     wherever the parser put them, and where a new pragma line goes: at the start of the
 *     statement's line with its indentation (prefix = the indentation,
 *     suffix "\n"), or, when the statement does not begin its line,
 *     just before it (prefix "\n", suffix "\n").
 *   pragma:pragma_info() -> { node, name = span (the word after "pragma"),
 *     args = span, directive = span, line = span (delete it to drop the
 *     pragma), unroll, count = span + int (#pragma unroll N; "(N)" kept
 *     whole), count_insert (an unroll without N: prefix " ") }.
 *   stmt:unroll() -> the pragma_info of the last #pragma unroll in
 *     stmt:pragmas(), or nil; and the same insert.
 *   unit:declarations() -> { declaration... } of the DECL items at the top
 *     level, inside extern "C" { } and namespaces; decl:declaration() and
 *     decl_stmt:declaration() give one for any declaration:
 *     declaration = { node, template (node, for template <...> decls),
 *       alias (typedef/using: no type or declarators), qualifiers = { span +
 *       remove... } (__shared__ __constant__ __device__ __managed__ static
 *       constexpr extern inline const volatile), and the booleans shared
 *       constant device managed static constexpr extern inline const
 *       volatile, type = span (the TYPE node, qualifiers included), base =
 *       span, qualifier_insert (before the type, suffix " "), declarators =
 *       { { node, name = span, stars, dims = { span + int... } (an empty
 *       span inside [] for `x[]`), init = span + int } } }. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "lua/newtype.h"
#include "lua/scratch.h"
#include "lua/source.h"
#include "lua/source_edit.h"
#include "source/source.h"

#define UNIT_MT "kl.SourceUnit"
#define NODE_MT "kl.SourceNode"

typedef struct {
  kl_unit *u; /* NULL once closed */
} unit_box;

typedef struct {
  uint32_t id;
} node_box;

/* ---- unit ----------------------------------------------------------------------- */

static unit_box *check_unit_box(lua_State *L, int i) { return luaL_checkudata(L, i, UNIT_MT); }

static kl_unit *check_unit(lua_State *L, int i) {
  unit_box *b = check_unit_box(L, i);
  if (!b->u) luaL_argerror(L, i, "source unit is closed");
  return b->u;
}

static int unit_gc(lua_State *L) {
  unit_box *b = check_unit_box(L, 1);
  kl_unit_free(b->u);
  b->u = NULL;
  return 0;
}

/* Pushes a node userdata for id of the unit at stack index ui. */
static void push_node(lua_State *L, int ui, uint32_t id) {
  ui = lua_absindex(L, ui);
  node_box *n = lua_newuserdatauv(L, sizeof *n, 1);
  n->id = id;
  lua_pushvalue(L, ui);
  lua_setiuservalue(L, -2, 1);
  luaL_setmetatable(L, NODE_MT);
}

static void push_node_or_nil(lua_State *L, int ui, uint32_t id) {
  if (id == KL_NONE) lua_pushnil(L);
  else push_node(L, ui, id);
}

/* Checks a node argument; leaves its unit userdata on the stack top. */
static kl_unit *check_node(lua_State *L, int i, uint32_t *id) {
  node_box *n = luaL_checkudata(L, i, NODE_MT);
  lua_getiuservalue(L, i, 1);
  unit_box *b = lua_touserdata(L, -1);
  if (!b || !b->u) luaL_argerror(L, i, "the node's source unit is closed");
  *id = n->id;
  return b->u;
}

static void set_str(lua_State *L, const char *k, const char *s, size_t n) {
  lua_pushlstring(L, s, n);
  lua_setfield(L, -2, k);
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static void set_bool(lua_State *L, const char *k, int v) {
  lua_pushboolean(L, v);
  lua_setfield(L, -2, k);
}

/* A diagnostic's text is its range's first DIAG_TEXT_MAX bytes: an opaque
 * region may be the whole file, and the table must stay small. */
#define DIAG_TEXT_MAX 256

static void push_diagnostics(lua_State *L, const kl_unit *u) {
  lua_createtable(L, (int)u->ndiags, 0);
  for (uint32_t i = 0; i < u->ndiags; i++) {
    const kl_diag *d = &u->diags[i];
    lua_createtable(L, 0, 8);
    lua_pushstring(L, d->id);
    lua_setfield(L, -2, "id");
    if (strcmp(d->id, "KLS006") == 0) {
      lua_pushfstring(L, "%d more diagnostics suppressed (at most %d of each id are kept)",
                      (int)u->ndiags_suppressed, (int)KL_SOURCE_DIAG_CAP);
      lua_setfield(L, -2, "message");
      set_int(L, "suppressed", u->ndiags_suppressed);
    } else {
      lua_pushstring(L, d->message);
      lua_setfield(L, -2, "message");
    }
    set_int(L, "line", d->line);
    set_int(L, "col", d->col);
    uint32_t tb = d->tok_begin < u->ntokens ? d->tok_begin : u->ntokens - 1;
    uint32_t last = d->tok_end > tb ? d->tok_end - 1 : tb;
    if (last >= u->ntokens) last = u->ntokens - 1;
    uint32_t b = u->tokens[tb].off;
    uint32_t e = u->tokens[last].off + u->tokens[last].len;
    if (e < b) e = b;
    set_int(L, "len", e - b);
    set_str(L, "text", u->src + b, e - b < DIAG_TEXT_MAX ? e - b : DIAG_TEXT_MAX);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
}

static int source_parse(lua_State *L) {
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  const char *name = luaL_optstring(L, 2, "<input>");
  unit_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->u = NULL; /* closed state first, then acquire */
  luaL_setmetatable(L, UNIT_MT);
  b->u = kl_source_parse(text, len, name);
  if (!b->u) return luaL_error(L, "kl.source: out of memory (or input of 4 GiB or more)");
  push_diagnostics(L, b->u);
  return 2;
}

/* tostring(unit): the text rebuilt token by token (trivia, then text),
 * written straight into a Lua buffer. */
static int unit_tostring(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  /* When the tokens' pieces tile one run of the source, in order, their
   * concatenation is that run: push it in one copy instead of staging it
   * in a buffer (the check is the same walk kl_unit_print_to makes). */
  uint32_t at = u->ntokens ? u->tokens[0].trivia_off : 0;
  uint32_t i = 0;
  for (; i < u->ntokens; i++) {
    const kl_token *t = &u->tokens[i];
    if (t->trivia_off != at || t->off != at + t->trivia_len) break;
    at = t->off + t->len;
  }
  if (i == u->ntokens) {
    uint32_t first = u->ntokens ? u->tokens[0].trivia_off : 0;
    lua_pushlstring(L, u->src + first, at - first);
    return 1;
  }
  size_t total = kl_unit_print_size(u);
  luaL_Buffer b;
  char *w = luaL_buffinitsize(L, &b, total ? total : 1);
  luaL_pushresultsize(&b, kl_unit_print_to(u, w));
  return 1;
}

static int unit_root(lua_State *L) {
  check_unit(L, 1);
  push_node(L, 1, 0);
  return 1;
}

static int unit_functions(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  uint32_t n;
  const uint32_t *ids = kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &n);
  lua_createtable(L, (int)n, 0);
  for (uint32_t i = 0; i < n; i++) {
    push_node(L, 1, ids[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int unit_nodes(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  const char *kind = luaL_checkstring(L, 2);
  kl_node_kind k = kl_kind_from_name(kind);
  if (k == KL_N__COUNT) return luaL_argerror(L, 2, "unknown node kind");
  uint32_t n;
  const uint32_t *ids = kl_unit_nodes_of_kind(u, k, &n);
  lua_createtable(L, (int)n, 0);
  for (uint32_t i = 0; i < n; i++) {
    push_node(L, 1, ids[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* Fills mask[] from a kind name or a list of kind names at index i;
 * returns 0 when there is no filter. */
static int kind_mask(lua_State *L, int i, uint8_t mask[KL_N__COUNT]) {
  memset(mask, 0, KL_N__COUNT);
  if (lua_isnoneornil(L, i)) return 0;
  if (lua_type(L, i) == LUA_TSTRING) {
    kl_node_kind k = kl_kind_from_name(lua_tostring(L, i));
    if (k == KL_N__COUNT) luaL_argerror(L, i, "unknown node kind");
    mask[k] = 1;
    return 1;
  }
  luaL_checktype(L, i, LUA_TTABLE);
  lua_Integer n = luaL_len(L, i);
  for (lua_Integer j = 1; j <= n; j++) {
    lua_rawgeti(L, i, j);
    const char *name = lua_tostring(L, -1);
    kl_node_kind k = name ? kl_kind_from_name(name) : KL_N__COUNT;
    if (k == KL_N__COUNT) luaL_argerror(L, i, "unknown node kind in list");
    mask[k] = 1;
    lua_pop(L, 1);
  }
  return 1;
}

/* iterator state: upvalue 1 = unit userdata, 2 = next id, 3 = end, 4 = mask */
static int walk_next(lua_State *L) {
  unit_box *b = lua_touserdata(L, lua_upvalueindex(1));
  if (!b->u) return luaL_error(L, "source unit is closed");
  lua_Integer next = lua_tointeger(L, lua_upvalueindex(2));
  lua_Integer end = lua_tointeger(L, lua_upvalueindex(3));
  const uint8_t *mask = lua_touserdata(L, lua_upvalueindex(4));
  while (next < end) {
    uint32_t id = (uint32_t)next++;
    if (mask && !mask[b->u->nodes[id].kind]) continue;
    lua_pushinteger(L, next);
    lua_replace(L, lua_upvalueindex(2));
    push_node(L, lua_upvalueindex(1), id);
    return 1;
  }
  lua_pushinteger(L, next);
  lua_replace(L, lua_upvalueindex(2));
  return 0;
}

static int push_walk(lua_State *L, int unit_index, const kl_unit *u, uint32_t root, int kinds) {
  uint8_t mask[KL_N__COUNT];
  int filtered = kind_mask(L, kinds, mask);
  lua_pushvalue(L, unit_index);
  lua_pushinteger(L, root);
  lua_pushinteger(L, u->nodes[root].subtree_end);
  if (filtered) {
    uint8_t *m = lua_newuserdatauv(L, KL_N__COUNT, 0);
    memcpy(m, mask, KL_N__COUNT);
  } else {
    lua_pushnil(L);
  }
  lua_pushcclosure(L, walk_next, 4);
  return 1;
}

static int unit_walk(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  return push_walk(L, 1, u, 0, 2);
}

static int unit_constants(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  uint32_t n;
  const kl_const *cs = kl_unit_constants(u, &n);
  static const char *const kinds[] = {"define", "constexpr", "const", "template_param"};
  lua_createtable(L, (int)n, 0);
  for (uint32_t i = 0; i < n; i++) {
    const kl_const *c = &cs[i];
    lua_createtable(L, 0, 5);
    set_str(L, "name", u->src + c->name_off, c->name_len);
    set_str(L, "expr", u->src + c->expr_off, c->expr_len);
    lua_pushstring(L, kinds[c->kind]);
    lua_setfield(L, -2, "kind");
    set_int(L, "line", c->line);
    if (c->known) set_int(L, "value", c->value);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* unit:constant(name) -> value | nil: the last known definition. */
static int unit_constant(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  size_t len;
  const char *name = luaL_checklstring(L, 2, &len);
  uint32_t n;
  const kl_const *cs = kl_unit_constants(u, &n);
  for (uint32_t i = n; i-- > 0;) {
    if (cs[i].name_len == len && memcmp(u->src + cs[i].name_off, name, len) == 0) {
      if (!cs[i].known) break;
      lua_pushinteger(L, cs[i].value);
      return 1;
    }
  }
  lua_pushnil(L);
  return 1;
}

static int unit_annotations(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  lua_createtable(L, (int)u->nannotations, 0);
  for (uint32_t i = 0; i < u->nannotations; i++) {
    lua_createtable(L, 0, 2);
    set_str(L, "text", u->src + u->annotations[i].off, u->annotations[i].len);
    set_int(L, "line", u->annotations[i].line);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

static int unit_diagnostics(lua_State *L) {
  push_diagnostics(L, check_unit(L, 1));
  return 1;
}

static const char *tok_kind_name(uint8_t k) {
  static const char *const names[] = {"eof",   "ident", "keyword", "int", "float",
                                      "char",  "string", "punct",  "pp",  "invalid"};
  return k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* unit:tokens([first [, last]]) -> { {kind, text, trivia, line, col}, ... }
 * with 1-based token indices; the final EOF token carries the file's tail. */
static int unit_tokens(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  lua_Integer first = luaL_optinteger(L, 2, 1);
  lua_Integer last = luaL_optinteger(L, 3, (lua_Integer)u->ntokens);
  if (first < 1) first = 1;
  if (last > (lua_Integer)u->ntokens) last = u->ntokens;
  lua_createtable(L, first <= last ? (int)(last - first + 1) : 0, 0);
  for (lua_Integer i = first; i <= last; i++) {
    const kl_token *t = &u->tokens[i - 1];
    lua_createtable(L, 0, 5);
    lua_pushstring(L, tok_kind_name(t->kind));
    lua_setfield(L, -2, "kind");
    set_str(L, "text", u->src + t->off, t->len);
    set_str(L, "trivia", u->src + t->trivia_off, t->trivia_len);
    set_int(L, "line", t->line);
    set_int(L, "col", t->col);
    lua_rawseti(L, -2, i - first + 1);
  }
  return 1;
}

static int unit_has_word(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  size_t len;
  const char *w = luaL_checklstring(L, 2, &len);
  lua_pushboolean(L, kl_unit_has_word(u, w, len));
  return 1;
}

/* ---- affine forms as tables -------------------------------------------------------- */

static const char *var_name(uint8_t v) {
  static const char *const names[] = {"threadIdx.x", "threadIdx.y", "threadIdx.z", "blockIdx.x",
                                      "blockIdx.y",  "blockIdx.z",  "loop",        "const"};
  return v < sizeof names / sizeof names[0] ? names[v] : "?";
}

/* The coefficient of the terms picked by (var, loop) as text: "3", "N",
 * "2*N + blockDim.x". */
static void push_coef_text(lua_State *L, const kl_unit *u, const kl_affine *f, uint8_t var,
                           uint32_t loop) {
  luaL_Buffer b;
  luaL_buffinit(L, &b);
  int first = 1;
  for (uint32_t i = 0; i < f->nterms; i++) {
    const kl_aterm *t = &f->terms[i];
    if (t->var != var || (var == KL_AV_LOOP && t->loop_node != loop)) continue;
    if (!first) luaL_addstring(&b, " + ");
    first = 0;
    if (t->coef != 1 || !t->nsyms) {
      lua_pushfstring(L, "%I", (lua_Integer)t->coef);
      luaL_addvalue(&b);
      if (t->nsyms) luaL_addchar(&b, '*');
    }
    for (uint32_t s = 0; s < t->nsyms; s++) {
      if (s) luaL_addchar(&b, '*');
      luaL_addlstring(&b, u->src + t->syms[s].off, t->syms[s].len);
    }
  }
  if (first) luaL_addchar(&b, '0');
  luaL_pushresult(&b);
}

static void push_affine(lua_State *L, int ui, const kl_unit *u, const kl_affine *f) {
  lua_createtable(L, 0, 4);
  lua_createtable(L, (int)f->nterms, 0);
  int64_t constant = 0;
  for (uint32_t i = 0; i < f->nterms; i++) {
    const kl_aterm *t = &f->terms[i];
    if (t->var == KL_AV_CONST && !t->nsyms) constant += t->coef;
    lua_createtable(L, 0, 5);
    if (t->var == KL_AV_LOOP) {
      set_str(L, "var", u->src + t->var_off, t->var_len);
      push_node(L, ui, t->loop_node);
      lua_setfield(L, -2, "loop");
    } else {
      lua_pushstring(L, var_name(t->var));
      lua_setfield(L, -2, "var");
    }
    set_int(L, "coef", t->coef);
    lua_createtable(L, (int)t->nsyms, 0);
    for (uint32_t s = 0; s < t->nsyms; s++) {
      lua_pushlstring(L, u->src + t->syms[s].off, t->syms[s].len);
      lua_rawseti(L, -2, (lua_Integer)s + 1);
    }
    lua_setfield(L, -2, "syms");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "terms");
  set_int(L, "const", constant);
  lua_createtable(L, (int)f->nrest, 0);
  for (uint32_t i = 0; i < f->nrest && i < 8; i++) {
    push_node(L, ui, f->rest[i]);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_setfield(L, -2, "rest");
  set_bool(L, "affine", f->nrest == 0);
  push_coef_text(L, u, f, KL_AV_THREAD_X, KL_NONE);
  lua_setfield(L, -2, "tx_coef");
}

static const char *stride_kind_name(uint8_t k) {
  switch (k) {
  case KL_STRIDE_ZERO: return "zero";
  case KL_STRIDE_CONST: return "const";
  case KL_STRIDE_SYMBOLIC: return "symbolic";
  default: return "unknown";
  }
}

/* Pushes a stride as a number (zero/const), its text (symbolic) or
 * "unknown". */
static void push_stride(lua_State *L, const kl_unit *u, const kl_affine *f, uint8_t kind,
                        int64_t v, uint8_t var, uint32_t loop) {
  if (kind == KL_STRIDE_ZERO || kind == KL_STRIDE_CONST) lua_pushinteger(L, v);
  else if (kind == KL_STRIDE_SYMBOLIC) push_coef_text(L, u, f, var, loop);
  else lua_pushstring(L, "unknown");
}

static uint32_t enclosing_function(const kl_unit *u, uint32_t n) {
  for (; n != KL_NONE; n = u->nodes[n].parent)
    if (u->nodes[n].kind == KL_N_FUNCTION) return n;
  return KL_NONE;
}

/* The function-node argument 2 of an access query on unit u. */
static uint32_t check_function_arg(lua_State *L, const kl_unit *u) {
  uint32_t fn;
  kl_unit *fu = check_node(L, 2, &fn);
  lua_pop(L, 1);
  if (fu != u) luaL_argerror(L, 2, "function node of another unit");
  if (u->nodes[fn].kind != KL_N_FUNCTION) luaL_argerror(L, 2, "not a function node");
  return fn;
}

/* Frees the access list in the scratch box at boxi now and removes the box
 * from the stack. */
static void free_accesses(lua_State *L, int boxi) {
  kl_scratch_free(lua_touserdata(L, boxi));
  lua_remove(L, boxi);
}

/* Pushes a table for one access with the fields both queries give: node,
 * text, line, write, tx_stride_kind, tx_stride, loop, loop_stride (inside
 * a loop) and form. nfields: the size hint, the caller's fields included. */
static void push_access(lua_State *L, const kl_unit *u, const kl_access *a, int nfields) {
  lua_createtable(L, 0, nfields);
  push_node(L, 1, a->index_node);
  lua_setfield(L, -2, "node");
  size_t tl;
  const char *t = kl_node_text(u, a->index_node, &tl);
  set_str(L, "text", t, tl);
  set_int(L, "line", u->tokens[u->nodes[a->index_node].tok_begin].line);
  set_bool(L, "write", a->is_write);
  lua_pushstring(L, stride_kind_name(a->tx_stride_kind));
  lua_setfield(L, -2, "tx_stride_kind");
  push_stride(L, u, &a->form, a->tx_stride_kind, a->tx_stride, KL_AV_THREAD_X, KL_NONE);
  lua_setfield(L, -2, "tx_stride");
  push_node_or_nil(L, 1, a->loop_node);
  lua_setfield(L, -2, "loop");
  if (a->loop_node != KL_NONE) {
    push_stride(L, u, &a->form, a->loop_stride_kind, a->loop_stride, KL_AV_LOOP, a->loop_node);
    lua_setfield(L, -2, "loop_stride");
  }
  push_affine(L, 1, u, &a->form);
  lua_setfield(L, -2, "form");
}

/* Appends the access table on the stack top to the accesses list of the
 * entry at index entry, and leaves the stack at entry. */
static void append_access(lua_State *L, int entry) {
  lua_getfield(L, entry, "accesses");
  lua_pushvalue(L, -2);
  lua_rawseti(L, -2, luaL_len(L, -2) + 1);
  lua_settop(L, entry);
}

/* unit:access_patterns(fn) -> { [param name] = { name, accesses = {...},
 *   coalesced, tx_stride, loop_reuse, reads, writes } } */
static int unit_access_patterns(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  uint32_t fn = check_function_arg(L, u);
  uint32_t n;
  kl_scratch *box = kl_scratch_new(L); /* the list, should anything below raise */
  int boxi = lua_gettop(L);
  const kl_access *as = kl_scratch_adopt(box, kl_access_patterns(u, fn, &n));
  lua_newtable(L);
  int result = lua_gettop(L);
  for (uint32_t i = 0; i < n; i++) {
    const kl_access *a = &as[i];
    kl_param_info pi;
    kl_param_info_get(u, a->param, &pi);
    const kl_token *nt = &u->tokens[pi.name_tok];
    lua_pushlstring(L, u->src + nt->off, nt->len);
    if (lua_rawget(L, result) == LUA_TNIL) {
      lua_pop(L, 1);
      lua_createtable(L, 0, 8);
      set_str(L, "name", u->src + nt->off, nt->len);
      push_node(L, 1, a->param);
      lua_setfield(L, -2, "param");
      lua_newtable(L);
      lua_setfield(L, -2, "accesses");
      set_bool(L, "coalesced", 1);
      set_bool(L, "loop_reuse", 0);
      set_bool(L, "reads", 0);
      set_bool(L, "writes", 0);
      lua_pushlstring(L, u->src + nt->off, nt->len);
      lua_pushvalue(L, -2);
      lua_rawset(L, result);
    }
    int entry = lua_gettop(L);
    push_access(L, u, a, 12);
    set_bool(L, "coalesced", a->coalesced);
    set_int(L, "vector_width", a->vector_width);
    if (a->loop_node != KL_NONE) {
      lua_pushstring(L, stride_kind_name(a->loop_stride_kind));
      lua_setfield(L, -2, "loop_stride_kind");
    }
    set_bool(L, "loop_invariant", a->loop_invariant);
    append_access(L, entry);
    /* the per-parameter summary */
    if (!a->coalesced) set_bool(L, "coalesced", 0);
    if (a->loop_invariant) set_bool(L, "loop_reuse", 1);
    set_bool(L, a->is_write ? "writes" : "reads", 1);
    lua_getfield(L, entry, "tx_stride");
    int have = !lua_isnil(L, -1);
    lua_pop(L, 1);
    if (!have) {
      push_stride(L, u, &a->form, a->tx_stride_kind, a->tx_stride, KL_AV_THREAD_X, KL_NONE);
      lua_setfield(L, entry, "tx_stride");
    }
    lua_settop(L, result);
  }
  free_accesses(L, boxi);
  return 1;
}

/* unit:shared_accesses(fn) -> { [array name] = { name, decl, elem_bytes,
 *   bank_ways (worst), accesses = { {node, text, line, write, tx_stride,
 *   tx_stride_kind, bank_ways, loop, loop_stride, form}, ... } } } */
static int unit_shared_accesses(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  uint32_t fn = check_function_arg(L, u);
  uint32_t n;
  kl_scratch *box = kl_scratch_new(L); /* the list, should anything below raise */
  int boxi = lua_gettop(L);
  const kl_access *as = kl_scratch_adopt(box, kl_shared_accesses(u, fn, &n));
  lua_newtable(L);
  int result = lua_gettop(L);
  for (uint32_t i = 0; i < n; i++) {
    const kl_access *a = &as[i];
    uint32_t name = kl_node_field(u, a->param, KL_F_NAME);
    size_t nl;
    const char *nt = kl_node_text(u, name, &nl);
    lua_pushlstring(L, nt, nl);
    if (lua_rawget(L, result) == LUA_TNIL) {
      lua_pop(L, 1);
      lua_createtable(L, 0, 6);
      set_str(L, "name", nt, nl);
      push_node(L, 1, a->param);
      lua_setfield(L, -2, "decl");
      set_int(L, "elem_bytes", a->elem_bytes);
      set_int(L, "bank_ways", a->bank_ways);
      lua_newtable(L);
      lua_setfield(L, -2, "accesses");
      lua_pushlstring(L, nt, nl);
      lua_pushvalue(L, -2);
      lua_rawset(L, result);
    }
    int entry = lua_gettop(L);
    push_access(L, u, a, 10);
    set_int(L, "bank_ways", a->bank_ways);
    append_access(L, entry);
    /* the worst bank conflict of the array; an unknown stride (0) wins */
    lua_getfield(L, entry, "bank_ways");
    lua_Integer worst = lua_tointeger(L, -1);
    lua_pop(L, 1);
    if (worst != 0 && (a->bank_ways == 0 || a->bank_ways > worst))
      set_int(L, "bank_ways", a->bank_ways);
    lua_settop(L, result);
  }
  free_accesses(L, boxi);
  return 1;
}

/* ---- node ------------------------------------------------------------------------ */

static int node_text(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  size_t n;
  const char *s = kl_node_text(u, id, &n);
  lua_pushlstring(L, s, n);
  return 1;
}

/* node:range() -> start_line, start_col, end_line, end_col, first_byte,
 * last_byte: src:sub(first_byte, last_byte) == node:text(); end_col is
 * one past the last character. */
static int node_range(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  const kl_token *t = &u->tokens[u->nodes[id].tok_begin];
  uint32_t el, ec, b, e;
  kl_node_end_pos(u, id, &el, &ec);
  kl_node_span(u, id, &b, &e);
  lua_pushinteger(L, t->line);
  lua_pushinteger(L, t->col);
  lua_pushinteger(L, el);
  lua_pushinteger(L, ec);
  lua_pushinteger(L, (lua_Integer)b + 1);
  lua_pushinteger(L, e);
  return 6;
}

/* node:children() -> { nodes }, { field names } */
static int node_children(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  int ui = lua_gettop(L);
  const kl_node *nd = &u->nodes[id];
  lua_createtable(L, (int)nd->child_count, 0);
  lua_createtable(L, (int)nd->child_count, 0);
  for (uint32_t i = 0; i < nd->child_count; i++) {
    push_node(L, ui, kl_child(u, id, i));
    lua_rawseti(L, -3, (lua_Integer)i + 1);
    lua_pushstring(L, kl_field_name(kl_child_field(u, id, i)));
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 2;
}

static int node_parent(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  push_node_or_nil(L, -1, u->nodes[id].parent);
  return 1;
}

static int node_field(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  int ui = lua_gettop(L);
  kl_field f = kl_field_from_name(luaL_checkstring(L, 2));
  if (f == KL_F__COUNT) return luaL_argerror(L, 2, "unknown field name");
  push_node_or_nil(L, ui, kl_node_field(u, id, f));
  return 1;
}

/* node:token_range() -> first, last: 1-based indices for unit:tokens() */
static int node_token_range(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  lua_pushinteger(L, (lua_Integer)u->nodes[id].tok_begin + 1);
  lua_pushinteger(L, (lua_Integer)u->nodes[id].tok_end);
  return 2;
}

static int node_walk(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  return push_walk(L, lua_gettop(L), u, id, 2);
}

/* pragma:pragma_target() -> the statement a #pragma applies to, or nil */
static int node_pragma_target(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  int ui = lua_gettop(L);
  push_node_or_nil(L, ui, kl_pragma_target(u, id));
  return 1;
}

static int node_equals(lua_State *L) {
  uint32_t a, b;
  kl_unit *ua = check_node(L, 1, &a);
  kl_unit *ub = check_node(L, 2, &b);
  lua_pushboolean(L, kl_node_equal(ua, a, ub, b));
  return 1;
}

static int node_hash(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  lua_pushinteger(L, (lua_Integer)kl_node_hash(u, id));
  return 1;
}

static uint32_t check_function(lua_State *L, kl_unit *u, uint32_t id) {
  if (u->nodes[id].kind != KL_N_FUNCTION) luaL_argerror(L, 1, "not a function node");
  return id;
}

static int fn_params(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  int ui = lua_gettop(L);
  check_function(L, u, id);
  uint32_t pl = kl_node_field(u, id, KL_F_PARAMS);
  uint32_t n = pl == KL_NONE ? 0 : u->nodes[pl].child_count;
  lua_createtable(L, (int)n, 0);
  for (uint32_t i = 0, k = 0; i < n; i++) {
    kl_param_info pi;
    /* a parameter list may hold preprocessor lines (#if ... #endif) */
    if (!kl_param_info_get(u, kl_child(u, pl, i), &pi)) continue;
    lua_createtable(L, 0, 18);
    push_node(L, ui, pi.node);
    lua_setfield(L, -2, "node");
    if (pi.type != KL_NONE) {
      size_t tl;
      const char *t = kl_node_text(u, pi.type, &tl);
      set_str(L, "type", t, tl);
    }
    if (pi.name_tok != KL_NONE)
      set_str(L, "name", u->src + u->tokens[pi.name_tok].off, u->tokens[pi.name_tok].len);
    if (pi.base_tok_begin != KL_NONE) {
      uint32_t b = u->tokens[pi.base_tok_begin].off;
      const kl_token *last = &u->tokens[pi.base_tok_end - 1];
      set_str(L, "base", u->src + b, last->off + last->len - b);
    }
    set_bool(L, "const", pi.is_const);
    set_bool(L, "restrict", pi.is_restrict);
    set_int(L, "pointer_depth", pi.pointer_depth);
    set_bool(L, "reference", pi.is_reference);
    kl_lua_push_param_sites(L, u, pi.node);
    lua_rawseti(L, -2, (lua_Integer)++k);
  }
  return 1;
}

static int fn_body(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  int ui = lua_gettop(L);
  check_function(L, u, id);
  push_node_or_nil(L, ui, kl_node_field(u, id, KL_F_BODY));
  return 1;
}

static int fn_name(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  check_function(L, u, id);
  kl_function_info fi;
  kl_function_info_get(u, id, &fi);
  if (fi.name_tok == KL_NONE) return 0;
  lua_pushlstring(L, u->src + u->tokens[fi.name_tok].off, u->tokens[fi.name_tok].len);
  return 1;
}

static int fn_info(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  int ui = lua_gettop(L);
  check_function(L, u, id);
  kl_function_info fi;
  kl_function_info_get(u, id, &fi);
  lua_createtable(L, 0, 14);
  if (fi.name_tok != KL_NONE)
    set_str(L, "name", u->src + u->tokens[fi.name_tok].off, u->tokens[fi.name_tok].len);
  set_bool(L, "global", fi.qualifiers & KL_FQ_GLOBAL);
  set_bool(L, "device", fi.qualifiers & KL_FQ_DEVICE);
  set_bool(L, "host", fi.qualifiers & KL_FQ_HOST);
  set_bool(L, "forceinline", fi.qualifiers & KL_FQ_FORCEINLINE);
  set_bool(L, "static", fi.qualifiers & KL_FQ_STATIC);
  set_bool(L, "inline", fi.qualifiers & KL_FQ_INLINE);
  set_bool(L, "extern_c", fi.qualifiers & KL_FQ_EXTERN_C);
  set_bool(L, "template", fi.qualifiers & KL_FQ_TEMPLATE);
  if (fi.launch_bounds_tok != KL_NONE) {
    const kl_token *open = &u->tokens[fi.launch_bounds_tok];
    if (open->match != KL_NONE) {
      const kl_token *close = &u->tokens[open->match];
      set_str(L, "launch_bounds", u->src + open->off + 1, close->off - open->off - 1);
    }
  }
  push_node_or_nil(L, ui, fi.template_node);
  lua_setfield(L, -2, "template_node");
  push_node_or_nil(L, ui, fi.return_type);
  lua_setfield(L, -2, "return_type");
  set_bool(L, "prototype", fi.body == KL_NONE);
  return 1;
}

static int node_affine(lua_State *L) {
  uint32_t id;
  int has_fn = !lua_isnoneornil(L, 2);
  lua_settop(L, 2);
  kl_unit *u = check_node(L, 1, &id);
  int ui = lua_gettop(L);
  uint32_t fn;
  if (!has_fn) {
    fn = enclosing_function(u, id);
  } else {
    kl_unit *fu = check_node(L, 2, &fn);
    lua_pop(L, 1);
    if (fu != u || u->nodes[fn].kind != KL_N_FUNCTION)
      return luaL_argerror(L, 2, "a function node of the same unit expected");
  }
  if (fn == KL_NONE) return luaL_argerror(L, 1, "node is not inside a function");
  kl_affine f;
  kl_affine_of(u, fn, id, &f);
  push_affine(L, ui, u, &f);
  return 1;
}

static int node_index(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  int ui = lua_gettop(L);
  const char *k = luaL_checkstring(L, 2);
  const kl_node *nd = &u->nodes[id];
  if (strcmp(k, "kind") == 0) {
    lua_pushstring(L, kl_kind_name((kl_node_kind)nd->kind));
  } else if (strcmp(k, "id") == 0) {
    lua_pushinteger(L, id);
  } else if (strcmp(k, "op") == 0) {
    if (nd->op_tok == KL_NONE) return 0;
    const kl_token *t = &u->tokens[nd->op_tok];
    lua_pushlstring(L, u->src + t->off, t->len);
  } else if (strcmp(k, "line") == 0) {
    lua_pushinteger(L, u->tokens[nd->tok_begin].line);
  } else if (strcmp(k, "col") == 0) {
    lua_pushinteger(L, u->tokens[nd->tok_begin].col);
  } else if (strcmp(k, "unit") == 0) {
    lua_pushvalue(L, ui);
  } else if (strcmp(k, "truncated") == 0) {
    lua_pushboolean(L, nd->flags & KL_NF_TRUNCATED);
  } else {
    kl_pushmethod(L, 1, k);
  }
  return 1;
}

static int node_eq(lua_State *L) {
  node_box *a = luaL_checkudata(L, 1, NODE_MT), *b = luaL_checkudata(L, 2, NODE_MT);
  lua_getiuservalue(L, 1, 1);
  lua_getiuservalue(L, 2, 1);
  lua_pushboolean(L, a->id == b->id && lua_rawequal(L, -1, -2));
  return 1;
}

static int node_tostring(lua_State *L) {
  uint32_t id;
  kl_unit *u = check_node(L, 1, &id);
  size_t n;
  const char *s = kl_node_text(u, id, &n);
  lua_pushfstring(L, "%s@%d:%d: ", kl_kind_name((kl_node_kind)u->nodes[id].kind),
                  (int)u->tokens[u->nodes[id].tok_begin].line,
                  (int)u->tokens[u->nodes[id].tok_begin].col);
  lua_pushlstring(L, s, n > 60 ? 60 : n);
  lua_concat(L, 2);
  return 1;
}

static int unit_index(lua_State *L) {
  kl_unit *u = check_unit(L, 1);
  const char *k = luaL_checkstring(L, 2);
  if (strcmp(k, "name") == 0) lua_pushstring(L, u->name);
  else if (strcmp(k, "ntokens") == 0) lua_pushinteger(L, u->ntokens);
  else if (strcmp(k, "nnodes") == 0) lua_pushinteger(L, u->nnodes);
  else {
    kl_pushmethod(L, 1, k);
  }
  return 1;
}

static int unit_len(lua_State *L) {
  lua_pushinteger(L, check_unit(L, 1)->len);
  return 1;
}

static const luaL_Reg unit_methods[] = {
    {"root", unit_root},
    {"functions", unit_functions},
    {"nodes", unit_nodes},
    {"walk", unit_walk},
    {"constants", unit_constants},
    {"constant", unit_constant},
    {"annotations", unit_annotations},
    {"diagnostics", unit_diagnostics},
    {"has_word", unit_has_word},
    {"tokens", unit_tokens},
    {"access_patterns", unit_access_patterns},
    {"shared_accesses", unit_shared_accesses},
    {"close", unit_gc},
    {NULL, NULL},
};

static const luaL_Reg unit_meta[] = {
    {"__gc", unit_gc},
    {"__close", unit_gc},
    {"__tostring", unit_tostring},
    {"__index", unit_index},
    {"__len", unit_len},
    {NULL, NULL},
};

static const luaL_Reg node_methods[] = {
    {"text", node_text},
    {"range", node_range},
    {"token_range", node_token_range},
    {"children", node_children},
    {"parent", node_parent},
    {"field", node_field},
    {"walk", node_walk},
    {"equals", node_equals},
    {"hash", node_hash},
    {"params", fn_params},
    {"body", fn_body},
    {"name", fn_name},
    {"info", fn_info},
    {"affine", node_affine},
    {"pragma_target", node_pragma_target},
    {NULL, NULL},
};

static const luaL_Reg node_meta[] = {
    {"__index", node_index},
    {"__eq", node_eq},
    {"__tostring", node_tostring},
    {NULL, NULL},
};

static const luaL_Reg source_functions[] = {
    {"parse", source_parse},
    {NULL, NULL},
};

/* ---- for other bindings (engine/lua/source.h) ------------------------------------- */

kl_unit *kl_lua_push_unit(lua_State *L, const char *text, size_t len, const char *name) {
  unit_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  b->u = NULL;
  luaL_setmetatable(L, UNIT_MT);
  b->u = kl_source_parse(text, len, name);
  if (!b->u) luaL_error(L, "kl.source: out of memory (or input of 4 GiB or more)");
  return b->u;
}

kl_unit *kl_lua_check_unit(lua_State *L, int i) { return check_unit(L, i); }

void kl_lua_push_node(lua_State *L, int ui, uint32_t id) { push_node_or_nil(L, ui, id); }

kl_unit *kl_lua_check_node(lua_State *L, int i, uint32_t *id) { return check_node(L, i, id); }

int kl_lua_is_node(lua_State *L, int i) { return luaL_testudata(L, i, NODE_MT) != NULL; }

int luaopen_kl_source(lua_State *L) {
  kl_newtype(L, UNIT_MT, unit_meta, unit_methods);
  kl_addmethods(L, UNIT_MT, kl_source_edit_unit_methods);
  kl_newtype(L, NODE_MT, node_meta, node_methods);
  kl_addmethods(L, NODE_MT, kl_source_edit_node_methods);
  kl_scratch_open(L);
  luaL_newlib(L, source_functions);
  lua_pushinteger(L, KL_SOURCE_MAX_DEPTH);
  lua_setfield(L, -2, "max_depth");
  /* the names node.kind and node:field() accept, for discovery */
  lua_createtable(L, KL_N__COUNT, 0);
  for (int k = 0; k < KL_N__COUNT; k++) {
    lua_pushstring(L, kl_kind_name((kl_node_kind)k));
    lua_rawseti(L, -2, k + 1);
  }
  lua_setfield(L, -2, "kinds");
  lua_createtable(L, KL_F__COUNT, 0);
  for (int f = 0; f < KL_F__COUNT; f++) {
    lua_pushstring(L, kl_field_name((kl_field)f));
    lua_rawseti(L, -2, f + 1);
  }
  lua_setfield(L, -2, "fields");
  return 1;
}
