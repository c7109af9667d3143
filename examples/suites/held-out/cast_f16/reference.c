// The C reference of cast_f16: the same float product, the clamp, and the
// conversion to IEEE half (binary16) with round to nearest even, written
// out bit by bit; y is the half buffer, its elements as 16-bit patterns.
#include <math.h>
#include <stdint.h>
#include <string.h>

// The binary16 pattern nearest to f (ties to even), overflow to infinity.
static uint16_t half_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
  float a = fabsf(f);
  if (isnan(f)) return (uint16_t)(sign | 0x7e00u);
  if (a >= 65520.0f) return (uint16_t)(sign | 0x7c00u);   // halfway to 2^16 and above round to infinity
  if (a < 0x1p-14f) {
    // subnormal: a multiple of 2^-24; exact scaling, then the integer
    // nearest (nearbyintf rounds ties to even); 1024 is the smallest normal
    return (uint16_t)(sign | (uint16_t)nearbyintf(a * 0x1p24f));
  }
  int e;
  float m = frexpf(a, &e);                                  // a = m 2^e, m in [0.5, 1)
  float frac = nearbyintf((2.0f * m - 1.0f) * 1024.0f);     // exact before the rounding
  // a fraction of 1024 carries into the exponent, as it should
  return (uint16_t)(sign | (uint16_t)(((e + 14) << 10) + (int)frac));
}

void reference(unsigned n, float scale, float lo, float hi, const float *x, void *y) {
  uint16_t *out = (uint16_t *)y;
  for (unsigned i = 0; i < n; ++i) {
    float v = x[i] * scale;
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    out[i] = half_bits(v);
  }
}
