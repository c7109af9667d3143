/* STABLE: kl.match depends on this. Add to this header; never rename or
 * remove a name, a field or an enumerator's meaning. (Enumerator VALUES may
 * grow at the end of each enum: always use the names.)
 *
 * kl.source: a lossless model of CUDA C/C++ source.
 *
 * A unit is built in layers, all stored as flat arrays inside one kl_unit:
 *
 *   1. tokens   kl_token[ntokens]: every byte of the input belongs to exactly
 *               one token, either to its text or to its leading trivia
 *               (whitespace, comments, line continuations). The last token is
 *               always KL_TOK_EOF with empty text; its trivia is the tail of
 *               the file. Printing trivia+text of every token in order gives
 *               the input back byte for byte, garbage and invalid UTF-8
 *               included (such bytes become KL_TOK_INVALID tokens).
 *   2. token trees: tok.match links each ( [ { to its closer and back, and
 *               template angle brackets where they are unambiguous.
 *   3. nodes    kl_node[nnodes], stored in PRE-ORDER: node 0 is the
 *               translation unit; the descendants of node n are exactly the
 *               nodes n+1 .. subtree_end-1. The children of a node are the
 *               entries kids[child_begin .. child_begin+child_count) (node
 *               ids, in source order), each labelled with a field id in
 *               kid_field[] at the same position.
 *
 * Anything the parser does not understand becomes a KL_N_OPAQUE node over
 * the token range it could not structure (balanced over brackets), and
 * parsing resumes after it; a diagnostic records it. Parsing never fails
 * on any input (only on out-of-memory or inputs of 4 GiB or more).
 *
 * Ownership: kl_source_parse copies the text; the unit owns every array in
 * it. Everything a unit hands out (pointers to tokens, nodes, text, index
 * lists, constants, annotations) is borrowed and valid until
 * kl_unit_free(unit). A unit is never modified after parse except by the
 * lazily computed caches (constants; the lookup index of the function the
 * affine queries kl_affine_of, kl_access_patterns and kl_shared_accesses
 * were last asked about, replaced when they are asked about another one),
 * so one unit must not be used from two threads while the constants are
 * first computed, nor by affine queries from two threads at once.
 *
 * Ranges: token ranges are half-open [tok_begin, tok_end). A node's text is
 * from the first byte of tokens[tok_begin]'s text (its leading trivia is not
 * part of the node) to the end of tokens[tok_end-1]'s text; comments between
 * the node's tokens are part of its text.
 */
#ifndef KL_SOURCE_H
#define KL_SOURCE_H

#include <stddef.h>
#include <stdint.h>

#define KL_NONE UINT32_MAX            /* "no node / no token" */
/* Nesting cap, see KLS002. Every level of the parser's recursion (a
 * statement, an expression, a prefix operator) and every step of a
 * left-nested chain (a + b + c ..., a[i][j]..., f()()...) spends one unit,
 * so the depth of the node tree stays below a small multiple of it and code
 * that recurses over nodes is safe. */
#define KL_SOURCE_MAX_DEPTH 1024
#define KL_SOURCE_STR_(x) #x
#define KL_SOURCE_STR(x) KL_SOURCE_STR_(x)

/* ---- tokens -------------------------------------------------------------- */

typedef enum kl_tok_kind {
  KL_TOK_EOF = 0,   /* last token, empty text, trivia = end of file          */
  KL_TOK_IDENT,     /* identifier (including CUDA builtins like threadIdx)   */
  KL_TOK_KEYWORD,   /* C/C++/CUDA keyword; sub = kl_kw                        */
  KL_TOK_INT,       /* integer literal with suffix: 42u, 0x1fULL, 0b101, 1'000 */
  KL_TOK_FLOAT,     /* floating literal: 1.0f, .5, 1e-3, 0x1p3                */
  KL_TOK_CHAR,      /* 'a', u8'a', L'\n' ...                                  */
  KL_TOK_STRING,    /* "..", u8"..", L"..", R"d(...)d" (raw) ...              */
  KL_TOK_PUNCT,     /* operator/punctuator; sub = KL_P(...) packed chars      */
  KL_TOK_PP,        /* a whole preprocessor line, from '#' to the end of the
                       line (continuations and comments included, the final
                       newline excluded)                                       */
  KL_TOK_INVALID    /* a byte that starts no token (garbage, invalid UTF-8,
                       unterminated literal is NOT invalid: it runs to EOL)   */
} kl_tok_kind;

/* Punctuators are identified by their characters packed into an integer, so
 * no table is needed: KL_P3('<','<','=') is "<<=". `<<<` and `>>>` (kernel
 * launch) are single tokens. */
#define KL_P1(a) ((uint32_t)(unsigned char)(a))
#define KL_P2(a, b) (KL_P1(a) | (KL_P1(b) << 8))
#define KL_P3(a, b, c) (KL_P2(a, b) | (KL_P1(c) << 16))

