/* Private to engine/source: the stages that build a kl_unit. Nothing outside
 * engine/source includes this; the public API is source.h. */
#ifndef KL_SOURCE_INTERNAL_H
#define KL_SOURCE_INTERNAL_H

#include "source/source.h"

/* pool.c: the allocator of the large arrays of units and of the parser.
 * Blocks are plain malloc blocks; sizes of 256 KiB and more are rounded up
 * and recycled through a bounded pool (see pool.c), so parsing a large
 * unit again does not page-fault its arrays in afresh. *cap gets the
 * capacity in bytes, which kl_src_free takes back (a smaller value is
 * safe). kl_src_grow keeps the first `used` bytes; NULL on out of memory,
 * the old block then stays valid. */
void *kl_src_alloc(size_t bytes, size_t *cap);
void kl_src_free(void *p, size_t cap);
void *kl_src_grow(void *p, size_t used, size_t *cap, size_t need);

enum { KL_DIAG_ID_SLOTS = 16 };

/* Every kl_unit is allocated by kl_source_parse as this, which records the
 * capacities of its pooled arrays for kl_unit_free. */
typedef struct kl_unit_impl {
  kl_unit u;                   /* first: a kl_unit * converts to it       */
  size_t src_cap, tokens_cap, nodes_cap, kids_cap, kid_field_cap, by_kind_cap; /* bytes */
  /* kl_diag_add's bounds: diagnostics kept per id, the suppressed range */
  uint32_t diags_cap;
  uint32_t ndiag_ids;
  const char *diag_id[KL_DIAG_ID_SLOTS];
  uint32_t diag_id_count[KL_DIAG_ID_SLOTS];
  uint32_t suppressed_begin, suppressed_end;
  /* consts.c: open-addressed name -> last constant index + 1 (0 empty) */
  uint32_t *const_index;
  uint32_t const_index_cap;  /* power of two, or 0 before kl_unit_constants */
  /* consts.c, built on the first lookup before an offset: every name's
   * definitions as one ascending run of const_order, the run of the name
   * whose last definition is k at const_run_start[k], const_run_len[k] */
  uint32_t *const_order, *const_run_start, *const_run_len;
  /* affine.c: the lookup index of the function analysed last, and the
   * file-scope __shared__ arrays (computed once); freed by kl_unit_free */
  struct kl_fn_index *fn_index;
  struct kl_file_shared *file_shared;
} kl_unit_impl;
static inline kl_unit_impl *kl_unit_impl_of(kl_unit *u) { return (kl_unit_impl *)u; }

/* Adds a diagnostic to the unit being built (unit.c: adjacent repeats
 * merge, at most KL_SOURCE_DIAG_CAP per id). 0 on out of memory. */
int kl_diag_add(kl_unit *u, const char *id, const char *message, uint32_t tok_begin,
                uint32_t tok_end);

/* lex.c: fills u->tokens, u->annotations and the word table from u->src.
 * Returns 0 on out of memory. */
int kl_lex(kl_unit *u);
/* Keyword id of an identifier text, KL_KW_NONE when it is not a keyword. */
kl_kw kl_keyword(const char *s, size_t len);
/* FNV-1a over bytes; shared by the word table and node hashes. */
uint64_t kl_hash_bytes(uint64_t h, const void *p, size_t n);

/* tree.c: bracket matching (tok.match) and template angle brackets. */
int kl_balance(kl_unit *u);

/* parse_*.c: the structure layer. The parser builds nodes in creation order
 * (children before parents) on a pending stack, then layout.c renumbers
 * them into the pre-order arrays of the unit. */
/* The children of a parser node, kids[begin, begin + count), and the
 * size of its subtree (itself included; saturates at UINT32_MAX). */
typedef struct kl_p_range {
  uint32_t begin, count, size;
} kl_p_range;

typedef struct kl_parser {
  kl_unit *u;
  const kl_token *t;
  uint32_t pos, end;           /* current token; end = index of EOF       */

  kl_node *nodes;              /* creation order                          */
  uint32_t nnodes, ncap;
  kl_p_range *ranges;          /* [ncap]: each node's children, as kl_p_finish
                                  made them (the layout reads these, not the
                                  40-byte nodes); in nodes' block, after
                                  nodes[ncap]: freeing nodes frees it     */
  uint32_t *kids;
  uint8_t *kfield;
  uint32_t nkids, kcap;
  uint32_t *pend;              /* pending children: node ids + fields     */
  uint8_t *pfield;
  uint32_t npend, pcap;

  uint32_t depth;
  int too_deep;                /* set when the cap was hit; cleared by recovery */
  int oom;

  /* what the unit declares each word (unit word id) to be: KL_W_TYPE
   * (struct, typedef, using, template type parameter, known CUDA types),
   * KL_W_VALUE (a variable, parameter, function, value template parameter
   * or a #define of a number). A word may be both (shadowing). */
  uint8_t *type_word;          /* [u->nwords]                             */
} kl_parser;

/* parse_core.c: node construction */
static inline const kl_token *kl_p_tok(const kl_parser *p) { return &p->t[p->pos]; }
uint32_t kl_p_push(kl_parser *p, uint32_t node, kl_field f);      /* pend */
void kl_p_set_last_field(kl_parser *p, kl_field f);
uint32_t kl_p_finish(kl_parser *p, kl_node_kind kind, uint32_t mark, uint32_t tok_begin,
                     uint32_t tok_end);                            /* node id */
