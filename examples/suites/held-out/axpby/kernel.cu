// z = alpha * x + beta * y over n elements, n a 64-bit count (the BLAS
// axpby, written out of place). Naive: one thread per element, a 64-bit
// index from blockDim.x, each thread loading x[i] and y[i] once and storing
// z[i] once.
// @kl launch grid(cdiv(n, THREADS)) block(THREADS)
#define THREADS 256

extern "C" __global__ void axpby(long long n, float alpha, const float *x, float beta, const float *y, float *z) {
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) z[i] = alpha * x[i] + beta * y[i];
}
