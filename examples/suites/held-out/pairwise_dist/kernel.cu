// Squared Euclidean distances between two point sets, X (N x D) and Y
// (M x D), both row-major: dist[i][j] = sum over d of (X[i][d] - Y[j][d])^2.
// Naive: one thread per pair on a 2D grid (j on threadIdx.x), both points
// read from global memory for every pair, so a warp reads 32 points of Y
// D floats apart.
// @kl launch grid(cdiv(M, BS), cdiv(N, BS)) block(BS, BS)
#define BS 16

extern "C" __global__ void pairwise_dist(int N, int M, int D, const float *X, const float *Y, float *dist) {
  int j = blockIdx.x * BS + threadIdx.x;
  int i = blockIdx.y * BS + threadIdx.y;
  if (i >= N || j >= M) return;
  float s = 0.0f;
  for (int d = 0; d < D; ++d) {
    float diff = X[i * D + d] - Y[j * D + d];
    s += diff * diff;
  }
  dist[(long)i * M + j] = s;
}
