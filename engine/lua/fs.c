/* kl.fs: the few file-system calls Lua lacks, so that commands walk folders
 * and replace files themselves instead of handing a user's path to another
 * program (where a folder named "-delete" becomes an option of find).
 *
 *   fs.stat(path [, follow = true]) -> info | nil, message, errno_name
 *       info = { type, size, mode, dev, ino, nlink, uid, gid }: type is
 *       "file", "directory", "link" (only with follow = false), "fifo",
 *       "socket", "char device", "block device" or "other"; mode is the
 *       permission bits (07777). errno_name is "ENOENT", "ELOOP", ...
 *   fs.list(path [, follow = true]) -> { name... } | nil, message, errno_name
 *       the entries of a folder but "." and "..", sorted by their bytes
 *       (strcmp: the same order in every locale). With follow = false a
 *       path that is a link is refused (ELOOP), so a folder swapped for a
 *       link after its lstat is not entered.
 *   fs.realpath(path) -> absolute path with no link in it | nil, message
 *   fs.open_temp(prefix, mode [, uid, gid]) -> file, path | nil, message
 *       a new file prefix .. 6 random characters (mkstemp: O_EXCL, never
 *       through a link), open for writing, with exactly this mode (the
 *       umask does not apply) and, where uid and gid differ from ours and
 *       we may change them, that owner: the temporary of a write that
 *       replaces a file and keeps its mode
 *   fs.open_append(path) -> file | nil, message, stage
 *       a regular file opened for appending (created 0666 less the umask
 *       when missing). Anything else (a FIFO, a device, a folder) is
 *       refused before it is opened for writing, stage "type": a FIFO with
 *       no reader would block the open, a device swallow the records.
 *       stage "open" for the system's refusal
 *   fs.lock(path, note) -> lock | nil, message, holder
 *       an exclusive flock on path (a regular file, created when missing),
 *       never waiting: when another open file holds it, nil, "held", and
 *       the holder's note (what it wrote in the file, 4 KiB at most). Taken,
 *       the file is rewritten with note. The lock is the open file: it goes
 *       when lock:release() (= __close, __gc) runs or the process dies, so a
 *       crash never leaves a run folder locked. Children do not inherit it
 *       (close-on-exec)
 *
 * Bad arguments raise; a path the system refuses is nil, message, where
 * message is the reason alone (strerror, no path), as kl.nvrtc.read_source
 * gives it. The
 * folder list is built in a boxed userdata (names and the open DIR), so an
 * error raised while it is pushed leaks nothing. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "lua/newtype.h"

#define LISTING_MT "kl.FsListing"
#define LOCK_MT "kl.FsLock"

static const char *errno_name(int e) {
  switch (e) {
  case ENOENT: return "ENOENT";
  case ENOTDIR: return "ENOTDIR";
  case EACCES: return "EACCES";
  case EPERM: return "EPERM";
  case ELOOP: return "ELOOP";
  case ENAMETOOLONG: return "ENAMETOOLONG";
  case EEXIST: return "EEXIST";
  case ENOSPC: return "ENOSPC";
  case EROFS: return "EROFS";
  case EIO: return "EIO";
  default: return "EOTHER";
  }
}

static int push_errno(lua_State *L, int e) {
  lua_pushnil(L);
  lua_pushstring(L, strerror(e));
  lua_pushstring(L, errno_name(e));
  return 3;
}

static const char *type_name(mode_t m) {
  if (S_ISREG(m)) return "file";
  if (S_ISDIR(m)) return "directory";
  if (S_ISLNK(m)) return "link";
  if (S_ISFIFO(m)) return "fifo";
  if (S_ISSOCK(m)) return "socket";
  if (S_ISCHR(m)) return "char device";
  if (S_ISBLK(m)) return "block device";
  return "other";
}

static void set_int(lua_State *L, const char *k, lua_Integer v) {
  lua_pushinteger(L, v);
  lua_setfield(L, -2, k);
}

static int l_stat(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int follow = lua_isnoneornil(L, 2) ? 1 : lua_toboolean(L, 2);
  struct stat st;
  if ((follow ? stat(path, &st) : lstat(path, &st)) != 0) return push_errno(L, errno);
  lua_createtable(L, 0, 8);
  lua_pushstring(L, type_name(st.st_mode));
  lua_setfield(L, -2, "type");
  set_int(L, "size", (lua_Integer)st.st_size);
  set_int(L, "mode", (lua_Integer)(st.st_mode & 07777));
  set_int(L, "dev", (lua_Integer)st.st_dev);
  set_int(L, "ino", (lua_Integer)st.st_ino);
  set_int(L, "nlink", (lua_Integer)st.st_nlink);
  set_int(L, "uid", (lua_Integer)st.st_uid);
  set_int(L, "gid", (lua_Integer)st.st_gid);
  return 1;
}

/* The scratch of fs.list: the open folder and the names read so far. */
typedef struct {
  DIR *dir;
  char **names;
  size_t n, cap;
} listing;

