// big_static_smem: a saxpy with a 64 MB static __shared__ array. ptxas
// refuses it ("uses too much shared data"); NVRTC leaves that line out of
// the log when ptxas runs with -v, so the error used to read
// "compile failed: ptxas info : 0 bytes gmem".
// @kl launch grid(cdiv(n, 256)) block(256)
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  __shared__ float stage[16 * 1024 * 1024];
  int i = blockIdx.x * 256 + threadIdx.x;
  stage[threadIdx.x] = i < n ? x[i] : 0.0f;
  __syncthreads();
  if (i < n) y[i] = a * stage[threadIdx.x] + y[i];
}
