/* The input generator against golden values from an independent
 * implementation of the specification in randgen.h (Python floats are IEEE
 * doubles), plus the fp16/bf16 rounding rules. */
#include <math.h>
#include <stdint.h>

#include "core/randgen.h"
#include "harness.h"

static uint32_t f32_bits(double v) {
  float f = (float)v;
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}

static float f32_of(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

static void test_golden(test_batch *t) {
  uint64_t key = kl_randgen_key(42, 3);
  INT_EQ(t, key == 0x113e5dec6f8fd8a8ull, 1, "key(42, 3)");
  static const struct {
    uint64_t index, bits;
    uint32_t uniform32;
    double normal64;
    uint32_t normal32;
    int64_t int_m5_9;
  } golden[] = {
      {0, 0x2280f44bd028ee47ull, 0xbf3afe18, -0x1.250de25c5ce31p-1, 0xbf1286f1, -3},
      {1, 0xd8ee0e785f84c725ull, 0x3f31dc1c, -0x1.2182db92498efp-1, 0xbf10c16e, 7},
      {1000, 0x80688f0f7c3f3091ull, 0x3b511e00, 0x1.17438441578c4p+0, 0x3f8ba1c2, 2},
  };
  for (size_t i = 0; i < sizeof golden / sizeof golden[0]; i++) {
    uint64_t bits = kl_randgen_bits(key, golden[i].index);
    OK(t, bits == golden[i].bits, "bits(i)");
    INT_EQ(t, f32_bits(kl_randgen_uniform(bits, 24)), golden[i].uniform32, "uniform f32");
    OK(t, kl_randgen_normal(bits) == golden[i].normal64, "normal f64 bit-exact");
    INT_EQ(t, f32_bits(kl_randgen_normal(bits)), golden[i].normal32, "normal f32");
    INT_EQ(t, kl_randgen_int(bits, -5, 9), golden[i].int_m5_9, "int in [-5, 9]");
  }
  /* fill writes the same values, starting at any element */
  float buf[3];
  kl_init normal = {KL_INIT_NORMAL, 0, 0};
  INT_EQ(t, kl_randgen_fill(KL_F32, &normal, 42, 3, 0, 2, buf, NULL), 0, "fill normal");
  uint32_t u;
  memcpy(&u, &buf[1], 4);
  INT_EQ(t, u, 0xbf10c16e, "fill element 1");
  INT_EQ(t, kl_randgen_fill(KL_F32, &normal, 42, 3, 1000, 1, buf, NULL), 0, "fill from 1000");
  memcpy(&u, &buf[0], 4);
  INT_EQ(t, u, 0x3f8ba1c2, "fill element 1000");
  /* a long fill (normals several at a time, then the rest one by one)
   * writes, bit for bit, each element's kl_randgen_normal */
  enum { LONG = 1003 };
  static double longer[LONG];
  INT_EQ(t, kl_randgen_fill(KL_F64, &normal, 42, 3, 7, LONG, longer, NULL), 0, "fill 1003 normals");
  uint64_t key42 = kl_randgen_key(42, 3);
  int same = 1;
  for (int i = 0; i < LONG; i++) {
    double want = kl_randgen_normal(kl_randgen_bits(key42, 7 + (uint64_t)i));
    same = same && memcmp(&want, &longer[i], sizeof want) == 0;
  }
  OK(t, same, "a long normal fill equals kl_randgen_normal element by element");
}

static void test_ranges(test_batch *t) {
  enum { N = 200000 };
  static double v[N];
  static float f[N];
  kl_init uni = {KL_INIT_UNIFORM, 0, 0}, nor = {KL_INIT_NORMAL, 0, 0};
  kl_randgen_fill(KL_F32, &uni, 7, 0, 0, N, f, NULL);
  double lo = 1, hi = -1, sum = 0;
  for (int i = 0; i < N; i++) {
    lo = f[i] < lo ? f[i] : lo;
    hi = f[i] > hi ? f[i] : hi;
    sum += f[i];
  }
  OK(t, lo >= -1.0 && hi < 1.0, "uniform in [-1, 1)");
  OK(t, lo < -0.999 && hi > 0.999, "uniform covers the range");
  OK(t, fabs(sum / N) < 0.01, "uniform mean near 0");

  kl_randgen_fill(KL_F64, &nor, 7, 1, 0, N, v, NULL);
  double m = 0, s2 = 0, big = 0;
  for (int i = 0; i < N; i++) m += v[i];
  m /= N;
  for (int i = 0; i < N; i++) {
    s2 += (v[i] - m) * (v[i] - m);
    big = fabs(v[i]) > big ? fabs(v[i]) : big;
  }
  OK(t, fabs(m) < 0.01, "normal mean near 0");
  OK(t, fabs(sqrt(s2 / N) - 1.0) < 0.01, "normal deviation near 1");
  OK(t, big < 5.8 && big > 3.5, "normal tail bounded by the 24-bit u1");

  /* the series agree with libm to a few ulps */
  double worst = 0;
  for (uint64_t n = 1; n <= (1u << 24); n += 997) {
    double e = fabs(kl_randgen_log_spec(n) - log((double)n / 16777216.0));
    worst = e > worst ? e : worst;
  }
  OK(t, worst < 4e-15, "log_spec matches log");
  worst = 0;
  for (uint32_t c = 0; c < (1u << 24); c += 1013) {
    double e = fabs(kl_randgen_cos2pi_spec(c) - cos(2 * M_PI * c / 16777216.0));
    worst = e > worst ? e : worst;
  }
  OK(t, worst < 4e-15, "cos2pi_spec matches cos");

  /* uniform values are exact in the narrow types */
  uint16_t h[1000];
  kl_randgen_fill(KL_F16, &uni, 9, 2, 0, 1000, h, NULL);
  int exact = 1;
  uint64_t key = kl_randgen_key(9, 2);
  for (int i = 0; i < 1000; i++)
    exact &= (double)kl_f16_to_f32(h[i]) == kl_randgen_uniform(kl_randgen_bits(key, (uint64_t)i), 11);
  OK(t, exact, "f16 uniform exact");

  int32_t ints[N];
  kl_init range = {KL_INIT_INT, -3, 3};
  kl_randgen_fill(KL_I32, &range, 1, 0, 0, N, ints, NULL);
  int seen[7] = {0}, inside = 1;
  for (int i = 0; i < N; i++) {
    if (ints[i] < -3 || ints[i] > 3) inside = 0;
    else seen[ints[i] + 3]++;
  }
  OK(t, inside, "ints inside [lo, hi]");
  for (int i = 0; i < 7; i++) OK(t, seen[i] > N / 7 - N / 70 && seen[i] < N / 7 + N / 70, "ints uniform");
  OK(t, kl_randgen_int(0xffffffffffffffffull, INT64_MIN, INT64_MAX) == INT64_MAX, "full int64 range, top");
  OK(t, kl_randgen_int(0, INT64_MIN, INT64_MAX) == INT64_MIN, "full int64 range, bottom");
  unsigned char bytes[64];
  kl_init byte = {KL_INIT_INT, 250, 260};
  kl_randgen_fill(KL_U8, &byte, 1, 0, 0, 64, bytes, NULL);
  int wrapped = 1;
  for (int i = 0; i < 64; i++) wrapped &= bytes[i] >= 250 || bytes[i] <= 4;
  OK(t, wrapped, "u8 wraps 250..260 to 250..255, 0..4");

  const char *why = NULL;
  OK(t, kl_randgen_fill(KL_I32, &uni, 1, 0, 0, 4, ints, &why) == -1 && why, "uniform on i32 refused");
  kl_init backwards = {KL_INIT_INT, 5, 4};
  OK(t, kl_randgen_fill(KL_I32, &backwards, 1, 0, 0, 4, ints, &why) == -1, "lo > hi refused");
  kl_init zeros = {KL_INIT_ZEROS, 0, 0};
  ints[0] = 7;
  kl_randgen_fill(KL_I32, &zeros, 1, 0, 0, 1, ints, NULL);
  INT_EQ(t, ints[0], 0, "zeros");
  OK(t, kl_randgen_key(1, 0) != kl_randgen_key(1, 1) && kl_randgen_key(1, 0) != kl_randgen_key(2, 0),
     "streams and seeds differ");
}

static void test_half(test_batch *t) {
  INT_EQ(t, kl_f32_to_f16(1.0f), 0x3c00, "1.0");
  INT_EQ(t, kl_f32_to_f16(-2.0f), 0xc000, "-2.0");
  INT_EQ(t, kl_f32_to_f16(65504.0f), 0x7bff, "max half");
  INT_EQ(t, kl_f32_to_f16(65519.0f), 0x7bff, "65519 rounds down");
  INT_EQ(t, kl_f32_to_f16(65520.0f), 0x7c00, "65520 ties to even: infinity");
  INT_EQ(t, kl_f32_to_f16(1e10f), 0x7c00, "overflow");
  INT_EQ(t, kl_f32_to_f16(ldexpf(1, -24)), 0x0001, "smallest subnormal");
  INT_EQ(t, kl_f32_to_f16(ldexpf(1, -25)), 0x0000, "half of it ties to zero");
  INT_EQ(t, kl_f32_to_f16(ldexpf(3, -26)), 0x0001, "0.75 ulp rounds up");
  INT_EQ(t, kl_f32_to_f16(ldexpf(3, -25)), 0x0002, "1.5 ulp ties to even 2");
  INT_EQ(t, kl_f32_to_f16(ldexpf(1, -14) - ldexpf(1, -25)), 0x0400, "rounds up into the normals");
  INT_EQ(t, kl_f32_to_f16(1.0f + ldexpf(1, -11)), 0x3c00, "tie to even down");
  INT_EQ(t, kl_f32_to_f16(1.0f + ldexpf(3, -11)), 0x3c02, "tie to even up");
  INT_EQ(t, kl_f32_to_f16(-0.0f), 0x8000, "negative zero");
  INT_EQ(t, kl_f32_to_f16(NAN) & 0x7e00, 0x7e00, "NaN stays a quiet NaN");
  INT_EQ(t, kl_f32_to_f16(ldexpf(1, -30)), 0x0000, "underflow");
  INT_EQ(t, kl_f32_to_bf16(1.0f), 0x3f80, "bf16 1.0");
  INT_EQ(t, kl_f32_to_bf16(1.0f + ldexpf(1, -8)), 0x3f80, "bf16 tie down");
  INT_EQ(t, kl_f32_to_bf16(1.0f + ldexpf(3, -8)), 0x3f82, "bf16 tie up");
  INT_EQ(t, kl_f32_to_bf16(f32_of(0x7f7fffff)), 0x7f80, "bf16 FLT_MAX rounds to infinity");
  INT_EQ(t, kl_f32_to_bf16(NAN) & 0x7fc0, 0x7fc0, "bf16 NaN quiet");

  int f16_ok = 1, bf16_ok = 1;
  for (uint32_t h = 0; h < 65536; h++) {
    int nan16 = (h & 0x7c00) == 0x7c00 && (h & 0x3ff);
    if (!nan16 && kl_f32_to_f16(kl_f16_to_f32((uint16_t)h)) != h) f16_ok = 0;
    int nanbf = (h & 0x7f80) == 0x7f80 && (h & 0x7f);
    if (!nanbf && kl_f32_to_bf16(kl_bf16_to_f32((uint16_t)h)) != h) bf16_ok = 0;
  }
  OK(t, f16_ok, "every f16 round-trips through f32");
  OK(t, bf16_ok, "every bf16 round-trips through f32");
  INT_EQ(t, kl_dtype_parse("bf16"), KL_BF16, "parse bf16");
  INT_EQ(t, kl_dtype_parse("f8"), -1, "unknown type");
  INT_EQ(t, kl_dtype_size(KL_I64), 8, "i64 size");
}

int main(void) {
  test_batch t = {0, 0};
  test_golden(&t);
  test_ranges(&t);
  test_half(&t);
  return kl_test_finish(&t);
}
