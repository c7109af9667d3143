/* The lookup index of one function for the affine analysis: its local
 * declarations by (name, scope), its assignments by name and its
 * parameters by name, built in one pass over the function's nodes.
 *
 * The analysis asks, for an identifier at a site, which declaration is in
 * scope and whether the variable is assigned again in its block. Scanning
 * the statements before the site and every assignment of the function for
 * each question made access_patterns quadratic in the number of
 * statements (40k statements: 12 s); with the index each question is a
 * hash probe and two binary searches. The index of the function analysed
 * last is kept on the unit, so node:affine() over every subscript of a
 * function builds it once. */
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

typedef struct decl_entry {
  uint64_t key;          /* name id << 32 | scope node                      */
  uint32_t decl;         /* the DECLARATOR                                  */
} decl_entry;

typedef struct write_entry {
  uint64_t key;          /* name id << 32 | the writing node                */
} write_entry;

typedef struct loop_entry {
  uint64_t key;          /* name id << 32 | the FOR node                    */
  uint32_t outer;        /* index of the nearest enclosing entry of the same
                            name, or KL_NONE                                */
} loop_entry;

struct kl_fn_index {
  uint32_t fn;
  loop_entry *loops;     /* for-loops by induction variable                */
  uint32_t nloops, loops_cap;
  uint32_t *slot;        /* open-addressed name ids + 1 (0 empty)          */
  uint32_t slot_cap;     /* power of two                                    */
  uint32_t *name_off, *name_len, *param;  /* by name id                    */
  uint32_t nnames, names_cap;
  decl_entry *decls;
  uint32_t ndecls, decls_cap;
  write_entry *writes;
  uint32_t nwrites, writes_cap;
};

static uint32_t text_hash(const char *s, uint32_t len) {
  return (uint32_t)kl_hash_bytes(14695981039346656037ull, s, len);
}

static uint32_t *name_slot(const kl_fn_index *x, const kl_unit *u, uint32_t off, uint32_t len) {
  uint32_t mask = x->slot_cap - 1;
  for (uint32_t h = text_hash(u->src + off, len);; h++) {
    uint32_t *s = &x->slot[h & mask];
    if (!*s) return s;
    uint32_t id = *s - 1;
    if (x->name_len[id] == len && memcmp(u->src + x->name_off[id], u->src + off, len) == 0)
      return s;
  }
}

static int grow_slots(kl_fn_index *x, const kl_unit *u) {
  uint32_t cap = x->slot_cap ? x->slot_cap * 2 : 64;
  uint32_t *old = x->slot, old_cap = x->slot_cap;
  x->slot = calloc(cap, sizeof *x->slot);
  if (!x->slot) {
    x->slot = old;
    return 0;
  }
  x->slot_cap = cap;
  for (uint32_t i = 0; i < old_cap; i++)
    if (old[i]) *name_slot(x, u, x->name_off[old[i] - 1], x->name_len[old[i] - 1]) = old[i];
  free(old);
  return 1;
}

/* The id of a name text, added when new; KL_NONE on out of memory. */
static uint32_t intern(kl_fn_index *x, const kl_unit *u, uint32_t off, uint32_t len) {
  if ((x->nnames + 1) * 2 > x->slot_cap && !grow_slots(x, u)) return KL_NONE;
  uint32_t *s = name_slot(x, u, off, len);
  if (*s) return *s - 1;
  if (x->nnames == x->names_cap) {
    uint32_t cap = x->names_cap ? x->names_cap * 2 : 32;
    uint32_t *a = realloc(x->name_off, cap * sizeof *a);
    if (!a) return KL_NONE;
    x->name_off = a;
    a = realloc(x->name_len, cap * sizeof *a);
    if (!a) return KL_NONE;
    x->name_len = a;
    a = realloc(x->param, cap * sizeof *a);
    if (!a) return KL_NONE;
    x->param = a;
    x->names_cap = cap;
  }
  uint32_t id = x->nnames++;
  x->name_off[id] = off;
  x->name_len[id] = len;
  x->param[id] = KL_NONE;
  *s = id + 1;
  return id;
}

