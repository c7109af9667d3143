/* The input generator specified in randgen.h. Contraction into fused
 * multiply-adds would change results on FMA hardware, so it is off here. */
#pragma GCC optimize("fp-contract=off")

#include "core/randgen.h"

#include <string.h>

#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "randgen stores little-endian data with memcpy: port the stores for this host"
#endif

#define GAMMA 0x9E3779B97F4A7C15ull

static const struct {
  const char *name;
  size_t size;
  int is_float;
} dtypes[KL_DTYPE_COUNT] = {
    [KL_F32] = {"f32", 4, 1}, [KL_F64] = {"f64", 8, 1}, [KL_F16] = {"f16", 2, 1},
    [KL_BF16] = {"bf16", 2, 1}, [KL_I32] = {"i32", 4, 0}, [KL_U32] = {"u32", 4, 0},
    [KL_I64] = {"i64", 8, 0}, [KL_U8] = {"u8", 1, 0},
};

int kl_dtype_parse(const char *name) {
  for (int t = 0; t < KL_DTYPE_COUNT; t++)
    if (strcmp(dtypes[t].name, name) == 0) return t;
  return -1;
}
const char *kl_dtype_name(kl_dtype t) { return dtypes[t].name; }
size_t kl_dtype_size(kl_dtype t) { return dtypes[t].size; }
int kl_dtype_is_float(kl_dtype t) { return dtypes[t].is_float; }

