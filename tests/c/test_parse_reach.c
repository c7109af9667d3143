/* kl.source: what the parser reaches in real kernel code. Golden outlines
 * (tests/source/golden/NAME.cu against NAME.tree), the #pragma-before-body
 * defect over every lineage kernel, and the constructs that used to go
 * opaque, with the ambiguous neighbours that must stay as they were.
 *
 *   test_parse_reach                  run the tests
 *   test_parse_reach --outline FILE   print FILE's outline (to write a .tree;
 *                                     read it before committing it)
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "source/source.h"

/* ---- outline ------------------------------------------------------------------- */

typedef struct {
  char *s;
  size_t n, cap;
  int oom;
} sbuf;

static void put(sbuf *b, const char *s, size_t n) {
  if (b->oom) return;
  if (b->n + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->n + n + 1) cap *= 2;
    char *q = realloc(b->s, cap);
    if (!q) {
      b->oom = 1;
      return;
    }
    b->s = q;
    b->cap = cap;
  }
  memcpy(b->s + b->n, s, n);
  b->n += n;
  b->s[b->n] = '\0';
}

static void puts_(sbuf *b, const char *s) { put(b, s, strlen(s)); }

/* One line per node, indented by depth: [field:]kind, and for a node
 * without children its text (whitespace runs shown as one space). */
static void outline(const kl_unit *u, sbuf *b) {
  for (uint32_t n = 0; n < u->nnodes; n++) {
    const kl_node *nd = &u->nodes[n];
    for (uint32_t d = 0; d < nd->depth; d++) puts_(b, "  ");
    if (nd->parent != KL_NONE) {
      const kl_node *pn = &u->nodes[nd->parent];
      for (uint32_t i = 0; i < pn->child_count; i++) {
        if (kl_child(u, nd->parent, i) != n) continue;
        kl_field f = kl_child_field(u, nd->parent, i);
        if (f != KL_F_NONE) {
          puts_(b, kl_field_name(f));
          puts_(b, ":");
        }
      }
    }
    puts_(b, kl_kind_name((kl_node_kind)nd->kind));
    if (nd->kind == KL_N_DELETE && nd->op) {
      puts_(b, " []");
    } else if (nd->op && nd->op_tok != KL_NONE) {
      const kl_token *k = &u->tokens[nd->op_tok];
      puts_(b, " ");
      put(b, u->src + k->off, k->len);
    }
    if (nd->child_count == 0 && n != 0) {
      size_t len;
      const char *s = kl_node_text(u, n, &len);
      puts_(b, " `");
      int space = 0;
      for (size_t i = 0; i < len; i++) {
        char c = s[i];
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
          space = 1;
          continue;
        }
        if (space) put(b, " ", 1);
        space = 0;
        put(b, &c, 1);
      }
      puts_(b, "`");
    }
    puts_(b, "\n");
  }
}

static char *read_file(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 4096, n = 0;
  char *data = malloc(cap);
  while (data) {
    if (n == cap) {
      char *q = realloc(data, cap * 2);
      if (!q) {
        free(data);
        data = NULL;
        break;
      }
      data = q;
      cap *= 2;
    }
    size_t got = fread(data + n, 1, cap - n, f);
    if (got == 0) break;
    n += got;
  }
  fclose(f);
  *len = n;
  return data;
}

static kl_unit *parse(const char *s) { return kl_source_parse(s, strlen(s), "t.cu"); }

static int round_trips(const kl_unit *u, const char *text, size_t len) {
  size_t n;
  char *out = kl_unit_print(u, &n);
  int ok = out && n == len && memcmp(out, text, len) == 0;
  free(out);
  return ok;
}

static void repo_root(char *root, size_t cap) {
  const char *env = getenv("KL_SOURCE_ROOT");
  snprintf(root, cap, "%s", env ? env : __FILE__);
  if (!env) {
    for (int up = 0; up < 3; up++) {
      char *slash = strrchr(root, '/');
      if (slash) *slash = '\0';
    }
  }
}

