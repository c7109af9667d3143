// Off by one: the guard lets i == n through, one write past the end.
extern "C" __global__ void scale_off_by_one(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n) out[i] = 2.0f * in[i];
}

extern "C" __global__ void scale(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = 2.0f * in[i];
}

// Writes below the start of the buffer.
extern "C" __global__ void underflow(float *out) { out[(int)threadIdx.x - 3] = 1.0f; }

extern "C" __global__ void checks(const int *in) {
  assert(in[threadIdx.x] >= 0);
}

extern "C" __global__ void divide(const int *in, int *out) {
  out[threadIdx.x] = 100 / in[threadIdx.x];
}

extern "C" __global__ void hello(int k) {
  if (threadIdx.x == 2 && blockIdx.x == 1) printf("hello %d %.1f\n", k, 1.5f);
}

// A local array larger than the fiber's stack (256 KiB).
extern "C" __global__ void big_stack(float *out, int n) {
  float local[100000];
  for (int i = 0; i < n; ++i) local[i] = (float)i;
  out[threadIdx.x] = local[n - 1];
}

// Never ends unless the flag is set: a hang that the timeout must stop.
extern "C" __global__ void spin(volatile int *flag) {
  while (*flag == 0) {
  }
}

extern "C" __global__ void aborts(int *out) {
  if (threadIdx.x == 5) abort();
  out[threadIdx.x] = 1;
}
