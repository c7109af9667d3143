/* Renumbers the parser's nodes (creation order, children first) into the
 * unit's pre-order arrays, drops nodes left unreachable by backtracking,
 * and builds the kind index.
 *
 * No traversal: a child is always created before its parent, so walking
 * creation ids upwards meets every child before its parent (subtree
 * sizes), and downwards every parent before its children. Sizes give each
 * child its pre-order id directly: its parent's id + 1 + the sizes of the
 * siblings before it. Then the nodes are gathered in pre-order. Each pass
 * streams; the passes before the gather read the parser's compact child
 * ranges (8 bytes a node), not its 40-byte nodes. A 5 MB unit has a
 * million nodes, and moving fewer bytes is what makes this fast (a
 * stack-driven DFS spent most of the parse in dependent cache misses). */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

#define GATHER_AHEAD 32

typedef struct open_node {
  uint32_t id, end;      /* an ancestor of the nodes being gathered        */
} open_node;

/* Clears every child slot that would adopt a node a second time, or one
 * not created before its parent (both would be parser bugs), keeping the
 * first adoption from the root down: what remains is a tree. */
static int dedupe(kl_parser *p, uint32_t root, uint32_t *mark) {
  memset(mark, 0, ((size_t)root + 1) * sizeof *mark);
  mark[root] = 1;
  for (uint32_t x = root + 1; x-- > 0;) {
    if (!mark[x]) continue;
    const kl_p_range *r = &p->ranges[x];
    for (uint32_t c = 0; c < r->count; c++) {
      uint32_t *slot = &p->kids[r->begin + c];
      if (*slot == KL_NONE) continue;
      if (*slot >= x || mark[*slot]) *slot = KL_NONE;
      else mark[*slot] = 1;
    }
  }
  return 1;
}

/* Pre-order ids (downwards) from the subtree sizes in ranges[]:
 * order[new id] = creation id. With `recount`, the sizes are summed again
 * first (upwards), after dedupe. 0 when a slot adopts a node twice or a
 * later node, or the sizes do not add up: the caller dedupes and runs it
 * again with recount. */
static int number(kl_parser *p, uint32_t root, int recount, uint32_t *newid, uint32_t *order,
                  uint32_t *count) {
  if (recount) {
    for (uint32_t x = 0; x <= root; x++) {
      kl_p_range *r = &p->ranges[x];
      uint64_t s = 1;
      for (uint32_t c = 0; c < r->count; c++) {
        uint32_t k = p->kids[r->begin + c];
        if (k == KL_NONE) continue;
        if (k >= x) return 0;
        s += p->ranges[k].size;
      }
      r->size = s < UINT32_MAX ? (uint32_t)s : UINT32_MAX;
    }
  }
  *count = p->ranges[root].size;
  if (*count > p->nnodes) return 0;
  memset(newid, 0xff, ((size_t)root + 1) * sizeof *newid);
  newid[root] = 0;
  order[0] = root;
  for (uint32_t x = root + 1; x-- > 0;) {
    uint32_t id = newid[x];
    if (id == KL_NONE) continue; /* unreachable */
    const kl_p_range *r = &p->ranges[x];
    uint32_t next = id + 1;
    for (uint32_t c = 0; c < r->count; c++) {
      uint32_t k = p->kids[r->begin + c];
      if (k == KL_NONE) continue;
      /* k >= x: not created before its parent; newid set: adopted twice;
       * past the parent's range: sizes that do not add up */
      if (k >= x || newid[k] != KL_NONE || next - id >= r->size) return 0;
      newid[k] = next;
      order[next] = k;
      next += p->ranges[k].size;
    }
  }
  return 1;
}

