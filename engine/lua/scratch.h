/* kl.Scratch: the one box for scratch C memory, memory that a C function
 * holds while it may still raise (STYLE.md: never raise while memory is
 * held only on the C stack).
 *
 *   kl_scratch *s = kl_scratch_new(L);       pushes an empty box
 *   char *p = kl_scratch_grow(L, s, n);      at least n bytes, contents kept
 *   kl_access *as = kl_scratch_adopt(s, kl_access_patterns(...));
 *   ... anything that may raise ...
 *   kl_scratch_free(s);                      early, or leave it to __gc
 *
 * Ownership. The box owns its memory from kl_scratch_grow or adopt until
 * kl_scratch_free or the box's __gc/__close (one function, safe to run
 * twice), whichever comes first; a pointer from the box is good until then,
 * or until the next grow or adopt. The box is a Lua value: it lives while it
 * is on the stack (or referenced), so keep it there for as long as its
 * memory is used. Lua scripts never see one. Memory that Lua allocates
 * itself (a plain lua_newuserdatauv, a luaL_Buffer) needs no box.
 *
 * The type is registered by kl_scratch_open, which every luaopen that
 * uses a box calls. */
#ifndef KL_LUA_SCRATCH_H
#define KL_LUA_SCRATCH_H

#include <stddef.h>

#include <lua.h>

#define KL_SCRATCH_MT "kl.Scratch"

typedef struct {
  void *p;     /* from malloc, or NULL */
  size_t size; /* bytes asked for at p; 0 for adopted memory */
} kl_scratch;

/* Registers kl.Scratch (once per state; a later call changes nothing). */
void kl_scratch_open(lua_State *L);

/* Pushes a new empty box and returns it. */
kl_scratch *kl_scratch_new(lua_State *L);

/* Makes the box hold at least n bytes, keeping the first bytes it held, as
 * realloc does, and returns them. Out of memory raises, and the box keeps
 * what it held. */
void *kl_scratch_grow(lua_State *L, kl_scratch *s, size_t n);

/* Hands the box p, from malloc (NULL is fine); the box frees what it held
 * before. Returns p. */
void *kl_scratch_adopt(kl_scratch *s, void *p);

/* Frees the box's memory now; the box stays usable and empty. */
void kl_scratch_free(kl_scratch *s);

#endif
