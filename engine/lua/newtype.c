/* The one way the kl.* modules register a userdata type: engine/lua/newtype.h
 * states the rule. */
#include "lua/newtype.h"

/* Where the methods of the metatable at index mt live: "__index" unless
 * the metatable's __index is a function of the type's own. */
static const char *methods_field(lua_State *L, int mt) {
  int t = lua_getfield(L, mt, "__index");
  lua_pop(L, 1);
  return t == LUA_TNIL || t == LUA_TTABLE ? "__index" : "methods";
}

void kl_newtype(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods) {
  if (!luaL_newmetatable(L, name)) { /* registered already: leave it be */
    lua_pop(L, 1);
    return;
  }
  int mt = lua_gettop(L);
  if (meta) luaL_setfuncs(L, meta, 0);
  if (methods) {
    const char *field = methods_field(L, mt);
    lua_newtable(L);
    luaL_setfuncs(L, methods, 0);
    lua_setfield(L, mt, field);
  }
  lua_pop(L, 1);
}

void kl_addmethods(lua_State *L, const char *name, const luaL_Reg *methods) {
  if (luaL_getmetatable(L, name) != LUA_TTABLE) luaL_error(L, "kl_addmethods: no type %s", name);
  int mt = lua_gettop(L);
  if (lua_getfield(L, mt, methods_field(L, mt)) != LUA_TTABLE)
    luaL_error(L, "kl_addmethods: the type %s has no method table", name);
  luaL_setfuncs(L, methods, 0);
  lua_pop(L, 2);
}

int kl_pushmethod(lua_State *L, int obj, const char *key) {
  if (!lua_getmetatable(L, obj)) {
    lua_pushnil(L);
    return LUA_TNIL;
  }
  if (lua_getfield(L, -1, "methods") != LUA_TTABLE) {
    lua_pop(L, 2);
    lua_pushnil(L);
    return LUA_TNIL;
  }
  int t = lua_getfield(L, -1, key);
  lua_replace(L, -3); /* over the metatable */
  lua_pop(L, 1);      /* the method table */
  return t;
}
