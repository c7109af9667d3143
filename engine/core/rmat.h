/* RMAT graphs in CSR, drawn from the generator of core/randgen.h. The bfs
 * workload (gpu/workloads/bfs/workload.lua) builds its bench graphs with
 * this; the bytes are those of the Lua code it replaced (tests/lua/
 * rmat_spec.lua keeps that code as the reference), draw for draw:
 *
 * V = 2^scale vertices, m = E / 2 generated edges, each stored in both
 * directions. bits(i) is kl_randgen_bits(key, i), i counting up from the
 * caller's next index, one per draw.
 *
 * 1. Labels: perm[v] = v; for v = V-1 down to 2: j = kl_randgen_int(bits,
 *    1, v), swap perm[v] and perm[j] (the hub 0 keeps label 0). V - 2 draws.
 * 2. Edges, e = 0 .. m-1: pairs = (scale + 1) / 2 (rounded down) steps of
 *    two RMAT levels each, taken from 64-bit draws 16 bits at a time, low
 *    16 bits first, at most 4 per draw (ceil(pairs / 4) draws per edge).
 *    Of 16 bits x, the high byte gives the first level's quadrant and the
 *    low byte the second's; a byte b is quadrant 0 when b < qa, 1 when
 *    b < qb, 2 when b < qc, else 3. Quadrant q appends q >> 1 to the row
 *    and q & 1 to the column (so u, v = (u << 1) | (q >> 1), (v << 1) | (q & 1)).
 *    With drop = 2 * pairs - scale (1 for an odd scale) the edge is
 *    (perm[u >> drop], perm[v >> drop]).
 * 3. CSR: offsets (V + 1) from the degrees, each edge counted at both
 *    ends (a self loop twice at its vertex); columns filled in edge order,
 *    for edge (u, v): cols[pos[u]++] = v, then cols[pos[v]++] = u.
 * Output: the V + 1 offsets then the E columns, little-endian int32. */
#ifndef KL_CORE_RMAT_H
#define KL_CORE_RMAT_H

#include <stdint.h>

/* What the generator requires, checked by callers: V a power of two in
 * [2, 2^30], E a positive multiple of 2 * V below 2^31 (int32 offsets),
 * 0 <= q[0] <= q[1] <= q[2] <= 256. */
#define KL_RMAT_MAX_V (1u << 30)

/* Builds the graph into out ((V + 1 + E) * 4 bytes) from draws *next,
 * *next + 1, ..., and leaves *next past the last one (V - 2 + E / 2 *
 * ceil(pairs / 4) draws). perm and pos are scratch of V entries each.
 * The edges are drawn twice (once to count degrees, once to place them)
 * instead of stored: the draws are counter-based, and that saves 8 bytes
 * per edge (0.5 GB at scale 22) for about 10 % more time. */
void kl_rmat_csr(uint64_t key, uint64_t *next, uint32_t V, uint32_t E, const int q[3], uint32_t *perm,
                 uint32_t *pos, unsigned char *out);

#endif
