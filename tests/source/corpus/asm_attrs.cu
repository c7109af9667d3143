// Inline PTX, attributes, alignment, raw strings, odd literals.
#include <cstdio>

struct __align__(16) Vec { float x, y, z, w; };
struct alignas(8) Pair { int a; int b; };

__device__ __forceinline__ unsigned lane_id() {
  unsigned id;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(id));
  return id;
}

__device__ inline void cp_async(void *smem, const void *gmem) {
  unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  asm volatile(
      "cp.async.cg.shared.global [%0], [%1], 16;\n"
      :: "r"(s), "l"(gmem));
}

[[nodiscard]] __host__ __device__ int twice(int v) { return v << 1; }
__attribute__((always_inline)) static int thrice(int v) { return v * 3; }

const char *banner = R"raw(
  a raw string with "quotes", \backslashes\ and )" inside
)raw";
const char *plain = u8"utf-8 \u00e9" "concatenated" L"wide";
const char c1 = '\'', c2 = '\\';
unsigned long long big = 0xFFFF'FFFFull + 1'000'000ULL + 0b1011u;
double d = 1.5e-3 + .25 + 3.f + 0x1.8p1;

extern "C" {
__global__ void plain_kernel(int *p) { p[threadIdx.x] = lane_id(); }
}

namespace detail {
__device__ int helper(int x) { return twice(x) + thrice(x); }
}