/* Keywords the parser dispatches on (sub of KL_TOK_KEYWORD). */
typedef enum kl_kw {
  KL_KW_NONE = 0,
  KL_KW_IF, KL_KW_ELSE, KL_KW_FOR, KL_KW_WHILE, KL_KW_DO, KL_KW_RETURN,
  KL_KW_BREAK, KL_KW_CONTINUE, KL_KW_SWITCH, KL_KW_CASE, KL_KW_DEFAULT,
  KL_KW_GOTO, KL_KW_STRUCT, KL_KW_CLASS, KL_KW_UNION, KL_KW_ENUM,
  KL_KW_TYPEDEF, KL_KW_TEMPLATE, KL_KW_TYPENAME, KL_KW_USING,
  KL_KW_NAMESPACE, KL_KW_EXTERN, KL_KW_STATIC, KL_KW_INLINE, KL_KW_CONST,
  KL_KW_CONSTEXPR, KL_KW_VOLATILE, KL_KW_SIZEOF, KL_KW_ALIGNOF,
  KL_KW_STATIC_CAST, KL_KW_REINTERPRET_CAST, KL_KW_CONST_CAST,
  KL_KW_DYNAMIC_CAST, KL_KW_TRUE, KL_KW_FALSE, KL_KW_NULLPTR, KL_KW_ASM,
  KL_KW_AUTO, KL_KW_VOID, KL_KW_CHAR, KL_KW_SHORT, KL_KW_INT, KL_KW_LONG,
  KL_KW_FLOAT, KL_KW_DOUBLE, KL_KW_SIGNED, KL_KW_UNSIGNED, KL_KW_BOOL,
  KL_KW_OPERATOR, KL_KW_DECLTYPE, KL_KW_NOEXCEPT, KL_KW_PUBLIC,
  KL_KW_PRIVATE, KL_KW_PROTECTED, KL_KW_THIS, KL_KW_NEW, KL_KW_DELETE,
  KL_KW_RESTRICT,            /* __restrict__, __restrict, restrict */
  KL_KW_GLOBAL,              /* __global__ */
  KL_KW_DEVICE,              /* __device__ */
  KL_KW_HOST,                /* __host__ */
  KL_KW_SHARED,              /* __shared__ */
  KL_KW_CONSTANT,            /* __constant__ */
  KL_KW_FORCEINLINE,         /* __forceinline__, __noinline__ */
  KL_KW_LAUNCH_BOUNDS,       /* __launch_bounds__ */
  KL_KW_ALIGN,               /* __align__, alignas */
  KL_KW_ATTRIBUTE,           /* __attribute__, __declspec */
  KL_KW_THROW,               /* throw */
  KL_KW_GRID_CONSTANT,       /* __grid_constant__ (CUDA 11.7+): a parameter
                                specifier, part of the parameter's TYPE     */
  KL_KW_TRY, KL_KW_CATCH,
  KL_KW__COUNT
} kl_kw;

typedef struct kl_token {
  uint32_t off, len;               /* the token's text: src[off, off+len)   */
  uint32_t trivia_off, trivia_len; /* leading trivia; trivia_off+trivia_len == off */
  uint32_t line, col;              /* 1-based position of the text's first
                                      byte; col counts bytes               */
  uint32_t match;                  /* index of the matching bracket token
                                      (both directions), else KL_NONE       */
  uint32_t word;                   /* IDENT/KEYWORD: id of the distinct word
                                      in this unit (see kl_unit_word), else
                                      KL_NONE                              */
  uint32_t sub;                    /* PUNCT: KL_P*(); KEYWORD: kl_kw; else 0 */
  uint8_t kind;                    /* kl_tok_kind                            */
  uint8_t flags;                   /* KL_TF_* below                          */
  uint16_t reserved;
} kl_token;

enum {
  KL_TF_LINE_START = 1,   /* first token on its line                        */
  KL_TF_UNTERMINATED = 2, /* string/char/comment/raw string ran off the end */
  KL_TF_ANGLE = 4         /* '<' or '>' balanced as a template bracket. A '>>'
                             closing two lists (A<B<int>>) stays one token:
                             both '<' have match = it, its match is the
                             outer '<'                                      */
};

/* ---- nodes --------------------------------------------------------------- */

