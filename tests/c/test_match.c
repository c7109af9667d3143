/* engine/match without Lua: the step compiler, the matcher, rewriting,
 * diff and anti-unification, driven by hand-built pattern descriptors (the
 * token lists klineage/pattern.lua would produce). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "match/match.h"

#define LIT(s) { KM_PT_LITERAL, s, sizeof(s) - 1, -1, KM_SORT_EXPR, KM_CTX_EXPR, 1, 1 }
#define META(slot, sort) { KM_PT_META, NULL, 0, slot, sort, KM_CTX_EXPR, 1, 1 }
#define SEQ(slot, ctx) { KM_PT_SEQ, NULL, 0, slot, KM_SORT_SEQ, ctx, 1, 1 }
#define SKIP(ctx) { KM_PT_ELLIPSIS, NULL, 0, -1, KM_SORT_EXPR, ctx, 1, 1 }

static const char *kernel =
    "__global__ void k(float *a, const float *b, int n) {\n"
    "  int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
    "  for (int j = 0; j < n; ++j) a[i] += b[j] * 2.0f;\n"
    "  __syncthreads();\n"
    "  a[i] = a[i] + b[i];\n"
    "  __syncthreads();\n"
    "}\n";

static km_pattern *compile(const km_ptoken *t, uint32_t n, km_shape shape, const char *root,
                           const char *op, const char *const *names, uint32_t nslots) {
  km_pattern_desc d = {0};
  d.tokens = t;
  d.ntokens = n;
  d.shape = shape;
  d.root_kinds[0] = root;
  d.root_op = op;
  d.slot_names = names;
  d.nslots = nslots;
  char err[128];
  km_pattern *p = km_compile(&d, err, sizeof err);
  if (!p) fprintf(stderr, "compile: %s\n", err);
  return p;
}

static int run(const km_index *ix, km_pattern *p, int prefilter, km_results *r) {
  km_options o = { prefilter, 0, 0, 0 };
  memset(r, 0, sizeof *r);
  return km_match_set(ix, &p, 1, &o, r);
}

static void binding_text(const kl_unit *u, const km_binding *b, char *out, size_t n) {
  if (b->tok_end <= b->tok_begin) {
    out[0] = '\0';
    return;
  }
  uint32_t s = u->tokens[b->tok_begin].off;
  uint32_t e = u->tokens[b->tok_end - 1].off + u->tokens[b->tok_end - 1].len;
  snprintf(out, n, "%.*s", (int)(e - s), u->src + s);
}

static void test_compile(test_batch *t) {
  static const km_ptoken ok[] = { LIT("__syncthreads"), LIT("("), LIT(")"), LIT(";") };
  km_pattern *p = compile(ok, 4, KM_SHAPE_STMTS, "expr_stmt", NULL, NULL, 0);
  OK(t, p != NULL, "a literal statement compiles");
  if (p) {
    INT_EQ(t, p->nsteps, 5, "one step per token plus END");
    INT_EQ(t, p->steps[4].op, KM_OP_END, "the last step is END");
    INT_EQ(t, p->nwords, 1, "one literal word");
    STR_EQ(t, p->pool + p->words[0], "__syncthreads", "the word");
    INT_EQ(t, p->root_kind[0], KL_N_EXPR_STMT, "root kind resolved by name");
    km_pattern_free(p);
  }
  char err[128];
  static const km_ptoken unbalanced[] = { LIT("f"), LIT("("), LIT("]") };
  km_pattern_desc d = { .tokens = unbalanced, .ntokens = 3, .shape = KM_SHAPE_EXPR };
  OK(t, km_compile(&d, err, sizeof err) == NULL, "unbalanced brackets are refused");
  OK(t, strstr(err, "1:1: unbalanced ']'") != NULL, "with row:col");
  static const km_ptoken badslot[] = { META(3, KM_SORT_EXPR) };
  km_pattern_desc d2 = { .tokens = badslot, .ntokens = 1, .shape = KM_SHAPE_EXPR, .nslots = 1 };
  OK(t, km_compile(&d2, err, sizeof err) == NULL, "a slot out of range is refused");
  static const km_ptoken lone[] = { LIT("x") };
  km_pattern_desc d3 = { .tokens = lone, .ntokens = 1, .shape = KM_SHAPE_EXPR, .root_kinds = { "no_such_kind", NULL } };
  OK(t, km_compile(&d3, err, sizeof err) == NULL, "an unknown root kind is refused");
  km_pattern_desc d4 = { .tokens = lone, .ntokens = 0, .shape = KM_SHAPE_EXPR };
  OK(t, km_compile(&d4, err, sizeof err) == NULL, "an empty pattern is refused");
}

static void test_match(test_batch *t, kl_unit *u, km_index *ix) {
  char buf[128];
  /* $a = $a + $b;  (repeated metavariable) */
  static const km_ptoken rep[] = { META(0, KM_SORT_EXPR), LIT("="), META(0, KM_SORT_EXPR), LIT("+"),
                                   META(1, KM_SORT_EXPR), LIT(";") };
  static const char *const names[] = { "a", "b" };
  km_pattern *p = compile(rep, 6, KM_SHAPE_STMTS, "expr_stmt", NULL, names, 2);
  km_results r;
  OK(t, p && run(ix, p, 1, &r), "repeated metavariable pattern runs");
  INT_EQ(t, r.n, 1, "one match of $a = $a + $b;");
  if (r.n == 1) {
    binding_text(u, &r.b[r.m[0].bind + 0], buf, sizeof buf);
    STR_EQ(t, buf, "a[i]", "$a");
    binding_text(u, &r.b[r.m[0].bind + 1], buf, sizeof buf);
    STR_EQ(t, buf, "b[i]", "$b");
    INT_EQ(t, u->nodes[r.m[0].node].kind, KL_N_EXPR_STMT, "the match is the statement node");
    INT_EQ(t, u->tokens[r.m[0].tok_begin].line, 5, "on line 5");
  }
  km_results_free(&r);
  km_pattern_free(p);

  /* Structural checks are a prefilter: a wrong one hides the match only
   * while the prefilter is on. */
  static const int p0[] = { 0 }, p01[] = { 0, 1 };
  km_check_desc good[2] = { { p0, 1, "assign", "=" }, { p01, 2, "binary", "+" } };
  km_check_desc bad[1] = { { p01, 2, "binary", "-" } };
  km_pattern_desc d = { .tokens = rep, .ntokens = 6, .shape = KM_SHAPE_STMTS,
                        .root_kinds = { "expr_stmt", NULL }, .slot_names = names, .nslots = 2,
                        .checks = good, .nchecks = 2 };
  char err[128];
  p = km_compile(&d, err, sizeof err);
  OK(t, p && p->nchecks == 2, "two checks compiled");
  OK(t, p && run(ix, p, 1, &r), "checked pattern runs");
  INT_EQ(t, r.n, 1, "true checks keep the match");
  km_results_free(&r);
  km_pattern_free(p);
  d.checks = bad;
  d.nchecks = 1;
  p = km_compile(&d, err, sizeof err);
  OK(t, p && run(ix, p, 1, &r), "wrongly checked pattern runs");
  INT_EQ(t, r.n, 0, "a false check skips the candidate");
  OK(t, r.prefiltered_items >= 1, "counted as prefiltered");
  km_results_free(&r);
  OK(t, run(ix, p, 0, &r), "without the prefilter");
  INT_EQ(t, r.n, 1, "the checks are not applied");
  km_results_free(&r);
  km_pattern_free(p);

  /* $x * $N  (binary root with operator) finds only '*' nodes */
  static const km_ptoken mul[] = { META(0, KM_SORT_EXPR), LIT("*"), META(1, KM_SORT_EXPR) };
  static const char *const n2[] = { "x", "y" };
  p = compile(mul, 3, KM_SHAPE_EXPR, "binary", "*", n2, 2);
  OK(t, p && run(ix, p, 1, &r), "binary pattern runs");
  INT_EQ(t, r.n, 2, "two products: blockIdx.x * blockDim.x and b[j] * 2.0f");
  km_results_free(&r);
  km_pattern_free(p);

  /* __syncthreads(); ... __syncthreads();  (statement ellipsis) */
  static const km_ptoken bar[] = { LIT("__syncthreads"), LIT("("), LIT(")"), LIT(";"), SKIP(KM_CTX_STMTS),
                                   LIT("__syncthreads"), LIT("("), LIT(")"), LIT(";") };
  p = compile(bar, 9, KM_SHAPE_STMTS, "expr_stmt", NULL, NULL, 0);
  OK(t, p && run(ix, p, 1, &r), "ellipsis pattern runs");
  INT_EQ(t, r.n, 1, "the two barriers with a statement between");
  if (r.n == 1) {
    INT_EQ(t, u->tokens[r.m[0].tok_begin].line, 4, "from line 4");
    INT_EQ(t, u->tokens[r.m[0].tok_end - 1].line, 6, "to line 6");
  }
  km_results_free(&r);
  km_pattern_free(p);

  /* for (...) $S  with the body bound as a statement */
  static const km_ptoken loop[] = { LIT("for"), LIT("("), SKIP(KM_CTX_HEADER), LIT(")"), META(0, KM_SORT_STMT) };
  static const char *const n1[] = { "S" };
  p = compile(loop, 5, KM_SHAPE_STMTS, "for", NULL, n1, 1);
  OK(t, p && run(ix, p, 1, &r), "loop pattern runs");
  INT_EQ(t, r.n, 1, "one loop");
  if (r.n == 1) {
    binding_text(u, &r.b[r.m[0].bind], buf, sizeof buf);
    STR_EQ(t, buf, "a[i] += b[j] * 2.0f;", "$S is the body statement");
  }
  km_results_free(&r);
  km_pattern_free(p);

  /* atomicAdd($...A): the prefilter skips it without a single attempt */
  static const km_ptoken at[] = { LIT("atomicAdd"), LIT("("), SEQ(0, KM_CTX_ARGS), LIT(")") };
  static const char *const na[] = { "A" };
  p = compile(at, 4, KM_SHAPE_EXPR, "call", NULL, na, 1);
  OK(t, p && run(ix, p, 1, &r), "prefiltered pattern runs");
  INT_EQ(t, r.n, 0, "no atomicAdd");
  INT_EQ(t, r.prefiltered, 1, "skipped by the prefilter");
  INT_EQ(t, r.candidates, 0, "no candidate tried");
  km_results_free(&r);
  OK(t, run(ix, p, 0, &r), "without the prefilter");
  INT_EQ(t, r.prefiltered, 0, "nothing prefiltered");
  OK(t, r.candidates > 0, "candidates tried");
  INT_EQ(t, r.n, 0, "still no match");
  km_results_free(&r);
  km_pattern_free(p);
}

