/* Userdata types of the kl.* modules: the one way to register a metatable,
 * in the manner of liolib's createmeta.
 *
 * Each type is registered once, from its module's luaopen_kl_*:
 *
 *   kl_newtype(L, "kl.<Type>", meta, methods);
 *
 * Names. "kl." and then the type in CamelCase: kl.SourceUnit, kl.MdRender.
 * luaL_newmetatable sets the metatable's __name to it, so luaL_checkudata's
 * errors read "kl.SourceUnit expected".
 *
 * What goes where.
 *   - meta holds the metamethods (__gc, __close, __tostring, __eq, ...); they
 *     are set in the metatable as given. A type that owns a resource lists
 *     one function as both __gc and __close, safe to run twice: the first
 *     run releases and leaves the box closed. That function is usually the
 *     `close` method too; it goes in methods by name, like any other.
 *   - methods (NULL for none) becomes a new table of the type's methods:
 *       - when meta has no __index, that table is the __index;
 *       - when meta has its own __index (a function that answers fields
 *         such as unit.name or buf.size first), the table is the
 *         metatable's field "methods", and the __index function ends with
 *         kl_pushmethod.
 *   - kl_addmethods adds a second list to a registered type's method table,
 *     wherever the rule above put it (kl.source's edit methods live in
 *     another file).
 *
 * Ownership. The registry owns the metatable; the C functions it holds are
 * static. A name already registered (a module opened twice in one state, or
 * kl.Scratch, which several modules use) leaves its metatable as it is. The
 * stack is left as found. Metatables are registered here and nowhere else;
 * a box takes its type with luaL_setmetatable(L, name) right after
 * lua_newuserdatauv, in its closed state, before any resource is acquired. */
#ifndef KL_LUA_NEWTYPE_H
#define KL_LUA_NEWTYPE_H

#include <lauxlib.h>
#include <lua.h>

/* Registers the type `name` (see above). */
void kl_newtype(lua_State *L, const char *name, const luaL_Reg *meta, const luaL_Reg *methods);

/* Adds methods to the method table of the registered type `name`; raises
 * when that type has no method table. */
void kl_addmethods(lua_State *L, const char *name, const luaL_Reg *methods);

/* For an __index function: pushes the method `key` of the value at index
 * obj (nil when it has none) and returns its Lua type. */
int kl_pushmethod(lua_State *L, int obj, const char *key);

#endif