static void ident_span(const kl_unit *u, uint32_t node, uint32_t *off, uint32_t *len) {
  uint32_t b, e;
  kl_node_span(u, node, &b, &e);
  *off = b;
  *len = e - b;
}

/* The name id of an IDENT node (KL_NONE when it is none, or on oom). */
static uint32_t ident_name(kl_fn_index *x, const kl_unit *u, uint32_t node, int *oom) {
  if (node == KL_NONE || u->nodes[node].kind != KL_N_IDENT) return KL_NONE;
  uint32_t off, len;
  ident_span(u, node, &off, &len);
  uint32_t id = intern(x, u, off, len);
  if (id == KL_NONE) *oom = 1;
  return id;
}

static int add_decl(kl_fn_index *x, uint32_t name, uint32_t scope, uint32_t decl) {
  if (x->ndecls == x->decls_cap) {
    uint32_t cap = x->decls_cap ? x->decls_cap * 2 : 32;
    decl_entry *d = realloc(x->decls, cap * sizeof *d);
    if (!d) return 0;
    x->decls = d;
    x->decls_cap = cap;
  }
  x->decls[x->ndecls++] = (decl_entry){(uint64_t)name << 32 | scope, decl};
  return 1;
}

static int add_write(kl_fn_index *x, uint32_t name, uint32_t node) {
  if (x->nwrites == x->writes_cap) {
    uint32_t cap = x->writes_cap ? x->writes_cap * 2 : 32;
    write_entry *w = realloc(x->writes, cap * sizeof *w);
    if (!w) return 0;
    x->writes = w;
    x->writes_cap = cap;
  }
  x->writes[x->nwrites++] = (write_entry){(uint64_t)name << 32 | node};
  return 1;
}

/* The DECLARATOR children of a DECL, registered under scope. */
static int add_declarators(kl_fn_index *x, const kl_unit *u, uint32_t decl, uint32_t scope) {
  int oom = 0;
  const kl_node *dn = &u->nodes[decl];
  for (uint32_t k = 0; k < dn->child_count; k++) {
    uint32_t d = kl_child(u, decl, k);
    if (u->nodes[d].kind != KL_N_DECLARATOR) continue;
    uint32_t name = ident_name(x, u, kl_node_field(u, d, KL_F_NAME), &oom);
    if (oom || (name != KL_NONE && !add_decl(x, name, scope, d))) return 0;
  }
  return 1;
}

static int by_decl_key(const void *a, const void *b) {
  const decl_entry *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? -1 : 1;
  return x->decl < y->decl ? -1 : x->decl > y->decl;
}

static int add_loop(kl_fn_index *x, uint32_t name, uint32_t loop) {
  if (x->nloops == x->loops_cap) {
    uint32_t cap = x->loops_cap ? x->loops_cap * 2 : 16;
    loop_entry *l = realloc(x->loops, cap * sizeof *l);
    if (!l) return 0;
    x->loops = l;
    x->loops_cap = cap;
  }
  x->loops[x->nloops++] = (loop_entry){(uint64_t)name << 32 | loop, KL_NONE};
  return 1;
}

/* The induction variable of a for-loop as the analysis reads it: the
 * first declarator of a declaration init, or the target of an assignment
 * init; its IDENT node or KL_NONE. */
static uint32_t loop_var(const kl_unit *u, uint32_t loop) {
  uint32_t init = kl_node_field(u, loop, KL_F_INIT);
  if (init == KL_NONE) return KL_NONE;
  uint32_t name = KL_NONE;
  if (u->nodes[init].kind == KL_N_DECL) {
    uint32_t d = kl_node_field(u, init, KL_F_DECLARATOR);
    if (d != KL_NONE) name = kl_node_field(u, d, KL_F_NAME);
  } else if (u->nodes[init].kind == KL_N_ASSIGN && u->nodes[init].child_count) {
    name = kl_child(u, init, 0);
  }
  return name != KL_NONE && u->nodes[name].kind == KL_N_IDENT ? name : KL_NONE;
}

