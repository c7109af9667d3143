/* Renumbers the parser's nodes (creation order, children first) into the
 * unit's pre-order arrays, drops nodes left unreachable by backtracking,
 * and builds the kind index. Iterative: depth costs heap only. */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

int kl_layout(kl_parser *p, uint32_t root) {
  kl_unit *u = p->u;
  uint32_t n = p->nnodes;
  uint32_t *newid = malloc((size_t)n * sizeof *newid);
  uint32_t *order = malloc((size_t)n * sizeof *order);   /* new id -> old id */
  uint32_t *stack = malloc((size_t)n * 2 * sizeof *stack); /* (old, new parent) */
  u->nodes = malloc((size_t)n * sizeof *u->nodes);
  u->kids = malloc(((size_t)p->nkids + 1) * sizeof *u->kids);
  u->kid_field = malloc((size_t)p->nkids + 1);
  u->by_kind = malloc((size_t)n * sizeof *u->by_kind);
  int ok = 0;
  if (!newid || !order || !stack || !u->nodes || !u->kids || !u->kid_field || !u->by_kind)
    goto out;
  memset(newid, 0xff, (size_t)n * sizeof *newid);
  for (int k = 0; k <= KL_N__COUNT; k++) u->kind_start[k] = 0;
  /* pass 1, pre-order DFS: number, copy, parent, depth, kind counts */
  uint32_t sp = 0, count = 0;
  stack[sp++] = root;
  stack[sp++] = KL_NONE;
  while (sp) {
    uint32_t parent = stack[--sp], old = stack[--sp];
    /* a node adopted twice would be a parser bug: never let it overflow */
    if (newid[old] != KL_NONE) continue;
    uint32_t id = count++;
    newid[old] = id;
    order[id] = old;
    const kl_node *src = &p->nodes[old];
    kl_node *dst = &u->nodes[id];
    *dst = *src;
    dst->parent = parent;
    dst->depth = parent == KL_NONE ? 0 : u->nodes[parent].depth + 1;
    u->kind_start[dst->kind + 1]++;
    for (uint32_t i = src->child_count; i-- > 0 && sp + 2 <= 2 * n;) {
      stack[sp++] = p->kids[src->child_begin + i];
      stack[sp++] = id;
    }
  }
  u->nnodes = count;
  /* pass 2: children lists in new ids */
  uint32_t nk = 0;
  for (uint32_t id = 0; id < count; id++) {
    const kl_node *src = &p->nodes[order[id]];
    u->nodes[id].child_begin = nk;
    for (uint32_t i = 0; i < src->child_count; i++) {
      u->kids[nk] = newid[p->kids[src->child_begin + i]];
      u->kid_field[nk] = p->kfield[src->child_begin + i];
      nk++;
    }
  }
  u->nkids = nk;
  /* pass 3: subtree ends flow up (children have larger ids) */
  for (uint32_t id = count; id-- > 0;) {
    kl_node *nd = &u->nodes[id];
    nd->subtree_end = nd->child_count
                          ? u->nodes[u->kids[nd->child_begin + nd->child_count - 1]].subtree_end
                          : id + 1;
  }
  /* pass 4: kind index, a counting sort that keeps pre-order per kind */
  for (int k = 0; k < KL_N__COUNT; k++) u->kind_start[k + 1] += u->kind_start[k];
  uint32_t fill[KL_N__COUNT];
  for (int k = 0; k < KL_N__COUNT; k++) fill[k] = u->kind_start[k];
  for (uint32_t id = 0; id < count; id++) u->by_kind[fill[u->nodes[id].kind]++] = id;
  ok = 1;
out:
  free(newid);
  free(order);
  free(stack);
  return ok;
}
