/* What other bindings need from kl.source's userdata: kl.match takes units
 * and nodes as arguments and returns nodes. The box layouts stay private to
 * engine/lua/source.c; these functions are the only way in. The metatables
 * exist once luaopen_kl_source has run (kl.match requires "kl.source"). */
#ifndef KL_LUA_SOURCE_H
#define KL_LUA_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#include <lua.h>

#include "source/source.h"

/* Parses text and pushes the new kl.SourceUnit; raises on out of memory. */
kl_unit *kl_lua_push_unit(lua_State *L, const char *text, size_t len, const char *name);

/* The unit at stack index i; raises when i is not an open unit. */
kl_unit *kl_lua_check_unit(lua_State *L, int i);

/* Pushes the node `id` of the unit at stack index ui (nil for KL_NONE). The
 * node keeps its unit alive through its user value. */
void kl_lua_push_node(lua_State *L, int ui, uint32_t id);

/* The node at stack index i: returns its unit, stores its id, and leaves
 * the unit userdata on the stack top. Raises when i is not a node. */
kl_unit *kl_lua_check_node(lua_State *L, int i, uint32_t *id);

/* Whether the value at stack index i is a kl.SourceNode. */
int kl_lua_is_node(lua_State *L, int i);

#endif
