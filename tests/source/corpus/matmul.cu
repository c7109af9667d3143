// Access-pattern cases: a naive matmul, a strided read, a broadcast and a
// grid-stride loop.
#define TILE 16
constexpr int kUnroll = 4;

// @kl launch grid(cdiv(N, 16), cdiv(M, 16)) block(16, 16)
// @kl requires N % 16 == 0
__global__ void matmul(const float *A, const float *B, float *C, int M, int N, int K) {
  int row = blockIdx.y * TILE + threadIdx.y;
  int col = blockIdx.x * TILE + threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
  C[row * N + col] = acc;
}

__global__ void strided(const float *in, float *out, const float *bias, int n, int stride) {
  int tid = threadIdx.x + blockIdx.x * blockDim.x;
  for (int i = tid; i < n; i += blockDim.x * gridDim.x) {
    float s = 0.f;
    for (int j = 0; j < kUnroll; j++) s += bias[j] + in[(tid * stride) + j];
    out[2 * threadIdx.x + (i << 1)] = s;
  }
}
