/* kl.match: code-shaped patterns over kl.source units (engine/match).
 *
 *   match.pattern(tbl) -> pattern     tbl from klineage.pattern.parse; the
 *                                     flat steps are compiled on first use
 *                                     and cached on the userdata
 *   pattern:compile() -> pattern      compile now (raises on a bad table)
 *   pattern:steps() -> { {op, text, slot, sort, ctx}, ... }
 *   pattern:find(unit, opts) -> matches, stats
 *   match.find_all({pattern...}, unit, opts) -> { matches... }, stats
 *   match.set({pattern...}) -> set; set:find_all(unit, opts): the same,
 *       with the dispatch lists built once for many units
 *       opts.prefilter (default true), opts.max_steps (work cap per
 *       attempt, default 20000), opts.max_total_steps (work cap for the
 *       whole find, default (1e6 + 64 per token) per pattern),
 *       opts.max_matches, opts.count (find_all: counts only)
 *   stats = { candidates, steps, matches, prefiltered, prefiltered_items,
 *       capped = attempts abandoned at a cap (their candidates may hold a
 *       match that was not found), stopped = true when the whole find hit
 *       max_total_steps and later candidates were never tried,
 *       max_steps, max_total_steps = the caps it ran under,
 *       dropped = matches found but not returned because their tables'
 *       texts would pass max_result_bytes (opts.max_result_bytes, default
 *       64 MiB + 16 bytes per byte of the unit: nested matches copy
 *       overlapping texts) }
 *       A rewrite whose search stopped returns nil, err (it would edit
 *       some sites and silently keep others).
 *   pattern:rewrite(unit, template, opts) -> text, edits | nil, err
 *       template = { text, uses = { {name, s, e} } } (klineage.pattern.template)
 *       opts.select = { match indices } (default: all matches)
 *   match.rewrite_all(unit, { {pattern, template, opts}, ... }) -> text, edits
 *       | nil, err: several rules' edits applied together (overlaps: err)
 *   match.splice(unit, { {begin, end, text} | {node [, text]} | {before, text}
 *       | {after, text}, ... }) -> text, edits | nil, err: several edits
 *       by byte range at once, the script as pattern:rewrite's
 *   match.diff(unit_a, unit_b) -> { {kind, a, b, a_range, b_range, a_at,
 *       b_at, node_kind}, ... }: a node-level edit script (GumTree-like,
 *       engine/match/diff.c); a_at / b_at = { byte, line, col }, where on
 *       the other side an inserted (a_at), deleted (b_at) or moved (both)
 *       node goes or was. For inverting a lineage step use
 *       klineage.pattern.stepdiff, whose hunks revert; this script describes a
 *       step node by node (what moved, what was updated)
 *   match.generalize({ node | {nodes...}, ... }) -> { text, holes }
 *   match.generalize_edits(befores, afters) -> { text, after_text, holes }
 *       a pattern and a template with shared metavariables, from edits
 *
 * A unit is a kl.source unit (or a string, parsed on the spot). Matches
 * carry kl.source node userdata, which keep their unit alive. The per-unit
 * match index is cached in a weak table keyed by the unit.
 *
 * Units and nodes are kl.source's userdata, reached through
 * engine/lua/source.h. */
#include <stdlib.h>
#include <string.h>

#include <lauxlib.h>
#include <lua.h>

#include "lua/source.h"
#include "lua/newtype.h"
#include "match/match.h"
#include "source/source.h"

#define PATTERN_MT "kl.Pattern"
#define INDEX_MT "kl.MatchIndex"
#define RESULTS_MT "kl.MatchResults"
#define REPS_MT "kl.MatchReplacements"
#define DIFF_MT "kl.MatchDiff"
#define GEN_MT "kl.MatchGeneralization"
#define SET_MT "kl.PatternSet"

int luaopen_kl_source(lua_State *L);


typedef struct {
  km_pattern *p; /* NULL until compiled */
} pattern_box;

typedef struct {
  km_index *ix;
  const kl_unit *u;
} index_box;

typedef struct {
  km_results r;
} results_box;

typedef struct {
  km_replacement *reps;
  uint32_t n, cap;
  km_edit_script script;
  char *text;
} reps_box;

/* ---- units, nodes, the index cache --------------------------------------------- */

/* The unit at stack index i (a string is parsed and replaced by its unit). */
static kl_unit *check_unit(lua_State *L, int i) {
  i = lua_absindex(L, i);
  if (lua_type(L, i) == LUA_TSTRING) {
    size_t len;
    const char *text = lua_tolstring(L, i, &len);
    kl_unit *u = kl_lua_push_unit(L, text, len, "<input>");
    lua_replace(L, i);
    return u;
  }
  return kl_lua_check_unit(L, i);
}

static void push_node(lua_State *L, int ui, uint32_t id) { kl_lua_push_node(L, ui, id); }

/* A node argument: its unit, with the unit userdata pushed on the stack. */
static kl_unit *check_node(lua_State *L, int i, uint32_t *id) { return kl_lua_check_node(L, i, id); }

static int index_gc(lua_State *L) {
  index_box *b = luaL_checkudata(L, 1, INDEX_MT);
  km_index_free(b->ix);
  b->ix = NULL;
  return 0;
}

static const km_index *unit_index(lua_State *L, int ui, const kl_unit *u) {
  ui = lua_absindex(L, ui);
  lua_getfield(L, LUA_REGISTRYINDEX, "kl.match.indexes");
  lua_pushvalue(L, ui);
  lua_rawget(L, -2);
  index_box *b = luaL_testudata(L, -1, INDEX_MT);
  if (b && b->ix && b->u == u) {
    lua_pop(L, 2);
    return b->ix;
  }
  lua_pop(L, 1);
  b = lua_newuserdatauv(L, sizeof *b, 0);
  b->ix = NULL;
  b->u = u;
  luaL_setmetatable(L, INDEX_MT);
  b->ix = km_index_new(u);
  if (!b->ix) luaL_error(L, "kl.match: out of memory");
  lua_pushvalue(L, ui);
  lua_pushvalue(L, -2);
  lua_rawset(L, -4);
  lua_pop(L, 2);
  return b->ix;
}

/* ---- small helpers ---------------------------------------------------------------- */

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static void set_str(lua_State *L, const char *k, const char *s, size_t n) {
  lua_pushlstring(L, s, n);
  lua_setfield(L, -2, k);
}

/* Line and column one past the last byte of token t. */
static void token_end_pos(const kl_unit *u, uint32_t t, uint32_t *line, uint32_t *col) {
  const kl_token *k = &u->tokens[t];
  uint32_t l = k->line, c = k->col;
  for (uint32_t i = 0; i < k->len; i++) {
    if (u->src[k->off + i] == '\n') l++, c = 1;
    else c++;
  }
  *line = l, *col = c;
}

/* Sets begin/end (1-based, inclusive), line/col, end_line/end_col and text
 * for the token range [t0, t1) of u; an empty range sits at t0. */
static void set_token_range(lua_State *L, const kl_unit *u, uint32_t t0, uint32_t t1) {
  const kl_token *a = &u->tokens[t0];
  set_int(L, "line", a->line);
  set_int(L, "col", a->col);
  if (t1 <= t0) {
    set_int(L, "begin", (lua_Integer)a->off + 1);
    set_int(L, "end", a->off);
    set_int(L, "end_line", a->line);
    set_int(L, "end_col", a->col);
    set_str(L, "text", "", 0);
    return;
  }
  const kl_token *z = &u->tokens[t1 - 1];
  uint32_t el, ec;
  token_end_pos(u, t1 - 1, &el, &ec);
  set_int(L, "begin", (lua_Integer)a->off + 1);
  set_int(L, "end", (lua_Integer)z->off + z->len);
  set_int(L, "end_line", el);
  set_int(L, "end_col", ec);
  set_str(L, "text", u->src + a->off, z->off + z->len - a->off);
}