uint32_t kl_p_leaf(kl_parser *p, kl_node_kind kind, uint32_t tok_begin, uint32_t tok_end);
uint32_t kl_p_opaque(kl_parser *p, uint32_t tok_begin, uint32_t tok_end, int truncated);
static inline int kl_p_is(const kl_parser *p, uint32_t i, uint32_t punct) {
  return p->t[i].kind == KL_TOK_PUNCT && p->t[i].sub == punct;
}
static inline int kl_p_kw(const kl_parser *p, uint32_t i, kl_kw kw) {
  return p->t[i].kind == KL_TOK_KEYWORD && p->t[i].sub == (uint32_t)kw;
}
uint32_t kl_p_skip_group(const kl_parser *p, uint32_t i); /* past a bracket group */
/* Past the '>' that closes the template '<' at open. A '>>' closing two
 * levels (A<B<int>>) ends the inner list AT the '>>', the outer after it. */
uint32_t kl_p_angle_end(const kl_parser *p, uint32_t open);
enum { KL_W_TYPE = 1, KL_W_VALUE = 2 };
int kl_p_is_type_word(const kl_parser *p, uint32_t i);
void kl_p_mark_type_word(kl_parser *p, uint32_t i);
/* KL_W_* bits of the word of token i (0 when it is no word). */
int kl_p_word_is(const kl_parser *p, uint32_t i);
void kl_p_mark_value_word(kl_parser *p, uint32_t i);

/* parse_type.c */
uint32_t kl_p_scan_type(const kl_parser *p, uint32_t i, int strict); /* end or KL_NONE */
uint32_t kl_p_type(kl_parser *p, uint32_t end);   /* TYPE node over [pos, end) */
uint32_t kl_p_scan_qualified_name(const kl_parser *p, uint32_t i);
int kl_p_starts_decl(const kl_parser *p, uint32_t i);

/* parse_expr.c */
uint32_t kl_p_expr(kl_parser *p, int min_prec);    /* KL_NONE on failure */
uint32_t kl_p_template_args(kl_parser *p);
enum { KL_PREC_COMMA = 1, KL_PREC_ASSIGN = 2 };

/* parse_stmt.c */
uint32_t kl_p_stmt(kl_parser *p);                  /* always a node (or KL_NONE on oom) */
uint32_t kl_p_compound(kl_parser *p);
uint32_t kl_p_decl(kl_parser *p, kl_node_kind wrap);
uint32_t kl_p_recover(kl_parser *p, uint32_t start, uint32_t mark);

/* parse_top.c */
int kl_parse(kl_unit *u);
uint32_t kl_p_params(kl_parser *p);               /* PARAM_LIST at '(' */
uint32_t kl_p_item(kl_parser *p);                 /* a top-level item  */

/* layout.c: pre-order renumbering, kind index. It consumes the parser's
 * node, kid and pending arrays (back to the pool, pointers cleared). */
int kl_layout(kl_parser *p, uint32_t root);

/* consts.c: the index of the last constant named name[0, len) in
 * u->consts (after kl_unit_constants), or KL_NONE. O(1). */
uint32_t kl_const_find(const kl_unit *u, const char *name, uint32_t len);

/* scope.c: the lookup index of function fn (cached on the unit for the
 * function asked last; NULL on out of memory). Names are texts of IDENT
 * nodes (u->src ranges); KL_NONE is "no such name in the function". */
typedef struct kl_fn_index kl_fn_index;
const kl_fn_index *kl_fn_index_get(kl_unit *u, uint32_t fn);
void kl_fn_index_free(kl_unit *u);
uint32_t kl_fn_name(const kl_fn_index *x, const kl_unit *u, uint32_t off, uint32_t len);
/* The first PARAM of fn with that name, or KL_NONE. */
uint32_t kl_fn_param(const kl_fn_index *x, uint32_t name);
/* The last DECLARATOR of that name with id < before declared in scope:
 * by a DECL_STMT child of the COMPOUND scope, or in the init of the
 * FOR/RANGE_FOR scope. KL_NONE when none. */
uint32_t kl_fn_last_decl(const kl_fn_index *x, uint32_t name, uint32_t scope, uint32_t before);
/* Whether any block or for-init of fn declares name. */
int kl_fn_has_decl(const kl_fn_index *x, uint32_t name);
/* The innermost FOR of fn around site (or site itself) whose induction
 * variable is name, when it is at most max_up levels above site; else
 * KL_NONE. */
uint32_t kl_fn_loop(const kl_fn_index *x, const kl_unit *u, uint32_t name, uint32_t site,
                    uint32_t max_up);
/* Whether a node in [begin, end) assigns, increments or decrements name. */
int kl_fn_written(const kl_fn_index *x, uint32_t name, uint32_t begin, uint32_t end);

/* affine.c: frees the caches affine.c and scope.c keep on a unit. */
void kl_affine_cache_free(kl_unit *u);

/* consts.c: evaluates the integer expression in tokens [b, e) of u. */
int kl_eval_tokens(kl_unit *u, const kl_token *t, uint32_t b, uint32_t e, const char *src,
                   int64_t *value);

#endif
