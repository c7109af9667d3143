// Round-trip corpus: the constructs of issue 13 mixed with their hostile
// neighbours (unbalanced, truncated, directives in odd places).
#define fp float
#define NB (4 * 32)
typedef unsigned int uint_t;
struct param_t { int x; float y[NB]; };

__device__ fp dist(fp a, fp b
#if USE_SQRT
                   , bool root
#endif
                   ) {
  fp d = (fp)a - (fp)b;
#if USE_SQRT
  if (root)
#pragma unroll
    for (int i = 0; i < 2; i++) d = sqrtf(d);
#endif
  return (NB) * d;
}

__global__ void __launch_bounds__(256) k(__grid_constant__ const param_t p, fp *out, int n) {
  for (int j = 0; j < n; ++j)
#pragma unroll 4
#pragma nounroll
    for (int i = 0; i < 4; ++i)
      out[j * 4 + i] = (fp)p.y[i] + (uint_t)-j;
  if (n)
#pragma unroll
    while (n--) out[n] = 0;
  else
#pragma unroll
    do out[0] += 1; while (0);
}

void host(int n, dim3 grid) {
  fp *h = new fp[n * NB];
  Runner<fp> *r = new (buffer) Runner<fp>(n, h);
  r->run<true, 4>(h, n);
  r->template stop<fp>();
  dim3 block(NB, 1);
  Foo foo(1), bar(n / 2);
  Baz vexing(Qux);
  k<<<grid, block>>>(params, h,
#ifdef BIG
                     n * 2
#else
                     n
#endif
  );
  delete r;
  delete[] h;
  if (n < 0) throw std::runtime_error("negative");
}

void broken() {
  x = (y) - z
  w = new int[;
  for (;;)
#pragma unroll
}
