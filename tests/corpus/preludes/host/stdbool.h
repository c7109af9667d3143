// Stand-in for <stdbool.h>: see README.md. C99's boolean keyword, for
// the C-style signatures compiled as C++.
#define _Bool bool
