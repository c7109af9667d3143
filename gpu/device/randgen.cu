// The input generator of engine/core/randgen.h, on the device: element i
// of a buffer depends only on (seed, stream, i), so every thread makes its
// own elements, and the bytes equal the host generator's bit for bit.
// Compiled with --fmad=false: the specification forbids fused multiply-add.
// Type codes follow kl_dtype; init codes follow kl_init_kind (zeros is a
// memset on the host side, not a launch).

#define KL_GAMMA 0x9E3779B97F4A7C15ull

enum { F32, F64, F16, BF16, I32, U32, I64, U8 };
enum { ZEROS, UNIFORM, NORMAL, INT };

__device__ static unsigned long long fin(unsigned long long z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ static double pow2(int e) {
  double r = 1.0, f = e >= 0 ? 2.0 : 0.5;
  for (int i = e >= 0 ? e : -e; i > 0; i--) r *= f;
  return r;
}

__device__ static double log_spec(unsigned long long n) {
  int h = 63 - __clzll((long long)n);
  double m = (double)n * pow2(-h);
  int e = h - 24;
  if (m > 0x1.6a09e667f3bcdp+0) {
    m = m * 0.5;
    e = e + 1;
  }
  double s = (m - 1.0) / (m + 1.0);
  double t = s * s;
  double p = 1.0 / 23.0;
  for (int k = 10; k >= 0; k--) p = p * t + 1.0 / (double)(2 * k + 1);
  return (double)e * 0x1.62e42fefa39efp-1 + (2.0 * s) * p;
}

__device__ static double cos2pi_spec(unsigned c) {
  unsigned q = (c >> 22) & 3u;
  double r = (double)(c & 0x3FFFFFu) * pow2(-22);
  double x = r * 0x1.921fb54442d18p+0;
  double t = x * x;
  double pc = 1.0, ps = 1.0;
  for (int k = 12; k >= 1; k--) pc = 1.0 - (t * pc) / (double)((2 * k - 1) * (2 * k));
  for (int k = 12; k >= 1; k--) ps = 1.0 - (t * ps) / (double)((2 * k) * (2 * k + 1));
  double s = x * ps;
  return q == 0 ? pc : q == 1 ? -s : q == 2 ? -pc : s;
}

__device__ static unsigned short f32_to_f16(float f) {
  unsigned x = __float_as_uint(f);
  unsigned short sign = (unsigned short)((x >> 16) & 0x8000);
  int exp = (int)((x >> 23) & 0xff);
  unsigned mant = x & 0x7fffff;
  if (exp == 0xff) return (unsigned short)(sign | (mant ? 0x7e00 : 0x7c00));
  if (exp == 0) return sign;
  int e = exp - 127;
  if (e > 15) return (unsigned short)(sign | 0x7c00);
  unsigned m = mant | 0x800000, base;
  int shift;
  if (e >= -14) {
    shift = 13;
    base = (unsigned)(e + 15) << 10;
    m = mant;
  } else {
    shift = -e - 1;
    if (shift > 24) return sign;
    base = 0;
  }
  unsigned k = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  unsigned result = base + k;
  if (rem > half || (rem == half && (result & 1))) result++;
  return (unsigned short)(sign | result);
}

__device__ static unsigned short f32_to_bf16(float f) {
  unsigned x = __float_as_uint(f);
  if ((x & 0x7fffffff) > 0x7f800000) return (unsigned short)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (unsigned short)(x >> 16);
}

__device__ static void store_double(unsigned char *out, long long i, int type, double v) {
  switch (type) {
  case F64: reinterpret_cast<double *>(out)[i] = v; break;
  case F32: reinterpret_cast<float *>(out)[i] = (float)v; break;
  case F16: reinterpret_cast<unsigned short *>(out)[i] = f32_to_f16((float)v); break;
  case BF16: reinterpret_cast<unsigned short *>(out)[i] = f32_to_bf16((float)v); break;
  }
}

__device__ static void store_int(unsigned char *out, long long i, int type, long long v) {
  switch (type) {
  case I32: reinterpret_cast<int *>(out)[i] = (int)v; break;
  case U32: reinterpret_cast<unsigned *>(out)[i] = (unsigned)v; break;
  case I64: reinterpret_cast<long long *>(out)[i] = v; break;
  case U8: out[i] = (unsigned char)v; break;
  default: store_double(out, i, type, (double)v); break;
  }
}

extern "C" __global__ void kl_randgen_fill(unsigned char *out, long long count, int type, int kind,
                                           unsigned long long seed, unsigned long long stream,
                                           long long lo, long long hi) {
  const int sig = type == F64 ? 53 : type == F32 ? 24 : type == F16 ? 11 : 8;
  const unsigned long long key = fin(fin(seed + KL_GAMMA) + (stream + 1) * KL_GAMMA);
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned long long bits = fin(key + ((unsigned long long)i + 1) * KL_GAMMA);
    if (kind == UNIFORM) {
      unsigned long long k = bits >> (64 - sig);
      store_double(out, i, type, (double)k * pow2(1 - sig) - 1.0);
    } else if (kind == NORMAL) {
      unsigned long long a = bits >> 40;
      unsigned c = (unsigned)((bits >> 16) & 0xFFFFFFu);
      store_double(out, i, type, __dsqrt_rn(-2.0 * log_spec(a + 1)) * cos2pi_spec(c));
    } else {
      unsigned long long n = (unsigned long long)hi - (unsigned long long)lo + 1;
      unsigned long long offset = n == 0 ? bits : __umul64hi(bits, n);
      store_int(out, i, type, (long long)((unsigned long long)lo + offset));
    }
  }
}
