// Prelude for bart's CUDA files (tests/corpus/preludes/compile.txt).
// bart's host wrappers are C99 in signature: they take `_Complex float *`
// and hand it to kernels as cuFloatComplex. NVRTC compiles C++, which has
// no _Complex; since those pointers are only cast, a float stands in.
#ifndef KL_BART_PRELUDE
#define KL_BART_PRELUDE
#define _Complex
// GNU C's parts of a complex value, on that float.
#define __real(x) (x)
#define __imag(x) 0.0f
// dfwavelet's host error macro rethrows; the host functions are compiled
// as device code here (-default-device), which has no exceptions, and
// none of them is a transform site.
#define throw
// What bart's headers bring along from <math.h>.
#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif
#endif