typedef enum kl_node_kind {
  KL_N_UNIT = 0,        /* translation unit, node 0                          */
  /* top level and declarations */
  KL_N_FUNCTION,        /* fields: TEMPLATE?, QUALIFIERS? , TYPE, NAME, PARAMS, BODY? */
  KL_N_PARAM_LIST,      /* children: PARAM..., and PREPROC for preprocessor
                           lines between parameters (#if/#else/#endif), in
                           token order; the parameters of every branch of a
                           conditional are listed (fn:params() skips the
                           PREPROC children)                                 */
  KL_N_PARAM,           /* fields: TYPE, NAME?, VALUE? (default argument);
                           float (*p)[N] has NAME p                           */
  KL_N_TEMPLATE,        /* template<...> header; children: TEMPLATE_PARAM... */
  KL_N_TEMPLATE_PARAM,  /* fields: TYPE (e.g. "int"/"typename"), NAME?, VALUE? */
  KL_N_DECL,            /* declaration: fields TYPE, then DECLARATOR...;
                           typedef/using and the explicit instantiation of a
                           class (template class C<float>;): no children;
                           after a template
                           header: TEMPLATE then the inner KL_N_DECL         */
  KL_N_DECLARATOR,      /* fields: NAME, INDEX* (array dims), VALUE? (init);
                           direct initialization `T x(a, b);` / `T x{a};`:
                           VALUE is an INIT_LIST of the arguments. At block
                           scope `T x(args);` with T not known as a type is
                           a declaration only when the C++ reading as a
                           function declaration is ruled out (see
                           kl_p_starts_decl); else it stays opaque           */
  KL_N_STRUCT,          /* struct/class/union/enum; fields TEMPLATE?, NAME?,
                           BODY? (a COMPOUND of items; for enum a leaf)      */
  KL_N_PREPROC,         /* a preprocessor line (one KL_TOK_PP token)         */
  KL_N_PRAGMA,          /* #pragma line; applies to the NEXT sibling node,
                           see kl_pragma_target                              */
  KL_N_LINKAGE,         /* extern "C" { ... } / namespace X { ... }: BODY    */
  KL_N_QUALIFIERS,      /* the run of specifiers before a function's type:
                           __global__ static inline __launch_bounds__(..) ...  */
  /* statements */
  KL_N_COMPOUND,        /* { ... }; children: statements                    */
  KL_N_FOR,             /* fields: INIT?, COND?, STEP?, BODY                 */
  KL_N_WHILE,           /* fields: COND, BODY                                */
  KL_N_DO,              /* fields: BODY, COND                                */
  KL_N_IF,              /* fields: COND, THEN, ELSE?
                           Sub-statements led by #pragma lines (an unbraced
                           `for (..)\n#pragma unroll\nfor (..) s;`): each
                           pragma is a positional (KL_F_NONE) KL_N_PRAGMA
                           child of the owner (for, range_for, while, do,
                           if, switch) placed just before the BODY / THEN /
                           ELSE child it leads, so that field is the real
                           statement, kl_pragma_target (the next non-pragma
                           sibling) is that statement and pre-order and token
                           order hold. Any other preprocessor line before a
                           sub-statement (#if ...) leaves the owner opaque. */
  KL_N_RETURN,          /* fields: VALUE?                                    */
  KL_N_BREAK,
  KL_N_CONTINUE,
  KL_N_DECL_STMT,       /* a KL_N_DECL as a statement: child DECL           */
  KL_N_EXPR_STMT,       /* fields: VALUE                                     */
  KL_N_EMPTY_STMT,      /* ;                                                 */
  /* expressions */
  KL_N_IDENT,           /* identifier, possibly qualified (a::b, ::x); a leaf,
                           except a template-id launched as a kernel
                           (k<T, 4><<<...>>>) or passed as a value (an
                           argument: f(&a, k<Real>)): fields CALLEE,
                           TEMPLATE_ARGS                                     */
  KL_N_INT_LIT,
  KL_N_FLOAT_LIT,
  KL_N_CHAR_LIT,
  KL_N_STRING_LIT,      /* one or more adjacent string tokens                */
  KL_N_BOOL_LIT,        /* true / false / nullptr                            */
  KL_N_BINARY,          /* op = operator; fields LHS, RHS ("," included)    */
  KL_N_UNARY,           /* prefix: op in - + ! ~ * & ++ -- ; field OPERAND   */
  KL_N_POSTFIX,         /* postfix ++ / --; field OPERAND                   */
  KL_N_ASSIGN,          /* op in = += -= *= /= %= <<= >>= &= |= ^=; LHS, RHS */
  KL_N_TERNARY,         /* fields COND, THEN, ELSE                           */
  KL_N_CALL,            /* fields CALLEE, TEMPLATE_ARGS?, ARG...; the callee
                           is a TYPE for functional casts: float(x). A member
                           template call obj.f<true, 3>(x) / p->template
                           g<T>(): CALLEE the MEMBER obj.f, TEMPLATE_ARGS,
                           ARG...                                            */
  KL_N_LAUNCH,          /* k<<<cfg...>>>(args): CALLEE, CONFIG..., ARG...
                           (CALL and LAUNCH: preprocessor lines between the
                           arguments are positional PREPROC children in token
                           order; the arguments of every branch of a
                           conditional are listed)                           */
  KL_N_INDEX,           /* fields OBJECT, INDEX                              */
  KL_N_MEMBER,          /* op '.' or "->"; fields OBJECT, MEMBER (IDENT)     */
  KL_N_CAST,            /* C-style (T)e: fields TYPE, OPERAND. (Name)e with
                           Name not declared in the unit is a cast only when
                           e starts with a token that cannot continue an
                           expression (identifier, literal, ! ~ ::, keyword):
                           `(fp)x`. Before ( - + * & && ++ -- { it is a PAREN
                           when the unit declares Name as a value only (a
                           variable, parameter, function, value template
                           parameter, or an object-like #define of a number
                           or an expression), a CAST when it declares it as
                           a type only (typedef, using, struct, template type
                           parameter, #define of builtin type keywords, a
                           known CUDA type); else the statement stays opaque */
  KL_N_CXX_CAST,        /* static_cast<T>(e) etc.: fields TYPE, OPERAND; the
                           keyword is the node's first token                 */
  KL_N_SIZEOF,          /* sizeof/alignof: field TYPE or OPERAND;
                           sizeof(Name) is TYPE unless the unit declares Name
                           as a value                                        */
  KL_N_TYPE,            /* a type name: "const float *__restrict__", "T",
                           "unsigned long long", "std::vector<int>"          */
  KL_N_INIT_LIST,       /* { a, b, c } / T{...}: TYPE?, ARG...; T may be a
                           template-id: cuda::aligned_size_t<16>{n}          */
  KL_N_PAREN,           /* ( e ): field OPERAND                              */
  KL_N_LAMBDA,          /* [captures](params) ... { body }: PARAMS?, BODY    */
  KL_N_TEMPLATE_ARGS,   /* <...> after a name: children TYPE or expressions;
                           a lone identifier (k<N>) is a TYPE: the parser
                           cannot tell a type from a constant there          */
  KL_N_OPAQUE,          /* a token range not understood; no children        */
  /* statements added later (kept after the first set) */
  KL_N_SWITCH,          /* fields COND, BODY                                 */
  KL_N_CASE,            /* case e: / default: ; field VALUE?                 */
  KL_N_LABEL,           /* name: ; field NAME (public:/private: have none)   */
  KL_N_GOTO,            /* field NAME                                        */
  KL_N_ASM,             /* asm volatile ( ... ); no children                */
  KL_N_RANGE_FOR,       /* for (decl : range) body: fields INIT (a KL_N_DECL
                           without ';'), VALUE (the range), BODY             */
  /* expressions added later */
  KL_N_NEW,             /* new [(PLACEMENT...)] TYPE [INDEX]* [(ARG...) or
                           {ARG...}]: `new float[n]` has TYPE float, INDEX n;
                           `new (buf) V<int>(1, d)` PLACEMENT buf, TYPE
                           V<int>, ARG 1, ARG d; op_tok = the `new`
                           (`::new`: the node starts at the `::`)           */
  KL_N_DELETE,          /* delete OPERAND / delete[] OPERAND; op is
                           KL_P2('[', ']') for the array form, else 0; op_tok
                           = the `delete`                                   */
  KL_N_THROW,           /* throw [OPERAND]; op_tok = the `throw`             */
  /* statements added later */
  KL_N_TRY,             /* try { } catch (...) { }: field BODY, then one or
                           more positional KL_N_CATCH children; op_tok = the
                           `try`                                             */
  KL_N_CATCH,           /* catch (T &e) { }: fields PARAMS (a PARAM_LIST of
                           one PARAM; `...` is a PARAM without children),
                           BODY; op_tok = the `catch`                        */
  KL_N__COUNT
} kl_node_kind;