/* Line/col of byte offset off in text, via a running cursor. */
typedef struct pos_cursor {
  const char *text;
  uint32_t off, line, col;
} pos_cursor;

static void cursor_to(pos_cursor *c, uint32_t off) {
  if (off < c->off) c->off = 0, c->line = 1, c->col = 1;
  for (; c->off < off; c->off++) {
    if (c->text[c->off] == '\n') c->line++, c->col = 1;
    else c->col++;
  }
}

static void set_byte_range(lua_State *L, const char *text, pos_cursor *c, uint32_t b, uint32_t e) {
  cursor_to(c, b);
  set_int(L, "line", c->line);
  set_int(L, "col", c->col);
  set_int(L, "begin", (lua_Integer)b + 1);
  set_int(L, "end", e);
  set_str(L, "text", text + b, e - b);
}

/* ---- patterns --------------------------------------------------------------------- */

static pattern_box *check_pattern_box(lua_State *L, int i) { return luaL_checkudata(L, i, PATTERN_MT); }

static int pattern_gc(lua_State *L) {
  pattern_box *b = check_pattern_box(L, 1);
  km_pattern_free(b->p);
  b->p = NULL;
  return 0;
}

static int lookup(const char *s, const char *const *names, int dflt) {
  if (!s) return dflt;
  for (int i = 0; names[i]; i++)
    if (strcmp(s, names[i]) == 0) return i;
  return -1;
}

static const char *const sort_names[] = {"expr", "stmt", "int", "type", "ident", "seq", NULL};
static const char *const ctx_names[] = {"expr", "args", "stmts", "header", NULL};
static const char *const op_names[] = {"token", "pp", "bind", "seq", "skip", "end", NULL};

static const char *field_string(lua_State *L, int t, const char *k, size_t *len) {
  lua_getfield(L, t, k);
  const char *s = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, len) : NULL;
  lua_pop(L, 1); /* the table keeps the string alive */
  return s;
}

static lua_Integer field_int(lua_State *L, int t, const char *k, lua_Integer dflt) {
  lua_getfield(L, t, k);
  lua_Integer v = lua_isinteger(L, -1) ? lua_tointeger(L, -1) : dflt;
  lua_pop(L, 1);
  return v;
}

/* Compiles the pattern table (the user value) into steps, once. */
static km_pattern *compiled(lua_State *L, int pi) {
  pattern_box *b = check_pattern_box(L, pi);
  if (b->p) return b->p;
  pi = lua_absindex(L, pi);
  lua_getiuservalue(L, pi, 1);
  int t = lua_gettop(L);
  lua_getfield(L, t, "tokens");
  if (!lua_istable(L, -1)) luaL_error(L, "kl.match: pattern table has no tokens");
  int tokens = lua_gettop(L);
  lua_Integer n = luaL_len(L, tokens);
  if (n <= 0 || n > 100000) luaL_error(L, "kl.match: pattern has %d tokens", (int)n);
  /* Scratch arrays live in userdata, so an error never leaks them. */
  km_ptoken *pt = lua_newuserdatauv(L, (size_t)n * sizeof *pt, 0);
  lua_getfield(L, t, "slots");
  int slots = lua_gettop(L);
  lua_Integer ns = lua_istable(L, slots) ? luaL_len(L, slots) : 0;
  if (ns < 0 || ns > 1000) luaL_error(L, "kl.match: pattern has %d slots", (int)ns);
  const char **names = lua_newuserdatauv(L, (size_t)(ns ? ns : 1) * sizeof *names, 0);
  for (lua_Integer s = 0; s < ns; s++) {
    lua_rawgeti(L, slots, s + 1);
    names[s] = lua_tostring(L, -1);
    if (!names[s]) luaL_error(L, "kl.match: slot %d has no name", (int)s + 1);
    lua_pop(L, 1);
  }
  for (lua_Integer i = 0; i < n; i++) {
    lua_rawgeti(L, tokens, i + 1);
    int e = lua_gettop(L);
    if (!lua_istable(L, e)) luaL_error(L, "kl.match: pattern token %d is not a table", (int)i + 1);
    size_t len = 0;
    const char *kind = field_string(L, e, "kind", NULL);
    const char *sort = field_string(L, e, "sort", NULL);
    const char *ctx = field_string(L, e, "ctx", NULL);
    km_ptoken *p = &pt[i];
    p->text = field_string(L, e, "text", &len);
    p->len = len;
    p->row = (uint32_t)field_int(L, e, "row", 1);
    p->col = (uint32_t)field_int(L, e, "col", 1);
    p->slot = (int)field_int(L, e, "slot", 0) - 1;
    int so = lookup(sort, sort_names, 0), cx = lookup(ctx, ctx_names, 0);
    if (so < 0 || cx < 0) luaL_error(L, "kl.match: pattern token %d has a bad sort or ctx", (int)i + 1);
    p->sort = (km_sort)so;
    p->ctx = (km_ctx)cx;
    if (!kind) luaL_error(L, "kl.match: pattern token %d has no kind", (int)i + 1);
    if (strcmp(kind, "meta") == 0) p->kind = p->sort == KM_SORT_SEQ ? KM_PT_SEQ : KM_PT_META;
    else if (strcmp(kind, "ellipsis") == 0) p->kind = KM_PT_ELLIPSIS;
    else if (strcmp(kind, "directive") == 0) p->kind = KM_PT_DIRECTIVE;
    else p->kind = KM_PT_LITERAL;
    lua_pop(L, 1);
  }
  km_pattern_desc d = {0};
  d.tokens = pt;
  d.ntokens = (uint32_t)n;
  const char *shape = field_string(L, t, "shape", NULL);
  d.shape = shape && strcmp(shape, "stmts") == 0 ? KM_SHAPE_STMTS : KM_SHAPE_EXPR;
  lua_getfield(L, t, "root_kinds");
  if (lua_istable(L, -1)) {
    for (int k = 0; k < 2; k++) {
      lua_rawgeti(L, -1, k + 1);
      d.root_kinds[k] = lua_tostring(L, -1);
      lua_pop(L, 1); /* the table keeps it alive */
    }
  }
  lua_pop(L, 1);
  d.root_op = field_string(L, t, "root_op", NULL);
  d.child_kind = field_string(L, t, "child_kind", NULL);
  d.child_op = field_string(L, t, "child_op", NULL);
  /* Structural checks: { {path = {i...}, kind, op}, ... } (at most 8). */
  km_check_desc *cd = lua_newuserdatauv(L, KM_MAX_CHECKS * sizeof *cd, 0);
  int *cpath = lua_newuserdatauv(L, KM_MAX_CHECKS * 3 * sizeof *cpath, 0);
  lua_getfield(L, t, "checks");
  if (lua_istable(L, -1)) {
    lua_Integer nc = luaL_len(L, -1);
    for (lua_Integer c = 0; c < nc && d.nchecks < KM_MAX_CHECKS; c++) {
      lua_rawgeti(L, -1, c + 1);
      int ce = lua_gettop(L);
      if (lua_istable(L, ce)) {
        km_check_desc *k = &cd[d.nchecks];
        k->kind = field_string(L, ce, "kind", NULL);
        k->op = field_string(L, ce, "op", NULL);
        k->path = cpath + 3 * d.nchecks;
        lua_getfield(L, ce, "path");
        lua_Integer depth = lua_istable(L, -1) ? luaL_len(L, -1) : 0;
        k->depth = depth >= 1 && depth <= 3 ? (uint32_t)depth : 0;
        for (uint32_t q = 0; q < k->depth; q++) {
          lua_rawgeti(L, -1, q + 1);
          cpath[3 * d.nchecks + q] = (int)lua_tointeger(L, -1);
          lua_pop(L, 1);
        }
        lua_pop(L, 1);
        d.nchecks++;
      }
      lua_pop(L, 1);
    }
  }
  lua_pop(L, 1);
  d.checks = cd;
  d.slot_names = names;
  d.nslots = (uint32_t)ns;
  char err[256];
  b->p = km_compile(&d, err, sizeof err);
  if (!b->p) luaL_error(L, "kl.match: %s", err);
  lua_settop(L, t - 1);
  return b->p;
}

