// Stand-in for the example's multiformat_types.h: the array-of-structures
// and structure-of-arrays layouts its kernels convert between.
struct point { float x, y; };
struct struct_of_arrays { float *x, *y; };
