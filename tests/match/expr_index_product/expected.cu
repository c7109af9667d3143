// Reads through the read-only cache: a product of two indexed loads.
__global__ void dot(const float *A, const float *B, float *out, int n) {
  float acc = 0.0f;
  for (int i = 0; i < n; ++i) {
    acc += __ldg(&A[i]) * __ldg(&B[i]); // match: $A=A $i=i $B=B $j=i
  }
  float s = A[0] + B[1]; // nomatch: a sum, not a product
  float t = 2.0f * A[3]; // nomatch: only one side is indexed
  out[0] = acc + s + t + __ldg(&A[n]) * __ldg(&B[n - 1]); // match: $A=A $B=B $j=n-1
}
