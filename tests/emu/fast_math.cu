// The fast intrinsics, against which the emulator's error is measured:
// sweep writes each one's result for x[i] (and y[i]), next to the exact
// libm function's; specials writes the special ranges' results.
#define OUTS 13
extern "C" __global__ void sweep(int n, const float *x, const float *y, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float a = x[i], b = y[i];
  float *o = out + OUTS * i;
  o[0] = __expf(a);
  o[1] = __exp10f(a);
  o[2] = __logf(b);
  o[3] = __log2f(b);
  o[4] = __log10f(b);
  o[5] = __sinf(a);
  o[6] = __cosf(a);
  o[7] = __tanf(a);
  o[8] = __powf(b, a);
  o[9] = __fdividef(a, b);
  o[10] = rsqrtf(b);
  o[11] = expf(a);
  o[12] = a / b;
}

extern "C" __global__ void specials(float *o) {
  if (threadIdx.x != 0) return;
  const float big = 0x1.8p126f;         // in (2^126, 2^128)
  const float inf = __int_as_float(0x7F800000);
  o[0] = __fdividef(1.0f, big);          // 0
  o[1] = __fdividef(inf, big);           // NaN
  o[2] = __fdividef(1.0f, 0x1p126f);     // 2^-126, within 2 ulp
  o[3] = __expf(-100.0f);                // below FLT_MIN: flushed to 0
  o[4] = __logf(-1.0f);                  // NaN
  o[5] = __logf(0.0f);                   // -inf
  o[6] = __logf(1e-40f);                 // a subnormal is 0: -inf
  o[7] = rsqrtf(0.0f);                   // inf
  o[8] = __powf(-2.0f, 2.0f);            // NaN: exp2(2 * log2(-2))
  o[9] = __sinf(0.0f);                   // 0
  o[10] = __sinf(12345.678f);            // outside [-pi, pi]
  o[11] = __expf(100.0f);                // inf
  o[12] = __logf(1.0f);                  // 0
  float s, c;
  __sincosf(0.5f, &s, &c);
  o[13] = s - __sinf(0.5f);              // the same function: 0
  o[14] = c - __cosf(0.5f);
}
