// Stand-in for the example's Sobol generator header: the one call the
// kernel file makes, and the dimension count it passes.
#define n_dimensions 2
void sobolGPU(int n_vectors, int n_dims, unsigned int *d_directions, float *d_output);
