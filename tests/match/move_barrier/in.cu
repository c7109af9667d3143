__global__ void late(float *out, const float *in) {
  __shared__ float buf[128];
  float v = in[threadIdx.x];
  // match: $v=v $E=buf[threadIdx.x]*2.0f
  __syncthreads();
  v = buf[threadIdx.x] * 2.0f;
  __syncthreads(); // nomatch: followed by a declaration
  float w = v;
  out[threadIdx.x] = w;
}