static void listing_free(listing *b) {
  if (b->dir) closedir(b->dir);
  b->dir = NULL;
  for (size_t i = 0; i < b->n; i++) free(b->names[i]);
  free(b->names);
  b->names = NULL;
  b->n = b->cap = 0;
}

static int listing_gc(lua_State *L) {
  listing_free(luaL_checkudata(L, 1, LISTING_MT));
  return 0;
}

static int by_bytes(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int l_list(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  int follow = lua_isnoneornil(L, 2) ? 1 : lua_toboolean(L, 2);
  lua_settop(L, 2);
  listing *b = lua_newuserdatauv(L, sizeof *b, 0); /* 3: closed first, then open */
  memset(b, 0, sizeof *b);
  luaL_setmetatable(L, LISTING_MT);
  int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (follow ? 0 : O_NOFOLLOW));
  if (fd < 0) return push_errno(L, errno);
  b->dir = fdopendir(fd);
  if (!b->dir) {
    int e = errno;
    close(fd);
    return push_errno(L, e);
  }
  for (;;) {
    errno = 0;
    struct dirent *d = readdir(b->dir);
    if (!d) {
      if (errno != 0) {
        int e = errno;
        listing_free(b);
        return push_errno(L, e);
      }
      break;
    }
    if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0) continue;
    if (b->n == b->cap) {
      size_t cap = b->cap ? 2 * b->cap : 64;
      char **nn = realloc(b->names, cap * sizeof *nn);
      if (!nn) {
        listing_free(b);
        return luaL_error(L, "kl.fs: out of memory listing '%s'", path);
      }
      b->names = nn, b->cap = cap;
    }
    b->names[b->n] = strdup(d->d_name);
    if (!b->names[b->n]) {
      listing_free(b);
      return luaL_error(L, "kl.fs: out of memory listing '%s'", path);
    }
    b->n++;
  }
  closedir(b->dir);
  b->dir = NULL;
  if (b->n) qsort(b->names, b->n, sizeof *b->names, by_bytes);
  lua_createtable(L, b->n > INT_MAX ? INT_MAX : (int)b->n, 0);
  for (size_t i = 0; i < b->n; i++) {
    lua_pushstring(L, b->names[i]); /* may raise: the box frees the names */
    lua_rawseti(L, -2, (lua_Integer)i + 1);
  }
  listing_free(b);
  return 1;
}

static int l_realpath(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  char r[PATH_MAX]; /* on the stack: nothing to free if the push raises */
  if (!realpath(path, r)) return push_errno(L, errno);
  lua_pushstring(L, r);
  return 1;
}

static int stream_close(lua_State *L) {
  luaL_Stream *s = luaL_checkudata(L, 1, LUA_FILEHANDLE);
  return luaL_fileresult(L, fclose(s->f) == 0, NULL);
}

static int l_open_temp(lua_State *L) {
  size_t n;
  const char *prefix = luaL_checklstring(L, 1, &n);
  lua_Integer mode = luaL_checkinteger(L, 2);
  luaL_argcheck(L, mode >= 0 && mode <= 07777, 2, "mode must be 0..07777");
  luaL_argcheck(L, n > 0 && n + 7 < PATH_MAX, 1, "prefix empty or too long");
  int want_owner = !lua_isnoneornil(L, 3);
  lua_Integer uid = want_owner ? luaL_checkinteger(L, 3) : -1, gid = want_owner ? luaL_checkinteger(L, 4) : -1;
  char tmpl[PATH_MAX];
  memcpy(tmpl, prefix, n);
  memcpy(tmpl + n, "XXXXXX", 7);
  luaL_Stream *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->closef = NULL; /* closed state first */
  luaL_setmetatable(L, LUA_FILEHANDLE);
  int fd = mkostemp(tmpl, O_CLOEXEC);
  if (fd < 0) return push_errno(L, errno);
  /* The owner first: a chown clears set-user-id bits that fchmod then sets.
   * Only root (or a member of the group) may give a file away; anyone else
   * keeps the file as theirs, as an editor's save does. */
  if (want_owner && ((uid_t)uid != geteuid() || (gid_t)gid != getegid())) {
    if (fchown(fd, (uid_t)uid, (gid_t)gid) != 0 && fchown(fd, (uid_t)-1, (gid_t)gid) != 0)
      errno = 0; /* neither: the file stays ours */
  }
  if (fchmod(fd, (mode_t)mode) != 0) {
    int e = errno;
    close(fd);
    unlink(tmpl);
    return push_errno(L, e);
  }
  s->f = fdopen(fd, "wb");
  if (!s->f) {
    int e = errno;
    close(fd);
    unlink(tmpl);
    return push_errno(L, e);
  }
  s->closef = stream_close;
  lua_pushstring(L, tmpl);
  return 2;
}

/* The words a refused type gets in messages, as kl.nvrtc.read_source says them. */
static const char *kind_words(mode_t m) {
  if (S_ISDIR(m)) return "a directory";
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  if (S_ISSOCK(m)) return "a socket";
  return "a special file";
}

