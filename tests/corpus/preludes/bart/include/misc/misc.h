// Stand-in for bart's misc/misc.h: its array-parameter macro (a C99
// variable-length bound, nothing in C++) and two helpers.
#define __VLA(x)
int bitcount(unsigned long flags);
void error(const char *fmt, ...);
