/* Where a shared library was loaded from, for `klineage doctor`. */
#ifndef KL_LIBPATH_H
#define KL_LIBPATH_H

#include <stddef.h>

/* Writes the path of the object that defines `symbol` into buf (NUL
 * terminated) and returns buf, or returns NULL when it cannot tell (static
 * symbol, stripped object). The caller owns buf. */
const char *kl_library_of(const void *symbol, char *buf, size_t size);

/* Directory holding the running executable, from /proc/self/exe; NULL on
 * failure. */
const char *kl_executable_dir(char *buf, size_t size);

#endif
