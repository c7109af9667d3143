// CPU reference for reduction: out[0] = sum of x[0..n), accumulated in
// double. `partial` is the kernels' scratch buffer and is not used here.
void reference(int n, const float *x, float *partial, float *out) {
  double sum = 0.0;
  for (int i = 0; i < n; ++i) sum += (double)x[i];
  out[0] = (float)sum;
  (void)partial;
}