static void test_cap(test_batch *t) {
  /* g(..., ..., ..., ..., 1) over 60 zeros explodes; the cap stops it. */
  char src[512] = "void f() { g(";
  for (int i = 0; i < 60; i++) strcat(src, i ? ", 0" : "0");
  strcat(src, "); }");
  kl_unit *u = kl_source_parse(src, strlen(src), "cap");
  km_index *ix = km_index_new(u);
  static const km_ptoken pt[] = { LIT("g"), LIT("("), SKIP(KM_CTX_ARGS), LIT(","), SKIP(KM_CTX_ARGS),
                                  LIT(","), SKIP(KM_CTX_ARGS), LIT(","), SKIP(KM_CTX_ARGS), LIT(","),
                                  LIT("1"), LIT(")") };
  km_pattern *p = compile(pt, 12, KM_SHAPE_EXPR, "call", NULL, NULL, 0);
  km_options o = { 1, 3000, 0, 0 };
  km_results r = {0};
  OK(t, p && km_match_set(ix, &p, 1, &o, &r), "capped pattern runs");
  INT_EQ(t, r.n, 0, "no match");
  INT_EQ(t, r.capped, 1, "the attempt hit the cap");
  OK(t, r.steps <= 3001, "and stopped there");
  km_results_free(&r);
  km_pattern_free(p);
  km_index_free(ix);
  kl_unit_free(u);
}

