/* kl.match: code-shaped patterns over kl.source units, compiled to flat
 * steps, matched by dispatch on node kind with a literal-word prefilter;
 * rewriting with templates, a structural diff and anti-unification.
 *
 * The pattern TEXT is parsed in Lua (lua/klineage/pattern/init.lua, LPeg) into a
 * token list in which each metavariable use carries its slot, sort and
 * context. That list (km_ptoken[]) is what this C layer compiles.
 *
 * Matching is token-level and structure-checked: a literal step must equal
 * the next token (ignoring trivia), a metavariable binds a token run that,
 * where the parser structured the code, must be exactly one node of its
 * sort (an expression, a statement, a type), and where it did not (inside
 * KL_N_OPAQUE) a balanced run; an expression run must be one expression
 * that binds tighter than the operators on both sides of it (operand.c),
 * so no binding is ever cut across an operator the parser did not
 * structure (`$i * $n` never takes `a + 4` from `a + 4 * b`). The match of
 * an expression pattern must be exactly one expression node (in opaque
 * code: a run that fits the operators around it, by its root's strength);
 * a statement pattern must start and end on statements of one block (in
 * opaque code: start where a statement can). A `...` where an expression
 * goes obeys the same rule as an expression metavariable.
 *
 * Work is bounded: max_steps per attempt and max_total_steps per run
 * (km_options), with the number of capped attempts and whether the run
 * stopped in km_results. What patterns reach, and the errors for those
 * that never match, are documented in lua/klineage/pattern/init.lua. A `...` between statements
 * also descends into nested statements (the next `...` climbs back out),
 * so `if ($c) { ... __syncthreads(); ... }` finds a barrier in a loop.
 *
 * Dispatch: each node of the unit is offered to the patterns whose root
 * kind (and operator) it has; a statement pattern whose statement is an
 * expression statement also checks the expression's kind. The prefilter
 * (km_options.prefilter) skips a pattern for a whole unit when a literal
 * word is missing (a 256-bit signature first, then the exact words), for a
 * top-level item whose signature lacks one, and for a candidate whose
 * children fail the pattern's structural checks.
 *
 * Ownership: km_compile returns a pattern the caller frees with
 * km_pattern_free; it copies everything it needs from the descriptor.
 * km_results are filled by km_match_*, owned by the caller (km_results_free).
 * Nothing here keeps a pointer into a unit beyond the call, except the
 * km_index, which borrows its unit and must be freed before it. */
#ifndef KL_MATCH_H
#define KL_MATCH_H

#include <stddef.h>
#include <stdint.h>

#include "source/source.h"

/* ---- pattern descriptors (from Lua) ---------------------------------------- */

typedef enum km_ptoken_kind {
  KM_PT_LITERAL,   /* an identifier, keyword, number, string or punctuator   */
  KM_PT_DIRECTIVE, /* a preprocessor line, compared with whitespace collapsed */
  KM_PT_META,      /* $X, $S, $N:int, $T:type, $id:ident                      */
  KM_PT_SEQ,       /* $...XS                                                  */
  KM_PT_ELLIPSIS   /* ...                                                     */
} km_ptoken_kind;

typedef enum km_sort {
  KM_SORT_EXPR, KM_SORT_STMT, KM_SORT_INT, KM_SORT_TYPE, KM_SORT_IDENT, KM_SORT_SEQ
} km_sort;

typedef enum km_ctx {
  KM_CTX_EXPR,     /* any balanced tokens                                     */
  KM_CTX_ARGS,     /* arguments: balanced tokens inside a bracket             */
  KM_CTX_STMTS,    /* whole statements of one block                           */
  KM_CTX_HEADER    /* a whole for-header                                      */
} km_ctx;

typedef enum km_shape { KM_SHAPE_EXPR, KM_SHAPE_STMTS } km_shape;

