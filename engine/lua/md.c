/* kl.md: Markdown to HTML through cmark-gfm, the GitHub flavour of cmark.
 *
 * Why cmark-gfm and not plain cmark: reports need tables, which CommonMark
 * lacks; cmark-gfm's table extension (Debian's libcmark-gfm-extensions)
 * adds exactly that. Only the table extension is attached: autolinks,
 * strikethrough and the rest stay off, so the dialect is CommonMark plus
 * tables.
 *
 * Safe by default: raw HTML (in blocks, inline and inside table cells) and
 * dangerous URLs (javascript:, data: other than images) are dropped unless
 * the caller asks for { unsafe = true }.
 *
 * Ownership: the parser, the document and the rendered text all live in a
 * boxed userdata whose __gc frees them, so an error raised while any of
 * them is held (lua_pushlstring out of memory) leaks nothing. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <cmark-gfm-core-extensions.h>
#include <cmark-gfm-extension_api.h>
#include <cmark-gfm.h>
#include <lauxlib.h>
#include <lua.h>

#include "core/libpath.h"
#include "lua/newtype.h"

#define RENDER_MT "kl.MdRender"

/* What one md.html call holds while it runs. */
typedef struct {
  cmark_parser *parser;
  cmark_node *doc;
  char *html;
} render_box;

static int render_release(lua_State *L) {
  render_box *b = luaL_checkudata(L, 1, RENDER_MT);
  if (b->html) free(b->html); /* cmark's default allocator is malloc */
  if (b->doc) cmark_node_free(b->doc);
  if (b->parser) cmark_parser_free(b->parser);
  b->html = NULL;
  b->doc = NULL;
  b->parser = NULL;
  return 0;
}

static int option_flag(lua_State *L, int idx, const char *name, int flag) {
  if (lua_isnoneornil(L, idx)) return 0;
  lua_getfield(L, idx, name);
  int on = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return on ? flag : 0;
}

/* md.html(text [, { unsafe, smart, hardbreaks, sourcepos }]) -> html
 * GitHub tables (| a | b | over |---|---|) render as <table>. */
static int md_html(lua_State *L) {
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  int options = CMARK_OPT_DEFAULT | CMARK_OPT_VALIDATE_UTF8;
  options |= option_flag(L, 2, "unsafe", CMARK_OPT_UNSAFE);
  options |= option_flag(L, 2, "smart", CMARK_OPT_SMART);
  options |= option_flag(L, 2, "hardbreaks", CMARK_OPT_HARDBREAKS);
  options |= option_flag(L, 2, "sourcepos", CMARK_OPT_SOURCEPOS);

  /* The closed box first, then the resources. */
  render_box *b = lua_newuserdatauv(L, sizeof *b, 0);
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, RENDER_MT);

  cmark_syntax_extension *table = cmark_find_syntax_extension("table");
  if (!table) return luaL_error(L, "cmark-gfm: the table extension is not registered");
  b->parser = cmark_parser_new(options);
  if (!b->parser) return luaL_error(L, "cmark-gfm: out of memory");
  if (!cmark_parser_attach_syntax_extension(b->parser, table))
    return luaL_error(L, "cmark-gfm: cannot attach the table extension");
  cmark_parser_feed(b->parser, text, len);
  b->doc = cmark_parser_finish(b->parser);
  if (!b->doc) return luaL_error(L, "cmark-gfm: out of memory");
  /* The renderer needs the parser's extension list to render table nodes;
   * the list belongs to the parser. */
  b->html = cmark_render_html(b->doc, options, cmark_parser_get_syntax_extensions(b->parser));
  if (!b->html) return luaL_error(L, "cmark-gfm: out of memory");
  lua_pushstring(L, b->html);
  lua_pushcfunction(L, render_release);
  lua_pushvalue(L, -3);
  lua_call(L, 1, 0);
  return 1;
}

static int md_library(lua_State *L) {
  char buf[PATH_MAX];
  if (kl_library_of((const void *)cmark_parser_new, buf, sizeof buf))
    lua_pushstring(L, buf);
  else
    lua_pushnil(L);
  return 1;
}

static const luaL_Reg md_functions[] = {
    {"html", md_html},
    {"library", md_library},
    {NULL, NULL},
};

static const luaL_Reg render_metamethods[] = {
    {"__gc", render_release},
    {"__close", render_release},
    {NULL, NULL},
};

int luaopen_kl_md(lua_State *L) {
  /* Registers the core extensions with cmark-gfm once per process (it
   * keeps a flag of its own). */
  cmark_gfm_core_extensions_ensure_registered();
  kl_newtype(L, RENDER_MT, render_metamethods, NULL);
  luaL_newlib(L, md_functions);
  lua_pushstring(L, cmark_version_string());
  lua_setfield(L, -2, "version");
  lua_pushstring(L, "cmark-gfm");
  lua_setfield(L, -2, "engine");
  return 1;
}