static void test_deep(test_batch *t) {
  /* if ($c) { ... __syncthreads(); ... }: `...` looks into nested statements. */
  static const km_ptoken pt[] = { LIT("if"), LIT("("), META(0, KM_SORT_EXPR), LIT(")"), LIT("{"),
                                  SKIP(KM_CTX_STMTS), LIT("__syncthreads"), LIT("("), LIT(")"), LIT(";"),
                                  SKIP(KM_CTX_STMTS), LIT("}") };
  static const char *const names[] = { "c" };
  km_pattern *p = compile(pt, 12, KM_SHAPE_STMTS, "if", NULL, names, 1);
  const char *src =
      "void f(int n) {\n"
      "  if (n) { x(); for (;;) { y(); __syncthreads(); } z(); }\n"
      "  if (n > 1) { w(); }\n"
      "  __syncthreads();\n"
      "}\n";
  kl_unit *u = kl_source_parse(src, strlen(src), "deep.cu");
  km_index *ix = km_index_new(u);
  km_results r;
  OK(t, p && run(ix, p, 1, &r), "deep pattern runs");
  INT_EQ(t, r.n, 1, "one conditional holds a barrier, nested in a loop");
  if (r.n == 1) {
    INT_EQ(t, u->nodes[r.m[0].node].kind, KL_N_IF, "the match is the whole if");
    INT_EQ(t, r.m[0].tok_end, u->nodes[r.m[0].node].tok_end, "it ends with the if");
  }
  km_results_free(&r);
  km_pattern_free(p);
  km_index_free(ix);
  kl_unit_free(u);
}

