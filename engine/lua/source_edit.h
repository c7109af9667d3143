/* The structured edit API of kl.source (engine/lua/source_edit.c): the
 * methods that read and locate #define lines, __launch_bounds__, parameter
 * qualifiers, template arguments, #pragma lines and declarations. The API
 * is documented at the top of engine/lua/source.c with the rest of
 * kl.source. */
#ifndef KL_LUA_SOURCE_EDIT_H
#define KL_LUA_SOURCE_EDIT_H

#include <stdint.h>

#include <lauxlib.h>
#include <lua.h>

#include "source/source.h"

/* The edit methods of units and of nodes: luaopen_kl_source adds them
 * (kl_addmethods) after kl.source's own. The methods that hold C memory
 * keep it in a kl.Scratch box, which luaopen_kl_source registers. */
extern const luaL_Reg kl_source_edit_unit_methods[];
extern const luaL_Reg kl_source_edit_node_methods[];

/* Adds the edit sites of parameter `param` (the spans and insertion points
 * documented for fn:params()) to the table on the stack top. */
void kl_lua_push_param_sites(lua_State *L, const kl_unit *u, uint32_t param);

#endif
