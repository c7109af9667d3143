/* kl.source edit sites (engine/source/edit_sites.c): #define and #pragma
 * lines, __launch_bounds__, parameter qualifiers, declaration qualifiers,
 * positions, evaluation before an offset; hostile and random input keeps
 * every span inside the text. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "source/source.h"

static kl_unit *parse(const char *s) { return kl_source_parse(s, strlen(s), "test.cu"); }

/* The text of a span, in a static buffer (tests only). */
static const char *text_of(const kl_unit *u, kl_byte_span s) {
  static char buf[512];
  size_t n = s.len < sizeof buf - 1 ? s.len : sizeof buf - 1;
  memcpy(buf, u->src + s.off, n);
  buf[n] = '\0';
  return buf;
}

static uint32_t first_of(const kl_unit *u, kl_node_kind k) {
  uint32_t n;
  const uint32_t *ids = kl_unit_nodes_of_kind(u, k, &n);
  return n ? ids[0] : KL_NONE;
}

static uint32_t nth_of(const kl_unit *u, kl_node_kind k, uint32_t i) {
  uint32_t n;
  const uint32_t *ids = kl_unit_nodes_of_kind(u, k, &n);
  return i < n ? ids[i] : KL_NONE;
}

static uint32_t pp_token(const kl_unit *u, uint32_t nth) {
  for (uint32_t i = 0; i < u->ntokens; i++)
    if (u->tokens[i].kind == KL_TOK_PP && nth-- == 0) return i;
  return KL_NONE;
}

static int span_inside(const kl_unit *u, kl_byte_span s) {
  return s.off <= u->len && s.len <= u->len - s.off;
}

static void test_defines(test_batch *t) {
  kl_unit *u = parse("#  define A 4\n"
                     "# /* c */ define B (A * 2) // trailing\n"
                     "#define C \\\n  (B + 1)   /* tail */\n"
                     "#define E\n"
                     "#define F(x, y) ((x) + (y))\n"
                     "#ifdef X\n#define A 8\n#endif\n"
                     "void f() {\n#define IN 3\n}\n"
                     "#undef C\n#pragma unroll\n");
  uint32_t n;
  kl_define_info *ds = kl_unit_defines(u, &n);
  INT_EQ(t, n, 7, "seven #define lines");
  STR_EQ(t, text_of(u, ds[0].name), "A", "#  define: name");
  STR_EQ(t, text_of(u, ds[0].value), "4", "#  define: value");
  INT_EQ(t, ds[0].known, 1, "A evaluated");
  INT_EQ(t, ds[0].number, 4, "A = 4");
  INT_EQ(t, ds[0].same_name, 2, "A defined twice");
  STR_EQ(t, text_of(u, ds[0].line), "#  define A 4\n", "the whole line");
  STR_EQ(t, text_of(u, ds[1].name), "B", "a comment between # and define");
  STR_EQ(t, text_of(u, ds[1].value), "(A * 2)", "the trailing comment stays out");
  STR_EQ(t, text_of(u, ds[1].directive), "# /* c */ define B (A * 2) // trailing",
         "the directive keeps its comment");
  STR_EQ(t, text_of(u, ds[2].value), "(B + 1)", "value after a continuation");
  INT_EQ(t, ds[2].same_name, 2, "#undef C counts");
  uint32_t line, col;
  kl_unit_pos(u, ds[2].value.off, &line, &col);
  INT_EQ(t, line, 4, "value on the continued line");
  INT_EQ(t, col, 3, "value column");
  INT_EQ(t, ds[3].value.len, 0, "empty value");
  INT_EQ(t, ds[3].value.off, ds[3].name.off + ds[3].name.len, "empty value after the name");
  INT_EQ(t, ds[4].function_like, 1, "F is function-like");
  INT_EQ(t, ds[4].known, 0, "a function-like macro has no value");
  STR_EQ(t, text_of(u, ds[4].params), "(x, y)", "params with parens");
  kl_byte_span ps[4];
  INT_EQ(t, kl_define_params(u, &ds[4], ps, 4), 2, "two params");
  STR_EQ(t, text_of(u, ps[1]), "y", "second param");
  INT_EQ(t, ds[5].conditional, 1, "inside #ifdef");
  INT_EQ(t, ds[0].conditional, 0, "outside");
  INT_EQ(t, ds[6].in_function, 1, "inside a function");
  INT_EQ(t, ds[5].in_function, 0, "not inside a function");
  free(ds);
  kl_unit_free(u);

  u = parse("int x;\n");
  ds = kl_unit_defines(u, &n);
  OK(t, ds == NULL && n == 0, "no defines: NULL, 0");
  kl_unit_free(u);
}

