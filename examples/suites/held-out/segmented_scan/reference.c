// The C reference of segmented_scan: a running sum in double, restarted at
// every head.
void reference(int n, const unsigned char *head, const float *x, float *y) {
  double sum = 0.0;
  for (int i = 0; i < n; ++i) {
    if (i == 0 || head[i]) sum = 0.0;
    sum += x[i];
    y[i] = (float)sum;
  }
}
