/* engine/match bounds without Lua: the token-level precedence of opaque
 * runs (operand.c), where a binding may stand, and the total work cap of a
 * run with its verdict (km_results.stopped). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "match/match.h"

#define LIT(s) { KM_PT_LITERAL, s, sizeof(s) - 1, -1, KM_SORT_EXPR, KM_CTX_EXPR, 1, 1 }
#define META(slot, sort) { KM_PT_META, NULL, 0, slot, sort, KM_CTX_EXPR, 1, 1 }

/* The strength of the whole text as one expression. */
static unsigned strength(const char *text) {
  kl_unit *u = kl_source_parse(text, strlen(text), "s.cu");
  if (!u) return 99;
  unsigned s = km_run_strength(u, 0, u->ntokens - 1, 0); /* the last token is EOF */
  kl_unit_free(u);
  return s;
}

static void test_strength(test_batch *t) {
  INT_EQ(t, strength("a"), KM_PREC_ATOM, "an identifier is an atom");
  INT_EQ(t, strength("(a + b)"), KM_PREC_ATOM, "a parenthesized expression is an atom");
  INT_EQ(t, strength("a + b * c"), 11, "the weakest depth-0 operator counts");
  INT_EQ(t, strength("a * b"), 12, "a product");
  INT_EQ(t, strength("-a"), KM_PREC_PREFIX, "a prefix operator");
  INT_EQ(t, strength("(float)a"), KM_PREC_PREFIX, "a cast");
  INT_EQ(t, strength("p->x[i]"), KM_PREC_POSTFIX, "member and index");
  INT_EQ(t, strength("c ? a : b"), KM_PREC_ASSIGN, "a conditional");
  INT_EQ(t, strength("a = b"), KM_PREC_ASSIGN, "an assignment");
  INT_EQ(t, strength("a << 2"), 10, "a shift");
  INT_EQ(t, strength("f<int>(x) + 1"), 11, "template brackets are no operators");
  INT_EQ(t, strength("a b"), KM_PREC_UNKNOWN, "juxtaposed operands are no expression");
  INT_EQ(t, strength("a +"), KM_PREC_UNKNOWN, "a dangling operator");
  INT_EQ(t, strength("a, b"), KM_PREC_UNKNOWN, "no comma in a binding");
  INT_EQ(t, strength("a : b"), KM_PREC_UNKNOWN, "a label is no expression");
  INT_EQ(t, strength("return a"), KM_PREC_UNKNOWN, "a statement keyword");
  INT_EQ(t, strength("\xff"), KM_PREC_UNKNOWN, "garbage");
}

/* The side of the code at token index `at` of text: before it (left) or
 * at it (right). */
static km_ctx_side side_of(const char *text, uint32_t at, int left) {
  kl_unit *u = kl_source_parse(text, strlen(text), "s.cu");
  km_ctx_side s = { 99, 0 };
  if (!u) return s;
  s = left ? km_left_side(u, at) : km_right_side(u, at);
  kl_unit_free(u);
  return s;
}

