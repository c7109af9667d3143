__global__ void stage(float *out, const float *in) {
  __shared__ float buf[256];
  buf[threadIdx.x] = in[threadIdx.x];
  // match: two barriers with code between
  __syncthreads();
  float v = buf[255 - threadIdx.x];
  v *= 2.0f;
  out[threadIdx.x] = v;
  if (threadIdx.x == 0) {
    __syncthreads(); // nomatch: one barrier in this block
  }
}
