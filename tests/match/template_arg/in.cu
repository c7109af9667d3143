// Template arguments are reachable by patterns: $N:int binds the integer
// argument of a call with template arguments.
template <int N> __device__ float load(const float *p) { return p[N]; }
__global__ void k(float *a, const float *b) {
  a[0] = load<4>(b); // match: $N=4 $p=b
  a[1] = load<8>(b + 1); // match: $N=8 $p=b+1
  a[2] = store<8>(b); // nomatch: another function
}
