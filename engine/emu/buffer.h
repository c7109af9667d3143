/* Guarded global-memory buffers for the emulator.
 *
 * Each buffer is its own mapping: PROT_NONE guard pages (GUARD_PAGES in
 * buffer.c, 64 KiB at 4 KiB pages), the data pages, and as many guard
 * pages again. The data ends 16 bytes-aligned right against the tail guard
 * (its start stays 16-byte aligned for vector loads), so an access past the
 * end faults at once; the few bytes of slack on either side hold a canary
 * that kl_emu_buffers_check reads after a launch. Live buffers sit in a
 * registry so that a faulting address maps back to a name and an index. */
#ifndef KL_EMU_BUFFER_H
#define KL_EMU_BUFFER_H

#include <stddef.h>

#define KL_EMU_BUFFER_NAME 64

typedef struct kl_emu_buffer {
  unsigned char *map;
  size_t map_bytes;
  unsigned char *data; /* what the kernel sees */
  size_t bytes;
  size_t elem;         /* element size for index reports, >= 1 */
  char name[KL_EMU_BUFFER_NAME];
  struct kl_emu_buffer *prev, *next;
} kl_emu_buffer;

/* A zero-filled buffer of `bytes`, or NULL when out of memory. The caller
 * owns it and frees it with kl_emu_buffer_free. */
kl_emu_buffer *kl_emu_buffer_new(size_t bytes, const char *name, size_t elem);
void kl_emu_buffer_free(kl_emu_buffer *b);

/* Describes `addr` relative to the buffer it belongs to or guards, e.g.
 * "buffer 'C' element index 4096 (byte offset 16384, 0 past the end)".
 * Returns 1 when a buffer was found, 0 otherwise (out is still filled). */
int kl_emu_buffer_describe(const void *addr, char *out, size_t n);

/* Checks every live buffer's canaries. Returns 1 and fills `out` with the
 * first damaged one, or 0 when all are intact. */
int kl_emu_buffers_check(char *out, size_t n);

#endif