static int by_loop_key(const void *a, const void *b) {
  const loop_entry *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key;
}

/* Links each loop entry to the nearest enclosing loop of the same variable
 * (entries are sorted by name, then in pre-order): one stack per name. */
static int link_loops(kl_fn_index *x, const kl_unit *u) {
  uint32_t *stack = malloc((x->nloops + 1) * sizeof *stack), sp = 0;
  if (!stack) return 0;
  for (uint32_t i = 0; i < x->nloops; i++) {
    if (i && x->loops[i].key >> 32 != x->loops[i - 1].key >> 32) sp = 0;
    uint32_t node = (uint32_t)x->loops[i].key;
    while (sp && u->nodes[(uint32_t)x->loops[stack[sp - 1]].key].subtree_end <= node) sp--;
    x->loops[i].outer = sp ? stack[sp - 1] : KL_NONE;
    stack[sp++] = i;
  }
  free(stack);
  return 1;
}

static int by_write_key(const void *a, const void *b) {
  const write_entry *x = a, *y = b;
  return x->key < y->key ? -1 : x->key > y->key;
}

static void index_free(kl_fn_index *x) {
  if (!x) return;
  free(x->slot);
  free(x->name_off);
  free(x->name_len);
  free(x->param);
  free(x->decls);
  free(x->writes);
  free(x->loops);
  free(x);
}

static int index_fill(kl_fn_index *x, const kl_unit *u, uint32_t fn) {
  int oom = 0;
  uint32_t end = u->nodes[fn].subtree_end;
  for (uint32_t i = fn; i < end; i++) {
    const kl_node *nd = &u->nodes[i];
    switch (nd->kind) {
    case KL_N_DECL_STMT: {
      /* a declaration statement of a block: in scope after it there */
      uint32_t block = nd->parent;
      if (nd->child_count && block != KL_NONE && u->nodes[block].kind == KL_N_COMPOUND &&
          !add_declarators(x, u, kl_child(u, i, 0), block))
        return 0;
      break;
    }
    case KL_N_FOR:
    case KL_N_RANGE_FOR: {
      uint32_t init = kl_node_field(u, i, KL_F_INIT);
      if (init != KL_NONE && u->nodes[init].kind == KL_N_DECL && !add_declarators(x, u, init, i))
        return 0;
      if (nd->kind == KL_N_FOR && i != fn) {
        uint32_t var = ident_name(x, u, loop_var(u, i), &oom);
        if (oom || (var != KL_NONE && !add_loop(x, var, i))) return 0;
      }
      break;
    }
    case KL_N_ASSIGN:
    case KL_N_POSTFIX:
    case KL_N_UNARY: {
      if (nd->kind != KL_N_ASSIGN && nd->op != KL_P2('+', '+') && nd->op != KL_P2('-', '-'))
        break;
      if (!nd->child_count) break;
      uint32_t name = ident_name(x, u, kl_child(u, i, 0), &oom);
      if (oom || (name != KL_NONE && !add_write(x, name, i))) return 0;
      break;
    }
    default:
      break;
    }
  }
  uint32_t params = kl_node_field(u, fn, KL_F_PARAMS);
  if (params != KL_NONE) {
    for (uint32_t k = 0; k < u->nodes[params].child_count; k++) {
      uint32_t pn = kl_child(u, params, k);
      uint32_t name = kl_node_field(u, pn, KL_F_NAME);
      if (name == KL_NONE) continue;
      /* the name token's text, as kl_param_info gives it */
      const kl_token *t = &u->tokens[u->nodes[name].tok_begin];
      uint32_t id = intern(x, u, t->off, t->len);
      if (id == KL_NONE) return 0;
      if (x->param[id] == KL_NONE) x->param[id] = pn; /* the first one wins */
    }
  }
  if (!x->slot_cap && !grow_slots(x, u)) return 0;
  if (x->ndecls > 1) qsort(x->decls, x->ndecls, sizeof *x->decls, by_decl_key);
  if (x->nwrites > 1) qsort(x->writes, x->nwrites, sizeof *x->writes, by_write_key);
  if (x->nloops > 1) qsort(x->loops, x->nloops, sizeof *x->loops, by_loop_key);
  return link_loops(x, u);
}