typedef enum kl_field {
  KL_F_NONE = 0,        /* positional child: statement, argument, item      */
  KL_F_LHS, KL_F_RHS, KL_F_OPERAND, KL_F_COND, KL_F_THEN, KL_F_ELSE,
  KL_F_INIT, KL_F_STEP, KL_F_BODY, KL_F_CALLEE, KL_F_ARG, KL_F_OBJECT,
  KL_F_INDEX, KL_F_MEMBER, KL_F_TYPE, KL_F_NAME, KL_F_VALUE, KL_F_PARAMS,
  KL_F_TEMPLATE, KL_F_QUALIFIERS, KL_F_TEMPLATE_ARGS, KL_F_CONFIG,
  KL_F_DECLARATOR,
  KL_F_PLACEMENT,       /* KL_N_NEW: the placement arguments                */
  KL_F__COUNT
} kl_field;

typedef struct kl_node {
  uint16_t kind;          /* kl_node_kind                                    */
  uint16_t flags;         /* KL_NF_* below                                   */
  uint32_t op;            /* BINARY/UNARY/POSTFIX/ASSIGN/MEMBER: KL_P*() of
                             the operator; literals and IDENT: 0             */
  uint32_t op_tok;        /* token index of the operator (or the keyword of a
                             statement / cast), else KL_NONE                 */
  uint32_t tok_begin, tok_end;   /* token range [begin, end)                 */
  uint32_t parent;        /* KL_NONE for node 0                              */
  uint32_t child_begin;   /* index into kids[] / kid_field[]                 */
  uint32_t child_count;
  uint32_t subtree_end;   /* one past the last descendant (pre-order)        */
  uint32_t depth;         /* 0 for node 0                                    */
} kl_node;

enum {
  KL_NF_TRUNCATED = 1     /* OPAQUE produced by the depth cap                */
};

/* ---- diagnostics, annotations ------------------------------------------- */

/* Diagnostics are bounded whatever the input: a run of the same token
 * diagnostic (KLS003, KLS004, KLS005 with the same message) over adjacent
 * or overlapping tokens is ONE diagnostic over the whole run (consecutive
 * invalid bytes are one KLS004; opaque regions, KLS001 and KLS002, stay one
 * per node), and at most KL_SOURCE_DIAG_CAP diagnostics of each id are kept, the first
 * ones in the order the stages find them. When any were dropped, the last
 * diagnostic is one "KLS006" whose range runs from the first dropped one to
 * the last, and kl_unit.ndiags_suppressed counts them. */
#define KL_SOURCE_DIAG_CAP 256

typedef struct kl_diag {
  const char *id;         /* stable id: "KLS001" opaque region, "KLS002"
                             nesting deeper than KL_SOURCE_MAX_DEPTH, "KLS003"
                             unbalanced bracket, "KLS004" invalid byte,
                             "KLS005" unterminated literal or comment,
                             "KLS006" further diagnostics suppressed (always
                             last, at most one)                             */
  const char *message;    /* static English text                             */
  uint32_t tok_begin, tok_end;
  uint32_t line, col;
} kl_diag;

/* A `// @kl ...` comment line as written (evaluated elsewhere, in Lua). */
typedef struct kl_annotation {
  uint32_t off, len;      /* text after "@kl" trimmed, up to end of line     */
  uint32_t line;
} kl_annotation;

/* ---- the unit -------------------------------------------------------------- */

typedef struct kl_const kl_const;

typedef struct kl_unit {
  char *name;             /* file name given to parse (owned)               */
  char *src;              /* copy of the input, NUL terminated (owned)      */
  uint32_t len;

  kl_token *tokens;
  uint32_t ntokens;       /* includes the final EOF token                   */

  kl_node *nodes;         /* pre-order, node 0 = KL_N_UNIT                   */
  uint32_t nnodes;
  uint32_t *kids;         /* child node ids                                 */
  uint8_t *kid_field;     /* kl_field of each kids[] entry                  */
  uint32_t nkids;

  /* Index from kind to nodes: by_kind[kind_start[k] .. kind_start[k+1]) are
   * the ids of the nodes of kind k, in pre-order. */
  uint32_t *by_kind;
  uint32_t kind_start[KL_N__COUNT + 1];

  kl_diag *diags;
  uint32_t ndiags;
  kl_annotation *annotations;
  uint32_t nannotations;

  /* distinct identifier/keyword words present (prefilter): */
  uint32_t nwords;
  uint32_t *word_tok;     /* word id -> first token with that text          */
  uint32_t *word_hash;    /* open-addressed table of word ids + 1 (0 empty) */
  uint32_t word_cap;      /* power of two                                   */

  /* lazily computed caches (kl_unit_constants) */
  kl_const *consts;
  uint32_t nconsts;
  int consts_done;

  /* diagnostics dropped by the cap (see KL_SOURCE_DIAG_CAP, KLS006) */
  uint32_t ndiags_suppressed;
} kl_unit;

/* Parses text[0, len). The text is copied; it may contain NUL bytes.
 * Returns NULL only when out of memory or len >= 4 GiB. `name` may be NULL
 * ("<input>"). Free with kl_unit_free. */
kl_unit *kl_source_parse(const char *text, size_t len, const char *name);
void kl_unit_free(kl_unit *u);

/* Memory. The large arrays (256 KiB and more) of a freed unit are kept for
 * the next parse instead of going back to the system: a large unit's
 * arrays are fresh pages otherwise, and faulting them in costs as much as
 * parsing. At most KL_SOURCE_POOL_MAX bytes are kept, across all threads.
 * kl_source_trim gives them back now; kl_source_pooled_bytes says how much
 * is kept. */