static uint64_t fin(uint64_t z) {
  z ^= z >> 30;
  z *= 0xBF58476D1CE4E5B9ull;
  z ^= z >> 27;
  z *= 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t kl_randgen_key(uint64_t seed, uint64_t stream) {
  return fin(fin(seed + GAMMA) + (stream + 1) * GAMMA);
}

uint64_t kl_randgen_bits(uint64_t key, uint64_t index) { return fin(key + (index + 1) * GAMMA); }

/* 2^e, exact, for -1022 <= e <= 1023 (every use here is in [-63, 0]):
 * the double whose exponent field is e + 1023 and whose fraction is 0, as
 * the device generator builds it. */
static double pow2(int e) {
  uint64_t bits = (uint64_t)(e + 1023) << 52;
  double r;
  memcpy(&r, &bits, sizeof r);
  return r;
}

double kl_randgen_uniform(uint64_t bits, int significant_bits) {
  uint64_t k = bits >> (64 - significant_bits);
  return (double)k * pow2(1 - significant_bits) - 1.0;
}

/* 1 / (2k + 1) for k = 0..10, as the series below adds them: each a
 * correctly rounded quotient, whether the compiler folds it or the CPU
 * divides. */
static const double inv_odd[11] = {1.0 / 1.0,  1.0 / 3.0,  1.0 / 5.0,  1.0 / 7.0,  1.0 / 9.0, 1.0 / 11.0,
                                   1.0 / 13.0, 1.0 / 15.0, 1.0 / 17.0, 1.0 / 19.0, 1.0 / 21.0};

double kl_randgen_log_spec(uint64_t n) {
  int h = 63 - __builtin_clzll(n);
  double m = (double)n * pow2(-h);
  int e = h - 24;
  if (m > 0x1.6a09e667f3bcdp+0) {
    m = m * 0.5;
    e = e + 1;
  }
  double s = (m - 1.0) / (m + 1.0);
  double t = s * s;
  double p = 1.0 / 23.0;
  for (int k = 10; k >= 0; k--) p = p * t + inv_odd[k];
  return (double)e * 0x1.62e42fefa39efp-1 + (2.0 * s) * p;
}

double kl_randgen_cos2pi_spec(uint32_t c) {
  unsigned q = (c >> 22) & 3u;
  double r = (double)(c & 0x3FFFFFu) * pow2(-22);
  double x = r * 0x1.921fb54442d18p+0;
  double t = x * x;
  /* Quadrants 0 and 2 need only the cosine series, 1 and 3 only the sine. */
  if ((q & 1) == 0) {
    double pc = 1.0;
    for (int k = 12; k >= 1; k--) pc = 1.0 - (t * pc) / (double)((2 * k - 1) * (2 * k));
    return q == 0 ? pc : -pc;
  }
  double ps = 1.0;
  for (int k = 12; k >= 1; k--) ps = 1.0 - (t * ps) / (double)((2 * k) * (2 * k + 1));
  double s = x * ps;
  return q == 1 ? -s : s;
}

/* __builtin_sqrt is the correctly rounded IEEE square root (sqrtsd); no
 * libm is linked for it. */
double kl_randgen_normal(uint64_t bits) {
  uint64_t a = bits >> 40;
  uint32_t c = (uint32_t)((bits >> 16) & 0xFFFFFFu);
  return __builtin_sqrt(-2.0 * kl_randgen_log_spec(a + 1)) * kl_randgen_cos2pi_spec(c);
}

/* kl_randgen_normal of NORMAL_LANES elements at once: the same operations
 * on each, in lockstep, so that the elements' chains of dependent
 * divisions (the cosine's series) overlap instead of waiting on each
 * other: about twice the throughput, the same bits. */
#define NORMAL_LANES 4
static void normal_lanes(const uint64_t bits[NORMAL_LANES], double out[NORMAL_LANES]) {
  double s[NORMAL_LANES], t[NORMAL_LANES], p[NORMAL_LANES], x[NORMAL_LANES], xx[NORMAL_LANES], c[NORMAL_LANES];
  int e[NORMAL_LANES];
  unsigned q[NORMAL_LANES];
  for (int j = 0; j < NORMAL_LANES; j++) {
    /* kl_randgen_log_spec(a + 1), up to its series */
    uint64_t n = (bits[j] >> 40) + 1;
    int h = 63 - __builtin_clzll(n);
    double m = (double)n * pow2(-h);
    e[j] = h - 24;
    if (m > 0x1.6a09e667f3bcdp+0) {
      m = m * 0.5;
      e[j] = e[j] + 1;
    }
    s[j] = (m - 1.0) / (m + 1.0);
    t[j] = s[j] * s[j];
    p[j] = 1.0 / 23.0;
    /* kl_randgen_cos2pi_spec(c), up to its series */
    uint32_t cb = (uint32_t)((bits[j] >> 16) & 0xFFFFFFu);
    q[j] = (cb >> 22) & 3u;
    double r = (double)(cb & 0x3FFFFFu) * pow2(-22);
    x[j] = r * 0x1.921fb54442d18p+0;
    xx[j] = x[j] * x[j];
    c[j] = 1.0;
  }
  for (int k = 10; k >= 0; k--)
    for (int j = 0; j < NORMAL_LANES; j++) p[j] = p[j] * t[j] + inv_odd[k];
  /* quadrants 0 and 2 the cosine's series, 1 and 3 the sine's */
  for (int k = 12; k >= 1; k--)
    for (int j = 0; j < NORMAL_LANES; j++)
      c[j] = 1.0 - (xx[j] * c[j]) / (double)((q[j] & 1) ? (2 * k) * (2 * k + 1) : (2 * k - 1) * (2 * k));
  for (int j = 0; j < NORMAL_LANES; j++) {
    double lg = (double)e[j] * 0x1.62e42fefa39efp-1 + (2.0 * s[j]) * p[j];
    double cs;
    if ((q[j] & 1) == 0) cs = q[j] == 0 ? c[j] : -c[j];
    else cs = q[j] == 1 ? -(x[j] * c[j]) : x[j] * c[j];
    out[j] = __builtin_sqrt(-2.0 * lg) * cs;
  }
}

int64_t kl_randgen_int(uint64_t bits, int64_t lo, int64_t hi) {
  uint64_t n = (uint64_t)hi - (uint64_t)lo + 1;
  uint64_t offset = n == 0 ? bits : (uint64_t)(((unsigned __int128)bits * n) >> 64);
  return (int64_t)((uint64_t)lo + offset);
}

uint16_t kl_f32_to_f16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  uint16_t sign = (uint16_t)((x >> 16) & 0x8000);
  int exp = (int)((x >> 23) & 0xff);
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) return (uint16_t)(sign | (mant ? 0x7e00 : 0x7c00));
  if (exp == 0) return sign; /* f32 subnormals are far below f16's range */
  int e = exp - 127;
  if (e > 15) return (uint16_t)(sign | 0x7c00);
  uint32_t m = mant | 0x800000; /* 24 significant bits */
  int shift;
  uint32_t base;
  if (e >= -14) {
    shift = 13;
    base = (uint32_t)(e + 15) << 10;
    m = mant; /* the implicit bit is carried by the exponent field */
  } else {
    shift = -e - 1; /* subnormal: value = k * 2^-24 */
    if (shift > 24) return sign;
    base = 0;
  }
  uint32_t k = m >> shift;
  uint32_t rem = m & ((1u << shift) - 1);
  uint32_t half = 1u << (shift - 1);
  uint32_t result = base + k;
  if (rem > half || (rem == half && (result & 1))) result++; /* a carry rolls into the exponent */
  return (uint16_t)(sign | result);
}

uint16_t kl_f32_to_bf16(float f) {
  uint32_t x;
  memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return (uint16_t)((x >> 16) | 0x40);
  x += 0x7fff + ((x >> 16) & 1);
  return (uint16_t)(x >> 16);
}

