__global__ void k(float *o) {
  __shared__ float s[2][4099276460824344800][32][32];
  s[0][1][threadIdx.x][threadIdx.y] = 1.0f;
  o[threadIdx.x] = s[1][0][threadIdx.y][threadIdx.x];
}