#define KL_SOURCE_POOL_MAX (192u << 20)
void kl_source_trim(void);
size_t kl_source_pooled_bytes(void);

/* Writes the unit's text rebuilt from its tokens (trivia + text of each) into
 * a fresh malloc'd, NUL-terminated buffer the caller frees; *len_out gets the
 * length. Equal to the parsed input byte for byte. NULL when out of memory. */
char *kl_unit_print(const kl_unit *u, size_t *len_out);
/* The same into a caller's buffer of at least kl_unit_print_size(u) bytes
 * (no NUL added); returns the number of bytes written. */
size_t kl_unit_print_size(const kl_unit *u);
size_t kl_unit_print_to(const kl_unit *u, char *out);

/* ---- nodes: accessors -------------------------------------------------- */

static inline const kl_node *kl_node_at(const kl_unit *u, uint32_t n) { return &u->nodes[n]; }
static inline uint32_t kl_child(const kl_unit *u, uint32_t n, uint32_t i) {
  return u->kids[u->nodes[n].child_begin + i];
}
static inline kl_field kl_child_field(const kl_unit *u, uint32_t n, uint32_t i) {
  return (kl_field)u->kid_field[u->nodes[n].child_begin + i];
}

/* Node text without its leading trivia; not NUL terminated. Borrowed. */
const char *kl_node_text(const kl_unit *u, uint32_t n, size_t *len);
/* Byte range [*begin, *end) of the node's text in u->src. */
void kl_node_span(const kl_unit *u, uint32_t n, uint32_t *begin, uint32_t *end);
/* End position (line, col of the last byte + 1) of the node's text. */
void kl_node_end_pos(const kl_unit *u, uint32_t n, uint32_t *line, uint32_t *col);

/* First child with the given field, or KL_NONE. */
uint32_t kl_node_field(const kl_unit *u, uint32_t n, kl_field f);
/* Field id by name ("lhs", "body", ...; the lower-case enum suffix), or
 * KL_F__COUNT when unknown. */
kl_field kl_field_from_name(const char *name);
const char *kl_field_name(kl_field f);
/* Kind by name ("function", "for", "binary", ...: lower-case enum suffix),
 * KL_N__COUNT when unknown. */
kl_node_kind kl_kind_from_name(const char *name);
const char *kl_kind_name(kl_node_kind k);

/* Ids of the nodes of kind k in pre-order; *count gets their number. */
const uint32_t *kl_unit_nodes_of_kind(const kl_unit *u, kl_node_kind k, uint32_t *count);

/* Statement that a KL_N_PRAGMA applies to (its next sibling), or KL_NONE. */
uint32_t kl_pragma_target(const kl_unit *u, uint32_t pragma);

/* Structural equality ignoring trivia: same node kind and the same token
 * sequence (kind and text of each token). Works across units. */
int kl_node_equal(const kl_unit *ua, uint32_t a, const kl_unit *ub, uint32_t b);
/* Hash consistent with kl_node_equal (equal nodes hash equally). */
uint64_t kl_node_hash(const kl_unit *u, uint32_t n);
/* Token-level equality of two tokens (kind and text), across units. */
int kl_token_equal(const kl_unit *ua, uint32_t ta, const kl_unit *ub, uint32_t tb);

/* Walks the subtree of n in pre-order. The visitor returns KL_WALK_CONTINUE,
 * KL_WALK_SKIP (do not enter this node's children) or KL_WALK_STOP.
 * (Equivalently, iterate ids n .. subtree_end-1 directly.) Returns 1 if the
 * walk was stopped. */
enum { KL_WALK_CONTINUE = 0, KL_WALK_SKIP = 1, KL_WALK_STOP = 2 };
typedef int (*kl_visit_fn)(const kl_unit *u, uint32_t node, void *ud);
int kl_walk(const kl_unit *u, uint32_t n, kl_visit_fn visit, void *ud);

/* ---- words (literal-token prefilter) --------------------------------------- */

/* Word id of an identifier/keyword text in this unit, or KL_NONE when no
 * IDENT/KEYWORD token of the unit has exactly that text. O(1). */
uint32_t kl_unit_word(const kl_unit *u, const char *s, size_t len);
static inline int kl_unit_has_word(const kl_unit *u, const char *s, size_t len) {
  return kl_unit_word(u, s, len) != KL_NONE;
}

/* ---- functions and parameters ---------------------------------------------- */

enum {                       /* kl_function_info.qualifiers bits           */
  KL_FQ_GLOBAL = 1, KL_FQ_DEVICE = 2, KL_FQ_HOST = 4, KL_FQ_FORCEINLINE = 8,
  KL_FQ_STATIC = 16, KL_FQ_INLINE = 32, KL_FQ_EXTERN_C = 64,
  KL_FQ_TEMPLATE = 128, KL_FQ_LAUNCH_BOUNDS = 256, KL_FQ_EXTERN = 512
};

typedef struct kl_function_info {
  uint32_t node;            /* the KL_N_FUNCTION                            */
  uint32_t name_tok;        /* token of the function's name                 */
  uint32_t qualifiers;      /* KL_FQ_* bits                                 */
  uint32_t template_node;   /* KL_N_TEMPLATE or KL_NONE                     */
  uint32_t launch_bounds_tok; /* "(" after __launch_bounds__, or KL_NONE   */
  uint32_t return_type;     /* KL_N_TYPE                                    */
  uint32_t params;          /* KL_N_PARAM_LIST                              */
  uint32_t body;            /* KL_N_COMPOUND, or KL_NONE for a prototype    */
} kl_function_info;

/* Fills *out for a KL_N_FUNCTION node; returns 0 if n is not one. */
int kl_function_info_get(const kl_unit *u, uint32_t n, kl_function_info *out);

