/* kl.safedir: private folders and files for the caches (engine/core/
 * safedir.h has the rules), seen from Lua.
 *
 *   safedir.ensure(path, owned [, create = true]) -> true | nil, why [, "absent"]
 *       checks every component of path with lstat; the last `owned` are
 *       klineage's own folders, created 0700 when missing. Without create,
 *       a missing component is nil, why, "absent"
 *   safedir.check_file(path) -> true | false, why, "absent" | "loose" | nil, why
 *       loose: ours but writable by group or others (a miss, to replace);
 *       nil: refused (a link, not a regular file, another owner)
 *   safedir.open_private(path) -> file | nil, err
 *       a new file, for writing, mode 0600, never through a link and never
 *       an existing file (O_EXCL): the temporary of an atomic write
 *   safedir.home() -> the effective user's home folder (password database)
 *       | nil, why
 *
 * Bad arguments raise; a refused or missing path is nil, why. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "core/safedir.h"

static int l_ensure(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  lua_Integer owned = luaL_checkinteger(L, 2);
  luaL_argcheck(L, owned >= 0 && owned <= 64, 2, "owned must be 0..64 components");
  int create = lua_isnoneornil(L, 3) ? 1 : lua_toboolean(L, 3);
  char why[PATH_MAX + 200];
  int absent = 0;
  if (!kl_safedir_ensure(path, (int)owned, create, &absent, why, sizeof why)) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    if (!absent) return 2;
    lua_pushliteral(L, "absent");
    return 3;
  }
  lua_pushboolean(L, 1);
  return 1;
}

static int l_check_file(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  char why[PATH_MAX + 200];
  int r = kl_safedir_check_file(path, why, sizeof why);
  if (r == KL_SAFEDIR_SAFE) {
    lua_pushboolean(L, 1);
    return 1;
  }
  if (r == KL_SAFEDIR_REFUSED) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  lua_pushboolean(L, 0);
  lua_pushstring(L, why);
  lua_pushstring(L, r == KL_SAFEDIR_ABSENT ? "absent" : "loose");
  return 3;
}

static int stream_close(lua_State *L) {
  luaL_Stream *s = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  return luaL_fileresult(L, fclose(s->f) == 0, NULL);
}

static int l_open_private(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_Stream *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->closef = NULL; /* closed state first */
  luaL_setmetatable(L, LUA_FILEHANDLE);
  int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) return luaL_fileresult(L, 0, path);
  s->f = fdopen(fd, "wb");
  if (!s->f) {
    int e = errno;
    close(fd);
    unlink(path);
    errno = e;
    return luaL_fileresult(L, 0, path);
  }
  s->closef = stream_close;
  return 1;
}

static int l_home(lua_State *L) {
  char home[PATH_MAX], why[256];
  if (!kl_safedir_home(home, sizeof home, why, sizeof why)) {
    lua_pushnil(L);
    lua_pushstring(L, why);
    return 2;
  }
  lua_pushstring(L, home);
  return 1;
}

static const luaL_Reg safedir_functions[] = {
    {"ensure", l_ensure},
    {"check_file", l_check_file},
    {"open_private", l_open_private},
    {"home", l_home},
    {NULL, NULL},
};

int luaopen_kl_safedir(lua_State *L) {
  luaL_newlib(L, safedir_functions);
  return 1;
}
