// Stand-in for the example's complex_interface.h: a vector of complex
// numbers kept as two arrays of doubles.
struct starpu_complex_interface { double *real, *imaginary; int nx; };
#define STARPU_COMPLEX_GET_REAL(i) (((struct starpu_complex_interface *)(i))->real)
#define STARPU_COMPLEX_GET_IMAGINARY(i) (((struct starpu_complex_interface *)(i))->imaginary)
#define STARPU_COMPLEX_GET_NX(i) (((struct starpu_complex_interface *)(i))->nx)
