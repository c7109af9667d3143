// Stand-in for the test's multiformat_types.h: the array-of-structures
// and structure-of-arrays layouts its kernels convert between.
struct point { float x, y; };
struct struct_of_arrays { float *x, *y; };
