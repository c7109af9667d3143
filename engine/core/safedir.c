/* Private folders and files (safedir.h). The walk keeps two strings: the
 * physical folder reached so far (every component of it checked) and the
 * components still to go; a followed link puts its target in front of
 * those. */
#define _GNU_SOURCE
#include "core/safedir.h"

#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#define MAX_LINKS 40
#define REST_MAX (2 * PATH_MAX)

/* The next component of *p ("" at the end), skipping empty ones and ".". */
static size_t next_component(const char **p) {
  for (;;) {
    while (**p == '/') (*p)++;
    size_t len = strcspn(*p, "/");
    if (len == 1 && **p == '.') {
      *p += 1;
      continue;
    }
    return len;
  }
}

static int count_components(const char *p) {
  int n = 0;
  size_t len;
  while ((len = next_component(&p)) > 0) {
    n++;
    p += len;
  }
  return n;
}

static int fail(char *why, size_t n, const char *fmt, const char *path, unsigned a, unsigned b) {
  snprintf(why, n, fmt, path, a, b);
  return 0;
}

/* Whether folder (or link) st at path may be relied on; 1 or 0 with why. */
static int acceptable(const struct stat *st, const char *path, int strict, uid_t uid, char *why, size_t n) {
  unsigned mode = (unsigned)(st->st_mode & 07777);
  if (S_ISLNK(st->st_mode)) {
    if (strict) return fail(why, n, "'%s' is a symbolic link, not a folder of its own", path, 0, 0);
    if (st->st_uid != 0 && st->st_uid != uid)
      return fail(why, n, "'%s' is a symbolic link owned by uid %u, neither root nor you (uid %u)", path,
                  (unsigned)st->st_uid, (unsigned)uid);
    return 1;
  }
  if (!S_ISDIR(st->st_mode)) return fail(why, n, "'%s' is not a folder", path, 0, 0);
  if (strict) {
    if (st->st_uid != uid)
      return fail(why, n, "'%s' is owned by uid %u, not by you (uid %u)", path, (unsigned)st->st_uid, (unsigned)uid);
    if (mode & 022) return fail(why, n, "'%s' is writable by group or others (mode %04o)", path, mode, 0);
    return 1;
  }
  if (st->st_uid != 0 && st->st_uid != uid)
    return fail(why, n, "'%s' is owned by uid %u, neither root nor you (uid %u)", path, (unsigned)st->st_uid,
                (unsigned)uid);
  if ((mode & 022) && !(mode & S_ISVTX))
    return fail(why, n, "'%s' is writable by group or others without the sticky bit (mode %04o)", path, mode, 0);
  return 1;
}

