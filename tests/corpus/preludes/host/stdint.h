// Stand-in for <stdint.h>: see README.md. libcu++ (in the toolkit) gives
// NVRTC the fixed-width types.
#ifndef KL_STDINT_H
#define KL_STDINT_H
#include <cuda/std/cstdint>
#ifndef INT32_MAX
#define INT32_MAX 2147483647
#endif
#endif
