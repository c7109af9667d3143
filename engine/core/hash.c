/* SHA-256 as FIPS 180-4 section 6.2 specifies it. The block function is
 * the portable one below, or on x86-64 CPUs with the SHA extensions one
 * built on their instructions (about five times the throughput: the emu
 * worker checksums every input buffer before and after each trial). Both
 * compute the same thing; tests/c/test_hash.c holds them to each other. */
#include "core/hash.h"
#include "core/hash_blocks.h"

#include <string.h>

#if defined(__x86_64__)
#include <cpuid.h>
#include <immintrin.h>
#endif

static const uint32_t round_constants[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

static uint32_t rotr(uint32_t x, int n) { return (x >> n) | (x << (32 - n)); }

static void compress_one(uint32_t state[8], const unsigned char block[64]) {
  uint32_t w[64];
  for (int i = 0; i < 16; i++)
    w[i] = (uint32_t)block[4 * i] << 24 | (uint32_t)block[4 * i + 1] << 16 |
           (uint32_t)block[4 * i + 2] << 8 | (uint32_t)block[4 * i + 3];
  for (int i = 16; i < 64; i++) {
    uint32_t s0 = rotr(w[i - 15], 7) ^ rotr(w[i - 15], 18) ^ (w[i - 15] >> 3);
    uint32_t s1 = rotr(w[i - 2], 17) ^ rotr(w[i - 2], 19) ^ (w[i - 2] >> 10);
    w[i] = w[i - 16] + s0 + w[i - 7] + s1;
  }
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3];
  uint32_t e = state[4], f = state[5], g = state[6], h = state[7];
  for (int i = 0; i < 64; i++) {
    uint32_t t1 = h + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) +
                  round_constants[i] + w[i];
    uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    h = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
  state[5] += f;
  state[6] += g;
  state[7] += h;
}

void kl_sha256_blocks_portable(uint32_t state[8], const unsigned char *data, size_t blocks) {
  for (; blocks > 0; blocks--, data += 64) compress_one(state, data);
}

#if defined(__x86_64__)
int kl_sha256_blocks_accelerated_available(void) {
  unsigned a, b, c, d;
  if (!__get_cpuid(1, &a, &b, &c, &d)) return 0;
  int sse = (c & bit_SSSE3) && (c & bit_SSE4_1);
  if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return 0;
  return sse && (b & bit_SHA);
}

/* The state lives in two registers as the instructions want it: ABEF and
 * CDGH (most significant word first). Four message words a step: the
 * first four steps load them, the others extend the schedule with
 * sha256msg1/msg2 from the four before (w[] is a ring of them); each step
 * runs four rounds, two per sha256rnds2, whose result is the new ABEF
 * while the old ABEF becomes the new CDGH. */
__attribute__((target("sha,sse4.1,ssse3")))
void kl_sha256_blocks_accelerated(uint32_t state[8], const unsigned char *data, size_t blocks) {
  const __m128i byte_swap = _mm_set_epi64x(0x0c0d0e0f08090a0bLL, 0x0405060700010203LL);
  __m128i dcba = _mm_loadu_si128((const __m128i *)&state[0]);
  __m128i hgfe = _mm_loadu_si128((const __m128i *)&state[4]);
  __m128i cdab = _mm_shuffle_epi32(dcba, 0xB1);
  __m128i efgh = _mm_shuffle_epi32(hgfe, 0x1B);
  __m128i abef = _mm_alignr_epi8(cdab, efgh, 8);
  __m128i cdgh = _mm_blend_epi16(efgh, cdab, 0xF0);
  for (; blocks > 0; blocks--, data += 64) {
    __m128i abef_in = abef, cdgh_in = cdgh, w[4];
    for (int i = 0; i < 16; i++) {
      __m128i m;
      if (i < 4) {
        m = _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(data + 16 * i)), byte_swap);
      } else {
        /* w[i & 3] holds words 4i-16.., w[(i + 1) & 3] 4i-12.., and so on */
        m = _mm_sha256msg1_epu32(w[i & 3], w[(i + 1) & 3]);
        m = _mm_add_epi32(m, _mm_alignr_epi8(w[(i + 3) & 3], w[(i + 2) & 3], 4));
        m = _mm_sha256msg2_epu32(m, w[(i + 3) & 3]);
      }
      w[i & 3] = m;
      __m128i wk = _mm_add_epi32(m, _mm_loadu_si128((const __m128i *)&round_constants[4 * i]));
      cdgh = _mm_sha256rnds2_epu32(cdgh, abef, wk);
      abef = _mm_sha256rnds2_epu32(abef, cdgh, _mm_shuffle_epi32(wk, 0x0E));
    }
    abef = _mm_add_epi32(abef, abef_in);
    cdgh = _mm_add_epi32(cdgh, cdgh_in);
  }
  __m128i feba = _mm_shuffle_epi32(abef, 0x1B);
  __m128i dchg = _mm_shuffle_epi32(cdgh, 0xB1);
  _mm_storeu_si128((__m128i *)&state[0], _mm_blend_epi16(feba, dchg, 0xF0));
  _mm_storeu_si128((__m128i *)&state[4], _mm_alignr_epi8(dchg, feba, 8));
}
#else
int kl_sha256_blocks_accelerated_available(void) { return 0; }
void kl_sha256_blocks_accelerated(uint32_t state[8], const unsigned char *data, size_t blocks) {
  kl_sha256_blocks_portable(state, data, blocks);
}
#endif

