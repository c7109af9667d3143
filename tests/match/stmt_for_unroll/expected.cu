__global__ void sum_rows(const float *A, float *out, int K) {
  float acc = 0.0f;
  // match: $k=k $K=K
  #pragma unroll 4
  for (int k = 0; k < K; ++k) acc += A[k];
  for (int j = 0; j < K; j++) acc -= A[j]; // nomatch: post-increment
  // match: $k=m
  #pragma unroll 4
  for (int m = 0; m < K; ++m) {
    acc *= A[m];
  }
  out[0] = acc;
}
