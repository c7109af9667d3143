__global__ void order(float *out, int n) {
  // match: $a=x $b=k $Y=n/2
  float x = out[0];
  int k = n / 2;
  out[k] = x;
  int j = 1; // nomatch: int first
  float z = 2.0f;
  out[j] = z;
}
