/* Renumbers the parser's nodes (creation order, children first) into the
 * unit's pre-order arrays, drops nodes left unreachable by backtracking,
 * and builds the kind index.
 *
 * No traversal: a child is always created before its parent, so walking
 * creation ids downwards meets every parent before its children, and
 * upwards every child before its parent. Subtree sizes then give each
 * child its pre-order id directly (its parent's id + 1 + the sizes of the
 * siblings before it). Four passes, each streaming over its arrays; the
 * only scattered accesses are independent 16-byte stores and loads, never
 * a chain of dependent ones, which is what a 5 MB unit's million nodes
 * need (a stack-driven DFS spent most of the parse in cache misses). */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

/* What pass 3 learns about the node with a given pre-order id. */
typedef struct slot_info {
  uint32_t old;          /* its creation id                             */
  uint32_t parent, depth, subtree_end;
} slot_info;

int kl_layout(kl_parser *p, uint32_t root) {
  kl_unit *u = p->u;
  kl_unit_impl *ui = kl_unit_impl_of(u);
  uint32_t n = p->nnodes;
  int ok = 0;
  size_t newid_cap = 0, size_cap = 0, info_cap = 0;
  uint32_t *newid = NULL, *size = NULL;
  slot_info *info = NULL;
  if (root >= n) goto out;
  newid = kl_src_alloc((size_t)n * sizeof *newid, &newid_cap);
  size = kl_src_alloc((size_t)n * sizeof *size, &size_cap);
  if (!newid || !size) goto out;

  /* pass 1, downwards: reachability from the root. A child slot that would
   * adopt a node a second time (a parser bug) or a node not created before
   * its parent is cleared, so what follows always sees a tree. */
  memset(newid, 0xff, (size_t)n * sizeof *newid);
  newid[root] = 0;
  for (uint32_t x = root + 1; x-- > 0;) {
    if (newid[x] == KL_NONE) continue;
    const kl_node *nd = &p->nodes[x];
    for (uint32_t c = 0; c < nd->child_count; c++) {
      uint32_t *slot = &p->kids[nd->child_begin + c];
      if (*slot >= x || newid[*slot] != KL_NONE) *slot = KL_NONE;
      else newid[*slot] = 0;
    }
  }
  /* pass 2, upwards: subtree sizes of the reachable nodes */
  for (uint32_t x = 0; x <= root; x++) {
    if (newid[x] == KL_NONE) continue;
    const kl_node *nd = &p->nodes[x];
    uint32_t s = 1;
    for (uint32_t c = 0; c < nd->child_count; c++) {
      uint32_t k = p->kids[nd->child_begin + c];
      if (k != KL_NONE) s += size[k];
    }
    size[x] = s;
  }
  uint32_t count = size[root];
  info = kl_src_alloc((size_t)count * sizeof *info, &info_cap);
  /* a tree of count nodes has count - 1 edges */
  u->nodes = kl_src_alloc((size_t)count * sizeof *u->nodes, &ui->nodes_cap);
  u->kids = kl_src_alloc((size_t)count * sizeof *u->kids, &ui->kids_cap);
  u->kid_field = kl_src_alloc(count, &ui->kid_field_cap);
  u->by_kind = kl_src_alloc((size_t)count * sizeof *u->by_kind, &ui->by_kind_cap);
  if (!info || !u->nodes || !u->kids || !u->kid_field || !u->by_kind) goto out;

  /* pass 3, downwards: pre-order ids. A node hands each child its id,
   * parent, depth and subtree end (in info[], by the child's new id); a
   * child's size[] is spent then and keeps its depth instead, so nothing
   * written here is read back from far away. Kinds are counted. */
  uint32_t kinds[KL_N__COUNT] = {0};
  info[0] = (slot_info){root, KL_NONE, 0, count};
  size[root] = 0;
  for (uint32_t x = root + 1; x-- > 0;) {
    uint32_t id = newid[x];
    if (id == KL_NONE) continue;
    const kl_node *nd = &p->nodes[x];
    kinds[nd->kind]++;
    uint32_t cb = nd->child_begin, depth = size[x] + 1, next = id + 1;
    for (uint32_t c = 0; c < nd->child_count; c++) {
      uint32_t k = p->kids[cb + c];
      if (k == KL_NONE) continue;
      info[next] = (slot_info){k, id, depth, next + size[k]};
      newid[k] = next;
      next += size[k];
      size[k] = depth;
    }
  }
  u->kind_start[0] = 0;
  for (int k = 0; k < KL_N__COUNT; k++) u->kind_start[k + 1] = u->kind_start[k] + kinds[k];
  uint32_t fill[KL_N__COUNT];
  for (int k = 0; k < KL_N__COUNT; k++) fill[k] = u->kind_start[k];

  /* pass 4, in pre-order: each node is gathered from its creation slot,
   * with its children list in new ids and its place in the kind index */
  uint32_t nk = 0;
  for (uint32_t id = 0; id < count; id++) {
    const slot_info *in = &info[id];
    const kl_node *src = &p->nodes[in->old];
    kl_node *dst = &u->nodes[id];
    *dst = *src;
    dst->parent = in->parent;
    dst->depth = in->depth;
    dst->subtree_end = in->subtree_end;
    dst->child_begin = nk;
    for (uint32_t c = 0; c < src->child_count; c++) {
      uint32_t k = p->kids[src->child_begin + c];
      if (k == KL_NONE) continue;
      u->kids[nk] = newid[k];
      u->kid_field[nk] = p->kfield[src->child_begin + c];
      nk++;
    }
    dst->child_count = nk - dst->child_begin;
    u->by_kind[fill[dst->kind]++] = id;
  }
  u->nnodes = count;
  u->nkids = nk;
  ok = 1;
out:
  kl_src_free(newid, newid_cap);
  kl_src_free(size, size_cap);
  kl_src_free(info, info_cap);
  /* the parser's arrays are done with: recycle them for the next parse */
  kl_src_free(p->nodes, (size_t)p->ncap * sizeof *p->nodes);
  kl_src_free(p->kids, (size_t)p->kcap * sizeof *p->kids);
  kl_src_free(p->kfield, (size_t)p->kcap * sizeof *p->kfield);
  kl_src_free(p->pend, (size_t)p->pcap * sizeof *p->pend);
  kl_src_free(p->pfield, (size_t)p->pcap * sizeof *p->pfield);
  p->nodes = NULL;
  p->kids = NULL;
  p->kfield = NULL;
  p->pend = NULL;
  p->pfield = NULL;
  p->ncap = p->kcap = p->pcap = 0;
  return ok;
}