float kl_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  int exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t x;
  if (exp == 0x1f) {
    x = sign | 0x7f800000 | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else { /* normalize the subnormal */
      int e = -14;
      while (!(mant & 0x400)) {
        mant <<= 1;
        e--;
      }
      x = sign | ((uint32_t)(e + 127) << 23) | ((mant & 0x3ff) << 13);
    }
  } else {
    x = sign | ((uint32_t)(exp - 15 + 127) << 23) | (mant << 13);
  }
  float f;
  memcpy(&f, &x, 4);
  return f;
}

float kl_bf16_to_f32(uint16_t h) {
  uint32_t x = (uint32_t)h << 16;
  float f;
  memcpy(&f, &x, 4);
  return f;
}

void kl_store_double(kl_dtype type, double v, void *p) {
  switch (type) {
  case KL_F64: memcpy(p, &v, 8); return;
  case KL_F32: {
    float f = (float)v;
    memcpy(p, &f, 4);
    return;
  }
  case KL_F16: {
    uint16_t h = kl_f32_to_f16((float)v);
    memcpy(p, &h, 2);
    return;
  }
  case KL_BF16: {
    uint16_t h = kl_f32_to_bf16((float)v);
    memcpy(p, &h, 2);
    return;
  }
  default: kl_store_int(type, (int64_t)v, p); return;
  }
}

void kl_store_int(kl_dtype type, int64_t v, void *p) {
  switch (type) {
  case KL_I32:
  case KL_U32: {
    uint32_t u = (uint32_t)(uint64_t)v;
    memcpy(p, &u, 4);
    return;
  }
  case KL_I64: memcpy(p, &v, 8); return;
  case KL_U8: *(unsigned char *)p = (unsigned char)(uint64_t)v; return;
  default: kl_store_double(type, (double)v, p); return;
  }
}

double kl_load_double(kl_dtype type, const void *p) {
  switch (type) {
  case KL_F64: {
    double d;
    memcpy(&d, p, 8);
    return d;
  }
  case KL_F32: {
    float f;
    memcpy(&f, p, 4);
    return f;
  }
  case KL_F16: {
    uint16_t h;
    memcpy(&h, p, 2);
    return kl_f16_to_f32(h);
  }
  case KL_BF16: {
    uint16_t h;
    memcpy(&h, p, 2);
    return kl_bf16_to_f32(h);
  }
  default: return (double)kl_load_int(type, p);
  }
}

int64_t kl_load_int(kl_dtype type, const void *p) {
  switch (type) {
  case KL_I32: {
    int32_t i;
    memcpy(&i, p, 4);
    return i;
  }
  case KL_U32: {
    uint32_t u;
    memcpy(&u, p, 4);
    return u;
  }
  case KL_I64: {
    int64_t i;
    memcpy(&i, p, 8);
    return i;
  }
  case KL_U8: return *(const unsigned char *)p;
  default: return (int64_t)kl_load_double(type, p);
  }
}

static int significant_bits(kl_dtype t) {
  switch (t) {
  case KL_F64: return 53;
  case KL_F32: return 24;
  case KL_F16: return 11;
  case KL_BF16: return 8;
  default: return 0;
  }
}

int kl_randgen_fill(kl_dtype type, const kl_init *init, uint64_t seed, uint64_t stream,
                    uint64_t first, size_t count, void *out, const char **why) {
  size_t size = kl_dtype_size(type);
  unsigned char *p = out;
  if (init->kind == KL_INIT_ZEROS) {
    memset(out, 0, count * size);
    return 0;
  }
  if ((init->kind == KL_INIT_UNIFORM || init->kind == KL_INIT_NORMAL) && !kl_dtype_is_float(type)) {
    if (why) *why = "uniform and normal apply to float buffers only; use { \"int\", lo, hi }";
    return -1;
  }
  if (init->kind == KL_INIT_INT && init->lo > init->hi) {
    if (why) *why = "int range has lo > hi";
    return -1;
  }
  uint64_t key = kl_randgen_key(seed, stream);
  int b = significant_bits(type);
  size_t i = 0;
  if (init->kind == KL_INIT_NORMAL) {
    for (; i + NORMAL_LANES <= count; i += NORMAL_LANES) {
      uint64_t bits[NORMAL_LANES];
      double v[NORMAL_LANES];
      for (int j = 0; j < NORMAL_LANES; j++) bits[j] = kl_randgen_bits(key, first + i + j);
      normal_lanes(bits, v);
      for (int j = 0; j < NORMAL_LANES; j++, p += size) kl_store_double(type, v[j], p);
    }
  }
  for (; i < count; i++, p += size) {
    uint64_t bits = kl_randgen_bits(key, first + i);
    switch (init->kind) {
    case KL_INIT_UNIFORM: kl_store_double(type, kl_randgen_uniform(bits, b), p); break;
    case KL_INIT_NORMAL: kl_store_double(type, kl_randgen_normal(bits), p); break;
    default: kl_store_int(type, kl_randgen_int(bits, init->lo, init->hi), p); break;
    }
  }
  return 0;
}
