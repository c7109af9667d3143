/* SHA-256 (FIPS 180-4), for content addresses: the cubin cache key and the
 * source hash in the journal. SHA-256 is chosen over a fast non-crypto hash
 * because cache keys must never collide across unrelated sources that a
 * user (or an LLM) writes, it is fully specified by a public standard, and
 * its cost (a few hundred MB/s; over 1 GB/s on x86-64 CPUs with the SHA
 * extensions, which core/hash.c uses where it finds them) is negligible
 * next to an NVRTC compile.
 *
 * Incremental: init, update any number of times, final. The context is a
 * plain value owned by the caller; nothing is allocated. */
#ifndef KL_CORE_HASH_H
#define KL_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  uint32_t state[8];
  uint64_t length;       /* bytes hashed so far */
  unsigned char block[64];
  size_t used;           /* bytes waiting in block */
} kl_sha256;

#define KL_SHA256_BYTES 32

void kl_sha256_init(kl_sha256 *h);
void kl_sha256_update(kl_sha256 *h, const void *data, size_t size);
/* Writes the 32-byte digest; the context must be re-initialized to reuse. */
void kl_sha256_final(kl_sha256 *h, unsigned char digest[KL_SHA256_BYTES]);

/* One-shot: writes 64 lowercase hex digits and a NUL into hex[65]. */
void kl_sha256_hex(const void *data, size_t size, char hex[2 * KL_SHA256_BYTES + 1]);

#endif
