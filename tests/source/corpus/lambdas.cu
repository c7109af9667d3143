// Lambdas, captures, trailing return types, and device lambdas.
#include <thrust/device_vector.h>

__global__ void apply(float *x, int n) {
  auto square = [](float v) { return v * v; };
  auto scale = [=] __device__(float v) -> float { return v * 2.0f; };
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = scale(square(x[i]));
}

void host_side(int n) {
  int total = 0;
  auto add = [&total](int k) mutable { total += k; };
  for (int k = 0; k < n; k++) add(k);
  auto nested = [&](int a) { return [a](int b) { return a + b; }; };
  total += nested(1)(2);
}