static int match_pattern(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  pattern_box *b = lua_newuserdatauv(L, sizeof *b, 1);
  b->p = NULL;
  luaL_setmetatable(L, PATTERN_MT);
  lua_pushvalue(L, 1);
  lua_setiuservalue(L, -2, 1);
  return 1;
}

static int pattern_compile(lua_State *L) {
  compiled(L, 1);
  lua_settop(L, 1);
  return 1;
}

static int pattern_steps(lua_State *L) {
  km_pattern *p = compiled(L, 1);
  lua_createtable(L, (int)p->nsteps, 0);
  for (uint32_t i = 0; i < p->nsteps; i++) {
    const km_step *s = &p->steps[i];
    lua_createtable(L, 0, 5);
    lua_pushstring(L, op_names[s->op]);
    lua_setfield(L, -2, "op");
    if (s->op == KM_OP_TOKEN || s->op == KM_OP_PP) set_str(L, "text", p->pool + s->text, s->len);
    if (s->op == KM_OP_BIND || s->op == KM_OP_SEQ || (s->op == KM_OP_SKIP && s->slot != KM_NO_SLOT)) {
      set_int(L, "slot", s->slot + 1);
      lua_pushstring(L, km_slot_name(p, s->slot));
      lua_setfield(L, -2, "name");
    }
    if (s->op == KM_OP_BIND || s->op == KM_OP_SEQ) {
      lua_pushstring(L, sort_names[s->sort]);
      lua_setfield(L, -2, "sort");
    }
    if (s->op == KM_OP_SEQ || s->op == KM_OP_SKIP) {
      lua_pushstring(L, ctx_names[s->ctx]);
      lua_setfield(L, -2, "ctx");
    }
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  lua_createtable(L, 0, 4);
  lua_createtable(L, (int)p->nwords, 0);
  for (uint32_t w = 0; w < p->nwords; w++) {
    lua_pushstring(L, p->pool + p->words[w]);
    lua_rawseti(L, -2, (lua_Integer)w + 1);
  }
  lua_setfield(L, -2, "words");
  for (int k = 0; k < 2; k++) {
    if (p->root_kind[k] == KL_N__COUNT) continue;
    lua_pushstring(L, kl_kind_name((kl_node_kind)p->root_kind[k]));
    lua_setfield(L, -2, k == 0 ? "root_kind" : "root_kind2");
  }
  set_int(L, "literals", p->nliterals);
  return 2;
}

/* ---- matching ----------------------------------------------------------------------- */

static int results_gc(lua_State *L) {
  results_box *b = luaL_checkudata(L, 1, RESULTS_MT);
  km_results_free(&b->r);
  return 0;
}

static results_box *new_results(lua_State *L) {
  results_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, RESULTS_MT);
  return b;
}

static void read_options(lua_State *L, int oi, km_options *o) {
  o->prefilter = 1;
  o->max_steps = 0;
  o->max_matches = 0;
  o->max_total_steps = 0;
  if (lua_isnoneornil(L, oi)) return;
  luaL_checktype(L, oi, LUA_TTABLE);
  lua_getfield(L, oi, "prefilter");
  if (!lua_isnil(L, -1)) o->prefilter = lua_toboolean(L, -1);
  lua_pop(L, 1);
  lua_Integer ms = field_int(L, oi, "max_steps", 0), mm = field_int(L, oi, "max_matches", 0);
  luaL_argcheck(L, ms >= 0 && ms <= UINT32_MAX, oi, "max_steps out of range");
  luaL_argcheck(L, mm >= 0 && mm <= UINT32_MAX, oi, "max_matches out of range");
  o->max_steps = (uint32_t)ms;
  o->max_matches = (uint32_t)mm;
  lua_Integer mt = field_int(L, oi, "max_total_steps", 0);
  luaL_argcheck(L, mt >= 0, oi, "max_total_steps out of range");
  o->max_total_steps = (uint64_t)mt;
}

/* The result tables' text budget: each match copies its text and its
 * bindings' texts, so n nested matches hold O(n * their length) bytes (a
 * 4 MiB nest of statements would make terabytes). Past the budget the
 * matches found are counted, not returned: stats.dropped says how many. */
#define RESULT_BYTES_MIN ((uint64_t)64 << 20)

static uint64_t result_budget(lua_State *L, int oi, const kl_unit *u) {
  lua_Integer b = lua_istable(L, oi) ? field_int(L, oi, "max_result_bytes", 0) : 0;
  luaL_argcheck(L, b >= 0, oi, "max_result_bytes out of range");
  if (b) return (uint64_t)b;
  return RESULT_BYTES_MIN + 16 * (uint64_t)u->len;
}

static uint64_t span_bytes(const kl_unit *u, uint32_t t0, uint32_t t1) {
  if (t1 <= t0) return 0;
  const kl_token *z = &u->tokens[t1 - 1];
  return (uint64_t)(z->off + z->len - u->tokens[t0].off);
}

/* Bytes of text the table of match mi holds: its own and its bindings'. */
static uint64_t match_bytes(const kl_unit *u, const km_pattern *p, const km_results *r, uint32_t mi) {
  const km_match *m = &r->m[mi];
  uint64_t n = span_bytes(u, m->tok_begin, m->tok_end);
  for (uint32_t s = 0; s < p->nslots; s++) {
    const km_binding *b = &r->b[m->bind + s];
    if (b->tok_begin != KL_NONE) n += span_bytes(u, b->tok_begin, b->tok_end);
  }
  return n;
}

static void push_stats(lua_State *L, const km_results *r, uint32_t dropped, uint64_t budget) {
  lua_createtable(L, 0, 5);
  set_int(L, "dropped", dropped);
  set_int(L, "max_result_bytes", (lua_Integer)budget);
  set_int(L, "candidates", (lua_Integer)r->candidates);
  set_int(L, "steps", (lua_Integer)r->steps);
  set_int(L, "capped", r->capped);
  lua_pushboolean(L, r->stopped != 0);
  lua_setfield(L, -2, "stopped");
  set_int(L, "max_steps", (lua_Integer)r->max_steps);
  set_int(L, "max_total_steps", (lua_Integer)r->max_total_steps);
  set_int(L, "prefiltered", r->prefiltered);
  set_int(L, "prefiltered_items", (lua_Integer)r->prefiltered_items);
  set_int(L, "matches", r->n);
}

