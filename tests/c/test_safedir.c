/* engine/core/safedir.c: the folder walk (owned tail and ancestors, links,
 * relative paths, "..") and the file check, in a scratch folder. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/safedir.h"
#include "harness.h"

static char root[256];
static char why[4400];

static const char *at(const char *rel) {
  static char buf[8][512];
  static int k;
  char *b = buf[k++ % 8];
  snprintf(b, 512, "%s/%s", root, rel);
  return b;
}

static unsigned mode_of(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0 ? (unsigned)(st.st_mode & 07777) : 0u;
}

static void touch(const char *path, unsigned mode) {
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
  chmod(path, mode);
}

int main(void) {
  test_batch t = {0, 0};
  snprintf(root, sizeof root, "/tmp/kl_safedir_XXXXXX");
  if (!mkdtemp(root)) return 1;

  INT_EQ(&t, kl_safedir_ensure(at("a/klineage/emu"), 2, 1, NULL, why, sizeof why), 1, "creates a fresh path");
  INT_EQ(&t, mode_of(at("a/klineage")), 0700, "owned folders are made 0700");
  INT_EQ(&t, mode_of(at("a")), 0700, "missing ancestors too");
  int absent = 0;
  INT_EQ(&t, kl_safedir_ensure(at("b/c"), 1, 0, &absent, why, sizeof why), 0, "without create, a missing folder fails");
  INT_EQ(&t, absent, 1, "and says it is absent");

  mkdir(at("open"), 0700);
  chmod(at("open"), 0777);
  INT_EQ(&t, kl_safedir_ensure(at("open"), 1, 1, NULL, why, sizeof why), 0, "an owned folder others can write is refused");
  OK(&t, strstr(why, "mode 0777") != NULL, "the reason gives the mode");
  INT_EQ(&t, kl_safedir_ensure(at("open/c"), 1, 1, NULL, why, sizeof why), 0, "so is an ancestor without the sticky bit");
  chmod(at("open"), 01777);
  INT_EQ(&t, kl_safedir_ensure(at("open/c"), 1, 1, NULL, why, sizeof why), 1, "a sticky ancestor is fine (/tmp)");

  mkdir(at("real"), 0700);
  OK(&t, symlink(at("real"), at("link")) == 0, "symlink");
  INT_EQ(&t, kl_safedir_ensure(at("link"), 1, 1, NULL, why, sizeof why), 0, "an owned folder that is a link is refused");
  OK(&t, strstr(why, "symbolic link") != NULL, "the reason says link");
  INT_EQ(&t, kl_safedir_ensure(at("link/cache"), 1, 1, NULL, why, sizeof why), 1, "an ancestor link of ours is followed");
  struct stat st;
  OK(&t, stat(at("real/cache"), &st) == 0 && S_ISDIR(st.st_mode), "into its target");
  OK(&t, symlink("real", at("rel-link")) == 0, "symlink");
  INT_EQ(&t, kl_safedir_ensure(at("rel-link/cache2"), 1, 1, NULL, why, sizeof why), 1, "a relative link too");
  OK(&t, stat(at("real/cache2"), &st) == 0, "relative to its folder");

  INT_EQ(&t, kl_safedir_ensure(at("real/../a/klineage/emu"), 2, 0, NULL, why, sizeof why), 1, "'..' above the owned part");
  INT_EQ(&t, kl_safedir_ensure(at("a/klineage/emu/.."), 1, 0, NULL, why, sizeof why), 0, "'..' as the owned folder is refused");
  char cwd[512];
  if (!getcwd(cwd, sizeof cwd)) cwd[0] = '\0';
  if (chdir(root) == 0) {
    INT_EQ(&t, kl_safedir_ensure("rel/c", 1, 1, NULL, why, sizeof why), 1, "a relative path is taken from the current folder");
    OK(&t, stat(at("rel/c"), &st) == 0, "and made there");
    if (cwd[0] && chdir(cwd) != 0) fprintf(stderr, "cannot return to %s\n", cwd);
  }
  touch(at("file"), 0600);
  INT_EQ(&t, kl_safedir_ensure(at("file"), 1, 0, NULL, why, sizeof why), 0, "a file is not a folder");

  INT_EQ(&t, kl_safedir_check_file(at("a/none.so"), why, sizeof why), KL_SAFEDIR_ABSENT, "an absent file");
  touch(at("a/ok.so"), 0700);
  INT_EQ(&t, kl_safedir_check_file(at("a/ok.so"), why, sizeof why), KL_SAFEDIR_SAFE, "a private file");
  touch(at("a/loose.so"), 0666);
  INT_EQ(&t, kl_safedir_check_file(at("a/loose.so"), why, sizeof why), KL_SAFEDIR_LOOSE, "a file others can write");
  OK(&t, symlink(at("a/ok.so"), at("a/link.so")) == 0, "symlink");
  INT_EQ(&t, kl_safedir_check_file(at("a/link.so"), why, sizeof why), KL_SAFEDIR_REFUSED, "a link");
  INT_EQ(&t, kl_safedir_check_file(at("a"), why, sizeof why), KL_SAFEDIR_REFUSED, "a folder");
  char home[512];
  INT_EQ(&t, kl_safedir_home(home, sizeof home, why, sizeof why), 1, "finds the home folder");
  OK(&t, home[0] == '/', "an absolute one");

  char cmd[300];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
  if (system(cmd) != 0) fprintf(stderr, "cannot remove %s\n", root);
  return kl_test_finish(&t);
}
