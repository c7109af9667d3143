/* The RMAT generator specified in rmat.h.
 *
 * At scale 22 the labels, the positions and the columns (16 MB, 16 MB,
 * 512 MB) are far out of cache and every edge touches them at random, so
 * the time goes to cache misses more than to drawing bits. Edges are
 * handled in batches, one step for the whole batch at a time: each step's
 * loop is short and its misses independent, so the CPU overlaps many of
 * them. An edge at a time, the RMAT loop between two misses left room for
 * two or three: 3.4 times slower at scale 22 (30 s against 8.8 s, on the
 * 2-core build machine). */
#include "core/rmat.h"

#include "core/randgen.h"

enum { BATCH = 1024 };

typedef struct {
  uint64_t key;
  uint64_t first;          /* the draw of edge 0 */
  unsigned pairs, drop;
  unsigned words;          /* draws per edge */
  unsigned char quad[256]; /* quadrant of each byte */
  const uint32_t *perm;
} edges;

static unsigned log2_exact(uint32_t V) { return (unsigned)__builtin_ctz(V); }

static unsigned words_per_edge(uint32_t V) { return ((log2_exact(V) + 1) / 2 + 3) / 4; }

/* Edges e0 .. e0 + n - 1, as labels, into src and dst. */
static void batch(const edges *g, uint64_t e0, unsigned n, uint32_t *src, uint32_t *dst) {
  uint64_t i = g->first + e0 * g->words;
  for (unsigned k = 0; k < n; k++) {
    uint32_t u = 0, v = 0;
    for (unsigned left = g->pairs; left > 0; left -= left < 4 ? left : 4) {
      uint64_t word = kl_randgen_bits(g->key, i++);
      for (unsigned j = 0; j < (left < 4 ? left : 4); j++, word >>= 16) {
        unsigned q1 = g->quad[(word >> 8) & 255], q2 = g->quad[word & 255];
        u = (u << 2) | ((q1 >> 1) << 1) | (q2 >> 1);
        v = (v << 2) | ((q1 & 1) << 1) | (q2 & 1);
      }
    }
    src[k] = u >> g->drop;
    dst[k] = v >> g->drop;
  }
  for (unsigned k = 0; k < n; k++) {
    src[k] = g->perm[src[k]];
    dst[k] = g->perm[dst[k]];
  }
}

static void put_le32(unsigned char *p, uint32_t x) {
  p[0] = (unsigned char)x;
  p[1] = (unsigned char)(x >> 8);
  p[2] = (unsigned char)(x >> 16);
  p[3] = (unsigned char)(x >> 24);
}

void kl_rmat_csr(uint64_t key, uint64_t *next, uint32_t V, uint32_t E, const int q[3], uint32_t *perm,
                 uint32_t *pos, unsigned char *out) {
  for (uint32_t v = 0; v < V; v++) perm[v] = v;
  for (uint32_t v = V - 1; v >= 2; v--) {
    uint32_t j = (uint32_t)kl_randgen_int(kl_randgen_bits(key, (*next)++), 1, v);
    uint32_t t = perm[v];
    perm[v] = perm[j];
    perm[j] = t;
  }
  unsigned scale = log2_exact(V);
  edges g = {.key = key, .first = *next, .pairs = (scale + 1) / 2, .words = words_per_edge(V), .perm = perm};
  g.drop = 2 * g.pairs - scale;
  for (int b = 0; b < 256; b++) g.quad[b] = (unsigned char)(b < q[0] ? 0 : b < q[1] ? 1 : b < q[2] ? 2 : 3);
  uint64_t m = E / 2;
  uint32_t src[BATCH], dst[BATCH];

  /* Degrees: both ends of every edge. */
  for (uint32_t v = 0; v < V; v++) pos[v] = 0;
  for (uint64_t e = 0; e < m; e += BATCH) {
    unsigned n = m - e < BATCH ? (unsigned)(m - e) : BATCH;
    batch(&g, e, n, src, dst);
    for (unsigned k = 0; k < n; k++) {
      pos[src[k]]++;
      pos[dst[k]]++;
    }
  }
  uint32_t acc = 0;
  for (uint32_t v = 0; v < V; v++) {
    uint32_t deg = pos[v];
    put_le32(out + 4 * (uint64_t)v, acc);
    pos[v] = acc;
    acc += deg;
  }
  put_le32(out + 4 * (uint64_t)V, acc);

  /* Columns, from the same edges drawn again. */
  unsigned char *cols = out + 4 * ((uint64_t)V + 1);
  for (uint64_t e = 0; e < m; e += BATCH) {
    unsigned n = m - e < BATCH ? (unsigned)(m - e) : BATCH;
    batch(&g, e, n, src, dst);
    for (unsigned k = 0; k < n; k++) {
      put_le32(cols + 4 * (uint64_t)pos[src[k]]++, dst[k]);
      put_le32(cols + 4 * (uint64_t)pos[dst[k]]++, src[k]);
    }
  }
  *next = g.first + m * g.words;
}
