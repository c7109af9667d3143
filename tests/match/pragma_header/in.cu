__global__ void unrolled(float *a) {
  // match: a pragma, then a loop
  #pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = 0.0f;
  #pragma unroll 2 // nomatch: another pragma
  for (int i = 4; i < 8; ++i) a[i] = 1.0f;
  for (int i = 8; i < 12; ++i) a[i] = 2.0f; // nomatch: no pragma
}
