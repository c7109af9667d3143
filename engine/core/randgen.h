/* The host input generator: deterministic, counter-based, bit-identical
 * across backends. The GPU worker runs the same algorithm in a generator
 * kernel, so this header is the specification. Every step below uses only
 * integer arithmetic and correctly rounded IEEE-754 double +, -, *, / and
 * sqrt, evaluated in the order written, with no fused multiply-add (a
 * CUDA version uses __dadd_rn / __dmul_rn / __ddiv_rn / __dsqrt_rn, as
 * tests/fixtures/gpu/randgen_device.cuh does, or compiles with
 * --fmad=false; the C version compiles without FP contraction). No libm
 * call is involved. tests/fixtures/gpu/gate_check.cu compares the device
 * and host bytes for every type and init (bit-identical on an H200).
 *
 * All integers are uint64_t modulo 2^64.
 *
 * 1. Bits. GAMMA = 0x9E3779B97F4A7C15 and the SplitMix64 finalizer
 *        fin(z): z ^= z >> 30; z *= 0xBF58476D1CE4E5B9;
 *                z ^= z >> 27; z *= 0x94D049BB133111EB; z ^= z >> 31.
 *    For a seed and a stream (the buffer's index in the workload, 0-based):
 *        key       = fin(fin(seed + GAMMA) + (stream + 1) * GAMMA)
 *        bits(i)   = fin(key + (i + 1) * GAMMA)      for element i (0-based)
 *    Element i depends only on (seed, stream, i): any thread can produce
 *    any element.
 *
 * 2. uniform, in [-1, 1), exactly representable in the buffer's type. With
 *    b = 53 (f64), 24 (f32), 11 (f16), 8 (bf16) significant bits:
 *        k = bits >> (64 - b);   value = (double)k * 2^(1-b) - 1.0
 *    The result is exact in the target type, so the conversion is exact.
 *    Integer buffer types reject uniform.
 *
 * 3. normal (mean 0, standard deviation 1), Box-Muller from one bits(i):
 *        a = bits >> 40                 (24 bits)
 *        c = (bits >> 16) & 0xFFFFFF    (24 bits)
 *        u1 = (double)(a + 1) * 2^-24   in (0, 1]
 *        value = sqrt(-2.0 * log_spec(u1)) * cos2pi_spec(c)
 *    log_spec(u1): let n = a + 1 (1 <= n <= 2^24), h = floor(log2(n)),
 *        m = (double)n * 2^-h (in [1, 2), exact), e = h - 24.
 *        If m > SQRT2 (0x1.6a09e667f3bcdp+0): m = m * 0.5; e = e + 1.
 *        s = (m - 1.0) / (m + 1.0); t = s * s
 *        p = 1.0 / 23.0; for k = 10 down to 0: p = p * t + 1.0 / (2k + 1)
 *            (each 1.0 / (2k+1) a correctly rounded double division)
 *        log_spec = (double)e * LN2 + (2.0 * s) * p,
 *            LN2 = 0x1.62e42fefa39efp-1
 *    cos2pi_spec(c), the cosine of 2*pi*c/2^24: q = c >> 22 (quadrant),
 *        r = (double)(c & 0x3FFFFF) * 2^-22, x = r * HALF_PI
 *        (HALF_PI = 0x1.921fb54442d18p+0), t = x * x,
 *        cos series: p = 1.0; for k = 12 down to 1:
 *            p = 1.0 - (t * p) / (double)((2k - 1) * (2k)); C = p
 *        sin series: p = 1.0; for k = 12 down to 1:
 *            p = 1.0 - (t * p) / (double)((2k) * (2k + 1)); S = x * p
 *        q = 0: C; q = 1: -S; q = 2: -C; q = 3: S.
 *    The double is rounded to nearest-even to f32, and for f16 / bf16 that
 *    f32 is rounded to nearest-even again (a defined double rounding).
 *    |value| < 5.8 (the 24-bit u1 bounds the tail). Integer types reject it.
 *
 * 4. int {lo, hi}, lo <= hi, as signed 64-bit: n = hi - lo + 1 (as uint64;
 *    0 means the full 2^64 range);
 *        offset = n == 0 ? bits : (uint64_t)(((unsigned __int128)bits * n) >> 64)
 *        value  = lo + offset
 *    (the CUDA version uses __umulhi64). The value is stored in the
 *    buffer's type: integers wrap to its width (two's complement); float
 *    types round the int64 to nearest-even (int64 -> double -> f32 -> f16).
 *
 * 5. zeros: every byte 0.
 *
 * 6. Poison (outputs before every launch): every byte 0xFF. That is a NaN
 *    in f32, f64, f16 and bf16, and -1 / the maximum in the integer types,
 *    so one memset (cuMemsetD8) poisons any buffer.
 *
 * Storage: packed, little-endian, the buffer's type: f32, f64, f16 (IEEE
 * binary16), bf16 (the top half of an f32), i32, u32, i64, u8. */
#ifndef KL_CORE_RANDGEN_H
#define KL_CORE_RANDGEN_H

#include <stddef.h>
#include <stdint.h>

typedef enum { KL_F32, KL_F64, KL_F16, KL_BF16, KL_I32, KL_U32, KL_I64, KL_U8, KL_DTYPE_COUNT } kl_dtype;

/* "f32" -> KL_F32; -1 when unknown. */
int kl_dtype_parse(const char *name);
const char *kl_dtype_name(kl_dtype t);
size_t kl_dtype_size(kl_dtype t);
int kl_dtype_is_float(kl_dtype t);

typedef enum { KL_INIT_ZEROS, KL_INIT_UNIFORM, KL_INIT_NORMAL, KL_INIT_INT } kl_init_kind;

typedef struct {
  kl_init_kind kind;
  int64_t lo, hi; /* KL_INIT_INT only */
} kl_init;

uint64_t kl_randgen_key(uint64_t seed, uint64_t stream);
uint64_t kl_randgen_bits(uint64_t key, uint64_t index);

/* The steps of the specification, exposed for tests and for rng objects. */
double kl_randgen_uniform(uint64_t bits, int significant_bits);
double kl_randgen_normal(uint64_t bits);
int64_t kl_randgen_int(uint64_t bits, int64_t lo, int64_t hi);
double kl_randgen_log_spec(uint64_t n_1_to_2p24);
double kl_randgen_cos2pi_spec(uint32_t c24);

/* Fills count elements, starting at element first, into out (count *
 * kl_dtype_size(type) bytes, owned by the caller). Returns 0, or -1 when
 * the init does not apply to the type (uniform/normal on an integer type,
 * lo > hi) with *why set to static text. */
int kl_randgen_fill(kl_dtype type, const kl_init *init, uint64_t seed, uint64_t stream,
                    uint64_t first, size_t count, void *out, const char **why);

/* Stores one value in the buffer's type at p (little-endian). */
void kl_store_double(kl_dtype type, double v, void *p);
void kl_store_int(kl_dtype type, int64_t v, void *p);
/* Reads one element back: floats as double, integers as int64 (u32/u8
 * zero-extended). */
double kl_load_double(kl_dtype type, const void *p);
int64_t kl_load_int(kl_dtype type, const void *p);

/* Round-to-nearest-even conversions. NaN stays NaN (quiet), overflow gives
 * infinity. */
uint16_t kl_f32_to_f16(float f);
uint16_t kl_f32_to_bf16(float f);
float kl_f16_to_f32(uint16_t h);
float kl_bf16_to_f32(uint16_t h);

#endif
