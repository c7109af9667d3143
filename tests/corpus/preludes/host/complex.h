// Stand-in for <complex.h>: C99 spells its complex types with this word.
#define complex _Complex
