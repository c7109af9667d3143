/* The kl.* Lua modules compiled into the klineage host.
 * One line per module: X(name) declares luaopen_kl_<name>, preloaded as
 * "kl.<name>". Keep the list sorted. */
#ifndef KL_MODULES_H
#define KL_MODULES_H

#include <lua.h>

#define KL_MODULES(X) \
  X(base64)           \
  X(cuda)             \
  X(cupti)            \
  X(emu)              \
  X(fs)               \
  X(hash)             \
  X(host)             \
  X(http)             \
  X(match)            \
  X(md)               \
  X(memcap)           \
  X(nvrtc)            \
  X(occupancy)        \
  X(proc)             \
  X(randgen)          \
  X(safedir)          \
  X(sandbox)          \
  X(source)           \
  X(vendor)           \
  X(watchdog)

#define KL_DECLARE_OPEN(name) int luaopen_kl_##name(lua_State *L);
KL_MODULES(KL_DECLARE_OPEN)
#undef KL_DECLARE_OPEN

#endif