int kl_safedir_ensure(const char *path, int owned, int create, int *absent, char *why, size_t n) {
  if (absent) *absent = 0;
  char rest[REST_MAX], cur[PATH_MAX], next[PATH_MAX], target[PATH_MAX];
  if (!path || !*path) return fail(why, n, "an empty path%s", "", 0, 0);
  if (path[0] == '/') {
    if (strlen(path) >= sizeof rest) return fail(why, n, "'%s' is too long", path, 0, 0);
    strcpy(rest, path);
  } else {
    if (!getcwd(cur, sizeof cur)) return fail(why, n, "cannot read the current folder for '%s'", path, 0, 0);
    if ((size_t)snprintf(rest, sizeof rest, "%s/%s", cur, path) >= sizeof rest)
      return fail(why, n, "'%s' is too long", path, 0, 0);
  }
  if (owned > count_components(rest)) owned = count_components(rest);
  uid_t uid = geteuid();
  struct stat st;
  if (lstat("/", &st) != 0) return fail(why, n, "cannot inspect '%s'", "/", 0, 0);
  if (!acceptable(&st, "/", 0, uid, why, n)) return 0;
  cur[0] = '\0'; /* "" stands for the root */
  const char *p = rest;
  int links = 0;
  size_t len;
  while ((len = next_component(&p)) > 0) {
    const char *comp = p;
    p += len;
    int strict = count_components(p) < owned;
    if (len == 2 && comp[0] == '.' && comp[1] == '.') {
      if (strict) return fail(why, n, "'%s' ends in '..': name the cache folder itself", path, 0, 0);
      char *slash = strrchr(cur, '/');
      if (slash) *slash = '\0';
      continue;
    }
    if ((size_t)snprintf(next, sizeof next, "%s/%.*s", cur, (int)len, comp) >= sizeof next)
      return fail(why, n, "'%s' is too long", path, 0, 0);
    int r = lstat(next, &st);
    if (r != 0 && errno == ENOENT && create) {
      if (mkdir(next, 0700) != 0 && errno != EEXIST) {
        snprintf(why, n, "cannot create '%s': %s", next, strerror(errno));
        return 0;
      }
      r = lstat(next, &st);
    }
    if (r != 0) {
      if (absent) *absent = errno == ENOENT;
      snprintf(why, n, "cannot use '%s': %s", next, strerror(errno));
      return 0;
    }
    if (!acceptable(&st, next, strict, uid, why, n)) return 0;
    if (S_ISLNK(st.st_mode)) {
      if (++links > MAX_LINKS) return fail(why, n, "'%s': too many symbolic links", path, 0, 0);
      ssize_t t = readlink(next, target, sizeof target - 1);
      if (t <= 0) {
        snprintf(why, n, "cannot read the link '%s': %s", next, t < 0 ? strerror(errno) : "empty");
        return 0;
      }
      target[t] = '\0';
      char joined[REST_MAX];
      if ((size_t)snprintf(joined, sizeof joined, "%s/%s", target, p) >= sizeof joined)
        return fail(why, n, "'%s' is too long once its links are followed", path, 0, 0);
      strcpy(rest, joined);
      p = rest;
      if (target[0] == '/') cur[0] = '\0';
      continue;
    }
    memcpy(cur, next, strlen(next) + 1);
  }
  return 1;
}

int kl_safedir_check_file(const char *path, char *why, size_t n) {
  struct stat st;
  if (lstat(path, &st) != 0) {
    int e = errno;
    snprintf(why, n, "'%s': %s", path, strerror(e));
    return e == ENOENT ? KL_SAFEDIR_ABSENT : KL_SAFEDIR_REFUSED;
  }
  if (S_ISLNK(st.st_mode)) return fail(why, n, "'%s' is a symbolic link", path, 0, 0) + KL_SAFEDIR_REFUSED;
  if (!S_ISREG(st.st_mode)) return fail(why, n, "'%s' is not a regular file", path, 0, 0) + KL_SAFEDIR_REFUSED;
  if (st.st_uid != geteuid())
    return fail(why, n, "'%s' is owned by uid %u, not by you (uid %u)", path, (unsigned)st.st_uid,
                (unsigned)geteuid()) + KL_SAFEDIR_REFUSED;
  if (st.st_mode & 022) {
    snprintf(why, n, "'%s' is writable by group or others (mode %04o)", path, (unsigned)(st.st_mode & 07777));
    return KL_SAFEDIR_LOOSE;
  }
  return KL_SAFEDIR_SAFE;
}

int kl_safedir_home(char *home, size_t hn, char *why, size_t n) {
  struct passwd pw, *found = NULL;
  char buf[16384];
  int e = getpwuid_r(geteuid(), &pw, buf, sizeof buf, &found);
  if (!found || !pw.pw_dir || !*pw.pw_dir) {
    snprintf(why, n, "uid %u has no home folder in the password database%s%s", (unsigned)geteuid(),
             e ? ": " : "", e ? strerror(e) : "");
    return 0;
  }
  if ((size_t)snprintf(home, hn, "%s", pw.pw_dir) >= hn) {
    snprintf(why, n, "the home folder's path is too long");
    return 0;
  }
  return 1;
}
