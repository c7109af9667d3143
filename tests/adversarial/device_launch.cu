// expect: compile_error. Hands the work to a child grid on a device stream.
// @kl launch grid(cdiv(n, 256)) block(256)
__global__ void child(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  if (blockIdx.x == 0 && threadIdx.x == 0) {
    cudaStream_t s;
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    child<<<(n + 255) / 256, 256, 0, s>>>(n, a, x, y);
  }
}