static void test_pragmas(test_batch *t) {
  kl_unit *u = parse("#define N 4\nvoid f() {\n  for (;;)\n#pragma unroll\n    for (;;)\n"
                     "#pragma unroll (N * 2) // eight\n      while (k) s;\n"
                     "  if (c) do {} while (0);\n}\n#define N 16\n");
  uint32_t inner = nth_of(u, KL_N_FOR, 1), w = first_of(u, KL_N_WHILE), outer = first_of(u, KL_N_FOR);
  uint32_t first;
  INT_EQ(t, kl_pragmas_before(u, outer, &first), 0, "the outer loop has none");
  INT_EQ(t, kl_pragmas_before(u, inner, &first), 1, "the unbraced body's pragma");
  kl_pragma_info p;
  OK(t, kl_pragma_info_get(u, first, &p), "a pragma");
  INT_EQ(t, p.is_unroll, 1, "unroll");
  INT_EQ(t, p.has_count, 0, "no count");
  INT_EQ(t, p.args.len, 0, "empty args");
  STR_EQ(t, text_of(u, p.line), "#pragma unroll\n", "the pragma's line");
  INT_EQ(t, kl_pragmas_before(u, w, &first), 1, "the while's pragma");
  OK(t, kl_pragma_info_get(u, first, &p), "a pragma");
  STR_EQ(t, text_of(u, p.args), "(N * 2)", "args without the comment");
  INT_EQ(t, p.known, 1, "count evaluated");
  INT_EQ(t, p.count, 8, "N before the pragma is 4, not the later 16");
  OK(t, !kl_pragma_info_get(u, pp_token(u, 0), &p), "a #define is no pragma");
  OK(t, !kl_pragma_info_get(u, 3, &p), "an ordinary token is no pragma");

  kl_insert_point ip;
  kl_pragma_insert_point(u, inner, &ip);
  STR_EQ(t, ip.prefix, "", "own line: no prefix");
  STR_EQ(t, text_of(u, ip.indent), "    ", "the loop's indentation");
  STR_EQ(t, ip.suffix, "\n", "a line of its own");
  OK(t, ip.off + 4 == u->tokens[u->nodes[inner].tok_begin].off, "at the line start");
  uint32_t d = first_of(u, KL_N_DO);
  kl_pragma_insert_point(u, d, &ip);
  STR_EQ(t, ip.prefix, "\n", "mid-line: a line break first");
  OK(t, ip.off == u->tokens[u->nodes[d].tok_begin].off, "right before the do");
  kl_unit_free(u);

  /* a pragma line in a block comment's last line is no line start */
  u = parse("void f() {\n  /* a\n b */ for (;;) {}\n}\n");
  kl_pragma_insert_point(u, first_of(u, KL_N_FOR), &ip);
  STR_EQ(t, ip.prefix, "\n", "after a block comment: mid-line");
  kl_unit_free(u);
}