/* Pushes the table of one match. */
static void push_match(lua_State *L, int ui, const kl_unit *u, const km_index *ix,
                       const km_pattern *p, const km_results *r, uint32_t mi) {
  const km_match *m = &r->m[mi];
  lua_createtable(L, 0, 12);
  set_int(L, "index", (lua_Integer)mi + 1);
  set_token_range(L, u, m->tok_begin, m->tok_end);
  push_node(L, ui, m->node);
  lua_setfield(L, -2, "node");
  if (m->node != KL_NONE) {
    lua_pushstring(L, kl_kind_name((kl_node_kind)u->nodes[m->node].kind));
    lua_setfield(L, -2, "kind");
  }
  if (m->node == KL_NONE && p->shape == KM_SHAPE_STMTS && ix && !ix->opaque[m->tok_begin]) {
    /* Several statements: the list of them, for anti-unification. */
    lua_newtable(L);
    uint32_t t = m->tok_begin, k = 0;
    while (t < m->tok_end) {
      uint32_t best = KL_NONE;
      for (uint32_t n = ix->start_node[t]; n != KL_NONE && u->nodes[n].tok_begin == t; n = u->nodes[n].parent)
        if (n != 0 && km_kind_is_stmt(u->nodes[n].kind) && u->nodes[n].tok_end <= m->tok_end) best = n;
      if (best == KL_NONE) break;
      push_node(L, ui, best);
      lua_rawseti(L, -2, ++k);
      t = u->nodes[best].tok_end;
    }
    if (t == m->tok_end) lua_setfield(L, -2, "nodes");
    else lua_pop(L, 1);
  }
  lua_createtable(L, 0, (int)p->nslots);
  for (uint32_t s = 0; s < p->nslots; s++) {
    const km_binding *b = &r->b[m->bind + s];
    const char *name = km_slot_name(p, s);
    if (b->tok_begin == KL_NONE || name[0] == '.') continue; /* hidden: an anonymous ... */
    lua_createtable(L, 0, 10);
    set_token_range(L, u, b->tok_begin, b->tok_end);
    push_node(L, ui, b->node);
    lua_setfield(L, -2, "node");
    if (b->node != KL_NONE) {
      lua_pushstring(L, kl_kind_name((kl_node_kind)u->nodes[b->node].kind));
      lua_setfield(L, -2, "kind");
    }
    lua_pushstring(L, sort_names[p->slot_sort[s]]);
    lua_setfield(L, -2, "sort");
    lua_setfield(L, -2, name);
  }
  lua_setfield(L, -2, "bindings");
}

static int pattern_find(lua_State *L) {
  km_pattern *p = compiled(L, 1);
  const kl_unit *u = check_unit(L, 2);
  km_options o;
  read_options(L, 3, &o);
  const km_index *ix = unit_index(L, 2, u);
  results_box *rb = new_results(L);
  if (!km_match_set(ix, &p, 1, &o, &rb->r)) return luaL_error(L, "kl.match: out of memory");
  uint64_t budget = result_budget(L, 3, u), used = 0;
  uint32_t dropped = 0;
  lua_createtable(L, (int)rb->r.n, 0);
  for (uint32_t i = 0; i < rb->r.n; i++) {
    used += match_bytes(u, p, &rb->r, i);
    if (used > budget) {
      dropped = rb->r.n - i;
      break;
    }
    push_match(L, 2, u, ix, p, &rb->r, i);
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  push_stats(L, &rb->r, dropped, budget);
  return 2;
}

/* Runs a set over the unit at ui and pushes the per-pattern lists (or
 * counts) and the stats. */
static int push_set_results(lua_State *L, km_set *set, int ui, int oi) {
  const kl_unit *u = check_unit(L, ui);
  km_options o;
  read_options(L, oi, &o);
  int count_only = 0;
  if (lua_istable(L, oi)) {
    lua_getfield(L, oi, "count");
    count_only = lua_toboolean(L, -1);
    lua_pop(L, 1);
  }
  const km_index *ix = unit_index(L, ui, u);
  results_box *rb = new_results(L);
  if (!km_match_run(ix, set, &o, &rb->r)) return luaL_error(L, "kl.match: out of memory");
  lua_Integer n = set->npats;
  lua_createtable(L, (int)n, 0);
  int out = lua_gettop(L);
  for (lua_Integer i = 0; i < n; i++) {
    if (count_only) lua_pushinteger(L, 0);
    else lua_newtable(L);
    lua_rawseti(L, out, i + 1);
  }
  uint64_t budget = result_budget(L, oi, u), used = 0;
  uint32_t dropped = 0;
  for (uint32_t k = 0; k < rb->r.n; k++) {
    uint32_t pi = rb->r.m[k].pattern;
    if (!count_only) {
      used += match_bytes(u, set->pats[pi], &rb->r, k);
      if (used > budget) {
        dropped = rb->r.n - k;
        break;
      }
    }
    lua_rawgeti(L, out, (lua_Integer)pi + 1);
    if (count_only) {
      lua_Integer c = lua_tointeger(L, -1);
      lua_pop(L, 1);
      lua_pushinteger(L, c + 1);
      lua_rawseti(L, out, (lua_Integer)pi + 1);
    } else {
      push_match(L, ui, u, ix, set->pats[pi], &rb->r, k);
      lua_rawseti(L, -2, (lua_Integer)luaL_len(L, -2) + 1);
      lua_pop(L, 1);
    }
  }
  push_stats(L, &rb->r, dropped, budget);
  return 2;
}

typedef struct {
  km_set *s;
} set_box;

static int set_gc(lua_State *L) {
  set_box *b = luaL_checkudata(L, 1, SET_MT);
  km_set_free(b->s);
  b->s = NULL;
  return 0;
}

/* Builds a set box for the list of patterns at li (compiling each), its
 * user value the pattern userdata, kept alive. */
static set_box *new_set(lua_State *L, int li) {
  li = lua_absindex(L, li);
  luaL_checktype(L, li, LUA_TTABLE);
  lua_Integer n = luaL_len(L, li);
  luaL_argcheck(L, n >= 0 && n <= 100000, li, "too many patterns");
  km_pattern **pats = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *pats, 0);
  lua_createtable(L, (int)n, 0);
  for (lua_Integer i = 0; i < n; i++) {
    lua_rawgeti(L, li, i + 1);
    if (!luaL_testudata(L, -1, PATTERN_MT))
      luaL_error(L, "kl.match: entry %d of the pattern list is a %s, not a kl.Pattern", (int)i + 1,
                 luaL_typename(L, -1));
    pats[i] = compiled(L, lua_gettop(L));
    lua_rawseti(L, -2, i + 1);
  }
  set_box *b = lua_newuserdatauv(L, sizeof *b, 1);
  b->s = NULL;
  luaL_setmetatable(L, SET_MT);
  lua_insert(L, -2);
  lua_setiuservalue(L, -2, 1); /* the patterns stay alive with the set */
  b->s = km_set_new(pats, (uint32_t)n);
  if (!b->s) luaL_error(L, "kl.match: out of memory");
  lua_remove(L, -2); /* the scratch array: the set copied it */
  return b;
}

static int match_set(lua_State *L) {
  new_set(L, 1);
  return 1;
}

static int set_find_all(lua_State *L) {
  set_box *b = luaL_checkudata(L, 1, SET_MT);
  if (!b->s) return luaL_argerror(L, 1, "pattern set is closed");
  return push_set_results(L, b->s, 2, 3);
}

