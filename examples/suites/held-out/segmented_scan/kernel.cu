// Segmented inclusive scan: a segment starts at 0 and at every i with
// head[i] != 0, and y[i] = x[s] + ... + x[i] for the start s of i's
// segment. Naive: one thread per element walking back to its segment's
// start, adding as it goes, so the work grows with the segment lengths.
// @kl launch grid(cdiv(n, BLOCK)) block(BLOCK)
#define BLOCK 256

extern "C" __global__ void segmented_scan(int n, const unsigned char *head, const float *x, float *y) {
  int i = blockIdx.x * BLOCK + threadIdx.x;
  if (i >= n) return;
  float sum = 0.0f;
  for (int j = i;; --j) {
    sum += x[j];
    if (j == 0 || head[j]) break;
  }
  y[i] = sum;
}