static void test_sides(test_batch *t) {
  /* tokens: x = a - b * c ;  -> b is token 4 */
  km_ctx_side l = side_of("x = a - b * c;", 4, 1);
  OK(t, l.kind == KM_SIDE_OP && l.prec == 11, "a binary minus before b");
  OK(t, km_fits_left(12, 0, l), "b * c fits after a binary minus");
  OK(t, !km_fits_left(11, 0, l), "b - d does not (left to right)");
  l = side_of("x = -b * c;", 3, 1);
  OK(t, l.kind == KM_SIDE_OP && l.prec == KM_PREC_PREFIX, "a prefix minus before b");
  OK(t, !km_fits_left(12, 0, l), "b * c is no operand of a prefix minus");
  l = side_of("x = (a) - b;", 6, 1);
  OK(t, l.kind == KM_SIDE_CAST, "after (a) a minus may be a prefix");
  l = side_of("` b = 1;", 1, 1);
  OK(t, l.kind == KM_SIDE_UNKNOWN, "after garbage: unknown");
  OK(t, !km_fits_left(KM_PREC_ASSIGN, 0, l) && km_fits_left(KM_PREC_POSTFIX, 0, l),
     "only a postfix expression fits after garbage");
  OK(t, !km_fits_left(KM_PREC_ATOM, 1, l), "nor one that starts with - or *");
  km_ctx_side r = side_of("a * b++;", 3, 0);
  OK(t, r.kind == KM_SIDE_OP && r.prec == KM_PREC_POSTFIX, "++ after b is postfix");
  OK(t, !km_fits_right(12, r), "a * b does not end before ++");
  r = side_of("a = b = c;", 3, 0);
  OK(t, !km_fits_right(KM_PREC_ASSIGN, r), "a = b does not end before = (right to left)");
  r = side_of("a - b - c;", 3, 0);
  OK(t, km_fits_right(11, r), "a - b ends before - (left to right)");
  OK(t, km_stmt_boundary(NULL, 0), "the start of a unit starts a statement");
  kl_unit *u = kl_source_parse("if (c) x = 1; *p = 2;", 21, "s.cu");
  if (u) {
    OK(t, km_stmt_boundary(u, 4), "after a control header");
    OK(t, km_stmt_boundary(u, 8), "after ;");
    OK(t, !km_stmt_boundary(u, 9), "not after a prefix *");
    kl_unit_free(u);
  }
}

static km_pattern *product(void) {
  static const km_ptoken tk[] = { META(0, KM_SORT_EXPR), LIT("*"), META(1, KM_SORT_EXPR) };
  static const char *const names[] = { "X", "Y" };
  km_pattern_desc d = { 0 };
  d.tokens = tk;
  d.ntokens = 3;
  d.shape = KM_SHAPE_EXPR;
  d.root_kinds[0] = "binary";
  d.root_op = "*";
  d.slot_names = names;
  d.nslots = 2;
  char err[128];
  return km_compile(&d, err, sizeof err);
}

static void test_total_cap(test_batch *t) {
  /* Deep nesting past the parser's depth cap: an opaque tail. */
  size_t n = 3000;
  char *text = malloc(n * 7 + 64);
  if (!text) return;
  size_t len = 0;
  len += (size_t)sprintf(text, "void f(int a, int b) {\n");
  for (size_t i = 0; i < n; i++) len += (size_t)sprintf(text + len, "if (a) ");
  len += (size_t)sprintf(text + len, "b = a * b;\n}\n");
  kl_unit *u = kl_source_parse(text, len, "deep.cu");
  km_index *ix = u ? km_index_new(u) : NULL;
  km_pattern *p = product();
  OK(t, u && ix && p, "parse, index, compile");
  if (u && ix && p) {
    km_results r = { 0 };
    km_options o = { 1, 0, 0, 0 };
    OK(t, km_match_set(ix, &p, 1, &o, &r), "match");
    INT_EQ(t, r.n, 1, "one product: a * b");
    INT_EQ(t, r.stopped, 0, "not stopped");
    INT_EQ(t, r.capped, 0, "nothing capped");
    INT_EQ(t, r.max_steps, KM_DEFAULT_MAX_STEPS, "the default per-attempt cap");
    OK(t, r.max_total_steps >= KM_DEFAULT_MAX_TOTAL, "a default total cap");
    OK(t, r.steps < 8 * (uint64_t)u->ntokens, "linear work");
    km_results_free(&r);
    km_options tiny = { 1, 0, 0, 10 };
    memset(&r, 0, sizeof r);
    OK(t, km_match_set(ix, &p, 1, &tiny, &r), "match under a tiny total cap");
    INT_EQ(t, r.stopped, 1, "the run says it stopped");
    OK(t, r.steps <= 10, "and did no more than its cap");
    INT_EQ(t, r.max_total_steps, 10, "the cap is reported");
    km_results_free(&r);
  }
  km_pattern_free(p);
  km_index_free(ix);
  kl_unit_free(u);
  free(text);
}

int main(void) {
  test_batch t = { 0 };
  test_strength(&t);
  test_sides(&t);
  test_total_cap(&t);
  return kl_test_finish(&t);
}
