// The gravitational acceleration of each of n bodies from all the others,
// with Plummer softening (G = 1): a[i] = sum over j of m[j] (p[j] - p[i]) /
// (|p[j] - p[i]|^2 + eps2)^(3/2); the j = i term is zero by itself.
// Positions come as three arrays (x, y, z), masses as a fourth. Naive: one
// thread per body looping over every body from global memory.
// @kl launch grid(cdiv(n, 128)) block(128)

extern "C" __global__ void nbody(int n, float eps2, const float *px, const float *py, const float *pz,
                                 const float *mass, float *ax, float *ay, float *az) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float xi = px[i], yi = py[i], zi = pz[i];
  float fx = 0.0f, fy = 0.0f, fz = 0.0f;
  for (int j = 0; j < n; j++) {
    float dx = px[j] - xi;
    float dy = py[j] - yi;
    float dz = pz[j] - zi;
    float r2 = dx * dx + dy * dy + dz * dz + eps2;
    float inv = rsqrtf(r2);
    float s = mass[j] * inv * inv * inv;
    fx += s * dx;
    fy += s * dy;
    fz += s * dz;
  }
  ax[i] = fx;
  ay[i] = fy;
  az[i] = fz;
}