static int match_find_all(lua_State *L) {
  set_box *b = new_set(L, 1);
  lua_replace(L, 1);
  return push_set_results(L, b->s, 2, 3);
}

/* ---- rewriting ------------------------------------------------------------------------ */

static int reps_gc(lua_State *L) {
  reps_box *b = luaL_checkudata(L, 1, REPS_MT);
  for (uint32_t i = 0; i < b->n; i++) km_replacement_free(&b->reps[i]);
  free(b->reps);
  km_script_free(&b->script);
  free(b->text);
  b->reps = NULL;
  b->n = b->cap = 0;
  b->text = NULL;
  return 0;
}

static const char *const edit_names[] = {"insert", "delete", "update", "move"};

/* Appends to box the replacements of one rule: pattern at pi, template
 * table at ti, options at oi (select = match indices). Returns 0 with a
 * message pushed when the template does not fit the pattern. */
static int collect_rule(lua_State *L, int pi, int ui, const kl_unit *u, int ti, int oi, reps_box *box) {
  km_pattern *p = compiled(L, pi);
  luaL_checktype(L, ti, LUA_TTABLE);
  km_options o;
  read_options(L, oi, &o);
  const km_index *ix = unit_index(L, ui, u);
  int top = lua_gettop(L);

  /* The template: text and metavariable uses (1-based [s, e) from LPeg). */
  size_t tlen;
  const char *ttext = field_string(L, ti, "text", &tlen);
  if (!ttext) return luaL_argerror(L, ti, "template has no text");
  lua_getfield(L, ti, "uses");
  int uses = lua_gettop(L);
  lua_Integer nu = lua_istable(L, uses) ? luaL_len(L, uses) : 0;
  luaL_argcheck(L, nu >= 0 && nu <= 10000, ti, "too many template uses");
  uint32_t *ub = lua_newuserdatauv(L, (size_t)(nu ? nu : 1) * sizeof *ub, 0);
  uint32_t *ue = lua_newuserdatauv(L, (size_t)(nu ? nu : 1) * sizeof *ue, 0);
  const char **un = lua_newuserdatauv(L, (size_t)(nu ? nu : 1) * sizeof *un, 0);
  uint32_t last = 0;
  for (lua_Integer i = 0; i < nu; i++) {
    lua_rawgeti(L, uses, i + 1);
    int e = lua_gettop(L);
    un[i] = field_string(L, e, "name", NULL);
    lua_Integer s = field_int(L, e, "s", 0), en = field_int(L, e, "e", 0);
    if (!un[i] || s < 1 || en < s || (size_t)en - 1 > tlen || (uint32_t)(s - 1) < last)
      return luaL_argerror(L, ti, "template use out of order or out of range");
    ub[i] = (uint32_t)(s - 1);
    ue[i] = (uint32_t)(en - 1);
    last = ue[i];
    lua_pop(L, 1);
  }
  km_template tpl = { ttext, tlen, (uint32_t)nu, ub, ue, un };

  results_box *rb = new_results(L);
  if (!km_match_set(ix, &p, 1, &o, &rb->r)) return luaL_error(L, "kl.match: out of memory");
  if (rb->r.stopped) {
    /* A partial search would rewrite some sites and silently keep others. */
    lua_settop(L, top);
    lua_pushfstring(L, "the search stopped at its work cap (%d steps in all) before trying every candidate: "
                       "matches may be missing, so nothing is rewritten (raise max_total_steps)",
                    (int)rb->r.max_total_steps);
    return 0;
  }
  /* Which matches to apply. */
  uint32_t nsel = rb->r.n;
  uint8_t *sel = lua_newuserdatauv(L, rb->r.n ? rb->r.n : 1, 0);
  memset(sel, 1, rb->r.n ? rb->r.n : 1);
  if (lua_istable(L, oi)) {
    lua_getfield(L, oi, "select");
    if (lua_istable(L, -1)) {
      memset(sel, 0, rb->r.n ? rb->r.n : 1);
      nsel = 0;
      lua_Integer ns = luaL_len(L, -1);
      for (lua_Integer i = 1; i <= ns; i++) {
        lua_rawgeti(L, -1, i);
        lua_Integer k = lua_tointeger(L, -1);
        lua_pop(L, 1);
        if (k >= 1 && k <= (lua_Integer)rb->r.n && !sel[k - 1]) sel[k - 1] = 1, nsel++;
      }
    }
    lua_pop(L, 1);
  }
  if (box->n + nsel > box->cap) {
    uint32_t cap = box->cap ? box->cap : 16;
    while (cap < box->n + nsel) cap *= 2;
    km_replacement *nr = realloc(box->reps, cap * sizeof *nr);
    if (!nr) return luaL_error(L, "kl.match: out of memory");
    box->reps = nr, box->cap = cap;
  }
  char err[256];
  for (uint32_t i = 0; i < rb->r.n; i++) {
    if (!sel[i]) continue;
    if (!km_instantiate(u, p, &rb->r, &rb->r.m[i], &tpl, &box->reps[box->n], err, sizeof err)) {
      lua_settop(L, top);
      lua_pushstring(L, err);
      return 0;
    }
    box->n++;
  }
  lua_settop(L, top);
  return 1;
}

static reps_box *new_reps(lua_State *L) {
  reps_box *box = lua_newuserdatauv(L, sizeof *box, 0);
  memset(box, 0, sizeof *box);
  luaL_setmetatable(L, REPS_MT);
  return box;
}

/* Applies the collected replacements; pushes text, edits or nil, err. */
static int apply_and_push(lua_State *L, const kl_unit *u, reps_box *box) {
  char err[256];
  size_t out_len;
  box->text = km_apply(u->src, u->len, box->reps, box->n, &out_len, &box->script, err, sizeof err);
  if (!box->text) {
    /* Name the overlap by position (the list is sorted now). */
    for (uint32_t i = 1; i < box->n; i++) {
      const km_replacement *a = &box->reps[i - 1], *c = &box->reps[i];
      if (c->begin < a->end || (c->begin == a->begin && c->end == a->end)) {
        pos_cursor pc = { u->src, 0, 1, 1 };
        uint32_t off[4] = { a->begin, a->end, c->begin, c->end }, lc[8];
        for (int q = 0; q < 4; q++) {
          cursor_to(&pc, off[q]);
          lc[2 * q] = pc.line, lc[2 * q + 1] = pc.col;
        }
        lua_pushnil(L);
        lua_pushfstring(L, "overlapping edits: the match at %d:%d-%d:%d overlaps the match at %d:%d-%d:%d",
                        (int)lc[0], (int)lc[1], (int)lc[2], (int)lc[3], (int)lc[4], (int)lc[5], (int)lc[6],
                        (int)lc[7]);
        return 2;
      }
    }
    lua_pushnil(L);
    lua_pushstring(L, err);
    return 2;
  }
  lua_pushlstring(L, box->text, out_len);
  lua_createtable(L, (int)box->script.n, 0);
  pos_cursor oc = { u->src, 0, 1, 1 }, nc = { box->text, 0, 1, 1 };
  for (uint32_t i = 0; i < box->script.n; i++) {
    const km_edit *e = &box->script.e[i];
    lua_createtable(L, 0, 3);
    lua_pushstring(L, edit_names[e->kind]);
    lua_setfield(L, -2, "kind");
    lua_createtable(L, 0, 5);
    set_byte_range(L, u->src, &oc, e->old_begin, e->old_end);
    lua_setfield(L, -2, "old");
    lua_createtable(L, 0, 5);
    set_byte_range(L, box->text, &nc, e->new_begin, e->new_end);
    lua_setfield(L, -2, "new");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 2;
}

static int pattern_rewrite(lua_State *L) {
  lua_settop(L, 4); /* the options slot exists (maybe nil) before scratch goes above it */
  compiled(L, 1);
  const kl_unit *u = check_unit(L, 2);
  reps_box *box = new_reps(L);
  if (!collect_rule(L, 1, 2, u, 3, 4, box)) {
    lua_pushnil(L);
    lua_insert(L, -2);
    return 2;
  }
  return apply_and_push(L, u, box);
}

/* rewrite_all(unit, { {pattern, template, opts}, ... }) -> text, edits |
 * nil, err: the edits of every rule, applied together, bottom-up. */
static int match_rewrite_all(lua_State *L) {
  lua_settop(L, 2);
  const kl_unit *u = check_unit(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  reps_box *box = new_reps(L);
  lua_Integer n = luaL_len(L, 2);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, 2, i);
    int r = lua_gettop(L);
    luaL_argcheck(L, lua_istable(L, r), 2, "each rule is { pattern, template [, opts] }");
    lua_rawgeti(L, r, 1);
    lua_rawgeti(L, r, 2);
    lua_rawgeti(L, r, 3);
    if (!collect_rule(L, r + 1, 1, u, r + 2, r + 3, box)) {
      lua_pushnil(L);
      lua_insert(L, -2);
      return 2;
    }
    lua_settop(L, r - 1);
  }
  return apply_and_push(L, u, box);
}