typedef struct kl_param_info {
  uint32_t node;            /* the KL_N_PARAM                               */
  uint32_t type;            /* KL_N_TYPE node                               */
  uint32_t name_tok;        /* KL_NONE for an unnamed parameter             */
  uint8_t is_const;         /* `const` anywhere in the type                 */
  uint8_t is_restrict;      /* __restrict__ / __restrict / restrict         */
  uint8_t pointer_depth;    /* number of '*' (arrays [] count too)          */
  uint8_t is_reference;     /* & or &&                                      */
  uint32_t base_tok_begin, base_tok_end; /* the base type's tokens without
                                            cv/restrict/'*'/'&' (e.g. float) */
} kl_param_info;

int kl_param_info_get(const kl_unit *u, uint32_t param, kl_param_info *out);

/* ---- integer constants ------------------------------------------------------ */

typedef enum kl_const_kind {
  KL_CONST_DEFINE,          /* #define NAME expr                            */
  KL_CONST_CONSTEXPR,       /* constexpr int NAME = expr                     */
  KL_CONST_CONST,           /* const int NAME = expr                         */
  KL_CONST_TEMPLATE_PARAM   /* template <int NAME = expr>                    */
} kl_const_kind;

struct kl_const {
  uint32_t name_off, name_len;  /* in u->src                                */
  uint32_t expr_off, expr_len;  /* the defining expression's text            */
  uint32_t line;
  uint8_t kind;                 /* kl_const_kind                             */
  uint8_t known;                /* 1 when value was evaluated                */
  int64_t value;
};

/* All integer constants of the unit in source order (computed on first
 * call, cached). Later definitions may refer to earlier ones. */
const kl_const *kl_unit_constants(kl_unit *u, uint32_t *count);
/* Evaluates a constant integer expression node using the unit's constants;
 * returns 1 and sets *value, or 0 when it is not constant. */
int kl_eval_const(kl_unit *u, uint32_t expr, int64_t *value);

/* ---- affine analysis -------------------------------------------------------- */

/* Index variables: the thread-varying ones the analysis is linear in. */
typedef enum kl_avar_kind {
  KL_AV_THREAD_X, KL_AV_THREAD_Y, KL_AV_THREAD_Z,   /* threadIdx.*          */
  KL_AV_BLOCK_X, KL_AV_BLOCK_Y, KL_AV_BLOCK_Z,      /* blockIdx.*           */
  KL_AV_LOOP,                                       /* loop induction var   */
  KL_AV_CONST                                       /* the constant term    */
} kl_avar_kind;

/* Uniform symbols multiply into coefficients: blockDim.*, gridDim.*, kernel
 * parameters and unevaluated constants. A coefficient is a sum of
 * monomials  k * s1 * s2 ... (up to KL_AFFINE_MAX_SYMS symbols). */
#define KL_AFFINE_MAX_SYMS 3
#define KL_AFFINE_MAX_TERMS 16

typedef struct kl_asym {
  uint32_t off, len;        /* symbol text in u->src ("blockDim.x", "N")   */
} kl_asym;

typedef struct kl_aterm {
  uint8_t var;              /* kl_avar_kind                                 */
  uint8_t nsyms;
  uint32_t var_off, var_len;/* KL_AV_LOOP: the induction variable's name    */
  uint32_t loop_node;       /* KL_AV_LOOP: the KL_N_FOR/WHILE node          */
  int64_t coef;             /* integer factor                               */
  kl_asym syms[KL_AFFINE_MAX_SYMS];
} kl_aterm;

typedef struct kl_affine {
  uint32_t nterms;
  kl_aterm terms[KL_AFFINE_MAX_TERMS]; /* like terms merged; no zero coef   */
  uint32_t nrest;           /* number of non-affine sub-expressions         */
  uint32_t rest[8];         /* their node ids (first 8)                     */
  uint32_t flags;           /* KL_AF_* below                                */
} kl_affine;

enum {
  /* Warp-level reading of x / C, x % C, x >> k, x & (C-1) with C a multiple
   * of 32 and x = threadIdx.x + warp-uniform terms (blockDim.x assumed a
   * multiple of 32): x / C is a warp-uniform symbol (its text), and x % C
   * keeps only its threadIdx.x term, dropping a warp-uniform offset. Strides
   * along threadIdx.x stay exact within a warp; the form's value does not. */
  KL_AF_WARP = 1
};

/* Linear form of expression `expr` inside function `fn` (a KL_N_FUNCTION):
 * - a local variable is replaced by its initializer when its declaration is
 *   in scope at `expr` and it is never assigned again in its block;
 * - the induction variable i of an enclosing for-loop with a recognised
 *   step (i++, i += s, i = i + s, s uniform) becomes init(i) + s * L(i),
 *   where L(i) is the KL_AV_LOOP term (so a grid-stride loop keeps its
 *   threadIdx.x from the initializer); with another step, just L(i);
 * - kernel parameters, blockDim/gridDim and constants without a value are
 *   symbols; integer constants are folded;
 * - a non-affine addend goes to rest[] (a product or quotient containing one
 *   makes the whole product non-affine).
 * Work is bounded: each query (each access of kl_access_patterns) has a
 * budget of steps, and what is left when it runs out is non-affine. Lookups
 * of names are indexed per function (O(log n) each, whatever its number of
 * statements); only the walk from a use up to its declaration, past 8
 * levels, is charged. `expr` must lie inside `fn` (outside it no local is
 * seen). Returns 1 when fully affine (nrest == 0). */
int kl_affine_of(kl_unit *u, uint32_t fn, uint32_t expr, kl_affine *out);

/* Per access to a pointer parameter p[idx] in a function, directly or
 * through a local alias defined once as p, p + e, e + p, p - e or &p[e]
 * (the alias offset joins the form). */
typedef enum {
  KL_STRIDE_ZERO,       /* the same element for every value of the variable */
  KL_STRIDE_CONST,      /* an integer stride                                 */
  KL_STRIDE_SYMBOLIC,   /* a stride with uniform symbols (N, blockDim.x)     */
  KL_STRIDE_UNKNOWN     /* a non-affine part may depend on the variable      */
} kl_stride_kind;

