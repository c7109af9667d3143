__global__ void saxpy(int n, float a, const float *x, float *y);
void run(int n, float a, const float *x, float *y, cudaStream_t stream) {
  saxpy<<<(n + 255) / 256, 256>>>(n, a, x, y); // match: $k=saxpy $b=256
  saxpy<<<1, 32, 0, stream>>>(n, a, x, y); // nomatch: already has a stream
}
