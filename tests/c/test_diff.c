/* engine/match/diff.c: the GumTree-like diff keeps its two maps inverse
 * of each other, pairs nothing across functions of different names, and
 * places every insert, delete and move on the other side. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "match/match.h"

static kl_unit *parse(const char *s) { return kl_source_parse(s, strlen(s), "t.cu"); }

/* The function a node is in, by name ("" outside functions). */
static void fn_name(const kl_unit *u, uint32_t n, char *out, size_t cap) {
  out[0] = '\0';
  for (; n != KL_NONE && n != 0; n = u->nodes[n].parent) {
    kl_function_info fi;
    if (u->nodes[n].kind == KL_N_FUNCTION && kl_function_info_get(u, n, &fi) && fi.name_tok != KL_NONE) {
      const kl_token *t = &u->tokens[fi.name_tok];
      size_t len = t->len < cap - 1 ? t->len : cap - 1;
      memcpy(out, u->src + t->off, len);
      out[len] = '\0';
      return;
    }
  }
}

static void test_scope_and_maps(test_batch *t) {
  /* The kernel's loop becomes the finisher's loop: the old diff paired the
   * new kernel loop with the old finisher's, across functions. */
  const char *a =
      "void k(float *s, int t) {\n  for (int i = 1; i < 8; i *= 2) { s[2 * i * t] += s[2 * i * t + i]; }\n}\n"
      "void fin(float *s, int t) {\n  for (int i = 4; i > 0; i >>= 1) { if (t < i) s[t] += s[t + i]; }\n}\n";
  const char *b =
      "void k(float *s, int t) {\n  for (int i = 4; i > 0; i >>= 1) { if (t < i) s[t] += s[t + i]; }\n}\n"
      "void fin(float *s, int t) {\n  for (int i = 4; i > 0; i >>= 1) { if (t < i) s[t] += s[t + i]; }\n}\n";
  kl_unit *ua = parse(a), *ub = parse(b);
  km_diff d;
  OK(t, ua && ub && km_diff_units(ua, ub, &d), "diff runs");
  if (!ua || !ub) return;
  int inverse = 1, across = 0, moves = 0, unplaced = 0;
  for (uint32_t x = 0; x < ua->nnodes; x++)
    if (d.a_to_b[x] != KL_NONE && d.b_to_a[d.a_to_b[x]] != x) inverse = 0;
  for (uint32_t y = 0; y < ub->nnodes; y++)
    if (d.b_to_a[y] != KL_NONE && d.a_to_b[d.b_to_a[y]] != y) inverse = 0;
  for (uint32_t x = 1; x < ua->nnodes; x++) {
    if (d.a_to_b[x] == KL_NONE) continue;
    char fa[32], fb[32];
    fn_name(ua, x, fa, sizeof fa);
    fn_name(ub, d.a_to_b[x], fb, sizeof fb);
    if (strcmp(fa, fb) != 0) across++;
  }
  for (uint32_t i = 0; i < d.n; i++) {
    const km_diff_op *op = &d.ops[i];
    if (op->kind == KM_EDIT_MOVE) moves++;
    if ((op->kind == KM_EDIT_INSERT || op->kind == KM_EDIT_MOVE) && (op->a_at == KL_NONE || op->a_at > ua->len))
      unplaced++;
    if ((op->kind == KM_EDIT_DELETE || op->kind == KM_EDIT_MOVE) && (op->b_at == KL_NONE || op->b_at > ub->len))
      unplaced++;
  }
  OK(t, inverse, "a_to_b and b_to_a are inverse");
  INT_EQ(t, across, 0, "no pair across functions");
  INT_EQ(t, moves, 0, "nothing moved: the kernel loop was rewritten in place");
  INT_EQ(t, unplaced, 0, "every insert, delete and move placed on the other side");
  OK(t, d.n > 0, "the kernel's loop changed");
  km_diff_free(&d);
  kl_unit_free(ua);
  kl_unit_free(ub);
}

static void test_positions(test_batch *t) {
  const char *a = "void f() { x = 1; y = 2; z = 3; }";
  const char *b = "void f() { x = 1; z = 3; if (c) w(); }";
  kl_unit *ua = parse(a), *ub = parse(b);
  km_diff d;
  OK(t, ua && ub && km_diff_units(ua, ub, &d), "diff runs");
  if (!ua || !ub) return;
  int del = 0, ins = 0;
  for (uint32_t i = 0; i < d.n; i++) {
    const km_diff_op *op = &d.ops[i];
    if (op->kind == KM_EDIT_DELETE && ua->nodes[op->a_node].kind == KL_N_EXPR_STMT) {
      del++;
      /* y = 2; was after x = 1; in b */
      INT_EQ(t, op->b_at, (int)(strstr(b, "x = 1;") - b) + 6, "the delete's place in b");
      OK(t, op->a_at == KL_NONE, "a delete has no a_at");
    }
    if (op->kind == KM_EDIT_INSERT && ub->nodes[op->b_node].kind == KL_N_IF) {
      ins++;
      INT_EQ(t, op->a_at, (int)(strstr(a, "z = 3;") - a) + 6, "the insert's place in a");
    }
  }
  INT_EQ(t, del, 1, "one statement deleted");
  INT_EQ(t, ins, 1, "one statement inserted");
  km_diff_free(&d);
  /* Into an empty block: after its brace. */
  kl_unit *uc = parse("void f() { }");
  OK(t, uc && km_diff_units(uc, ub, &d), "diff into an empty body");
  if (uc) {
    int placed = 1;
    for (uint32_t i = 0; i < d.n; i++)
      if (d.ops[i].kind == KM_EDIT_INSERT && d.ops[i].a_at != 10) placed = 0;
    OK(t, placed && d.n > 0, "inserts go after the body's brace");
    km_diff_free(&d);
    kl_unit_free(uc);
  }
  kl_unit_free(ua);
  kl_unit_free(ub);
}

int main(void) {
  test_batch t = {0};
  test_scope_and_maps(&t);
  test_positions(&t);
  return kl_test_finish(&t);
}