/* ---- splice ---------------------------------------------------------------------------- */

typedef struct splice_rec {
  uint32_t begin, end; /* byte range [begin, end) of the unit's text      */
  uint32_t index;      /* 1-based position in the caller's list           */
  const char *text;    /* borrowed from the edit table                    */
  size_t len;
} splice_rec;

static int by_range_then_index(const void *a, const void *b) {
  const splice_rec *x = a, *y = b;
  if (x->begin != y->begin) return x->begin < y->begin ? -1 : 1;
  if (x->end != y->end) return x->end < y->end ? -1 : 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* The node of edit ei's field k, which must belong to unit u; stores its
 * span [b, e). Returns 0 when the field is nil. */
static int splice_node(lua_State *L, int ei, lua_Integer i, const char *k, const kl_unit *u, uint32_t *b,
                       uint32_t *e) {
  lua_getfield(L, ei, k);
  if (lua_isnil(L, -1)) {
    lua_pop(L, 1);
    return 0;
  }
  if (!kl_lua_is_node(L, -1)) luaL_error(L, "kl.match.splice: edit %d: '%s' is a %s, not a kl.source node", (int)i, k, luaL_typename(L, -1));
  uint32_t id;
  const kl_unit *nu = check_node(L, lua_gettop(L), &id);
  if (nu != u) luaL_error(L, "kl.match.splice: edit %d: the '%s' node belongs to another unit", (int)i, k);
  kl_node_span(u, id, b, e);
  lua_pop(L, 2);
  return 1;
}

/* splice(unit, { edit, ... }) -> text, edits | nil, err. An edit is one of
 *   { begin = b, ["end"] = e, text = t }   bytes b..e (1-based, inclusive,
 *                                          as node:range()); e = b - 1
 *                                          inserts before byte b
 *   { node = n [, text = t] }              replaces n's text (without its
 *                                          leading trivia); no text deletes
 *   { before = n, text = t } / { after = n, text = t }  inserts at n's
 *                                          first byte / after its last
 * Insertions at one point are joined in list order. Edits that overlap are
 * refused (nil, err naming both); a malformed edit, a position outside the
 * text or a node of another unit raises. The script is the one
 * P:rewrite gives (km_replacement_script, km_apply). */
static int match_splice(lua_State *L) {
  lua_settop(L, 2);
  const kl_unit *u = check_unit(L, 1);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 2);
  luaL_argcheck(L, n >= 0 && n <= 1000000, 2, "too many edits");
  splice_rec *rec = lua_newuserdatauv(L, (size_t)(n ? n : 1) * sizeof *rec, 0);
  int scratch = lua_gettop(L);
  for (lua_Integer i = 1; i <= n; i++) {
    lua_rawgeti(L, 2, i);
    int ei = lua_gettop(L);
    if (!lua_istable(L, ei)) return luaL_error(L, "kl.match.splice: edit %d is a %s, not a table", (int)i, luaL_typename(L, ei));
    splice_rec *r = &rec[i - 1];
    r->index = (uint32_t)i;
    uint32_t b = 0, e = 0;
    int forms = 0;
    int is_node = 0;
    if (splice_node(L, ei, i, "node", u, &b, &e)) forms++, is_node = 1, r->begin = b, r->end = e;
    if (splice_node(L, ei, i, "before", u, &b, &e)) forms++, r->begin = r->end = b;
    if (splice_node(L, ei, i, "after", u, &b, &e)) forms++, r->begin = r->end = e;
    lua_getfield(L, ei, "begin");
    lua_getfield(L, ei, "end");
    if (!lua_isnil(L, -2) || !lua_isnil(L, -1)) {
      forms++;
      if (!lua_isinteger(L, -2) || !lua_isinteger(L, -1))
        return luaL_error(L, "kl.match.splice: edit %d: begin and end must both be integers", (int)i);
      lua_Integer lb = lua_tointeger(L, -2), le = lua_tointeger(L, -1);
      if (lb < 1 || lb > (lua_Integer)u->len + 1 || le < lb - 1 || le > (lua_Integer)u->len)
        return luaL_error(L, "kl.match.splice: edit %d: bytes %I..%I are outside the text (1..%d; end = begin - 1 inserts)",
                          (int)i, lb, le, (int)u->len);
      r->begin = (uint32_t)(lb - 1);
      r->end = (uint32_t)le;
    }
    lua_pop(L, 2);
    if (forms != 1)
      return luaL_error(L, "kl.match.splice: edit %d needs exactly one of node, before, after or begin/end", (int)i);
    lua_getfield(L, ei, "text");
    if (lua_type(L, -1) == LUA_TSTRING) {
      r->text = lua_tolstring(L, -1, &r->len); /* the edit table keeps it alive */
    } else if (lua_isnil(L, -1) && is_node) {
      r->text = "", r->len = 0;
    } else {
      return luaL_error(L, "kl.match.splice: edit %d: text must be a string%s", (int)i,
                        is_node ? "" : " (only a node edit may leave it out, to delete)");
    }
    lua_settop(L, scratch);
  }
  qsort(rec, (size_t)n, sizeof *rec, by_range_then_index);
  /* Overlaps: an edit that starts before the furthest end so far (an
   * insertion at that end is after it, not inside). */
  uint32_t far = 0, far_i = KL_NONE;
  for (lua_Integer k = 0; k < n; k++) {
    const splice_rec *r = &rec[k];
    int clash = far_i != KL_NONE && (r->begin < far || (r->begin == rec[far_i].begin && r->end == rec[far_i].end &&
                                                        r->end > r->begin));
    if (clash) {
      const splice_rec *o = &rec[far_i];
      const splice_rec *first = o->index < r->index ? o : r, *second = o->index < r->index ? r : o;
      pos_cursor pc = { u->src, 0, 1, 1 };
      uint32_t off[4] = { first->begin, first->end, second->begin, second->end }, lc[8];
      for (int q = 0; q < 4; q++) {
        cursor_to(&pc, off[q]);
        lc[2 * q] = pc.line, lc[2 * q + 1] = pc.col;
      }
      lua_pushnil(L);
      lua_pushfstring(L, "overlapping edits: edit %d at %d:%d-%d:%d (bytes %d..%d) overlaps edit %d at %d:%d-%d:%d (bytes %d..%d)",
                      (int)first->index, (int)lc[0], (int)lc[1], (int)lc[2], (int)lc[3], (int)first->begin + 1,
                      (int)first->end, (int)second->index, (int)lc[4], (int)lc[5], (int)lc[6], (int)lc[7],
                      (int)second->begin + 1, (int)second->end);
      return 2;
    }
    if (far_i == KL_NONE || r->end > far || (r->end == far && r->end > r->begin)) far = r->end, far_i = (uint32_t)k;
  }
  /* Disjoint now, so the size is exact (and never below zero). */
  uint64_t total = u->len;
  for (lua_Integer k = 0; k < n; k++) total = total - (rec[k].end - rec[k].begin) + rec[k].len;
  if (total > UINT32_MAX) return luaL_error(L, "kl.match.splice: the result would be over 4 GiB");
  /* One replacement per edit; insertions at one point joined in list
   * order (the sort kept it), since km_apply takes one edit per point. */
  reps_box *box = new_reps(L);
  box->reps = calloc(n ? (size_t)n : 1, sizeof *box->reps);
  if (!box->reps) return luaL_error(L, "kl.match: out of memory");
  box->cap = n ? (uint32_t)n : 1;
  for (lua_Integer k = 0; k < n;) {
    lua_Integer j = k + 1;
    size_t len = rec[k].len;
    if (rec[k].begin == rec[k].end)
      while (j < n && rec[j].begin == rec[k].begin && rec[j].end == rec[j].begin) len += rec[j].len, j++;
    km_replacement *rp = &box->reps[box->n++];
    rp->begin = rec[k].begin;
    rp->end = rec[k].end;
    rp->text = malloc(len + 1);
    if (!rp->text) return luaL_error(L, "kl.match: out of memory");
    size_t w = 0;
    for (lua_Integer q = k; q < j; q++) {
      if (rec[q].len) memcpy(rp->text + w, rec[q].text, rec[q].len);
      w += rec[q].len;
    }
    rp->text[len] = '\0';
    rp->len = len;
    if (!km_replacement_script(u->src, rp)) return luaL_error(L, "kl.match: out of memory");
    k = j;
  }
  return apply_and_push(L, u, box);
}