typedef struct km_ptoken {
  km_ptoken_kind kind;
  const char *text;      /* literal text (directive: whitespace collapsed)   */
  size_t len;
  int slot;              /* META/SEQ: 0-based slot; ELLIPSIS: a slot of its
                            own that records its extent, or -1; else -1     */
  km_sort sort;
  km_ctx ctx;
  uint32_t row, col;     /* in the pattern text, for error messages          */
} km_ptoken;

/* A structural check below the root node, used by the prefilter: the
 * node reached by following child indexes path[0..depth) has this kind
 * (and operator, when op != 0). */
typedef struct km_check {
  uint8_t depth;
  uint8_t path[3];
  uint16_t kind;         /* kl_node_kind                                     */
  uint32_t op;           /* KL_P*(), 0: any                                  */
} km_check;

#define KM_MAX_CHECKS 8

typedef struct km_check_desc {
  const int *path;       /* 0-based child indexes                            */
  uint32_t depth;
  const char *kind;      /* kl.source kind name                              */
  const char *op;        /* operator text or NULL                            */
} km_check_desc;

typedef struct km_pattern_desc {
  const km_ptoken *tokens;
  uint32_t ntokens;
  km_shape shape;
  const char *root_kinds[2]; /* kl.source kind names the first node may have
                                ("for", "decl_stmt", ...), NULL when any    */
  const char *root_op;       /* operator text of the root ("+", "->"), or NULL */
  const char *child_kind;    /* kind of the root's first child (an expression
                                statement's expression), or NULL            */
  const char *child_op;      /* its operator, or NULL                        */
  const km_check_desc *checks; /* structural checks for the prefilter        */
  uint32_t nchecks;
  const char *const *slot_names;
  uint32_t nslots;
} km_pattern_desc;

/* A 256-bit word signature: each word sets one bit chosen by FNV-1a of
 * its text. A pattern whose signature has a bit an item's lacks needs a
 * word the item does not have, so it cannot match there. */
typedef struct km_sig {
  uint64_t w[4];
} km_sig;

static inline void km_sig_add(km_sig *s, const char *text, size_t n) {
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)text[i]) * 1099511628211ull;
  s->w[h >> 62] |= 1ull << ((h >> 56) & 63);
}

static inline int km_sig_covers(const km_sig *have, const km_sig *need) {
  return !((need->w[0] & ~have->w[0]) | (need->w[1] & ~have->w[1]) | (need->w[2] & ~have->w[2]) |
           (need->w[3] & ~have->w[3]));
}

/* ---- compiled patterns ------------------------------------------------------ */

typedef enum km_op {
  KM_OP_TOKEN,     /* literal token                                          */
  KM_OP_PP,        /* preprocessor line                                      */
  KM_OP_BIND,      /* metavariable of one node / token                       */
  KM_OP_SEQ,       /* named sequence                                         */
  KM_OP_SKIP,      /* anonymous ...                                          */
  KM_OP_END
} km_op;

#define KM_NO_SLOT 0xFFFFu

typedef struct km_step {
  uint8_t op;            /* km_op                                            */
  uint8_t sort;          /* km_sort (BIND, SEQ)                              */
  uint8_t ctx;           /* km_ctx (SEQ, SKIP)                               */
  uint8_t tok_kind;      /* TOKEN: expected kl_tok_kind                      */
  uint16_t slot;         /* BIND, SEQ; SKIP: where its extent is recorded (for
                            templates that keep it), or KM_NO_SLOT          */
  uint16_t reserved;
  uint32_t text, len;    /* TOKEN, PP: text in the pattern's pool            */
  uint32_t row, col;
} km_step;

