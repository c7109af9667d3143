/* kl.md: Markdown to HTML through cmark. Safe by default: raw HTML and
 * dangerous URLs (javascript:, data: other than images) are dropped unless
 * the caller asks for { unsafe = true }. */
#include <limits.h>
#include <stdlib.h>

#include <cmark.h>
#include <lauxlib.h>
#include <lua.h>

#include "core/libpath.h"

static int option_flag(lua_State *L, int idx, const char *name, int flag) {
  if (lua_isnoneornil(L, idx)) return 0;
  lua_getfield(L, idx, name);
  int on = lua_toboolean(L, -1);
  lua_pop(L, 1);
  return on ? flag : 0;
}

/* md.html(text [, { unsafe, smart, hardbreaks, sourcepos }]) -> html */
static int md_html(lua_State *L) {
  size_t len;
  const char *text = luaL_checklstring(L, 1, &len);
  if (!lua_isnoneornil(L, 2)) luaL_checktype(L, 2, LUA_TTABLE);
  int options = CMARK_OPT_DEFAULT | CMARK_OPT_VALIDATE_UTF8;
  options |= option_flag(L, 2, "unsafe", CMARK_OPT_UNSAFE);
  options |= option_flag(L, 2, "smart", CMARK_OPT_SMART);
  options |= option_flag(L, 2, "hardbreaks", CMARK_OPT_HARDBREAKS);
  options |= option_flag(L, 2, "sourcepos", CMARK_OPT_SOURCEPOS);
  /* cmark allocates the result with malloc; we copy it and free it before
   * anything can raise. */
  char *html = cmark_markdown_to_html(text, len, options);
  if (!html) return luaL_error(L, "cmark: out of memory");
  lua_pushstring(L, html);
  free(html);
  return 1;
}

static int md_library(lua_State *L) {
  char buf[PATH_MAX];
  if (kl_library_of((const void *)cmark_markdown_to_html, buf, sizeof buf))
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

int luaopen_kl_md(lua_State *L) {
  luaL_newlib(L, md_functions);
  lua_pushstring(L, cmark_version_string());
  lua_setfield(L, -2, "version");
  return 1;
}
