// The C reference of elementwise_chain: y = relu(a * x + b) * s in double.
void reference(int n, float a, float b, float s, const float *x, float *y) {
  for (int i = 0; i < n; ++i) {
    double v = (double)a * x[i] + (double)b;
    if (v < 0.0) v = 0.0;
    y[i] = (float)(v * s);
  }
}
