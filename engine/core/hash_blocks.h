/* SHA-256's block function, both ways (core/hash.c): the portable C one
 * and the one on the x86-64 SHA extensions, which kl_sha256 uses where
 * the CPU has them. Declared apart from hash.h for tests/c/test_hash.c,
 * which holds the two to each other; nothing else needs them.
 *
 * Each runs `blocks` 64-byte blocks of data through state[8] (the words
 * of FIPS 180-4's H, most significant first). kl_sha256_blocks_accelerated
 * may be called only when kl_sha256_blocks_accelerated_available() says 1
 * (elsewhere than x86-64 it is the portable one). */
#ifndef KL_CORE_HASH_BLOCKS_H
#define KL_CORE_HASH_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

void kl_sha256_blocks_portable(uint32_t state[8], const unsigned char *data, size_t blocks);
void kl_sha256_blocks_accelerated(uint32_t state[8], const unsigned char *data, size_t blocks);
int kl_sha256_blocks_accelerated_available(void);

#endif