/* ---- diff ------------------------------------------------------------------------------ */

static int diff_gc(lua_State *L) {
  km_diff_free(luaL_checkudata(L, 1, DIFF_MT));
  return 0;
}

/* Offsets where each line of u starts, in a userdata pushed on the stack;
 * *n gets the count. */
static uint32_t *line_starts(lua_State *L, const kl_unit *u, uint32_t *n) {
  uint32_t k = 1;
  for (uint32_t i = 0; i < u->len; i++) k += u->src[i] == '\n';
  uint32_t *ls = lua_newuserdatauv(L, (size_t)k * sizeof *ls, 0);
  ls[0] = 0;
  k = 1;
  for (uint32_t i = 0; i < u->len; i++)
    if (u->src[i] == '\n') ls[k++] = i + 1;
  *n = k;
  return ls;
}

/* Sets field k to { byte = off + 1, line, col }: the position before
 * which a node would go (splice's insertion point: begin = byte). */
static void set_at(lua_State *L, const char *k, const uint32_t *ls, uint32_t nls, uint32_t off) {
  uint32_t lo = 0, hi = nls; /* the last line start <= off */
  while (hi - lo > 1) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (ls[mid] <= off) lo = mid;
    else hi = mid;
  }
  lua_createtable(L, 0, 3);
  set_int(L, "byte", (lua_Integer)off + 1);
  set_int(L, "line", (lua_Integer)lo + 1);
  set_int(L, "col", (lua_Integer)(off - ls[lo]) + 1);
  lua_setfield(L, -2, k);
}