typedef struct km_pattern {
  km_step *steps;        /* nsteps, the last is KM_OP_END                    */
  uint32_t nsteps;
  char *pool;            /* literal texts and slot names, NUL separated      */
  uint32_t pool_len;
  uint32_t nslots;
  uint32_t *slot_name;   /* offsets into pool                                */
  uint8_t *slot_sort;    /* sort of each slot's first use                    */
  uint8_t shape;         /* km_shape                                         */
  uint16_t root_kind[2]; /* kl_node_kind, KL_N__COUNT when none              */
  uint32_t root_op;      /* KL_P*() of the root operator, 0 when none        */
  uint16_t child_kind;   /* kind of the root's first child, KL_N__COUNT: any */
  uint32_t child_op;     /* its operator, 0 when any                         */
  km_check checks[KM_MAX_CHECKS];
  uint32_t nchecks;
  uint32_t *words;       /* identifier/keyword literals: offsets into pool   */
  uint32_t nwords;
  km_sig word_sig;       /* signature of the words                           */
  uint32_t nliterals;    /* literal steps of any kind                        */
  uint8_t root_strength; /* KM_PREC_* of the root expression (operand.c), for
                            where a match in opaque code may start and end */
} km_pattern;

/* Compiles a descriptor. Returns NULL and writes "row:col: message" into
 * err (errlen bytes) on a bad descriptor or out of memory. */
km_pattern *km_compile(const km_pattern_desc *d, char *err, size_t errlen);
void km_pattern_free(km_pattern *p);
const char *km_slot_name(const km_pattern *p, uint32_t slot);

/* ---- per-unit index ---------------------------------------------------------- */

/* What the matcher needs beyond the unit: for each token the innermost node
 * that starts and that ends on it, and whether it lies in an opaque region.
 * Borrows u. */
typedef struct km_index {
  const kl_unit *u;
  uint32_t *start_node;  /* [ntokens] innermost node with tok_begin == t     */
  uint32_t *end_node;    /* [ntokens] innermost node with tok_end - 1 == t   */
  uint8_t *opaque;       /* [ntokens] 1 inside a KL_N_OPAQUE node            */
  uint32_t *stop;        /* [ntokens] the first token at or after t, at t's
                            bracket depth, that ends a statement in opaque
                            code: a `;`, a `{` (its group does), a closer or
                            EOF; so a statement's end is found in one step */
  km_sig *item_sig;      /* [nitems] word signature of each top-level item
                            (a child of node 0): its words' km_word_sig    */
  km_sig unit_sig;       /* signature of every word of the unit           */
  uint32_t *item_of;     /* [nnodes] for a top-level item, its index into
                            item_sig; KL_NONE for other nodes              */
} km_index;

km_index *km_index_new(const kl_unit *u);
void km_index_free(km_index *ix);

int km_kind_is_expr(unsigned kind);
int km_kind_is_stmt(unsigned kind);

/* ---- operator precedence in opaque code (operand.c) ------------------------- */

/* Binding strengths (C++): higher binds tighter. KM_PREC_UNKNOWN: not one
 * expression. */
enum {
  KM_PREC_UNKNOWN = 0, KM_PREC_COMMA = 1, KM_PREC_ASSIGN = 2, /* also ?: */
  KM_PREC_PREFIX = 14, KM_PREC_POSTFIX = 15, KM_PREC_SCOPE = 16, KM_PREC_ATOM = 17
};

/* An incremental scan of a token run, one token tree at a time: whether it
 * is one complete expression so far, and the weakest operator at its depth
 * 0. Once bad, or once min is too weak for the left side, no longer run
 * from the same start can do better. */
typedef struct km_run {
  uint8_t expect;      /* an operand is expected next                       */
  uint8_t member;      /* a name is expected next (after `.`, `->`, `::`)    */
  uint8_t paren;       /* the last operand was a bare `( ... )`              */
  uint8_t first_amb;   /* the first token is `+ - * & ++ --`: prefix here,
                          binary after an operand                          */
  uint8_t bad;         /* not an expression, whatever follows               */
  uint8_t comma_ok;    /* a depth-0 comma is allowed (`...`, not a $X)       */
  uint8_t min;         /* weakest depth-0 operator, KM_PREC_ATOM if none     */
  uint8_t typeword;    /* the last operand was `int`, `float`...: only a
                          `(` may follow (a functional cast)              */
  uint32_t ternary;    /* open `?` waiting for their `:`                      */
  uint32_t count;      /* token trees fed                                   */
} km_run;

