// The C reference of nbody: every softened interaction and the sums in double.
#include <math.h>

void reference(int n, float eps2, const float *px, const float *py, const float *pz,
               const float *mass, float *ax, float *ay, float *az) {
  for (int i = 0; i < n; ++i) {
    double fx = 0.0, fy = 0.0, fz = 0.0;
    for (int j = 0; j < n; ++j) {
      double dx = (double)px[j] - px[i], dy = (double)py[j] - py[i], dz = (double)pz[j] - pz[i];
      double r2 = dx * dx + dy * dy + dz * dz + eps2;
      double s = mass[j] / (r2 * sqrt(r2));
      fx += s * dx;
      fy += s * dy;
      fz += s * dz;
    }
    ax[i] = (float)fx;
    ay[i] = (float)fy;
    az[i] = (float)fz;
  }
}