static int match_diff(lua_State *L) {
  const kl_unit *a = check_unit(L, 1);
  const kl_unit *b = check_unit(L, 2);
  uint32_t nla, nlb;
  const uint32_t *la = line_starts(L, a, &nla), *lb = line_starts(L, b, &nlb);
  km_diff *d = lua_newuserdatauv(L, sizeof *d, 0);
  memset(d, 0, sizeof *d);
  luaL_setmetatable(L, DIFF_MT);
  if (!km_diff_units(a, b, d)) return luaL_error(L, "kl.match: out of memory");
  lua_createtable(L, (int)d->n, 0);
  for (uint32_t i = 0; i < d->n; i++) {
    const km_diff_op *op = &d->ops[i];
    lua_createtable(L, 0, 5);
    lua_pushstring(L, edit_names[op->kind]);
    lua_setfield(L, -2, "kind");
    if (op->a_node != KL_NONE) {
      push_node(L, 1, op->a_node);
      lua_setfield(L, -2, "a");
      lua_createtable(L, 0, 7);
      set_token_range(L, a, a->nodes[op->a_node].tok_begin, a->nodes[op->a_node].tok_end);
      lua_setfield(L, -2, "a_range");
    }
    if (op->b_node != KL_NONE) {
      push_node(L, 2, op->b_node);
      lua_setfield(L, -2, "b");
      lua_createtable(L, 0, 7);
      set_token_range(L, b, b->nodes[op->b_node].tok_begin, b->nodes[op->b_node].tok_end);
      lua_setfield(L, -2, "b_range");
    }
    if (op->a_at != KL_NONE) set_at(L, "a_at", la, nla, op->a_at);
    if (op->b_at != KL_NONE) set_at(L, "b_at", lb, nlb, op->b_at);
    uint32_t n = op->b_node != KL_NONE ? op->b_node : op->a_node;
    const kl_unit *nu = op->b_node != KL_NONE ? b : a;
    lua_pushstring(L, kl_kind_name((kl_node_kind)nu->nodes[n].kind));
    lua_setfield(L, -2, "node_kind");
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  return 1;
}

/* ---- anti-unification --------------------------------------------------------------- */

static int gen_gc(lua_State *L) {
  km_generalization_free(luaL_checkudata(L, 1, GEN_MT));
  return 0;
}

/* Reads the instance list at index li (n entries) into inst; the units are
 * stored at units[base + k] and statement lists at units[base + n + k]. */
static void read_instances(lua_State *L, int li, lua_Integer n, km_instance *inst, int units, int base) {
  for (lua_Integer i = 0; i < n; i++) {
    lua_rawgeti(L, li, i + 1);
    int e = lua_gettop(L);
    memset(&inst[i], 0, sizeof inst[i]);
    if (kl_lua_is_node(L, e)) {
      inst[i].u = check_node(L, e, &inst[i].node); /* pushes the unit */
    } else if (lua_istable(L, e)) {
      lua_Integer k = luaL_len(L, e);
      if (k < 1 || k > 1000000) luaL_argerror(L, li, "an instance list is empty");
      uint32_t *seq = lua_newuserdatauv(L, (size_t)k * sizeof *seq, 0);
      lua_rawseti(L, units, base + n + i + 1); /* anchor the list */
      const kl_unit *u0 = NULL;
      for (lua_Integer j = 0; j < k; j++) {
        lua_rawgeti(L, e, j + 1);
        uint32_t id;
        const kl_unit *u = check_node(L, lua_gettop(L), &id);
        if (u0 && u != u0) luaL_argerror(L, li, "an instance list mixes units");
        u0 = u;
        seq[j] = id;
        lua_pop(L, 2);
      }
      inst[i].u = u0;
      inst[i].node = KL_NONE;
      inst[i].seq = seq;
      inst[i].nseq = (uint32_t)k;
      uint32_t first;
      lua_rawgeti(L, e, 1);
      check_node(L, lua_gettop(L), &first); /* pushes the unit */
      lua_remove(L, -2);
    } else {
      luaL_argerror(L, li, "instances must be kl.source nodes or lists of nodes");
    }
    lua_rawseti(L, units, base + i + 1); /* keep the unit: pops it */
    lua_settop(L, e - 1);
  }
  int seq = inst[0].node == KL_NONE;
  for (lua_Integer i = 1; i < n; i++)
    if ((inst[i].node == KL_NONE) != seq) luaL_argerror(L, li, "mixes single nodes and statement lists");
}

static void push_generalization(lua_State *L, const km_generalization *g, const km_instance *inst,
                                lua_Integer n, int units) {
  lua_createtable(L, 0, 3);
  set_str(L, "text", g->text, g->len);
  if (g->after_text) set_str(L, "after_text", g->after_text, g->after_len);
  lua_createtable(L, (int)g->nholes, 0);
  for (uint32_t h = 0; h < g->nholes; h++) {
    const km_hole *ho = &g->holes[h];
    lua_createtable(L, 0, 5);
    lua_pushstring(L, ho->name);
    lua_setfield(L, -2, "name");
    lua_pushstring(L, sort_names[ho->sort]);
    lua_setfield(L, -2, "sort");
    if (ho->after_only) {
      lua_pushboolean(L, 1);
      lua_setfield(L, -2, "after_only");
    }
    lua_createtable(L, (int)n, 0);
    lua_createtable(L, (int)n, 0);
    for (lua_Integer i = 0; i < n; i++) {
      size_t len;
      const char *s = kl_node_text(ho->units[i], ho->nodes[i], &len);
      lua_pushlstring(L, s, len);
      lua_rawseti(L, -3, i + 1);
      /* the unit userdata of this node: before side first, after side next */
      int base = ho->units[i] == inst[i].u ? 0 : (int)(2 * n);
      lua_rawgeti(L, units, base + i + 1);
      push_node(L, -1, ho->nodes[i]);
      lua_remove(L, -2);
      lua_rawseti(L, -2, i + 1);
    }
    lua_setfield(L, -3, "nodes");
    lua_setfield(L, -2, "texts");
    lua_rawseti(L, -2, (lua_Integer)h + 1);
  }
  lua_setfield(L, -2, "holes");
}

static int match_generalize(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 1);
  luaL_argcheck(L, n >= 1 && n <= 64, 1, "expected 1 to 64 instances");
  km_instance *inst = lua_newuserdatauv(L, (size_t)n * sizeof *inst, 0);
  lua_createtable(L, (int)(2 * n), 0); /* units and lists, kept alive */
  int units = lua_gettop(L);
  read_instances(L, 1, n, inst, units, 0);
  km_generalization *g = lua_newuserdatauv(L, sizeof *g, 0);
  memset(g, 0, sizeof *g);
  luaL_setmetatable(L, GEN_MT);
  if (!km_generalize(inst, (uint32_t)n, g)) return luaL_error(L, "kl.match: out of memory");
  push_generalization(L, g, inst, n, units);
  return 1;
}

/* generalize_edits(before_list, after_list) -> { text, after_text, holes } */
static int match_generalize_edits(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checktype(L, 2, LUA_TTABLE);
  lua_Integer n = luaL_len(L, 1);
  luaL_argcheck(L, n >= 1 && n <= 64, 1, "expected 1 to 64 instances");
  luaL_argcheck(L, luaL_len(L, 2) == n, 2, "as many after instances as before instances expected");
  km_instance *before = lua_newuserdatauv(L, (size_t)n * sizeof *before, 0);
  km_instance *after = lua_newuserdatauv(L, (size_t)n * sizeof *after, 0);
  lua_createtable(L, (int)(4 * n), 0);
  int units = lua_gettop(L);
  read_instances(L, 1, n, before, units, 0);
  read_instances(L, 2, n, after, units, (int)(2 * n));
  km_generalization *g = lua_newuserdatauv(L, sizeof *g, 0);
  memset(g, 0, sizeof *g);
  luaL_setmetatable(L, GEN_MT);
  if (!km_generalize_edits(before, after, (uint32_t)n, g)) return luaL_error(L, "kl.match: out of memory");
  push_generalization(L, g, before, n, units);
  return 1;
}

/* ---- module ------------------------------------------------------------------------------ */

static const luaL_Reg pattern_methods[] = {
    {"compile", pattern_compile},
    {"steps", pattern_steps},
    {"find", pattern_find},
    {"rewrite", pattern_rewrite},
    {NULL, NULL},
};

static const luaL_Reg match_functions[] = {
    {"pattern", match_pattern},
    {"find_all", match_find_all},
    {"set", match_set},
    {"diff", match_diff},
    {"generalize", match_generalize},
    {"generalize_edits", match_generalize_edits},
    {"rewrite_all", match_rewrite_all},
    {"splice", match_splice},
    {NULL, NULL},
};

static const luaL_Reg pattern_meta[] = {{"__gc", pattern_gc}, {"__close", pattern_gc}, {NULL, NULL}};
static const luaL_Reg set_meta[] = {{"__gc", set_gc}, {"__close", set_gc}, {NULL, NULL}};
static const luaL_Reg set_methods[] = {{"find_all", set_find_all}, {NULL, NULL}};
/* Boxes that live only inside one call: released by __gc, or by __close. */
static const luaL_Reg index_meta[] = {{"__gc", index_gc}, {"__close", index_gc}, {NULL, NULL}};
static const luaL_Reg results_meta[] = {{"__gc", results_gc}, {"__close", results_gc}, {NULL, NULL}};
static const luaL_Reg reps_meta[] = {{"__gc", reps_gc}, {"__close", reps_gc}, {NULL, NULL}};
static const luaL_Reg diff_meta[] = {{"__gc", diff_gc}, {"__close", diff_gc}, {NULL, NULL}};
static const luaL_Reg gen_meta[] = {{"__gc", gen_gc}, {"__close", gen_gc}, {NULL, NULL}};

int luaopen_kl_match(lua_State *L) {
  /* kl.source registers the unit and node metatables this module uses. */
  luaL_requiref(L, "kl.source", luaopen_kl_source, 0);
  lua_pop(L, 1);
  kl_newtype(L, PATTERN_MT, pattern_meta, pattern_methods);
  kl_newtype(L, SET_MT, set_meta, set_methods);
  kl_newtype(L, INDEX_MT, index_meta, NULL);
  kl_newtype(L, RESULTS_MT, results_meta, NULL);
  kl_newtype(L, REPS_MT, reps_meta, NULL);
  kl_newtype(L, DIFF_MT, diff_meta, NULL);
  kl_newtype(L, GEN_MT, gen_meta, NULL);
  /* The per-unit index cache: weak keys, so it never keeps a unit alive. */
  lua_newtable(L);
  lua_createtable(L, 0, 1);
  lua_pushliteral(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, "kl.match.indexes");
  luaL_newlib(L, match_functions);
  return 1;
}