typedef struct kl_access {
  uint32_t param;           /* KL_N_PARAM node of the pointer
                               (kl_shared_accesses: the array's DECLARATOR) */
  uint32_t index_node;      /* the KL_N_INDEX node (the outermost one of
                               tile[a][b] for shared arrays)                 */
  uint8_t is_write;         /* target of an assignment / ++ / -- (also as
                               *reinterpret_cast<float4 *>(&p[i]) = v)       */
  uint8_t tx_stride_kind;   /* kl_stride_kind w.r.t. threadIdx.x            */
  uint8_t coalesced;        /* tx stride is 0 or +-vector_width             */
  uint8_t loop_invariant;   /* inside a loop and independent of its induction
                               variable(s): the same element every iteration */
  int64_t tx_stride;        /* when KL_STRIDE_CONST/ZERO                    */
  uint32_t loop_node;       /* innermost enclosing loop or KL_NONE          */
  uint8_t loop_stride_kind; /* kl_stride_kind w.r.t. that loop's variable  */
  int64_t loop_stride;
  kl_affine form;
  uint8_t vector_width;     /* elements per access: 4 for
                               *reinterpret_cast<float4 *>(&p[i]) (the digit
                               of the vector type), else 1. With width W the
                               access is coalesced when the tx stride is W  */
  /* kl_shared_accesses only (0 elsewhere): */
  uint8_t elem_bytes;       /* size of one element of the shared array      */
  uint8_t bank_ways;        /* lanes of a warp that hit distinct words of
                               one bank: 1 conflict-free (or a broadcast),
                               32 fully serialized, 0 unknown stride        */
} kl_access;

/* All indexed accesses through pointer parameters of function fn, in
 * source order. Returns a malloc'd array the caller frees (NULL and
 * *count = 0 when there are none or out of memory). */
kl_access *kl_access_patterns(kl_unit *u, uint32_t fn, uint32_t *count);

/* Accesses of __shared__ arrays with constant dimensions (declared in fn or
 * at file scope) fully subscripted in fn: tile[a][b] is the flat element
 * index a * dim1 + b. `param` is the array's KL_N_DECLARATOR; bank_ways
 * simulates one warp (32 banks of 4 bytes; 8- and 16-byte accesses in 2
 * and 4 phases) from the constant threadIdx.x stride. Same ownership as
 * kl_access_patterns. */
kl_access *kl_shared_accesses(kl_unit *u, uint32_t fn, uint32_t *count);

/* ---- edit sites (edit_sites.c) -------------------------------------------- */

/* Where a transform reads and edits what patterns do not reach: #define
 * constants, __launch_bounds__, parameter qualifiers, #pragma lines and the
 * parts of declarations. Spans are bytes [off, off + len) of u->src, with no
 * leading trivia: a span starts at its first token's text and ends at its
 * last token's end (comments BETWEEN its tokens are inside), unless the
 * field's comment says otherwise. A span of len 0 is an empty part (an
 * empty #define value, a missing unroll count): its off is where text for it
 * goes. Everything is borrowed from the unit, as in the rest of this file. */
typedef struct kl_byte_span {
  uint32_t off, len;
} kl_byte_span;

/* A place where a construct C can be added: write
 *   prefix, then src[indent], then C, then suffix
 * before src[off]. off == KL_NONE when nothing can be added there. */
typedef struct kl_insert_point {
  uint32_t off;
  const char *prefix;       /* static: "", " " or "\n"                       */
  kl_byte_span indent;      /* a line's indentation to repeat, or len 0     */
  const char *suffix;       /* static: "", " " or "\n"                       */
} kl_insert_point;

/* Line and column (1-based, columns in bytes) of byte `off` of u->src
 * (off == u->len is the end of the file). O(log ntokens) plus the length of
 * the token (and trivia) that holds it. */
void kl_unit_pos(const kl_unit *u, uint32_t off, uint32_t *line, uint32_t *col);

/* The whole line of a directive or statement starting at token tok: from
 * the byte after the newline before it (its indentation) through the
 * newline after `last_end` ("\r\n" included; nothing at the end of the
 * file). When something other than blanks precedes tok on its line (a block
 * comment), the span starts at tok itself. */
kl_byte_span kl_line_span(const kl_unit *u, uint32_t tok, uint32_t last_end);

typedef struct kl_define_info {
  uint32_t tok;             /* the KL_TOK_PP token                           */
  kl_byte_span directive;   /* '#' to the end of the line: the token's text
                               (continuations and a trailing comment in,
                               the newline out)                              */
  kl_byte_span line;        /* kl_line_span of the directive                 */
  kl_byte_span name;
  kl_byte_span params;      /* function-like: "(a, b)" with its parens       */
  kl_byte_span value;       /* the replacement list, first to last token: a
                               trailing comment and blanks are outside; empty
                               (len 0) just after the name or params         */
  uint8_t function_like;    /* NAME( with no space: a macro with params      */
  uint8_t known;            /* value evaluated to `number` (object-like only),
                               as kl_unit_constants did for this line       */
  uint8_t in_function;      /* the line is inside a function's tokens        */
  uint8_t conditional;      /* between #if/#ifdef/#ifndef and its #endif (an
                               include guard, #ifndef G then #define G,
                               does not count)                               */
  uint32_t same_name;       /* #define and #undef lines of this name in the
                               unit, this one included: 1 means defined once
                               and never undefined                           */
  int64_t number;           /* the value's integer when known                */
} kl_define_info;

/* Every #define line of the unit (`#define`, `#  define`, comments and
 * continuations between the words allowed), in source order, inside
 * functions and conditionals included. Returns a malloc'd array the caller
 * frees (NULL and *count = 0 when there are none or out of memory). */
