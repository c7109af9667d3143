// Stand-in for the example's stencil.h: the cell type and the stencil's
// radius.
#include <starpu.h>
#define TYPE unsigned char
#define K 1