static void test_launch_bounds(test_batch *t) {
  kl_unit *u = parse("#define T 64\n"
                     "extern \"C\" __global__ void __launch_bounds__(T * 4, 2) k(int n) {}\n"
                     "__global__ void\n__launch_bounds__(128) k2();\n"
                     "__global__ void k3(float *a) {}\n");
  kl_launch_bounds_info lb;
  OK(t, kl_launch_bounds_get(u, nth_of(u, KL_N_FUNCTION, 0), &lb), "a function");
  INT_EQ(t, lb.present, 1, "present");
  INT_EQ(t, lb.nargs, 2, "two arguments");
  STR_EQ(t, text_of(u, lb.whole), "__launch_bounds__(T * 4, 2)", "whole");
  STR_EQ(t, text_of(u, lb.remove), " __launch_bounds__(T * 4, 2)", "remove takes the blank before");
  STR_EQ(t, text_of(u, lb.arg[0]), "T * 4", "max threads");
  INT_EQ(t, lb.value[0], 256, "max threads value");
  INT_EQ(t, lb.value[1], 2, "min blocks value");
  INT_EQ(t, lb.insert.off, KL_NONE, "nothing to insert");
  OK(t, kl_launch_bounds_get(u, nth_of(u, KL_N_FUNCTION, 1), &lb), "a prototype");
  STR_EQ(t, text_of(u, lb.remove), "__launch_bounds__(128) ", "at a line start: the blank after");
  OK(t, kl_launch_bounds_get(u, nth_of(u, KL_N_FUNCTION, 2), &lb), "no bounds");
  INT_EQ(t, lb.present, 0, "absent");
  STR_EQ(t, lb.insert.prefix, " ", "after the type");
  OK(t, memcmp(u->src + lb.insert.off - 4, "void k3", 7) == 0, "right after void");
  OK(t, !kl_launch_bounds_get(u, first_of(u, KL_N_PARAM), &lb), "a param is no function");
  kl_unit_free(u);
}

static void test_params(test_batch *t) {
  kl_unit *u = parse("void k(const float *__restrict__ a, float* b, float *const c, int *,"
                     " const Foo<const int> *d, float e[]) {}\n");
  kl_param_sites ps;
  OK(t, kl_param_sites_get(u, nth_of(u, KL_N_PARAM, 0), &ps), "param a");
  STR_EQ(t, text_of(u, ps.const_remove), "const ", "const and its blank");
  STR_EQ(t, text_of(u, ps.restrict_remove), "__restrict__ ", "restrict and its blank");
  INT_EQ(t, ps.const_insert.off, KL_NONE, "const there: no insert");
  INT_EQ(t, ps.restrict_insert.off, KL_NONE, "restrict there: no insert");
  OK(t, kl_param_sites_get(u, nth_of(u, KL_N_PARAM, 1), &ps), "param b");
  INT_EQ(t, ps.const_tok, KL_NONE, "b has no const");
  OK(t, ps.const_insert.off == u->tokens[ps.info.base_tok_begin].off, "const before float");
  OK(t, ps.restrict_insert.off == u->tokens[ps.info.name_tok].off, "restrict before the name");
  STR_EQ(t, ps.restrict_insert.suffix, " ", "restrict then a blank");
  OK(t, kl_param_sites_get(u, nth_of(u, KL_N_PARAM, 2), &ps), "param c");
  INT_EQ(t, ps.const_tok, KL_NONE, "a const pointer is no const base type");
  OK(t, ps.const_insert.off != KL_NONE, "const can be added");
  OK(t, kl_param_sites_get(u, nth_of(u, KL_N_PARAM, 3), &ps), "unnamed param");
  STR_EQ(t, ps.restrict_insert.prefix, " ", "after the star");
  OK(t, memcmp(u->src + ps.restrict_insert.off - 1, "*", 1) == 0, "right after the star");
  OK(t, kl_param_sites_get(u, nth_of(u, KL_N_PARAM, 4), &ps), "param d");
  OK(t, ps.const_tok != KL_NONE && u->tokens[ps.const_tok].off < u->tokens[ps.info.base_tok_begin].off,
     "the outer const, not the template argument's");
  INT_EQ(t, ps.stars, 1, "one star outside the template arguments");
  OK(t, kl_param_sites_get(u, nth_of(u, KL_N_PARAM, 5), &ps), "param e");
  INT_EQ(t, ps.restrict_insert.off, KL_NONE, "an array gets no restrict insert");
  OK(t, !kl_param_sites_get(u, first_of(u, KL_N_FUNCTION), &ps), "a function is no param");
  kl_unit_free(u);

  /* removal takes the blank before when none follows */
  u = parse("void k(int * __restrict__, int x) {}");
  OK(t, kl_param_sites_get(u, nth_of(u, KL_N_PARAM, 0), &ps), "unnamed restricted");
  STR_EQ(t, text_of(u, ps.restrict_remove), " __restrict__", "the blank before");
  kl_unit_free(u);
}