static void test_rewrite(test_batch *t, kl_unit *u, km_index *ix) {
  /* __syncthreads();  ->  __syncwarp(); */
  static const km_ptoken bar[] = { LIT("__syncthreads"), LIT("("), LIT(")"), LIT(";") };
  km_pattern *p = compile(bar, 4, KM_SHAPE_STMTS, "expr_stmt", NULL, NULL, 0);
  km_results r;
  OK(t, p && run(ix, p, 1, &r), "barrier pattern runs");
  INT_EQ(t, r.n, 2, "two barriers");
  km_template tpl = { "__syncwarp();", 13, 0, NULL, NULL, NULL };
  km_replacement reps[2];
  char err[128];
  int ok = 1;
  for (uint32_t i = 0; i < r.n && i < 2; i++) ok &= km_instantiate(u, p, &r, &r.m[i], &tpl, &reps[i], err, sizeof err);
  OK(t, ok, "instantiated");
  size_t len;
  km_edit_script s = {0};
  char *out = km_apply(u->src, u->len, reps, 2, &len, &s, err, sizeof err);
  OK(t, out && strstr(out, "  __syncwarp();\n  a[i] = a[i] + b[i];\n  __syncwarp();\n}") != NULL,
     "both rewritten, bottom-up");
  INT_EQ(t, s.n, 2, "one update each");
  if (s.n == 2) {
    INT_EQ(t, s.e[0].kind, KM_EDIT_UPDATE, "an update");
    OK(t, out && memcmp(out + s.e[1].new_begin, "__syncwarp", 10) == 0, "new range of the second edit");
  }
  free(out);
  km_script_free(&s);
  /* The same replacement twice overlaps: an error, never silent. */
  km_replacement dup[2] = { reps[0], reps[0] };
  out = km_apply(u->src, u->len, dup, 2, &len, NULL, err, sizeof err);
  OK(t, out == NULL && strstr(err, "overlapping") != NULL, "overlap reported");
  for (uint32_t i = 0; i < 2; i++) km_replacement_free(&reps[i]);
  km_results_free(&r);
  km_pattern_free(p);
}

