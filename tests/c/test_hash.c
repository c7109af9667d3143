/* SHA-256 against the FIPS 180-4 / NIST example vectors, and its two
 * block functions (portable C, x86-64 SHA extensions) against each other. */
#include <stdlib.h>

#include "core/hash.h"
#include "core/hash_blocks.h"
#include "harness.h"

/* Runs random runs of blocks, at unaligned offsets and from random states,
 * through both block functions; where the CPU lacks the SHA extensions the
 * accelerated one is not run (the vectors above then test the portable
 * one, which kl_sha256 uses there). */
static void blocks_agree(test_batch *t) {
  if (!kl_sha256_blocks_accelerated_available()) {
    printf("# the CPU has no SHA extensions: only the portable block function is tested\n");
    return;
  }
  enum { BYTES = 64 * 64 + 15 };
  unsigned char *data = malloc(BYTES);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < BYTES; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    data[i] = (unsigned char)x;
  }
  int same = 1;
  for (int trial = 0; trial < 200 && same; trial++) {
    uint32_t a[8], b[8];
    for (int i = 0; i < 8; i++) {
      x ^= x << 13, x ^= x >> 7, x ^= x << 17;
      a[i] = b[i] = (uint32_t)x;
    }
    size_t offset = (size_t)(x >> 40) % 16, blocks = 1 + (size_t)(x >> 20) % 64;
    kl_sha256_blocks_portable(a, data + offset, blocks);
    kl_sha256_blocks_accelerated(b, data + offset, blocks);
    same = memcmp(a, b, sizeof a) == 0;
  }
  OK(t, same, "the SHA-extension block function agrees with the portable one");
  free(data);
}

static void hex_of(const char *s, size_t n, char out[65]) { kl_sha256_hex(s, n, out); }

int main(void) {
  test_batch t = {0, 0};
  char hex[65];
  hex_of("", 0, hex);
  STR_EQ(&t, hex, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", "empty");
  hex_of("abc", 3, hex);
  STR_EQ(&t, hex, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", "abc");
  const char *two_blocks = "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
  hex_of(two_blocks, strlen(two_blocks), hex);
  STR_EQ(&t, hex, "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1", "448 bits");

  /* one million 'a', fed in uneven pieces to exercise the buffering */
  size_t n = 1000000;
  char *a = malloc(n);
  memset(a, 'a', n);
  kl_sha256 h;
  kl_sha256_init(&h);
  size_t off = 0, step = 1;
  while (off < n) {
    size_t take = step < n - off ? step : n - off;
    kl_sha256_update(&h, a + off, take);
    off += take;
    step = step * 3 % 97 + 1;
  }
  unsigned char d[32];
  kl_sha256_final(&h, d);
  char piecewise[65];
  for (int i = 0; i < 32; i++) snprintf(piecewise + 2 * i, 3, "%02x", d[i]);
  STR_EQ(&t, piecewise, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0",
         "million a, piecewise");
  hex_of(a, n, hex);
  STR_EQ(&t, hex, piecewise, "one-shot equals piecewise");
  /* 55, 56 and 64 bytes: the padding boundaries */
  hex_of(a, 55, hex);
  STR_EQ(&t, hex, "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318", "55 bytes");
  hex_of(a, 56, hex);
  STR_EQ(&t, hex, "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a", "56 bytes");
  hex_of(a, 64, hex);
  STR_EQ(&t, hex, "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb", "64 bytes");
  free(a);
  blocks_agree(&t);
  return kl_test_finish(&t);
}