void km_run_init(km_run *r);
void km_run_feed(km_run *r, const kl_unit *u, uint32_t t, uint32_t next);
int km_run_complete(const km_run *r);
/* The strength of tokens [b, e) as one expression, KM_PREC_UNKNOWN if not. */
unsigned km_run_strength(const kl_unit *u, uint32_t b, uint32_t e, int comma_ok);

/* What surrounds a run: a delimiter (`;`, a bracket, `return`: no limit),
 * an operator of strength prec, a `)` that may close a cast or a
 * parenthesized expression, or something juxtaposed (an operand, garbage,
 * a macro: only a postfix expression or an atom is safe there). */
typedef enum km_side_kind { KM_SIDE_DELIM, KM_SIDE_OP, KM_SIDE_CAST, KM_SIDE_UNKNOWN } km_side_kind;
typedef struct km_ctx_side {
  uint8_t kind, prec;
} km_ctx_side;

km_ctx_side km_left_side(const kl_unit *u, uint32_t t);  /* the code before token t */
km_ctx_side km_right_side(const kl_unit *u, uint32_t e); /* token e, after a run    */
int km_fits_left(unsigned min, int first_amb, km_ctx_side l);
int km_fits_right(unsigned min, km_ctx_side r);
/* Token t can start a statement (after `;`, `{`, a block's `}`, a control
 * header's `)`, `else`, `do`, a directive). */
int km_stmt_boundary(const kl_unit *u, uint32_t t);
/* The strength of an expression whose root node has this kind and operator
 * (KL_P*()); KM_PREC_UNKNOWN when the kind says nothing. */
unsigned km_root_strength(unsigned kind, uint32_t op);
/* `+ - * & ++ --`: prefix where an operand is expected, else not. */
int km_tok_ambiguous(const kl_token *k);

/* ---- matching --------------------------------------------------------------- */

typedef struct km_binding {
  uint32_t tok_begin, tok_end; /* token range; empty for an empty sequence   */
  uint32_t node;               /* the node it is exactly, or KL_NONE         */
  uint32_t deep;               /* 1: a `...` that entered or left nested
                                  statements (its tokens are not balanced)  */
} km_binding;

typedef struct km_match {
  uint32_t pattern;            /* index into the set matched                 */
  uint32_t tok_begin, tok_end;
  uint32_t node;               /* the node the match is exactly, or KL_NONE  */
  uint32_t bind;               /* index of the first of nslots bindings      */
} km_match;

typedef struct km_results {
  km_match *m;
  uint32_t n, cap;
  km_binding *b;
  uint32_t nb, capb;
  /* counters of the last run */
  uint64_t candidates;         /* start positions dispatched to a pattern    */
  uint64_t steps;              /* matcher steps executed                     */
  uint32_t capped;             /* attempts abandoned at a work cap           */
  uint32_t stopped;            /* 1: the whole run stopped at its total cap,
                                  so later candidates were never tried      */
  uint64_t max_steps;          /* the caps the last run had: per attempt    */
  uint64_t max_total_steps;    /* and for the whole run                      */
  uint32_t prefiltered;        /* patterns skipped for the whole unit        */
  uint64_t prefiltered_items;  /* candidates skipped by an item's signature
                                  or a failed structural check             */
  int oom;
} km_results;

#define KM_DEFAULT_MAX_STEPS 20000u
#define KM_DEFAULT_MAX_TOTAL 1000000u
#define KM_TOTAL_PER_TOKEN 64u

