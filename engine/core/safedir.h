/* Private folders and files: where klineage may keep what it later loads
 * (the emu cache's shared objects, the cubin cache) on a machine with other
 * local users. Another user who can write a folder on the way can plant a
 * file there; so every component of the path is checked with lstat, from
 * the root down, before anything is read from or written to it.
 *
 * A path is two parts: its last `owned` components are klineage's own
 * folders (the cache folder, klineage/ above it), the rest are ancestors
 * (the home folder, ~/.cache, /tmp, /).
 *   owned folders  real directories (a symbolic link is refused), owned by
 *                  the effective user, with no group or other write bit;
 *                  created with mode 0700 when missing;
 *   ancestors      directories or symbolic links owned by root or by the
 *                  effective user; a directory writable by group or others
 *                  only with the sticky bit (/tmp), where no one else can
 *                  rename or remove what is ours; a link is followed (only
 *                  its owner or root could change it). Missing ones are
 *                  created 0700 (ours then).
 * A relative path is taken from the current folder (getcwd), whose
 * components are checked the same way.
 *
 * Files inside: regular (not a link), owned by the effective user, with no
 * group or other write bit. Nothing here allocates. */
#ifndef KL_CORE_SAFEDIR_H
#define KL_CORE_SAFEDIR_H

#include <stddef.h>

/* Checks (and with create, makes) the folder `path`. Returns 1, or 0 with
 * why[] naming the component and the reason; *absent (when not NULL) is
 * set when the reason is a missing component (only without create). */
int kl_safedir_ensure(const char *path, int owned, int create, int *absent, char *why, size_t n);

/* What kl_safedir_check_file found. */
enum {
  KL_SAFEDIR_REFUSED = -1, /* a link, not a regular file, another owner */
  KL_SAFEDIR_ABSENT = 0,
  KL_SAFEDIR_SAFE = 1,     /* a file klineage may use */
  KL_SAFEDIR_LOOSE = 2     /* ours, but writable by group or others: a miss, to replace */
};

/* One of the above; why[] says what, in every case but SAFE. */
int kl_safedir_check_file(const char *path, char *why, size_t n);

/* The effective user's home folder from the password database, into
 * home[n]. Returns 1, or 0 with why[]. */
int kl_safedir_home(char *home, size_t hn, char *why, size_t n);

#endif
