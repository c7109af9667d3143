// C++ in CUDA: operators, constructors, range-for, explicit instantiation,
// library templates and cooperative groups.
#include <cooperative_groups.h>
#include <mma.h>
namespace cg = cooperative_groups;
using namespace nvcuda;

struct Complex {
  float re, im;
  __host__ __device__ Complex() : re(0.f), im(0.f) {}
  __host__ __device__ Complex(float r, float i) : re{r}, im{i} {}
  __host__ __device__ ~Complex() {}
  __host__ __device__ Complex operator+(const Complex &o) const { return Complex(re + o.re, im + o.im); }
  __host__ __device__ Complex &operator+=(const Complex &o) { re += o.re; im += o.im; return *this; }
  __host__ __device__ float operator[](int k) const { return k ? im : re; }
  __host__ __device__ explicit operator float() const { return re; }
};

__device__ float2 operator*(float2 a, float s) { return make_float2(a.x * s, a.y * s); }

template <typename T>
__global__ void sum_all(const T *in, T *out, int n) {
  cg::thread_block block = cg::this_thread_block();
  T acc{};
  int items[4] = {1, 2, 3, 4};
  for (int v : items) acc += in[v];
  for (const auto &v : items) { acc += v; }
  wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> a_frag;
  wmma::fill_fragment(a_frag, 0.0f);
  block.sync();
  if constexpr (sizeof(T) == 4) { out[threadIdx.x] = acc; }
  static_assert(sizeof(T) >= 2, "small types unsupported");
  extern __shared__ __align__(16) unsigned char smem[];
  T *tile = reinterpret_cast<T *>(smem);
  tile[threadIdx.x] = *reinterpret_cast<const T *>(&in[blockIdx.x * blockDim.x + threadIdx.x]);
  out[blockIdx.x] = (T)(float)tile[0] + static_cast<T>(n);
}

template __global__ void sum_all<float>(const float *, float *, int);
template __global__ void sum_all<int>(const int *, int *, int);
