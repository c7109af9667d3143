__global__ void acc(float *a, const float *b, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) {
    s = s + (b[i] * 2.0f); // match: $id=s
    a[i] += b[i]; // nomatch: the target is not an identifier
  }
  a[0] = s;
}