/* The block function, chosen once when the program loads (cpuid traps to
 * the hypervisor in a virtual machine: too slow to ask at every call). */
static void (*compress_blocks)(uint32_t state[8], const unsigned char *data, size_t blocks) =
    kl_sha256_blocks_portable;

__attribute__((constructor)) static void choose_blocks(void) {
  if (kl_sha256_blocks_accelerated_available()) compress_blocks = kl_sha256_blocks_accelerated;
}

static void compress(uint32_t state[8], const unsigned char block[64]) { compress_blocks(state, block, 1); }

void kl_sha256_init(kl_sha256 *h) {
  static const uint32_t initial[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                                      0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};
  memcpy(h->state, initial, sizeof initial);
  h->length = 0;
  h->used = 0;
}

void kl_sha256_update(kl_sha256 *h, const void *data, size_t size) {
  const unsigned char *p = data;
  h->length += size;
  if (h->used) {
    size_t take = 64 - h->used < size ? 64 - h->used : size;
    memcpy(h->block + h->used, p, take);
    h->used += take;
    p += take;
    size -= take;
    if (h->used < 64) return;
    compress(h->state, h->block);
    h->used = 0;
  }
  if (size >= 64) {
    compress_blocks(h->state, p, size / 64);
    p += size / 64 * 64;
    size %= 64;
  }
  memcpy(h->block, p, size);
  h->used = size;
}

void kl_sha256_final(kl_sha256 *h, unsigned char digest[KL_SHA256_BYTES]) {
  uint64_t bits = h->length * 8;
  h->block[h->used++] = 0x80;
  if (h->used > 56) {
    memset(h->block + h->used, 0, 64 - h->used);
    compress(h->state, h->block);
    h->used = 0;
  }
  memset(h->block + h->used, 0, 56 - h->used);
  for (int i = 0; i < 8; i++) h->block[56 + i] = (unsigned char)(bits >> (56 - 8 * i));
  compress(h->state, h->block);
  for (int i = 0; i < 8; i++) {
    digest[4 * i] = (unsigned char)(h->state[i] >> 24);
    digest[4 * i + 1] = (unsigned char)(h->state[i] >> 16);
    digest[4 * i + 2] = (unsigned char)(h->state[i] >> 8);
    digest[4 * i + 3] = (unsigned char)h->state[i];
  }
}

void kl_sha256_hex(const void *data, size_t size, char hex[2 * KL_SHA256_BYTES + 1]) {
  static const char digits[] = "0123456789abcdef";
  unsigned char d[KL_SHA256_BYTES];
  kl_sha256 h;
  kl_sha256_init(&h);
  kl_sha256_update(&h, data, size);
  kl_sha256_final(&h, d);
  for (int i = 0; i < KL_SHA256_BYTES; i++) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  hex[2 * KL_SHA256_BYTES] = '\0';
}
