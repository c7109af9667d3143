// __grid_constant__ parameters (CUDA 11.7+).
struct param_t { int x; };
__global__ void kernelDefault(__grid_constant__ const param_t p, int *result) {
  result[threadIdx.x] = p.x;
}
__global__ void kernelLarge(const __grid_constant__ param_t p, int *__restrict__ r) { r[0] = p.x; }
