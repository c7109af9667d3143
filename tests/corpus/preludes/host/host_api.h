// The CUDA runtime's host functions that the corpus's host code calls, for
// a compile with -default-device -rdc=true: the device runtime already
// declares cudaMalloc, cudaFree, cudaGetLastError and cudaMemcpyAsync.
#ifndef KL_HOST_API_H
#define KL_HOST_API_H
cudaError_t cudaStreamSynchronize(cudaStream_t);
cudaError_t cudaThreadSynchronize(void);
cudaError_t cudaDeviceSynchronize(void);
cudaError_t cudaMemcpy(void *, const void *, size_t, cudaMemcpyKind);
cudaError_t cudaMemset(void *, int, size_t);
cudaError_t cudaMemsetAsync(void *, int, size_t, cudaStream_t);
const char *cudaGetErrorString(cudaError_t);
cudaError_t cudaSetDevice(int);
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *, const void *);
// NVRTC declares the typed cudaMalloc but defines it for the host only.
template <class T> cudaError_t cudaMalloc(T **ptr, size_t size) { return cudaMalloc((void **)ptr, size); }
#endif
