/* Private to engine/source: the stages that build a kl_unit. Nothing outside
 * engine/source includes this; the public API is source.h. */
#ifndef KL_SOURCE_INTERNAL_H
#define KL_SOURCE_INTERNAL_H

#include "source/source.h"

/* A growable array of kl_diag owned by the unit being built. */
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
typedef struct kl_parser {
  kl_unit *u;
  const kl_token *t;
  uint32_t pos, end;           /* current token; end = index of EOF       */

  kl_node *nodes;              /* creation order                          */
  uint32_t nnodes, ncap;
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

/* layout.c: pre-order renumbering, kind index */
int kl_layout(kl_parser *p, uint32_t root);

/* consts.c: evaluates the integer expression in tokens [b, e) of u. */
int kl_eval_tokens(kl_unit *u, const kl_token *t, uint32_t b, uint32_t e, const char *src,
                   int64_t *value);

#endif
