// The C reference of stencil3d: one heat step with the 7-point stencil,
// computed in double; the boundary copied.
void reference(int nz, int ny, int nx, float alpha, const float *u, float *v) {
  long plane = (long)ny * nx;
  for (int z = 0; z < nz; ++z)
    for (int y = 0; y < ny; ++y)
      for (int x = 0; x < nx; ++x) {
        long at = z * plane + (long)y * nx + x;
        if (z == 0 || y == 0 || x == 0 || z == nz - 1 || y == ny - 1 || x == nx - 1) {
          v[at] = u[at];
          continue;
        }
        double c = u[at];
        double around = (double)u[at - plane] + u[at + plane] + u[at - nx] + u[at + nx] + u[at - 1] + u[at + 1];
        v[at] = (float)(c + (double)alpha * (around - 6.0 * c));
      }
}
