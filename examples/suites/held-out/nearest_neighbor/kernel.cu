// The nearest reference point of each query point in 3D integer
// coordinates (x, y, z interleaved): nearest[q] = the r minimizing
// |ref[r] - query[q]|^2, the smallest such r on a tie; the squared
// distances are exact in int. Naive: one thread per query scanning every
// reference point from global memory.
// @kl launch grid(cdiv(Q, 256)) block(256)

extern "C" __global__ void nearest_neighbor(int Q, int R, const int *query, const int *ref, int *nearest) {
  int q = blockIdx.x * blockDim.x + threadIdx.x;
  if (q >= Q) return;
  int qx = query[3 * q], qy = query[3 * q + 1], qz = query[3 * q + 2];
  int best = 0, best_d = 0x7fffffff;
  for (int r = 0; r < R; ++r) {
    int dx = ref[3 * r] - qx, dy = ref[3 * r + 1] - qy, dz = ref[3 * r + 2] - qz;
    int d = dx * dx + dy * dy + dz * dz;
    if (d < best_d) {
      best_d = d;
      best = r;
    }
  }
  nearest[q] = best;
}