typedef struct km_options {
  int prefilter;               /* skip patterns whose words the unit (and,
                                  inside a top-level item, the item) lacks  */
  uint32_t max_steps;          /* work cap per attempt (0: default 20000)    */
  uint32_t max_matches;        /* stop after this many (0: no limit)         */
  uint64_t max_total_steps;    /* work cap for the whole run (0: default
                                  KM_DEFAULT_MAX_TOTAL + KM_TOTAL_PER_TOKEN
                                  steps per token, per pattern)            */
} km_options;

/* A set of patterns ready to match: its dispatch lists (pattern indices
 * by root kind) are built once; it borrows the patterns, which must
 * outlive it, and holds scratch memory for one run at a time. */
typedef struct km_set {
  km_pattern **pats;
  uint32_t npats;
  uint32_t start[KL_N__COUNT + 2]; /* lists[start[k] .. start[k+1]): patterns
                                      whose root kind is k; k = KL_N__COUNT:
                                      patterns with no root kind          */
  uint32_t *lists;
  uint32_t maxslots;
  uint8_t *live;                   /* scratch: [npats] */
  uint32_t *found;
  km_binding *b;
  uint8_t *bound;
} km_set;

km_set *km_set_new(km_pattern *const *pats, uint32_t npats);
void km_set_free(km_set *s);

/* Matches every pattern of the set over the unit in one walk of its nodes
 * (dispatching each node to the patterns whose root kind it has) plus one
 * token scan of its opaque regions. Appends to r. Returns 0 on OOM. */
int km_match_run(const km_index *ix, km_set *s, const km_options *opt, km_results *r);
/* The same for a plain array of patterns (a set built and freed inside). */
int km_match_set(const km_index *ix, km_pattern *const *pats, uint32_t npats,
                 const km_options *opt, km_results *r);
void km_results_free(km_results *r);

/* ---- rewriting ------------------------------------------------------------- */

typedef enum km_edit_kind { KM_EDIT_INSERT, KM_EDIT_DELETE, KM_EDIT_UPDATE, KM_EDIT_MOVE } km_edit_kind;

/* One entry of an edit script: old range in the old text, new range in the
 * new text (byte offsets; an insert has an empty old range at its anchor,
 * a delete an empty new range). */
typedef struct km_edit {
  uint8_t kind;                /* km_edit_kind                               */
  uint32_t old_begin, old_end;
  uint32_t new_begin, new_end;
} km_edit;

typedef struct km_edit_script {
  km_edit *e;
  uint32_t n, cap;
} km_edit_script;

/* A replacement of src[begin, end) by text (malloc'd, owned by the list). */
typedef struct km_replacement {
  uint32_t begin, end;
  char *text;
  size_t len;
  /* Pieces of the edit script relative to begin (old) and to the start of
   * text (new), filled by km_instantiate. */
  km_edit *script;
  uint32_t nscript;
} km_replacement;

/* Instantiates template `tpl` (its pool texts are the template's literal
 * tokens; `tpl_text` is the template source and tpl_spans the byte span of
 * each metavariable use in it, in token order) for match m of pattern p.
 * The replacement covers the match's text. Returns 0 on OOM or when the
 * template uses a slot the pattern does not bind (err says which). */
typedef struct km_template {
  const char *text;            /* template source text                       */
  size_t len;
  uint32_t nuses;
  const uint32_t *use_begin;   /* byte span of each metavariable use         */
  const uint32_t *use_end;
  const char *const *use_name; /* its name                                   */
} km_template;

int km_instantiate(const kl_unit *u, const km_pattern *p, const km_results *r,
                   const km_match *m, const km_template *t, km_replacement *out,
                   char *err, size_t errlen);

/* Applies replacements (any order) to src bottom-up. Returns the new text
 * (malloc'd, NUL terminated) and fills the script; NULL with err set when
 * two replacements overlap, or on OOM. The replacements are sorted in place. */
char *km_apply(const char *src, size_t len, km_replacement *reps, uint32_t nreps,
               size_t *out_len, km_edit_script *script, char *err, size_t errlen);
