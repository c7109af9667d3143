// Stand-in for <math.h>: see README.md. NVRTC knows the functions; the
// constant is POSIX's.
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