int kl_layout(kl_parser *p, uint32_t root) {
  kl_unit *u = p->u;
  kl_unit_impl *ui = kl_unit_impl_of(u);
  uint32_t n = p->nnodes;
  int ok = 0;
  size_t newid_cap = 0, order_cap = 0, open_cap = 0;
  uint32_t *newid = NULL, *order = NULL;
  open_node *open = NULL;
  if (root >= n) goto out;
  newid = kl_src_alloc((size_t)n * sizeof *newid, &newid_cap);
  order = kl_src_alloc((size_t)n * sizeof *order, &order_cap);
  if (!newid || !order) goto out;
  uint32_t count = 0;
  if (!number(p, root, 0, newid, order, &count)) {
    if (!dedupe(p, root, newid) || !number(p, root, 1, newid, order, &count)) goto out;
  }
  /* a tree of count nodes has count - 1 edges */
  u->nodes = kl_src_alloc((size_t)count * sizeof *u->nodes, &ui->nodes_cap);
  u->kids = kl_src_alloc((size_t)count * sizeof *u->kids, &ui->kids_cap);
  u->kid_field = kl_src_alloc(count, &ui->kid_field_cap);
  u->by_kind = kl_src_alloc((size_t)count * sizeof *u->by_kind, &ui->by_kind_cap);
  open = kl_src_alloc((size_t)count * sizeof *open, &open_cap); /* touched to the depth */
  if (!u->nodes || !u->kids || !u->kid_field || !u->by_kind || !open) goto out;

  /* the gather, in pre-order: the open ancestors on a stack give parent
   * and depth; children in new ids follow from their sizes; order[id] is
   * spent once read and keeps the node's kind for the kind index */
  uint32_t kinds[KL_N__COUNT] = {0};
  uint32_t nk = 0, sp = 0;
  for (uint32_t id = 0; id < count; id++) {
    uint32_t x = order[id];
    /* the gather's reads are scattered but known ahead: ask for them early
     * (a node may straddle two cache lines) */
    if (id + GATHER_AHEAD < count) {
      uint32_t y = order[id + GATHER_AHEAD];
      __builtin_prefetch(&p->nodes[y]);
      __builtin_prefetch((const char *)&p->nodes[y + 1] - 1);
      __builtin_prefetch(&p->ranges[y]);
    }
    const kl_node *src = &p->nodes[x];
    const kl_p_range *r = &p->ranges[x];
    kl_node *dst = &u->nodes[id];
    while (sp && open[sp - 1].end <= id) sp--;
    *dst = *src;
    dst->parent = sp ? open[sp - 1].id : KL_NONE;
    dst->depth = sp;
    dst->subtree_end = id + r->size;
    dst->child_begin = nk;
    uint32_t next = id + 1;
    for (uint32_t c = 0; c < r->count; c++) {
      uint32_t k = p->kids[r->begin + c];
      if (k == KL_NONE) continue;
      u->kids[nk] = next;
      u->kid_field[nk] = p->kfield[r->begin + c];
      next += p->ranges[k].size;
      nk++;
    }
    dst->child_count = nk - dst->child_begin;
    if (dst->child_count) open[sp++] = (open_node){id, dst->subtree_end};
    kinds[src->kind]++;
    order[id] = src->kind;
  }
  u->nnodes = count;
  u->nkids = nk;
  /* the kind index: a counting sort that keeps pre-order per kind */
  u->kind_start[0] = 0;
  for (int k = 0; k < KL_N__COUNT; k++) u->kind_start[k + 1] = u->kind_start[k] + kinds[k];
  uint32_t fill[KL_N__COUNT];
  for (int k = 0; k < KL_N__COUNT; k++) fill[k] = u->kind_start[k];
  for (uint32_t id = 0; id < count; id++) u->by_kind[fill[order[id]]++] = id;
  ok = 1;
out:
  kl_src_free(newid, newid_cap);
  kl_src_free(order, order_cap);
  kl_src_free(open, open_cap);
  /* the parser's arrays are done with: recycle them for the next parse
   * (the ranges live in the nodes' block) */
  kl_src_free(p->nodes, (size_t)p->ncap * (sizeof *p->nodes + sizeof *p->ranges));
  kl_src_free(p->kids, (size_t)p->kcap * sizeof *p->kids);
  kl_src_free(p->kfield, (size_t)p->kcap * sizeof *p->kfield);
  kl_src_free(p->pend, (size_t)p->pcap * sizeof *p->pend);
  kl_src_free(p->pfield, (size_t)p->pcap * sizeof *p->pfield);
  p->nodes = NULL;
  p->ranges = NULL;
  p->kids = NULL;
  p->kfield = NULL;
  p->pend = NULL;
  p->pfield = NULL;
  p->ncap = p->kcap = p->pcap = 0;
  return ok;
}