static void test_declarations(test_batch *t) {
  kl_unit *u = parse("extern __shared__ __align__(16) float dyn[];\n"
                     "__device__ __managed__ unsigned long long m;\n");
  uint32_t d = first_of(u, KL_N_DECL);
  uint32_t type = kl_node_field(u, d, KL_F_TYPE);
  uint32_t b, e, bits = 0;
  for (uint32_t i = u->nodes[type].tok_begin; i < u->nodes[type].tok_end; i++)
    bits |= kl_decl_qualifier(u, i);
  INT_EQ(t, bits, KL_DQ_EXTERN | KL_DQ_SHARED, "extern __shared__");
  OK(t, kl_type_base(u, type, &b, &e), "a base type");
  INT_EQ(t, e - b, 1, "float alone");
  d = nth_of(u, KL_N_DECL, 1);
  type = kl_node_field(u, d, KL_F_TYPE);
  bits = 0;
  for (uint32_t i = u->nodes[type].tok_begin; i < u->nodes[type].tok_end; i++)
    bits |= kl_decl_qualifier(u, i);
  INT_EQ(t, bits, KL_DQ_DEVICE | KL_DQ_MANAGED, "__device__ __managed__");
  OK(t, kl_type_base(u, type, &b, &e), "a base type");
  INT_EQ(t, e - b, 3, "unsigned long long");
  kl_unit_free(u);
}

static void test_positions(test_batch *t) {
  kl_unit *u = parse("ab\n  /* x\n */ cd \\\n ef");
  uint32_t line, col;
  kl_unit_pos(u, 0, &line, &col);
  OK(t, line == 1 && col == 1, "first byte");
  kl_unit_pos(u, 5, &line, &col);
  OK(t, line == 2 && col == 3, "inside trivia");
  kl_unit_pos(u, 14, &line, &col);
  OK(t, line == 3 && col == 5, "a token after a comment");
  kl_unit_pos(u, u->len, &line, &col);
  OK(t, line == 4 && col == 4, "end of file");
  kl_unit_pos(u, u->len + 100, &line, &col);
  OK(t, line == 4 && col == 4, "past the end is the end");
  kl_unit_free(u);
}

/* Every edit-site query on random bytes and hostile snippets stays inside
 * the text. */
static void check_all(test_batch *t, kl_unit *u, int *bad) {
  uint32_t n;
  kl_define_info *ds = kl_unit_defines(u, &n);
  for (uint32_t i = 0; i < n; i++)
    if (!span_inside(u, ds[i].value) || !span_inside(u, ds[i].line) ||
        !span_inside(u, ds[i].name) || ds[i].line.off > ds[i].directive.off)
      (*bad)++;
  free(ds);
  for (uint32_t i = 0; i < u->ntokens; i++) {
    kl_pragma_info p;
    if (kl_pragma_info_get(u, i, &p) && (!span_inside(u, p.args) || !span_inside(u, p.line))) (*bad)++;
  }
  for (uint32_t k = 0; k < u->nnodes; k++) {
    uint32_t first;
    if (kl_pragmas_before(u, k, &first) > u->nodes[k].tok_begin) (*bad)++;
    kl_insert_point ip;
    kl_pragma_insert_point(u, k, &ip);
    if (ip.off > u->len) (*bad)++;
    kl_launch_bounds_info lb;
    if (kl_launch_bounds_get(u, k, &lb) &&
        (!span_inside(u, lb.whole) || !span_inside(u, lb.remove) ||
         (lb.insert.off != KL_NONE && lb.insert.off > u->len)))
      (*bad)++;
    kl_param_sites ps;
    if (kl_param_sites_get(u, k, &ps) &&
        ((ps.const_insert.off != KL_NONE && ps.const_insert.off > u->len) ||
         !span_inside(u, ps.restrict_remove)))
      (*bad)++;
  }
  (void)t;
}