void km_replacement_free(km_replacement *r);
/* Fills r->script for a replacement of src[r->begin, r->end) by r->text
 * that no template made (a splice): the small tokens of both sides are
 * aligned as km_instantiate aligns template code, so an edit a template
 * could make gets the script P:rewrite gives it. Returns 0 on OOM. */
int km_replacement_script(const char *src, km_replacement *r);
void km_script_free(km_edit_script *s);
int km_script_push(km_edit_script *s, km_edit e);

/* ---- structural diff ------------------------------------------------------- */

typedef struct km_diff_op {
  uint8_t kind;                /* km_edit_kind                               */
  uint32_t a_node, b_node;     /* KL_NONE where not applicable               */
  uint32_t a_at, b_at;         /* insert, move: the byte offset of A where the
                                  B node goes (a_at); delete, move: the byte
                                  offset of B where the A node was (b_at):
                                  after the partner of the nearest matched
                                  sibling before it, else before the nearest
                                  after it, else at the start of the
                                  partner parent's content; KL_NONE else    */
} km_diff_op;

typedef struct km_diff {
  km_diff_op *ops;
  uint32_t n, cap;
  uint32_t *a_to_b;            /* [a->nnodes] mapping, KL_NONE when unmatched */
  uint32_t *b_to_a;            /* [b->nnodes]                                 */
} km_diff;

/* GumTree-like diff restricted to statement and expression nodes (plus
 * functions and declarations): top-down isomorphic subtrees first, then
 * bottom-up containers by shared descendants, then insert / delete /
 * update / move. A node inside a function is only ever paired with a node
 * inside a function of the same name (top-level nodes outside functions
 * with each other), and a subtree is paired whole or not at all, so the
 * descendants of a moved node are not listed again. Returns 0 on OOM. */
int km_diff_units(const kl_unit *a, const kl_unit *b, km_diff *out);
void km_diff_free(km_diff *d);

/* ---- anti-unification ------------------------------------------------------ */

typedef struct km_instance {
  const kl_unit *u;
  uint32_t node;               /* a node, or KL_NONE for the sequence below  */
  const uint32_t *seq;         /* a list of sibling statements               */
  uint32_t nseq;
} km_instance;

typedef struct km_hole {
  char name[24];               /* "$X1", "$N2:int" ...                        */
  km_sort sort;
  uint32_t *nodes;             /* [ninstances] what it stands for in each     */
  uint32_t *tok_begin, *tok_end;
  const kl_unit **units;       /* [ninstances] the unit of each node          */
  uint8_t after_only;          /* km_generalize_edits: only in the after side */
} km_hole;

typedef struct km_generalization {
  char *text;                  /* the pattern text (malloc'd)                */
  size_t len;
  char *after_text;            /* km_generalize_edits: the template text     */
  size_t after_len;
  km_hole *holes;
  uint32_t nholes, cap;
  uint32_t ninstances;
} km_generalization;

/* The most specific pattern covering all instances: equal subtrees stay
 * code, differing subtrees become metavariables (the same tuple of
 * differing subtrees gets the same metavariable), and statement lists of
 * different lengths keep their common statements with `...` between.
 * Returns 0 on OOM. */
int km_generalize(const km_instance *inst, uint32_t n, km_generalization *out);

/* Generalizes n edits (before[k] became after[k]) into a pattern (text)
 * and a template (after_text) sharing metavariables: a difference among
 * the instances that the after side repeats gets the name it has in the
 * pattern, so the template rewrites what the pattern matched. Holes only
 * the after side has are flagged after_only. Returns 0 on OOM or when the
 * two sides mix single nodes and statement lists inconsistently. */
int km_generalize_edits(const km_instance *before, const km_instance *after, uint32_t n,
                        km_generalization *out);
void km_generalization_free(km_generalization *g);

#endif
