// One heat step with the 7-point stencil: v = u + alpha * (the six
// neighbours - 6 u) inside the grid, v = u on its boundary; u[z][y][x] with
// x fastest. Naive: one thread per point, z (the slowest index) on
// threadIdx.x, so a warp's reads are a whole plane apart.
// @kl launch grid(cdiv(nz, B), cdiv(ny, B), cdiv(nx, B)) block(B, B, B)
#define B 8

extern "C" __global__ void stencil3d(int nz, int ny, int nx, float alpha, const float *u, float *v) {
  int z = blockIdx.x * B + threadIdx.x;
  int y = blockIdx.y * B + threadIdx.y;
  int x = blockIdx.z * B + threadIdx.z;
  if (z >= nz || y >= ny || x >= nx) return;
  long plane = (long)ny * nx;
  long at = z * plane + (long)y * nx + x;
  if (z == 0 || y == 0 || x == 0 || z == nz - 1 || y == ny - 1 || x == nx - 1) {
    v[at] = u[at];
    return;
  }
  float c = u[at];
  float around = u[at - plane] + u[at + plane] + u[at - nx] + u[at + nx] + u[at - 1] + u[at + 1];
  v[at] = c + alpha * (around - 6.0f * c);
}