kl_define_info *kl_unit_defines(kl_unit *u, uint32_t *count);
/* The parameter names of a function-like define ("..." included), up to max
 * of them into out; returns how many there are. */
uint32_t kl_define_params(const kl_unit *u, const kl_define_info *d, kl_byte_span *out,
                          uint32_t max);

typedef struct kl_pragma_info {
  uint32_t tok;             /* the KL_TOK_PP token                           */
  kl_byte_span directive;   /* as in kl_define_info                          */
  kl_byte_span line;
  kl_byte_span name;        /* the word after "pragma": "unroll", "once"     */
  kl_byte_span args;        /* what follows the name, first to last token;
                               len 0 just after the name when nothing does  */
  uint8_t is_unroll;        /* #pragma unroll [N]                            */
  uint8_t has_count;        /* an unroll with N (args is N, "(4)" kept whole) */
  uint8_t known;            /* N evaluated (kl_eval_tokens_before)           */
  int64_t count;
} kl_pragma_info;

/* Fills *out for a #pragma line (a KL_TOK_PP token index); returns 0 when tok
 * is not one. */
int kl_pragma_info_get(kl_unit *u, uint32_t tok, kl_pragma_info *out);
/* The #pragma lines directly before node n's first token that is no
 * #pragma line (only trivia between, no other directive): tokens *first ..
 * *first + count - 1, pragma lines at the start of n's own range included.
 * Returns the count. Statements, functions and declarations have them, not
 * the parts they begin (an expression, a type, the DECL of a DECL_STMT).
 * Independent of how the parser attached the pragma: as a sibling, a child
 * or inside the statement. */
uint32_t kl_pragmas_before(const kl_unit *u, uint32_t n, uint32_t *first);
/* Where a new #pragma line for node n goes: the start of n's line, with n's
 * indentation (prefix "", indent, suffix "\n", or "\r\n" when the line
 * before ends so), or, when n does not begin its line, just before n
 * (prefix "\n", suffix "\n"). */
void kl_pragma_insert_point(const kl_unit *u, uint32_t n, kl_insert_point *out);

typedef struct kl_launch_bounds_info {
  uint8_t present;
  uint8_t nargs;            /* arguments written (only the first 3 are kept) */
  uint8_t known[3];
  uint32_t count;           /* __launch_bounds__ in the function's head     */
  uint32_t keyword_tok;     /* the first one's keyword, or KL_NONE           */
  kl_byte_span whole;       /* "__launch_bounds__" through ")"               */
  kl_byte_span remove;      /* what to delete to drop it: whole, with the
                               blanks before it (or, when none, after it)    */
  kl_byte_span inner;       /* between the parentheses, blanks included      */
  kl_byte_span arg[3];      /* max threads per block, min blocks per SM, max
                               cluster size: first to last token of each     */
  int64_t value[3];         /* when known[i]                                 */
  kl_insert_point insert;   /* where " __launch_bounds__(...)" goes: after
                               the return type (prefix " "); off KL_NONE
                               when present or without a return type         */
} kl_launch_bounds_info;

/* Fills *out for a KL_N_FUNCTION; returns 0 when fn is not one. */
int kl_launch_bounds_get(kl_unit *u, uint32_t fn, kl_launch_bounds_info *out);

typedef struct kl_param_sites {
  kl_param_info info;
  uint32_t const_tok;       /* the `const` of the base type (before the first
                               '*', '&' or '('), else KL_NONE               */
  uint32_t restrict_tok;    /* the first __restrict__/__restrict/restrict   */
  uint32_t stars;           /* '*' in the declarator (arrays not counted)    */
  kl_byte_span const_remove;    /* kl_token_removal of const_tok           */
  kl_byte_span restrict_remove; /* likewise for restrict_tok                 */
  kl_insert_point const_insert;    /* "const" before the base type (suffix
                                      " "); KL_NONE with a const there      */
  kl_insert_point restrict_insert; /* "__restrict__" before the name (suffix
                                      " "), or after the last '*' when
                                      unnamed (prefix " "); KL_NONE when
                                      present or not a pointer              */
} kl_param_sites;

/* Fills *out for a KL_N_PARAM; returns 0 when param is not one. Adding with
 * an insert point and deleting the matching *_remove span give the text
 * back byte for byte when the qualifier was followed by one blank. */
int kl_param_sites_get(const kl_unit *u, uint32_t param, kl_param_sites *out);

enum {                      /* kl_decl_qualifier() bits                     */
  KL_DQ_SHARED = 1, KL_DQ_CONSTANT = 2, KL_DQ_DEVICE = 4, KL_DQ_STATIC = 8,
  KL_DQ_CONSTEXPR = 16, KL_DQ_EXTERN = 32, KL_DQ_CONST = 64, KL_DQ_VOLATILE = 128,
  KL_DQ_MANAGED = 256, KL_DQ_INLINE = 512
};
/* The KL_DQ_* bit of token i when it is a storage or cv qualifier of a
 * declaration (`__managed__` included), else 0. */
uint32_t kl_decl_qualifier(const kl_unit *u, uint32_t i);
/* The base type of a KL_N_TYPE: its tokens without qualifiers, attributes
 * (__align__(16)) and trailing '*' / '&' / cv, as a token range [*b, *e);
 * returns 0 (and *b = *e) when nothing is left. */
int kl_type_base(const kl_unit *u, uint32_t type, uint32_t *b, uint32_t *e);

/* What to delete to drop token i (a qualifier): the token and one blank
 * after it, or, when none follows, one blank before it; the inverse of
 * inserting "const " before a word or " __restrict__" after a '*'. */
kl_byte_span kl_token_removal(const kl_unit *u, uint32_t i);

/* kl_eval_tokens with only the constants defined before byte `off` visible:
 * what the preprocessor sees at that point when a name is redefined later. */
int kl_eval_tokens_before(kl_unit *u, const kl_token *t, uint32_t b, uint32_t e,
                          const char *src, uint32_t off, int64_t *value);

#endif