static void test_diff(test_batch *t) {
  const char *a = "void f() { x = 1; y = 2; z = g(3); }";
  const char *b = "void f() { z = g(3); x = 1; y = 5; }";
  kl_unit *ua = kl_source_parse(a, strlen(a), "a"), *ub = kl_source_parse(b, strlen(b), "b");
  km_diff d;
  OK(t, km_diff_units(ua, ub, &d), "diff runs");
  int moves = 0, updates = 0, other = 0;
  for (uint32_t i = 0; i < d.n; i++) {
    if (d.ops[i].kind == KM_EDIT_MOVE) moves++;
    else if (d.ops[i].kind == KM_EDIT_UPDATE) updates++;
    else other++;
  }
  INT_EQ(t, moves, 1, "one move");
  INT_EQ(t, updates, 1, "one update (2 -> 5)");
  INT_EQ(t, other, 0, "nothing else");
  km_diff_free(&d);
  OK(t, km_diff_units(ua, ua, &d), "self diff runs");
  INT_EQ(t, d.n, 0, "a unit equals itself");
  km_diff_free(&d);
  kl_unit_free(ua);
  kl_unit_free(ub);
}

static uint32_t first_of_kind(const kl_unit *u, kl_node_kind k) {
  uint32_t n;
  const uint32_t *ids = kl_unit_nodes_of_kind(u, k, &n);
  return n ? ids[0] : KL_NONE;
}

static void test_generalize(test_batch *t) {
  const char *a = "void f() { a[i] = b[i] + 1; }";
  const char *b = "void f() { c[j] = b[j] + 2; }";
  kl_unit *ua = kl_source_parse(a, strlen(a), "a"), *ub = kl_source_parse(b, strlen(b), "b");
  km_instance inst[2] = { { ua, first_of_kind(ua, KL_N_EXPR_STMT), NULL, 0 },
                          { ub, first_of_kind(ub, KL_N_EXPR_STMT), NULL, 0 } };
  km_generalization g;
  OK(t, km_generalize(inst, 2, &g), "generalize runs");
  STR_EQ(t, g.text, "$I1:ident[$I2:ident] = b[$I2:ident] + $N1:int;", "holes linked");
  INT_EQ(t, g.nholes, 3, "three distinct differences");
  km_generalization_free(&g);
  /* Edits: the after side reuses the before side's names. */
  const char *a2 = "void f() { a[i] = b[i] + 1; x(); }";
  const char *b2 = "void f() { c[j] = b[j] + 2; x(); }";
  kl_unit *ua2 = kl_source_parse(a2, strlen(a2), "a2"), *ub2 = kl_source_parse(b2, strlen(b2), "b2");
  km_instance after[2] = { { ua2, first_of_kind(ua2, KL_N_COMPOUND), NULL, 0 },
                           { ub2, first_of_kind(ub2, KL_N_COMPOUND), NULL, 0 } };
  km_instance before[2] = { inst[0], inst[1] };
  OK(t, km_generalize_edits(before, after, 2, &g), "generalize_edits runs");
  STR_EQ(t, g.text, "$I1:ident[$I2:ident] = b[$I2:ident] + $N1:int;", "the pattern");
  STR_EQ(t, g.after_text, "{ $I1:ident[$I2:ident] = b[$I2:ident] + $N1:int; x(); }", "the template, same names");
  INT_EQ(t, g.nholes, 3, "no hole only the after side has");
  km_generalization_free(&g);
  kl_unit_free(ua2);
  kl_unit_free(ub2);
  kl_unit_free(ua);
  kl_unit_free(ub);
}

int main(void) {
  test_batch t = {0};
  kl_unit *u = kl_source_parse(kernel, strlen(kernel), "kernel.cu");
  km_index *ix = u ? km_index_new(u) : NULL;
  OK(&t, u && ix, "parse and index");
  if (u && ix) {
    test_compile(&t);
    test_match(&t, u, ix);
    test_cap(&t);
    test_deep(&t);
    test_rewrite(&t, u, ix);
    test_diff(&t);
    test_generalize(&t);
  }
  km_index_free(ix);
  kl_unit_free(u);
  return kl_test_finish(&t);
}
