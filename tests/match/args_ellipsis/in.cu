void upload(float *d, const float *h, size_t n, cudaStream_t stream) {
  cudaMemcpy(d, h, n * sizeof(float), cudaMemcpyHostToDevice); // match:
  cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost); // nomatch: other direction
}
