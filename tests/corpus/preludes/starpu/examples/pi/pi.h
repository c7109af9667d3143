// Stand-in for the example's pi.h: the sample type and StarPU.
#include <starpu.h>
#define TYPE float