static int has_suffix(const char *s, const char *suf) {
  size_t a = strlen(s), b = strlen(suf);
  return a >= b && strcmp(s + a - b, suf) == 0;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The .cu files of dir (not recursive), sorted; *count gets their number. */
static char **list_cu(const char *dir, int *count) {
  *count = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char **names = NULL;
  int cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.' || !has_suffix(e->d_name, ".cu")) continue;
    if (*count == cap) {
      cap = cap ? cap * 2 : 32;
      char **q = realloc(names, (size_t)cap * sizeof *q);
      if (!q) break;
      names = q;
    }
    size_t l = strlen(dir) + strlen(e->d_name) + 2;
    names[*count] = malloc(l);
    if (!names[*count]) break;
    snprintf(names[*count], l, "%s/%s", dir, e->d_name);
    (*count)++;
  }
  closedir(d);
  if (names) qsort(names, (size_t)*count, sizeof *names, cmp_str);
  return names;
}

static void free_list(char **names, int count) {
  for (int i = 0; i < count; i++) free(names[i]);
  free(names);
}

/* ---- golden outlines ------------------------------------------------------------- */

static void test_golden(test_batch *t) {
  char root[4096], dir[4200];
  repo_root(root, sizeof root);
  snprintf(dir, sizeof dir, "%s/tests/source/golden", root);
  int count;
  char **files = list_cu(dir, &count);
  OK(t, count >= 8, "golden inputs found under tests/source/golden");
  for (int i = 0; i < count; i++) {
    size_t len, tlen;
    char *text = read_file(files[i], &len);
    char tree_path[4300];
    snprintf(tree_path, sizeof tree_path, "%.*s.tree", (int)(strlen(files[i]) - 3), files[i]);
    char *want = read_file(tree_path, &tlen);
    OK(t, text && want, files[i]);
    if (!text || !want) {
      free(text);
      free(want);
      continue;
    }
    kl_unit *u = kl_source_parse(text, len, files[i]);
    sbuf b = {0};
    outline(u, &b);
    int same = !b.oom && b.n == tlen && memcmp(b.s, want, tlen) == 0;
    kl_test_result(t, same, __FILE__, __LINE__, files[i]);
    if (!same) {
      /* the first differing line helps more than the whole outline */
      size_t k = 0, line = 1;
      while (k < b.n && k < tlen && b.s[k] == want[k]) line += b.s[k++] == '\n';
      fprintf(stderr, "  outline differs from %s at line %zu\n", tree_path, line);
    }
    kl_test_result(t, round_trips(u, text, len), __FILE__, __LINE__, "golden input round-trips");
    free(b.s);
    kl_unit_free(u);
    free(text);
    free(want);
  }
  free_list(files, count);
}

/* ---- the #pragma defect over the lineage kernels -------------------------------- */

static int is_loop(unsigned k) {
  return k == KL_N_FOR || k == KL_N_WHILE || k == KL_N_DO || k == KL_N_RANGE_FOR;
}

static int is_unroll(const kl_unit *u, uint32_t n) {
  size_t len;
  const char *s = kl_node_text(u, n, &len);
  for (size_t i = 0; i + 6 <= len; i++)
    if (memcmp(s + i, "unroll", 6) == 0) return i == 0 || s[i - 1] == ' ' || s[i - 1] == '\t';
  return 0;
}