static int push_refused(lua_State *L, const char *message, const char *stage) {
  lua_pushnil(L);
  lua_pushstring(L, message);
  lua_pushstring(L, stage);
  return 3;
}

static int push_not_regular(lua_State *L, mode_t m) {
  lua_pushnil(L);
  lua_pushfstring(L, "%s, not a regular file", kind_words(m));
  lua_pushliteral(L, "type");
  return 3;
}

static int l_open_append(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  luaL_Stream *s = lua_newuserdatauv(L, sizeof *s, 0);
  s->closef = NULL; /* closed state first */
  luaL_setmetatable(L, LUA_FILEHANDLE);
  /* The type first, so a FIFO is named as one (its nonblocking open for
   * writing would fail with ENXIO, whose words say nothing); the fstat
   * below holds for a path swapped in between. */
  struct stat st;
  if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) return push_not_regular(L, st.st_mode);
  int fd;
  do fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0666);
  while (fd < 0 && errno == EINTR);
  if (fd < 0) return push_refused(L, strerror(errno), "open");
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return push_refused(L, strerror(e), "open");
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return push_not_regular(L, st.st_mode);
  }
  int flags = fcntl(fd, F_GETFL);
  if (flags >= 0) fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  s->f = fdopen(fd, "ab");
  if (!s->f) {
    int e = errno;
    close(fd);
    return push_refused(L, strerror(e), "open");
  }
  s->closef = stream_close;
  return 1;
}

static int *checklock(lua_State *L, int i) { return luaL_checkudata(L, i, LOCK_MT); }

static void unlock_fd(int *fd) {
  if (*fd >= 0) {
    close(*fd); /* the flock goes with the last descriptor of the open file */
    *fd = -1;
  }
}

/* __gc, __close and release: safe to run twice. */
static int lock_release(lua_State *L) {
  unlock_fd(checklock(L, 1));
  return 0;
}

static int lock_held(lua_State *L) {
  lua_pushboolean(L, *checklock(L, 1) >= 0);
  return 1;
}

static int l_lock(lua_State *L) {
  const char *path = luaL_checkstring(L, 1);
  size_t n;
  const char *note = luaL_checklstring(L, 2, &n);
  int *fd = lua_newuserdatauv(L, sizeof *fd, 0); /* closed state first, then open */
  *fd = -1;
  luaL_setmetatable(L, LOCK_MT);
  do *fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  while (*fd < 0 && errno == EINTR);
  if (*fd < 0) return push_refused(L, strerror(errno), "open");
  struct stat st;
  if (fstat(*fd, &st) != 0) {
    int e = errno;
    unlock_fd(fd);
    return push_refused(L, strerror(e), "open");
  }
  if (!S_ISREG(st.st_mode)) {
    unlock_fd(fd);
    return push_not_regular(L, st.st_mode);
  }
  int r;
  do r = flock(*fd, LOCK_EX | LOCK_NB);
  while (r != 0 && errno == EINTR);
  if (r != 0) {
    int e = errno;
    if (e != EWOULDBLOCK) {
      unlock_fd(fd);
      return push_refused(L, strerror(e), "lock");
    }
    char holder[4096]; /* on the stack: nothing to free if a push raises */
    ssize_t got;
    do got = pread(*fd, holder, sizeof holder, 0);
    while (got < 0 && errno == EINTR);
    unlock_fd(fd);
    lua_pushnil(L);
    lua_pushliteral(L, "held");
    lua_pushlstring(L, holder, got > 0 ? (size_t)got : 0);
    return 3;
  }
  /* Ours: the note says who, for the next one that finds it held. A note
   * that cannot be written leaves the lock taken all the same. */
  if (ftruncate(*fd, 0) == 0) {
    size_t done = 0;
    while (done < n) {
      ssize_t w = pwrite(*fd, note + done, n - done, (off_t)done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      done += (size_t)w;
    }
  }
  return 1;
}

static const luaL_Reg fs_functions[] = {
    {"stat", l_stat},
    {"list", l_list},
    {"realpath", l_realpath},
    {"open_temp", l_open_temp},
    {"open_append", l_open_append},
    {"lock", l_lock},
    {NULL, NULL},
};

static const luaL_Reg listing_meta[] = {
    {"__gc", listing_gc},
    {"__close", listing_gc},
    {NULL, NULL},
};

static const luaL_Reg lock_meta[] = {
    {"__gc", lock_release},
    {"__close", lock_release},
    {NULL, NULL},
};

static const luaL_Reg lock_methods[] = {
    {"release", lock_release},
    {"held", lock_held},
    {NULL, NULL},
};

int luaopen_kl_fs(lua_State *L) {
  kl_newtype(L, LISTING_MT, listing_meta, NULL);
  kl_newtype(L, LOCK_MT, lock_meta, lock_methods);
  luaL_newlib(L, fs_functions);
  return 1;
}