static void test_hostile(test_batch *t) {
  static const char *const cases[] = {
      "#define", "#define 1 2", "#define X(", "#define X(a, b", "# define\\\n Y 3", "#pragma",
      "#pragma unroll (", "__global__ void __launch_bounds__ k();",
      "__global__ void __launch_bounds__( k() {}", "__global__ void __launch_bounds__(,,,,) k();",
      "void f(float *", "#define A \\", "#define B /* open", "void f() { for (;;)\n#pragma unroll",
      "extern \"C\" { __shared__ float s[", "\xff#define\xfe X 1\n#pragma\xff unroll\n",
      "#define X #y // c\n#define Y(a) #a\n",
  };
  int bad = 0;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    kl_unit *u = parse(cases[i]);
    OK(t, u != NULL, "parses");
    if (u) check_all(t, u, &bad);
    kl_unit_free(u);
  }
  uint64_t seed = 42;
  static const char alphabet[] = "#define pragma unroll __launch_bounds__ ( ) , * const __restrict__ "
                                 "float int x y N 4 \\\n/**/ // { } ; [ ] < > __shared__ for while";
  for (int round = 0; round < 300; round++) {
    char buf[256];
    size_t n = 0;
    while (n < sizeof buf - 16) {
      seed = seed * 6364136223846793005ull + 1442695040888963407ull;
      if ((seed >> 60) == 0) {
        buf[n++] = (char)(seed >> 20); /* a raw byte now and then */
        continue;
      }
      /* a word of the alphabet, up to its next space */
      size_t at = (size_t)(seed >> 33) % (sizeof alphabet - 1);
      while (at < sizeof alphabet - 1 && alphabet[at] != ' ' && n < sizeof buf - 2) buf[n++] = alphabet[at++];
      buf[n++] = (seed >> 40) & 1 ? ' ' : '\n';
    }
    kl_unit *u = kl_source_parse(buf, n, "random");
    if (u) check_all(t, u, &bad);
    kl_unit_free(u);
  }
  INT_EQ(t, bad, 0, "every span inside the text");
}

static void test_eval_before(test_batch *t) {
  kl_unit *u = parse("#define N 4\nint a[N];\n#define N 8\nint b[N];\n");
  uint32_t da = nth_of(u, KL_N_DECLARATOR, 0), db = nth_of(u, KL_N_DECLARATOR, 1);
  uint32_t ia = kl_node_field(u, da, KL_F_INDEX), ib = kl_node_field(u, db, KL_F_INDEX);
  int64_t v = 0;
  const kl_node *na = &u->nodes[ia], *nb = &u->nodes[ib];
  OK(t, kl_eval_tokens_before(u, u->tokens, na->tok_begin, na->tok_end, u->src,
                              u->tokens[na->tok_begin].off, &v),
     "a[N] evaluates");
  INT_EQ(t, v, 4, "the first N");
  OK(t, kl_eval_tokens_before(u, u->tokens, nb->tok_begin, nb->tok_end, u->src,
                              u->tokens[nb->tok_begin].off, &v),
     "b[N] evaluates");
  INT_EQ(t, v, 8, "the second N");
  OK(t, !kl_eval_tokens_before(u, u->tokens, na->tok_begin, na->tok_end, u->src, 0, &v),
     "nothing visible before the first define");
  kl_unit_free(u);
}

int main(void) {
  test_batch t = {0, 0};
  test_defines(&t);
  test_pragmas(&t);
  test_launch_bounds(&t);
  test_params(&t);
  test_declarations(&t);
  test_positions(&t);
  test_eval_before(&t);
  test_hostile(&t);
  return kl_test_finish(&t);
}