static void test_workload_pragmas(test_batch *t) {
  char root[4096], wdir[4200];
  repo_root(root, sizeof root);
  snprintf(wdir, sizeof wdir, "%s/gpu/workloads", root);
  DIR *d = opendir(wdir);
  OK(t, d != NULL, "gpu/workloads is there");
  if (!d) return;
  int files = 0, bad_body = 0, bad_target = 0, unrolls = 0, with_pragma = 0, pragma_files = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char sub[4600];
    snprintf(sub, sizeof sub, "%s/%s", wdir, e->d_name);
    int count;
    char **list = list_cu(sub, &count);
    for (int i = 0; i < count; i++) {
      size_t len;
      char *text = read_file(list[i], &len);
      if (!text) continue;
      kl_unit *u = kl_source_parse(text, len, list[i]);
      files++;
      int here = 0;
      for (uint32_t n = 0; n < u->nnodes; n++) {
        const kl_node *nd = &u->nodes[n];
        if (is_loop(nd->kind) || nd->kind == KL_N_IF) {
          for (uint32_t c = 0; c < nd->child_count; c++) {
            kl_field f = kl_child_field(u, n, c);
            unsigned ck = u->nodes[kl_child(u, n, c)].kind;
            if ((f == KL_F_BODY || f == KL_F_THEN || f == KL_F_ELSE) &&
                (ck == KL_N_PRAGMA || ck == KL_N_PREPROC)) {
              bad_body++;
              fprintf(stderr, "  %s:%u: a body field is a preprocessor line\n", list[i],
                      u->tokens[nd->tok_begin].line);
            }
            /* counted: a loop whose BODY child comes right after a PRAGMA */
            if (is_loop(nd->kind) && f == KL_F_BODY && c > 0 &&
                u->nodes[kl_child(u, n, c - 1)].kind == KL_N_PRAGMA) {
              with_pragma++;
              here = 1;
            }
          }
        }
        if (nd->kind == KL_N_PRAGMA && is_unroll(u, n)) {
          unrolls++;
          uint32_t target = kl_pragma_target(u, n);
          if (target == KL_NONE || !is_loop(u->nodes[target].kind)) {
            bad_target++;
            fprintf(stderr, "  %s:%u: #pragma unroll without a loop target\n", list[i],
                    u->tokens[nd->tok_begin].line);
          }
        }
      }
      pragma_files += here;
      OK(t, round_trips(u, text, len), list[i]);
      kl_unit_free(u);
      free(text);
    }
    free_list(list, count);
  }
  closedir(d);
  printf("workloads: %d files, %d #pragma unroll, %d loops with a pragma before the body in "
         "%d files\n",
         files, unrolls, with_pragma, pragma_files);
  OK(t, files >= 40, "the lineage kernels were found");
  OK(t, unrolls > 21, "the lineages have #pragma unroll");
  INT_EQ(t, bad_body, 0, "no loop/if body field is a preprocessor line");
  INT_EQ(t, bad_target, 0, "every #pragma unroll targets a loop");
  INT_EQ(t, with_pragma, 21, "the 21 unbraced loop bodies that start with #pragma");
  INT_EQ(t, pragma_files, 12, "... in 12 lineage files");
}

/* ---- focused checks ----------------------------------------------------------------- */

static uint32_t first_of(const kl_unit *u, kl_node_kind k) {
  uint32_t n;
  const uint32_t *ids = kl_unit_nodes_of_kind(u, k, &n);
  return n ? ids[0] : KL_NONE;
}

static uint32_t count_of(const kl_unit *u, kl_node_kind k) {
  uint32_t n;
  kl_unit_nodes_of_kind(u, k, &n);
  return n;
}

static int text_is(const kl_unit *u, uint32_t n, const char *s) {
  size_t len;
  if (n == KL_NONE) return 0;
  const char *x = kl_node_text(u, n, &len);
  return len == strlen(s) && memcmp(x, s, len) == 0;
}

static void test_pragma_shape(test_batch *t) {
  kl_unit *u = parse("void f() {\n  for (int k = 0; k < 8; ++k)\n#pragma unroll\n"
                     "    for (int j = 0; j < 4; ++j) s += a[j];\n  x = 1;\n}\n");
  uint32_t outer = first_of(u, KL_N_FOR);
  uint32_t body = kl_node_field(u, outer, KL_F_BODY);
  OK(t, body != KL_NONE && u->nodes[body].kind == KL_N_FOR, "the body is the inner loop");
  uint32_t pragma = first_of(u, KL_N_PRAGMA);
  INT_EQ(t, u->nodes[pragma].parent, outer, "the pragma is a child of the outer loop");
  INT_EQ(t, kl_pragma_target(u, pragma), body, "the pragma targets the inner loop");
  INT_EQ(t, u->nodes[outer].tok_end, u->nodes[body].tok_end, "the outer loop ends with its body");
  INT_EQ(t, count_of(u, KL_N_EXPR_STMT), 2, "x = 1 stays a statement of the block");
  kl_unit_free(u);

  /* two pragmas before an else branch */
  u = parse("void f() { if (c) a(); else\n#pragma unroll\n#pragma nounroll\n while (d) b(); }");
  uint32_t iff = first_of(u, KL_N_IF), el = kl_node_field(u, iff, KL_F_ELSE);
  OK(t, el != KL_NONE && u->nodes[el].kind == KL_N_WHILE, "else is the while loop");
  INT_EQ(t, count_of(u, KL_N_PRAGMA), 2, "both pragmas are nodes");
  uint32_t p0 = first_of(u, KL_N_PRAGMA);
  INT_EQ(t, kl_pragma_target(u, p0), el, "the first pragma targets the else branch");
  INT_EQ(t, kl_pragma_target(u, p0 + 1), el, "so does the second");
  kl_unit_free(u);

  /* any other directive before a body: the owner is not given a body */
  u = parse("void f() { for (;;)\n#if A\n a();\n#else\n b();\n#endif\n c(); }");
  OK(t, count_of(u, KL_N_FOR) == 0 && count_of(u, KL_N_OPAQUE) == 1,
     "a for whose body follows #if stays opaque");
  kl_unit_free(u);

  /* pragmas with nothing after them */
  u = parse("void f() { for (;;)\n#pragma unroll\n}");
  INT_EQ(t, count_of(u, KL_N_FOR), 0, "a loop without a body is not a loop");
  INT_EQ(t, count_of(u, KL_N_FUNCTION), 1, "the function stays structured");
  kl_unit_free(u);
  u = parse("for (;;)\n#pragma unroll\n");
  INT_EQ(t, count_of(u, KL_N_FOR), 0, "pragma at the end of the file: no loop");
  kl_unit_free(u);
}

