// A 64 x 64 tile padded by a PAD constant, read back transposed.
#define T 64
#define PAD 1

__global__ void flip(const int *in, int *out) {
  __shared__ int t[T][T];
  int x = threadIdx.x, y = threadIdx.y;
  t[y][x] = in[y * T + x];
  __syncthreads();
  out[y * T + x] = t[x][y];
}