const kl_fn_index *kl_fn_index_get(kl_unit *u, uint32_t fn) {
  kl_unit_impl *ui = kl_unit_impl_of(u);
  if (ui->fn_index && ui->fn_index->fn == fn) return ui->fn_index;
  index_free(ui->fn_index);
  ui->fn_index = NULL;
  kl_fn_index *x = calloc(1, sizeof *x);
  if (!x) return NULL;
  x->fn = fn;
  if (!index_fill(x, u, fn)) {
    index_free(x);
    return NULL;
  }
  ui->fn_index = x;
  return x;
}

void kl_fn_index_free(kl_unit *u) {
  kl_unit_impl *ui = kl_unit_impl_of(u);
  index_free(ui->fn_index);
  ui->fn_index = NULL;
}

uint32_t kl_fn_name(const kl_fn_index *x, const kl_unit *u, uint32_t off, uint32_t len) {
  uint32_t s = *name_slot(x, u, off, len);
  return s ? s - 1 : KL_NONE;
}

uint32_t kl_fn_param(const kl_fn_index *x, uint32_t name) {
  return name == KL_NONE ? KL_NONE : x->param[name];
}

int kl_fn_has_decl(const kl_fn_index *x, uint32_t name) {
  if (name == KL_NONE) return 0;
  uint32_t lo = 0, hi = x->ndecls;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (x->decls[mid].key >> 32 < name) lo = mid + 1;
    else hi = mid;
  }
  return lo < x->ndecls && x->decls[lo].key >> 32 == name;
}

uint32_t kl_fn_loop(const kl_fn_index *x, const kl_unit *u, uint32_t name, uint32_t site,
                    uint32_t max_up) {
  if (name == KL_NONE) return KL_NONE;
  /* the last loop of that variable at or before site in pre-order */
  uint64_t key = (uint64_t)name << 32 | site;
  uint32_t lo = 0, hi = x->nloops;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (x->loops[mid].key <= key) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0 || x->loops[lo - 1].key >> 32 != name) return KL_NONE;
  /* the innermost loop of the variable around site is that one or one of
   * its enclosing loops of the same variable */
  for (uint32_t i = lo - 1; i != KL_NONE; i = x->loops[i].outer) {
    uint32_t loop = (uint32_t)x->loops[i].key;
    if (site < u->nodes[loop].subtree_end)
      return u->nodes[site].depth - u->nodes[loop].depth <= max_up ? loop : KL_NONE;
  }
  return KL_NONE;
}

uint32_t kl_fn_last_decl(const kl_fn_index *x, uint32_t name, uint32_t scope, uint32_t before) {
  if (name == KL_NONE) return KL_NONE;
  uint64_t key = (uint64_t)name << 32 | scope;
  /* the first entry at or after (key, before); the one before it is it */
  uint32_t lo = 0, hi = x->ndecls;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    const decl_entry *d = &x->decls[mid];
    if (d->key < key || (d->key == key && d->decl < before)) lo = mid + 1;
    else hi = mid;
  }
  return lo > 0 && x->decls[lo - 1].key == key ? x->decls[lo - 1].decl : KL_NONE;
}

int kl_fn_written(const kl_fn_index *x, uint32_t name, uint32_t begin, uint32_t end) {
  if (name == KL_NONE) return 0;
  uint64_t key = (uint64_t)name << 32 | begin;
  uint32_t lo = 0, hi = x->nwrites;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (x->writes[mid].key < key) lo = mid + 1;
    else hi = mid;
  }
  return lo < x->nwrites && x->writes[lo].key >> 32 == name &&
         (uint32_t)x->writes[lo].key < end;
}