static void test_constructs(test_batch *t) {
  /* #define of a number is a value, of anything else unknown */
  kl_unit *u = parse("#define N 128\n#define M (-4)\n#define L(x) 4\n"
                     "void f(float x) { a = (N) * 2 + (M) - 1; b = (L) - x; }");
  INT_EQ(t, count_of(u, KL_N_CAST), 0, "(N) and (M) are not casts");
  INT_EQ(t, count_of(u, KL_N_PAREN), 2, "(N) and (M) are parenthesized values");
  INT_EQ(t, count_of(u, KL_N_OPAQUE), 1, "(L) - x: a function-like macro tells nothing");
  kl_unit_free(u);
  u = parse("#define TILE 16\n#define BK TILE\n#define BM (BLOCK * 2)\n#define BN \\\n 4\n"
            "#define BO A - 1 // c\n#define PT float *\n#define PC B // (x) - y\n"
            "void f(float x) { a = (BK) - x + TILE; b = (BM) * x; c = (BN) - x; d = (BO) - x; }\n"
            "void g(float x) { e = (PT) - x; }\nvoid h(float x) { e = (PC) - x; }");
  INT_EQ(t, count_of(u, KL_N_PAREN), 4, "#define of a number, an alias of one, a parenthesized "
         "or operator body, a continued line: values");
  INT_EQ(t, count_of(u, KL_N_OPAQUE), 2, "#define float * / of a lone name: unknown, refused");
  kl_unit_free(u);
  u = parse("#define real unsigned int\n#define fp my_t\n"
            "void f(float x) { b = (real) - x; }\nvoid g(float x) { c = (fp) - x; }");
  INT_EQ(t, count_of(u, KL_N_CAST), 1, "(real) - x: real is #defined as a type");
  INT_EQ(t, count_of(u, KL_N_OPAQUE), 1, "(fp) - x: fp is #defined as a name: refused");
  kl_unit_free(u);

  /* a word declared both ways is ambiguous again */
  u = parse("typedef int q; void f(int q2) { int q; a = (q) - 1; }");
  INT_EQ(t, count_of(u, KL_N_CAST), 0, "(q) - 1 with q a type and a variable: no cast");
  INT_EQ(t, count_of(u, KL_N_OPAQUE), 1, "... and no parenthesized value either");
  kl_unit_free(u);

  /* __grid_constant__ is part of the type, not of the base type */
  u = parse("__global__ void k(__grid_constant__ const P p, int *r) {}");
  uint32_t param = first_of(u, KL_N_PARAM);
  kl_param_info pi;
  OK(t, kl_param_info_get(u, param, &pi), "param info");
  OK(t, pi.is_const && pi.base_tok_begin != KL_NONE && pi.base_tok_end == pi.base_tok_begin + 1,
     "base type of a __grid_constant__ const P is P");
  OK(t, text_is(u, pi.type, "__grid_constant__ const P"), "the TYPE keeps the qualifier");
  kl_unit_free(u);

  /* preprocessor lines in a parameter list */
  u = parse("__global__ void k(int a\n#if X\n, float *b\n#else\n, double *b\n#endif\n) {}");
  uint32_t pl = first_of(u, KL_N_PARAM_LIST);
  INT_EQ(t, u->nodes[pl].child_count, 6, "3 params and 3 directives");
  INT_EQ(t, count_of(u, KL_N_PARAM), 3, "the parameters of both branches");
  OK(t, !kl_param_info_get(u, kl_child(u, pl, 1), &pi), "a PREPROC child is no parameter");
  kl_unit_free(u);
  u = parse("void k(int a float b) {}");
  INT_EQ(t, count_of(u, KL_N_FUNCTION), 0, "without a directive, a missing comma is an error");
  kl_unit_free(u);

  /* member template calls */
  u = parse("void f() { o.g<true, 3>(x); }");
  uint32_t call = first_of(u, KL_N_CALL);
  OK(t, call != KL_NONE && u->nodes[kl_node_field(u, call, KL_F_CALLEE)].kind == KL_N_MEMBER &&
            kl_node_field(u, call, KL_F_TEMPLATE_ARGS) != KL_NONE,
     "o.g<true, 3>(x): a call of the member with template arguments");
  kl_unit_free(u);
  u = parse("void f() { c = a.b < d > e; }");
  INT_EQ(t, count_of(u, KL_N_TEMPLATE_ARGS), 0, "a.b < d > e stays comparisons");
  kl_unit_free(u);

  /* hostile input: truncated constructs keep the round trip and stay bounded */
  static const char *const hostile[] = {
      "void f() { x = new", "void f() { x = new int[", "void f() { delete[", "void f() { delete",
      "void f() { throw", "void f() { a = (fp)", "void f() { a = (x)", "void f() { T x(",
      "void f() { T x(1", "void k(int a\n#if", "void k(\n#if X\n", "void f() { o.g<1>",
      "void f() { o.template", "void f() { for(;;)\n#pragma unroll\n#pragma unroll\n",
      "void f() { if (x)\n#pragma a\n else\n#pragma b\n", "new new new new int",
      "void f() { p = new (a) ; }", "void f() { p = new (a) (int); }", "::delete ::new",
      "void f() { x = (a)(b)(c)(d)(e); }", "void f() { do\n#pragma unroll\n while (0); }",
  };
  for (size_t i = 0; i < sizeof hostile / sizeof hostile[0]; i++) {
    u = parse(hostile[i]);
    OK(t, u && round_trips(u, hostile[i], strlen(hostile[i])), hostile[i]);
    kl_unit_free(u);
  }
  /* deep new/delete/throw nesting hits the depth cap, not the C stack */
  size_t n = 300000;
  char *deep = malloc(n * 7 + 16);
  if (deep) {
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
      memcpy(deep + k, i % 3 == 0 ? "delete " : i % 3 == 1 ? "throw  " : "!(fp)x ", 7);
      k += 7;
    }
    memcpy(deep + k, "p;", 3);
    u = kl_source_parse(deep, k + 2, "deep.cu");
    OK(t, u && round_trips(u, deep, k + 2), "300k nested delete/throw round-trips");
    uint32_t maxd = 0;
    for (uint32_t q = 0; u && q < u->nnodes; q++)
      if (u->nodes[q].depth > maxd) maxd = u->nodes[q].depth;
    OK(t, u && maxd < 4 * KL_SOURCE_MAX_DEPTH, "tree depth stays bounded");
    kl_unit_free(u);
    free(deep);
  }
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--outline") == 0) {
    size_t len;
    char *text = read_file(argv[2], &len);
    if (!text) {
      fprintf(stderr, "cannot read %s\n", argv[2]);
      return 2;
    }
    kl_unit *u = kl_source_parse(text, len, argv[2]);
    sbuf b = {0};
    outline(u, &b);
    if (b.s) fputs(b.s, stdout);
    free(b.s);
    kl_unit_free(u);
    free(text);
    return b.oom ? 1 : 0;
  }
  test_batch t = {0, 0};
  test_golden(&t);
  test_workload_pragmas(&t);
  test_pragma_shape(&t);
  test_constructs(&t);
  return kl_test_finish(&t);
}
