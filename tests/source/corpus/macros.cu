// Macros with continuations, stringizing, token pasting, conditionals.
#define BLOCK_SIZE 256
#define TILE (BLOCK_SIZE / 8)
#define CHECK(call)                                                   \
  do {                                                                \
    cudaError_t err_ = (call);                                        \
    if (err_ != cudaSuccess) {                                        \
      fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, #call);       \
      abort();                                                        \
    }                                                                 \
  } while (0)
#define CAT(a, b) a##b
#define MAX(a,b) ((a) > (b) ? (a) : (b))
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#  define HAS_TMA 1
#else
#  define HAS_TMA 0
#endif
/* a block comment
   over lines */ #define NOT_A_DIRECTIVE_ONLY_TEXT

__global__ void k(float *a) {
#ifdef HAS_TMA
  a[threadIdx.x] = TILE;
#else
  a[threadIdx.x] = 0;
#endif
  int CAT(x, 1) = MAX(1, 2);
  a[0] += x1;
}
