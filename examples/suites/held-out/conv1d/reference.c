// The C reference of conv1d: each output's taps summed in double, zero
// outside the signal.
void reference(int rows, int len, int R, const float *x, const float *w, float *y) {
  for (long r = 0; r < rows; ++r)
    for (int t = 0; t < len; ++t) {
      double sum = 0.0;
      for (int k = -R; k <= R; ++k)
        if (t + k >= 0 && t + k < len) sum += (double)w[k + R] * (double)x[r * len + t + k];
      y[r * len + t] = (float)sum;
    }
}
