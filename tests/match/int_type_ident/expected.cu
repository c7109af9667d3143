// Pads shared-memory tiles by one column against bank conflicts.
#define TILE 32
__global__ void transpose(float *out, const float *in, int n) {
  __shared__ float tile[32][32 + 1]; // match: $T=float $name=tile $N=32 $M=32
  __shared__ double acc[16][8 + 1]; // match: $T=double $name=acc $N=16 $M=8
  __shared__ float big[TILE][TILE]; // nomatch: not integer literals
  __shared__ int flat[64]; // nomatch: one dimension
  tile[threadIdx.y][threadIdx.x] = in[threadIdx.y * n + threadIdx.x];
  __syncthreads();
  out[threadIdx.x * n + threadIdx.y] = tile[threadIdx.x][threadIdx.y];
}
