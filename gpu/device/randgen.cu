// The input generator of engine/core/randgen.h, on the device. Every
// floating-point step is an explicitly rounded intrinsic (__dadd_rn,
// __dmul_rn, ...), which nvcc and NVRTC never contract into an FMA, so the
// results are bit-identical to the host's. Self-contained: NVRTC compiles it
// with no headers (the worker's generator kernel includes this text), so
// the fp16/bf16 rounding is written out as in randgen.c.
#ifndef KL_RANDGEN_DEVICE
#define KL_RANDGEN_DEVICE

#define KL_GAMMA 0x9E3779B97F4A7C15ull

// The buffer types and init kinds, numbered as kl_dtype / kl_init_kind.
enum { KL_DEV_F32, KL_DEV_F64, KL_DEV_F16, KL_DEV_BF16, KL_DEV_I32, KL_DEV_U32, KL_DEV_I64, KL_DEV_U8 };
enum { KL_DEV_ZEROS, KL_DEV_UNIFORM, KL_DEV_NORMAL, KL_DEV_INT };

__device__ __forceinline__ unsigned long long kl_fin(unsigned long long z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

__device__ __forceinline__ unsigned long long kl_key(unsigned long long seed, unsigned long long stream) {
  return kl_fin(kl_fin(seed + KL_GAMMA) + (stream + 1) * KL_GAMMA);
}

__device__ __forceinline__ unsigned long long kl_bits(unsigned long long key, unsigned long long i) {
  return kl_fin(key + (i + 1) * KL_GAMMA);
}

// 2^e, exactly (|e| < 1000).
__device__ __forceinline__ double kl_pow2(int e) { return __hiloint2double((1023 + e) << 20, 0); }

__device__ __forceinline__ double kl_uniform(unsigned long long bits, int b) {
  return __dsub_rn(__dmul_rn(__ull2double_rn(bits >> (64 - b)), kl_pow2(1 - b)), 1.0);
}

__device__ double kl_log_spec(unsigned long long n) {
  int h = 63 - __clzll((long long)n);
  double m = __dmul_rn(__ull2double_rn(n), kl_pow2(-h));
  int e = h - 24;
  if (m > 0x1.6a09e667f3bcdp+0) {
    m = __dmul_rn(m, 0.5);
    e = e + 1;
  }
  double s = __ddiv_rn(__dsub_rn(m, 1.0), __dadd_rn(m, 1.0));
  double t = __dmul_rn(s, s);
  double p = __ddiv_rn(1.0, 23.0);
  for (int k = 10; k >= 0; k--) p = __dadd_rn(__dmul_rn(p, t), __ddiv_rn(1.0, (double)(2 * k + 1)));
  return __dadd_rn(__dmul_rn((double)e, 0x1.62e42fefa39efp-1), __dmul_rn(__dmul_rn(2.0, s), p));
}

__device__ double kl_cos2pi_spec(unsigned int c) {
  unsigned q = (c >> 22) & 3u;
  double r = __dmul_rn((double)(c & 0x3FFFFFu), kl_pow2(-22));
  double x = __dmul_rn(r, 0x1.921fb54442d18p+0);
  double t = __dmul_rn(x, x);
  if ((q & 1) == 0) {
    double pc = 1.0;
    for (int k = 12; k >= 1; k--) pc = __dsub_rn(1.0, __ddiv_rn(__dmul_rn(t, pc), (double)((2 * k - 1) * (2 * k))));
    return q == 0 ? pc : -pc;
  }
  double ps = 1.0;
  for (int k = 12; k >= 1; k--) ps = __dsub_rn(1.0, __ddiv_rn(__dmul_rn(t, ps), (double)((2 * k) * (2 * k + 1))));
  double s = __dmul_rn(x, ps);
  return q == 1 ? -s : s;
}

__device__ __forceinline__ double kl_normal(unsigned long long bits) {
  unsigned long long a = bits >> 40;
  unsigned int c = (unsigned int)((bits >> 16) & 0xFFFFFFu);
  return __dmul_rn(__dsqrt_rn(__dmul_rn(-2.0, kl_log_spec(a + 1))), kl_cos2pi_spec(c));
}

__device__ __forceinline__ long long kl_int(unsigned long long bits, long long lo, long long hi) {
  unsigned long long n = (unsigned long long)hi - (unsigned long long)lo + 1;
  unsigned long long off = n == 0 ? bits : __umul64hi(bits, n);
  return (long long)((unsigned long long)lo + off);
}

// Round to nearest even, as kl_f32_to_f16 / kl_f32_to_bf16.
__device__ unsigned short kl_f32_to_f16(float f) {
  unsigned int x = __float_as_uint(f);
  unsigned short sign = (unsigned short)((x >> 16) & 0x8000);
  int exp = (int)((x >> 23) & 0xff);
  unsigned int mant = x & 0x7fffff;
  if (exp == 0xff) return (unsigned short)(sign | (mant ? 0x7e00 : 0x7c00));
  if (exp == 0) return sign;
  int e = exp - 127;
  if (e > 15) return (unsigned short)(sign | 0x7c00);
  unsigned int m = mant | 0x800000, base = 0;
  int shift;
  if (e >= -14) {
    shift = 13;
    base = (unsigned int)(e + 15) << 10;
    m = mant;
  } else {
    shift = -e - 1;
    if (shift > 24) return sign;
  }
  unsigned int k = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
  unsigned int result = base + k;
  if (rem > half || (rem == half && (result & 1))) result++;
  return (unsigned short)(sign | result);
}

__device__ __forceinline__ unsigned short kl_f32_to_bf16(float f) {
  unsigned int x = __float_as_uint(f);
  if ((x & 0x7fffffff) > 0x7f800000) return (unsigned short)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (unsigned short)(x >> 16);
}

__device__ __forceinline__ void kl_store_double(void *out, unsigned long long i, int type, double v) {
  switch (type) {
  case KL_DEV_F64: ((double *)out)[i] = v; break;
  case KL_DEV_F32: ((float *)out)[i] = __double2float_rn(v); break;
  case KL_DEV_F16: ((unsigned short *)out)[i] = kl_f32_to_f16(__double2float_rn(v)); break;
  case KL_DEV_BF16: ((unsigned short *)out)[i] = kl_f32_to_bf16(__double2float_rn(v)); break;
  }
}

__device__ __forceinline__ void kl_store_int(void *out, unsigned long long i, int type, long long v) {
  switch (type) {
  case KL_DEV_I32:
  case KL_DEV_U32: ((unsigned int *)out)[i] = (unsigned int)v; break;
  case KL_DEV_I64: ((long long *)out)[i] = v; break;
  case KL_DEV_U8: ((unsigned char *)out)[i] = (unsigned char)v; break;
  default: kl_store_double(out, i, type, __ll2double_rn(v)); break;
  }
}

// Fills elements [first, first + count) of a buffer of `type`, grid-stride.
extern "C" __global__ void kl_randgen_kernel(void *out, unsigned long long count, int type, int kind,
                                           long long lo, long long hi, unsigned long long seed,
                                           unsigned long long stream, unsigned long long first) {
  const int sig[] = {24, 53, 11, 8, 0, 0, 0, 0};
  unsigned long long key = kl_key(seed, stream);
  for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < count;
       i += (unsigned long long)gridDim.x * blockDim.x) {
    unsigned long long bits = kl_bits(key, first + i);
    if (kind == KL_DEV_ZEROS) kl_store_int(out, i, type, 0);
    else if (kind == KL_DEV_UNIFORM) kl_store_double(out, i, type, kl_uniform(bits, sig[type]));
    else if (kind == KL_DEV_NORMAL) kl_store_double(out, i, type, kl_normal(bits));
    else kl_store_int(out, i, type, kl_int(bits, lo, hi));
  }
}

#endif
