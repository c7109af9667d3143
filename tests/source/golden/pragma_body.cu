// Unbraced loop and branch bodies led by #pragma lines (sgemm v4-v7, conv2d).
__global__ void k(const float *a, float *s, int n) {
  for (int k = 0; k < 8; ++k)
#pragma unroll
    for (int j = 0; j < 4; ++j) s[k] += a[j];
  if (n > 4)
#pragma unroll 2
#pragma nounroll
    for (int i = 0; i < n; i++) s[i] = 0;
  else
#pragma unroll
    while (n--) s[n] = 1;
  do
#pragma unroll
    for (int j = 0; j < 4; ++j) s[j]++;
  while (0);
  for (float v : a)
#pragma unroll
    for (;;) break;
#pragma unroll
  for (int i = 0; i < 4; i++) {
#pragma unroll
    for (int j = 0; j < 4; j++) s[i] += a[j];
  }
}
