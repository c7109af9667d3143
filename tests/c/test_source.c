/* kl.source C API: lexer, round trip, token trees, precedence, opaque
 * fallback, depth cap, constants, affine analysis and access patterns. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "harness.h"
#include "source/source.h"

static kl_unit *parse(const char *s) { return kl_source_parse(s, strlen(s), "test.cu"); }

static int round_trips(const char *s, size_t n) {
  kl_unit *u = kl_source_parse(s, n, "rt");
  if (!u) return 0;
  size_t len;
  char *out = kl_unit_print(u, &len);
  int ok = out && len == n && memcmp(out, s, n) == 0;
  /* every byte is in exactly one token's trivia or text, in order */
  uint32_t at = 0;
  for (uint32_t i = 0; ok && i < u->ntokens; i++) {
    const kl_token *t = &u->tokens[i];
    ok = t->trivia_off == at && t->trivia_off + t->trivia_len == t->off;
    at = t->off + t->len;
  }
  ok = ok && at == n && u->tokens[u->ntokens - 1].kind == KL_TOK_EOF;
  free(out);
  kl_unit_free(u);
  return ok;
}

/* An s-expression of a node: (kind children...) with leaves as their text. */
static void sexp(const kl_unit *u, uint32_t n, char *buf, size_t cap) {
  const kl_node *nd = &u->nodes[n];
  size_t len = strlen(buf);
  if (!nd->child_count) {
    size_t tl;
    const char *t = kl_node_text(u, n, &tl);
    snprintf(buf + len, cap - len, "%.*s", (int)tl, t);
    return;
  }
  if (nd->op_tok != KL_NONE && nd->kind != KL_N_FOR && nd->kind != KL_N_IF)
    snprintf(buf + len, cap - len, "(%.*s", (int)u->tokens[nd->op_tok].len,
             u->src + u->tokens[nd->op_tok].off);
  else
    snprintf(buf + len, cap - len, "(%s", kl_kind_name((kl_node_kind)nd->kind));
  for (uint32_t i = 0; i < nd->child_count; i++) {
    len = strlen(buf);
    snprintf(buf + len, cap - len, " ");
    sexp(u, kl_child(u, n, i), buf, cap);
  }
  len = strlen(buf);
  snprintf(buf + len, cap - len, ")");
}

/* The first node of a kind, or KL_NONE. */
static uint32_t first_of(const kl_unit *u, kl_node_kind k) {
  uint32_t n;
  const uint32_t *ids = kl_unit_nodes_of_kind(u, k, &n);
  return n ? ids[0] : KL_NONE;
}

static const char *expr_sexp(const char *stmt, char *buf, size_t cap) {
  kl_unit *u = parse(stmt);
  buf[0] = '\0';
  uint32_t s = first_of(u, KL_N_EXPR_STMT);
  if (s != KL_NONE) sexp(u, kl_child(u, s, 0), buf, cap);
  kl_unit_free(u);
  return buf;
}

static int count_diag(const kl_unit *u, const char *id) {
  int n = 0;
  for (uint32_t i = 0; i < u->ndiags; i++) n += strcmp(u->diags[i].id, id) == 0;
  return n;
}

static int tok_is(const kl_unit *u, uint32_t i, kl_tok_kind k, const char *text) {
  const kl_token *t = &u->tokens[i];
  return t->kind == k && t->len == strlen(text) && memcmp(u->src + t->off, text, t->len) == 0;
}

static void test_lexer(test_batch *t) {
  kl_unit *u = parse("k<<<g, b>>>(x);");
  OK(t, tok_is(u, 1, KL_TOK_PUNCT, "<<<"), "<<< is one token");
  OK(t, tok_is(u, 5, KL_TOK_PUNCT, ">>>"), ">>> is one token");
  OK(t, u->tokens[1].sub == KL_P3('<', '<', '<'), "punct sub packs characters");
  kl_unit_free(u);

  u = parse("a >>> b");  /* no <<< open: >>> is >> then > */
  OK(t, tok_is(u, 1, KL_TOK_PUNCT, ">>"), ">>> without launch splits");
  kl_unit_free(u);

  u = parse("x = 42ull + 0x1Fu + 1'000 + 0b101 + 1.5e-3f + .5 + 0x1p3 + 3.f;");
  OK(t, tok_is(u, 2, KL_TOK_INT, "42ull"), "int with suffix");
  OK(t, tok_is(u, 4, KL_TOK_INT, "0x1Fu"), "hex int");
  OK(t, tok_is(u, 6, KL_TOK_INT, "1'000"), "digit separators");
  OK(t, tok_is(u, 8, KL_TOK_INT, "0b101"), "binary int");
  OK(t, tok_is(u, 10, KL_TOK_FLOAT, "1.5e-3f"), "float with exponent sign");
  OK(t, tok_is(u, 12, KL_TOK_FLOAT, ".5"), "leading-dot float");
  OK(t, tok_is(u, 14, KL_TOK_FLOAT, "0x1p3"), "hex float");
  OK(t, tok_is(u, 16, KL_TOK_FLOAT, "3.f"), "3.f");
  kl_unit_free(u);

  const char *raw = "s = R\"x(a \"quoted\" )\" ))x\" + u8\"e\" L'c' '\\'';";
  u = parse(raw);
  OK(t, tok_is(u, 2, KL_TOK_STRING, "R\"x(a \"quoted\" )\" ))x\""), "raw string with delimiter");
  OK(t, tok_is(u, 4, KL_TOK_STRING, "u8\"e\""), "u8 string");
  OK(t, tok_is(u, 5, KL_TOK_CHAR, "L'c'"), "wide char");
  OK(t, tok_is(u, 6, KL_TOK_CHAR, "'\\''"), "escaped quote char");
  kl_unit_free(u);

  u = parse("#define M(a) \\\n  (a + 1) // c\nint x; /* c2 */ // @kl launch grid(4)\n");
  OK(t, u->tokens[0].kind == KL_TOK_PP, "pp line is one token");
  OK(t, tok_is(u, 0, KL_TOK_PP, "#define M(a) \\\n  (a + 1) // c"), "pp keeps continuation");
  OK(t, tok_is(u, 1, KL_TOK_KEYWORD, "int") && u->tokens[1].line == 3, "line after continuation");
  INT_EQ(t, u->nannotations, 1, "one @kl annotation");
  if (u->nannotations)
    OK(t, u->annotations[0].len == 14 &&
              memcmp(u->src + u->annotations[0].off, "launch grid(4)", 14) == 0 &&
              u->annotations[0].line == 3,
       "annotation text and line");
  /* trivia: the comment belongs to the EOF token's leading trivia */
  const kl_token *eof = &u->tokens[u->ntokens - 1];
  OK(t, eof->kind == KL_TOK_EOF && eof->trivia_len > 10, "trailing comments are EOF trivia");
  kl_unit_free(u);

  u = parse("a\xff\xfe b \xe2\x82\xac c \xc3\xa9t\xc3\xa9");
  OK(t, u->tokens[1].kind == KL_TOK_INVALID && u->tokens[2].kind == KL_TOK_INVALID,
     "invalid UTF-8 bytes are INVALID tokens");
  OK(t, count_diag(u, "KLS004") == 1, "adjacent invalid bytes are one diagnostic");
  OK(t, tok_is(u, 6, KL_TOK_IDENT, "\xc3\xa9t\xc3\xa9"), "valid UTF-8 in identifiers");
  kl_unit_free(u);

  u = parse("\xef\xbb\xbf#include <x>\nint a;");
  OK(t, u->tokens[0].kind == KL_TOK_PP && u->tokens[0].trivia_len == 3,
     "a byte order mark is trivia before the first token");
  kl_unit_free(u);

  u = parse("s = \"open\nx = 'y");
  OK(t, (u->tokens[2].flags & KL_TF_UNTERMINATED) && tok_is(u, 2, KL_TOK_STRING, "\"open"),
     "unterminated string stops at end of line");
  OK(t, count_diag(u, "KLS005") == 2, "unterminated literals diagnosed");
  kl_unit_free(u);

  u = parse("x; return\"s\"; case'a':");
  OK(t, tok_is(u, 2, KL_TOK_KEYWORD, "return") && tok_is(u, 3, KL_TOK_STRING, "\"s\"") &&
            tok_is(u, 5, KL_TOK_KEYWORD, "case") && tok_is(u, 6, KL_TOK_CHAR, "'a'"),
     "a keyword right before a quote is not a prefix");
  kl_unit_free(u);

  u = parse("int f() { return 1; }\nfloat g;");
  OK(t, kl_unit_has_word(u, "return", 6) && kl_unit_has_word(u, "g", 1), "words present");
  OK(t, !kl_unit_has_word(u, "while", 5) && !kl_unit_has_word(u, "retur", 5), "words absent");
  OK(t, u->tokens[1].word != KL_NONE && u->tokens[0].word != u->tokens[1].word, "word ids");
  kl_unit_free(u);
}

static void test_round_trip(test_batch *t) {
  static const char *const cases[] = {
      "", " ", "\n\n", "/*", "//", "\"", "'", "R\"(", "R\"abc(never", "#", "#define X \\",
      "}}}{{{", "(((", "a<<<b", ">>>", "\\", "\\\n", "\r\n\r\n#if 1\r\nx;\r\n#endif\r\n",
      "\x00\x01\x02", "template<", "a ? b :", "for(;;", "\xf0\x9f\x98\x80 \xf0\x9f",
  };
  int all = 1;
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    size_t n = i == 18 ? 3 : strlen(cases[i]);
    if (!round_trips(cases[i], n)) {
      fprintf(stderr, "  round trip failed on case %zu\n", i);
      all = 0;
    }
  }
  OK(t, all, "edge cases round-trip");
  /* deterministic random byte soup, biased toward C punctuation */
  static const char alphabet[] = "{}()[]<>;:,.?!%^&*-+=|/#\\\"'\n \tabcxyzR0x19e_\x80\xff\xc3";
  uint64_t seed = 0x9e3779b97f4a7c15ull;
  char buf[512];
  int ok = 1;
  for (int round = 0; round < 2000 && ok; round++) {
    size_t n = (size_t)(round % 500);
    for (size_t i = 0; i < n; i++) {
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      buf[i] = (round & 1) ? (char)(seed >> 24) : alphabet[(seed >> 24) % (sizeof alphabet - 1)];
    }
    ok = round_trips(buf, n);
  }
  OK(t, ok, "2000 random buffers round-trip");
}

/* Round trip of every .cu under the repository's gpu/ and tests/. */
static void walk_cu(const char *dir, int *files, int *failed) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(path, &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      walk_cu(path, files, failed);
      continue;
    }
    size_t l = strlen(e->d_name);
    if (l < 4 || (strcmp(e->d_name + l - 3, ".cu") != 0 && strcmp(e->d_name + l - 4, ".cuh") != 0))
      continue;
    FILE *f = fopen(path, "rb");
    if (!f) continue;
    char *data = malloc((size_t)st.st_size + 1);
    size_t n = data ? fread(data, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    (*files)++;
    if (!data || !round_trips(data, n)) {
      (*failed)++;
      fprintf(stderr, "  round trip failed: %s\n", path);
    }
    free(data);
  }
  closedir(d);
}

static void test_repository_round_trip(test_batch *t) {
  /* the repository root is three levels above this file */
  char root[4096];
  const char *env = getenv("KL_SOURCE_ROOT");
  snprintf(root, sizeof root, "%s", env ? env : __FILE__);
  if (!env) {
    for (int up = 0; up < 3; up++) {
      char *slash = strrchr(root, '/');
      if (slash) *slash = '\0';
    }
  }
  int files = 0, failed = 0;
  char dir[4200];
  snprintf(dir, sizeof dir, "%s/gpu", root);
  walk_cu(dir, &files, &failed);
  snprintf(dir, sizeof dir, "%s/tests", root);
  walk_cu(dir, &files, &failed);
  printf("round trip: %d .cu files under %s, %d failed\n", files, root, failed);
  OK(t, files >= 7, "found the repository's .cu files (gpu/ and the corpus)");
  INT_EQ(t, failed, 0, "every repository .cu file round-trips");
}

static void test_precedence(test_batch *t) {
  char b[1024];
  STR_EQ(t, expr_sexp("x = a + b * c - d;", b, sizeof b), "(= x (- (+ a (* b c)) d))",
         "multiplicative binds tighter");
  STR_EQ(t, expr_sexp("x = a << 1 + 2 < b == c & d ^ e | f && g || h;", b, sizeof b),
         "(= x (|| (&& (| (^ (& (== (< (<< a (+ 1 2)) b) c) d) e) f) g) h))",
         "full C precedence ladder");
  STR_EQ(t, expr_sexp("a = b = c += 1;", b, sizeof b), "(= a (= b (+= c 1)))",
         "assignment is right associative");
  STR_EQ(t, expr_sexp("x = c ? a : d ? e : f;", b, sizeof b),
         "(= x (ternary c a (ternary d e f)))", "ternary nests to the right");
  STR_EQ(t, expr_sexp("y = -a[i].f->g(1, 2)++;", b, sizeof b),
         "(= y (- (++ (call (-> (. (index a i) f) g) 1 2))))", "postfix binds tighter than prefix");
  /* `a` declared: (a)*b multiplies (undeclared, it could cast *b) */
  STR_EQ(t, expr_sexp("int a; y = (float)x * (unsigned int)z + (a)*b;", b, sizeof b),
         "(= y (+ (* (cast float x) (cast unsigned int z)) (* (paren a) b)))",
         "C cast only for known types");
  STR_EQ(t, expr_sexp("p = reinterpret_cast<float4 *>(q)[i];", b, sizeof b),
         "(= p (index (reinterpret_cast float4 * q) i))", "xxx_cast<T>(e)");
  STR_EQ(t, expr_sexp("k<<<g, b, 0, s>>>(x, n);", b, sizeof b), "(launch k g b 0 s x n)",
         "kernel launch");
  STR_EQ(t, expr_sexp("r = sizeof(float) + sizeof x;", b, sizeof b),
         "(= r (+ (sizeof float) (sizeof x)))", "sizeof type and expression");
  STR_EQ(t, expr_sexp("v = make<int, 4>(a, {1, 2});", b, sizeof b),
         "(= v (call make (template_args int 4) a (init_list 1 2)))",
         "template arguments and init list");
  STR_EQ(t, expr_sexp("a = i < n && j > m;", b, sizeof b), "(= a (&& (< i n) (> j m)))",
         "comparisons are not template brackets");
  STR_EQ(t, expr_sexp("v = make<A<B<int>>>(x) >> 2;", b, sizeof b),
         "(= v (>> (call make (template_args A<B<int>>) x) 2))",
         "'>>' closes two template lists, and is a shift elsewhere");

  kl_unit *u = parse("void f() { for (int i = 0; i < n; ++i) { if (a) b(); else c(); } }");
  b[0] = '\0';
  sexp(u, first_of(u, KL_N_FOR), b, sizeof b);
  STR_EQ(t, b, "(for (decl int (declarator i 0)) (< i n) (++ i) (compound (if a (expr_stmt (call b)) (expr_stmt (call c)))))",
         "for/if statement structure");
  kl_unit_free(u);
}

static void test_structure(test_batch *t) {
  const char *src =
      "template <typename T, int B = 128>\n"
      "__global__ void __launch_bounds__(B) k(const T *__restrict__ in, T **out, int &n) {\n"
      "#pragma unroll 4\n"
      "  for (int i = 0; i < B; i++) out[0][i] = in[i];\n"
      "}\n"
      "extern \"C\" { __device__ int h(void); }\n"
      "struct S { int a; __device__ int get() const { return a; } };\n";
  kl_unit *u = parse(src);
  uint32_t nf;
  const uint32_t *fns = kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &nf);
  INT_EQ(t, nf, 3, "three functions (kernel, prototype, method)");
  kl_function_info fi;
  OK(t, kl_function_info_get(u, fns[0], &fi), "function info");
  OK(t, (fi.qualifiers & KL_FQ_GLOBAL) && (fi.qualifiers & KL_FQ_TEMPLATE) &&
            (fi.qualifiers & KL_FQ_LAUNCH_BOUNDS),
     "qualifiers: global, template, launch bounds");
  OK(t, fi.body != KL_NONE && u->nodes[fi.body].kind == KL_N_COMPOUND, "body is compound");
  uint32_t pl = fi.params;
  INT_EQ(t, u->nodes[pl].child_count, 3, "three params");
  kl_param_info p0, p1, p2;
  kl_param_info_get(u, kl_child(u, pl, 0), &p0);
  kl_param_info_get(u, kl_child(u, pl, 1), &p1);
  kl_param_info_get(u, kl_child(u, pl, 2), &p2);
  OK(t, p0.is_const && p0.is_restrict && p0.pointer_depth == 1, "const T *__restrict__");
  OK(t, !p1.is_const && p1.pointer_depth == 2, "T ** depth 2");
  OK(t, p2.is_reference && p2.pointer_depth == 0, "int & reference");
  OK(t, tok_is(u, p0.name_tok, KL_TOK_IDENT, "in"), "param name");
  OK(t, tok_is(u, p0.base_tok_begin, KL_TOK_IDENT, "T") && p0.base_tok_end == p0.base_tok_begin + 1,
     "param base type");
  kl_function_info_get(u, fns[1], &fi);
  OK(t, fi.body == KL_NONE && (fi.qualifiers & KL_FQ_EXTERN_C), "prototype inside extern \"C\"");
  uint32_t pragma = first_of(u, KL_N_PRAGMA);
  OK(t, pragma != KL_NONE && u->nodes[kl_pragma_target(u, pragma)].kind == KL_N_FOR,
     "pragma applies to the next statement");
  OK(t, first_of(u, KL_N_STRUCT) != KL_NONE, "struct item");
  /* pre-order layout invariants */
  int ok = 1;
  for (uint32_t n = 1; n < u->nnodes && ok; n++) {
    const kl_node *nd = &u->nodes[n];
    const kl_node *par = &u->nodes[nd->parent];
    ok = nd->parent < n && n < par->subtree_end && nd->subtree_end <= par->subtree_end &&
         nd->depth == par->depth + 1 && nd->tok_begin >= par->tok_begin;
  }
  OK(t, ok, "pre-order: parents first, subtrees nested");
  uint32_t total = 0;
  for (int k = 0; k < KL_N__COUNT; k++) {
    uint32_t c;
    kl_unit_nodes_of_kind(u, (kl_node_kind)k, &c);
    total += c;
  }
  INT_EQ(t, total, u->nnodes, "kind index covers every node once");
  kl_unit_free(u);

  /* equality ignores trivia but not tokens */
  kl_unit *a = parse("x = a + /* c */ b;"), *b2 = parse("x  =  a+b ;"), *c = parse("x = a - b;");
  uint32_t ea = first_of(a, KL_N_ASSIGN), eb = first_of(b2, KL_N_ASSIGN), ec = first_of(c, KL_N_ASSIGN);
  OK(t, kl_node_equal(a, ea, b2, eb), "equal ignoring trivia");
  OK(t, kl_node_hash(a, ea) == kl_node_hash(b2, eb), "hash agrees with equality");
  OK(t, !kl_node_equal(a, ea, c, ec), "different operators differ");
  kl_unit_free(a);
  kl_unit_free(b2);
  kl_unit_free(c);
}

static void test_cxx(test_batch *t) {
  kl_unit *u = parse("struct C {\n"
                     "  __device__ C(float r) : re(r), im{0.f} {}\n"
                     "  __device__ ~C() {}\n"
                     "  __device__ C operator+(const C &o) const { return C(re + o.re); }\n"
                     "  float re, im;\n"
                     "};\n"
                     "namespace cg = cooperative_groups;\n"
                     "__global__ void k(const float *in) {\n"
                     "  for (const auto &v : items) s += v;\n"
                     "}\n"
                     "template __global__ void k2<float>(float *);\n");
  uint32_t nf;
  kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &nf);
  INT_EQ(t, nf, 5, "constructor, destructor, operator, kernel, instantiation");
  INT_EQ(t, u->ndiags, 0, "no opaque regions in C++ constructs");
  uint32_t rf = first_of(u, KL_N_RANGE_FOR);
  OK(t, rf != KL_NONE && kl_node_field(u, rf, KL_F_INIT) != KL_NONE &&
            kl_node_field(u, rf, KL_F_VALUE) != KL_NONE && kl_node_field(u, rf, KL_F_BODY) != KL_NONE,
     "range-for with init, range and body");
  kl_unit_free(u);
}

static void test_opaque(test_batch *t) {
  const char *src = "__global__ void good1(int *p) { p[0] = 1; }\n"
                    "__global__ void mixed(int *p) {\n"
                    "  p[0] = (1 + ;\n"
                    "  p[1] = 2;\n"
                    "}\n"
                    "int a = @ ` ;\n"
                    "}}} )))\n"
                    "__global__ void good2(int *p) { p[threadIdx.x] = 2; }\n";
  kl_unit *u = parse(src);
  OK(t, round_trips(src, strlen(src)), "garbage round-trips");
  uint32_t nf;
  const uint32_t *fns = kl_unit_nodes_of_kind(u, KL_N_FUNCTION, &nf);
  INT_EQ(t, nf, 3, "all three functions survive the garbage");
  uint32_t no;
  const uint32_t *ops = kl_unit_nodes_of_kind(u, KL_N_OPAQUE, &no);
  OK(t, no >= 3, "opaque regions recorded");
  size_t tl;
  const char *tx = no ? kl_node_text(u, ops[0], &tl) : "";
  OK(t, no && tl == 13 && memcmp(tx, "p[0] = (1 + ;", 13) == 0, "opaque covers only the bad statement");
  uint32_t ns;
  const uint32_t *ss = kl_unit_nodes_of_kind(u, KL_N_EXPR_STMT, &ns);
  int found = 0;
  for (uint32_t i = 0; i < ns; i++) {
    const char *s = kl_node_text(u, ss[i], &tl);
    found |= tl == 9 && memcmp(s, "p[1] = 2;", 9) == 0;
  }
  OK(t, found, "the statement after the bad one is parsed");
  OK(t, count_diag(u, "KLS001") >= 3, "opaque regions are diagnosed (KLS001)");
  kl_function_info fi;
  kl_function_info_get(u, fns[2], &fi);
  OK(t, tok_is(u, fi.name_tok, KL_TOK_IDENT, "good2"), "function after garbage");
  kl_unit_free(u);
}

static void test_depth_cap(test_batch *t) {
  size_t depth = 100000;
  char *s = malloc(depth * 2 + 200000);
  size_t n = 0;
  n += (size_t)sprintf(s, "void f() { x = ");
  for (size_t i = 0; i < depth; i++) s[n++] = '(';
  s[n++] = '1';
  for (size_t i = 0; i < depth; i++) s[n++] = ')';
  n += (size_t)sprintf(s + n, "; y = 2; }");
  kl_unit *u = kl_source_parse(s, n, "deep");
  OK(t, u != NULL, "deep parens parse without crashing");
  OK(t, count_diag(u, "KLS002") == 1, "depth cap diagnosed once (KLS002)");
  uint32_t op = first_of(u, KL_N_OPAQUE);
  OK(t, op != KL_NONE && (u->nodes[op].flags & KL_NF_TRUNCATED), "truncated opaque node");
  OK(t, first_of(u, KL_N_EXPR_STMT) != KL_NONE, "the next statement still parses");
  OK(t, round_trips(s, n), "deep parens round-trip");
  kl_unit_free(u);

  n = (size_t)sprintf(s, "void g() ");
  for (size_t i = 0; i < depth; i++) s[n++] = '{';
  for (size_t i = 0; i < depth; i++) s[n++] = '}';
  u = kl_source_parse(s, n, "deep2");
  OK(t, u != NULL && count_diag(u, "KLS002") == 1, "deep braces capped");
  uint32_t maxd = 0;
  for (uint32_t i = 0; u && i < u->nnodes; i++)
    if (u->nodes[i].depth > maxd) maxd = u->nodes[i].depth;
  OK(t, maxd <= 4 * KL_SOURCE_MAX_DEPTH, "tree depth bounded by the cap");
  OK(t, round_trips(s, n), "deep braces round-trip");
  kl_unit_free(u);

  /* long left-nested chains nest the tree too: a + a + ... and a[0][0]... */
  n = (size_t)sprintf(s, "void h() { x = a");
  for (size_t i = 0; i < 20000; i++) n += (size_t)sprintf(s + n, "+a");
  n += (size_t)sprintf(s + n, "; y = b");
  for (size_t i = 0; i < 20000; i++) n += (size_t)sprintf(s + n, "[0]");
  n += (size_t)sprintf(s + n, "; z = c + d; }");
  u = kl_source_parse(s, n, "chains");
  OK(t, u && count_diag(u, "KLS002") == 2, "long chains capped");
  maxd = 0;
  for (uint32_t i = 0; u && i < u->nnodes; i++)
    if (u->nodes[i].depth > maxd) maxd = u->nodes[i].depth;
  OK(t, maxd <= 4 * KL_SOURCE_MAX_DEPTH, "chains keep the tree shallow");
  OK(t, u && first_of(u, KL_N_BINARY) != KL_NONE, "the statement after the chains parses");
  kl_unit_free(u);
  /* a realistic long sum stays structured */
  n = (size_t)sprintf(s, "void k() { acc = a0 * b0");
  for (size_t i = 1; i < 300; i++) n += (size_t)sprintf(s + n, " + a%zu * b%zu", i, i);
  n += (size_t)sprintf(s + n, "; }");
  u = kl_source_parse(s, n, "sum");
  INT_EQ(t, u->ndiags, 0, "a 300-term sum parses");
  kl_unit_free(u);
  free(s);
}

static int64_t const_value(kl_unit *u, const char *name, int *known) {
  uint32_t n;
  const kl_const *cs = kl_unit_constants(u, &n);
  *known = -1;
  for (uint32_t i = n; i-- > 0;) {
    if (cs[i].name_len == strlen(name) && memcmp(u->src + cs[i].name_off, name, cs[i].name_len) == 0) {
      *known = cs[i].known;
      return cs[i].value;
    }
  }
  return 0;
}

static void test_constants(test_batch *t) {
  kl_unit *u = parse("#define BLOCK 256\n"
                     "#define TILE (BLOCK / 8) // comment\n"
                     "#define SHIFT \\\n  ((TILE + 1) << 2)\n"
                     "#define F(x) (x)\n"
                     "#define NAME foo\n"
                     "constexpr int kWarps = BLOCK / 32;\n"
                     "const unsigned kMask = 0xFFu & ~1u;\n"
                     "const float kScale = 2.0f;\n"
                     "static constexpr int kBig = 1 << 20, kSmall = kBig >> 19;\n"
                     "template <typename T, int N = TILE * 2, int M = 3>\n"
                     "__global__ void k(T *p) { constexpr int kLocal = N + kWarps; p[0] = kLocal; }\n");
  int known;
  INT_EQ(t, const_value(u, "BLOCK", &known), 256, "#define value");
  INT_EQ(t, const_value(u, "TILE", &known), 32, "#define using an earlier define");
  INT_EQ(t, const_value(u, "SHIFT", &known), 132, "#define with continuation");
  const_value(u, "F", &known);
  INT_EQ(t, known, -1, "function-like macro is not a constant");
  const_value(u, "NAME", &known);
  INT_EQ(t, known, 0, "non-integer define is listed, unknown");
  INT_EQ(t, const_value(u, "kWarps", &known), 8, "constexpr int");
  INT_EQ(t, const_value(u, "kMask", &known), 0xFE, "const unsigned");
  const_value(u, "kScale", &known);
  INT_EQ(t, known, -1, "float constants are not integer constants");
  INT_EQ(t, const_value(u, "kSmall", &known), 2, "second declarator");
  INT_EQ(t, const_value(u, "N", &known), 64, "template parameter default");
  INT_EQ(t, const_value(u, "kLocal", &known), 72, "local constexpr from template param");
  uint32_t ret = first_of(u, KL_N_ASSIGN);
  int64_t v = 0;
  OK(t, kl_eval_const(u, kl_child(u, ret, 1), &v) && v == 72, "kl_eval_const on an expression");
  kl_unit_free(u);
}

static const kl_access *access_of(const kl_unit *u, const kl_access *as, uint32_t n,
                                  const char *text) {
  for (uint32_t i = 0; i < n; i++) {
    size_t tl;
    const char *s = kl_node_text(u, as[i].index_node, &tl);
    if (tl == strlen(text) && memcmp(s, text, tl) == 0) return &as[i];
  }
  return NULL;
}

static void test_affine(test_batch *t) {
  kl_unit *u = parse(
      "#define TILE 16\n"
      "__global__ void mm(const float *A, const float *B, float *C, int N, int K) {\n"
      "  int row = blockIdx.y * TILE + threadIdx.y;\n"
      "  int col = blockIdx.x * blockDim.x + threadIdx.x;\n"
      "  float acc = 0.f;\n"
      "  for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];\n"
      "  C[row * N + col] = acc;\n"
      "  for (int j = 0; j < 4; j++) acc += C[col] + A[col * N] + B[2 * threadIdx.x + j];\n"
      "  C[col % 7] = acc;\n"
      "}\n");
  uint32_t fn = first_of(u, KL_N_FUNCTION);
  uint32_t n;
  kl_access *as = kl_access_patterns(u, fn, &n);
  INT_EQ(t, n, 7, "seven pointer accesses");
  const kl_access *a = access_of(u, as, n, "A[row * K + k]");
  OK(t, a && a->tx_stride_kind == KL_STRIDE_ZERO && a->coalesced, "A row: same for all tx");
  OK(t, a && a->loop_stride_kind == KL_STRIDE_CONST && a->loop_stride == 1, "A row: unit loop stride");
  a = access_of(u, as, n, "B[k * N + col]");
  OK(t, a && a->tx_stride_kind == KL_STRIDE_CONST && a->tx_stride == 1 && a->coalesced,
     "B column: coalesced");
  OK(t, a && a->loop_stride_kind == KL_STRIDE_SYMBOLIC, "B column: loop stride N");
  a = access_of(u, as, n, "C[row * N + col]");
  OK(t, a && a->is_write && a->coalesced && a->loop_node == KL_NONE, "C store coalesced, no loop");
  a = access_of(u, as, n, "C[col]");
  OK(t, a && a->loop_invariant && !a->is_write, "C[col] is loop invariant in the j loop");
  a = access_of(u, as, n, "A[col * N]");
  OK(t, a && a->tx_stride_kind == KL_STRIDE_SYMBOLIC && !a->coalesced, "A[col*N] strided by N");
  a = access_of(u, as, n, "B[2 * threadIdx.x + j]");
  OK(t, a && a->tx_stride_kind == KL_STRIDE_CONST && a->tx_stride == 2 && !a->coalesced,
     "stride 2 is not coalesced");
  a = access_of(u, as, n, "C[col % 7]");
  OK(t, a && a->tx_stride_kind == KL_STRIDE_UNKNOWN && a->form.nrest == 1, "non-affine rest");
  free(as);

  /* the linear form itself: blockIdx.x*blockDim.x + threadIdx.x + 16*blockIdx.y*K ... */
  uint32_t nidx;
  const uint32_t *idx = kl_unit_nodes_of_kind(u, KL_N_INDEX, &nidx);
  kl_affine f;
  OK(t, kl_affine_of(u, fn, kl_node_field(u, idx[0], KL_F_INDEX), &f), "A index is affine");
  int by = 0, ty = 0, loop = 0;
  for (uint32_t i = 0; i < f.nterms; i++) {
    const kl_aterm *tm = &f.terms[i];
    if (tm->var == KL_AV_BLOCK_Y && tm->coef == 16 && tm->nsyms == 1) by = 1;
    if (tm->var == KL_AV_THREAD_Y && tm->coef == 1 && tm->nsyms == 1) ty = 1;
    if (tm->var == KL_AV_LOOP && tm->coef == 1 && tm->nsyms == 0) loop = 1;
  }
  OK(t, f.nterms == 3 && by && ty && loop, "16*K*blockIdx.y + K*threadIdx.y + k");
  kl_unit_free(u);

  /* expert-style indexing: lane arithmetic, pointer aliases, scoped locals
   * of the same name, float4 accesses */
  u = parse("#define BN 64\n"
            "__global__ void t(const float *A, const float *B, float *C, int K, int N) {\n"
            "  int tid = threadIdx.x;\n"
            "  int col = tid % BN, row = tid / BN;\n"
            "  int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;\n"
            "  const float *Ab = A + blockIdx.y * 64 * K;\n"
            "  for (int l = 0; l < 4; ++l) { int idx = tid + l * 128; C[idx % BN] = Ab[idx / BN]; }\n"
            "  for (int l = 0; l < 4; ++l) { int idx = tid * 2; C[idx] = 0; }\n"
            "  float4 v = *reinterpret_cast<const float4 *>(&B[(row * N + col) * 4]);\n"
            "  *reinterpret_cast<float4 *>(&C[4 * tid]) = v;\n"
            "  C[row * N + col] = A[warp * 32 + lane] + A[tid % 8];\n"
            "  const float4 *B4 = reinterpret_cast<const float4 *>(B) + 2;\n"
            "  float4 q = B4[blockIdx.x * blockDim.x + threadIdx.x];\n"
            "}\n");
  fn = first_of(u, KL_N_FUNCTION);
  as = kl_access_patterns(u, fn, &n);
  a = access_of(u, as, n, "C[idx % BN]");
  OK(t, a && a->coalesced && a->tx_stride == 1 && (a->form.flags & KL_AF_WARP),
     "(tid + l*128) % 64: lanes stay consecutive");
  a = access_of(u, as, n, "Ab[idx / BN]");
  OK(t, a && a->tx_stride_kind == KL_STRIDE_ZERO && a->loop_stride_kind == KL_STRIDE_CONST &&
            a->loop_stride == 2,
     "alias Ab = A + ..., (tid + l*128) / 64: warp-uniform, 2 per iteration");
  OK(t, a && u->nodes[a->param].kind == KL_N_PARAM, "alias attributed to its parameter");
  a = access_of(u, as, n, "C[idx]");
  OK(t, a && a->tx_stride == 2 && !a->coalesced, "a same-named local in another loop");
  a = access_of(u, as, n, "B[(row * N + col) * 4]");
  OK(t, a && a->vector_width == 4 && a->tx_stride == 4 && a->coalesced && !a->is_write,
     "float4 load: stride 4 is coalesced");
  a = access_of(u, as, n, "C[4 * tid]");
  OK(t, a && a->vector_width == 4 && a->is_write && a->coalesced, "float4 store");
  a = access_of(u, as, n, "A[warp * 32 + lane]");
  OK(t, a && a->coalesced && a->tx_stride == 1, "warp * 32 + lane with & 31 and >> 5");
  a = access_of(u, as, n, "A[tid % 8]");
  OK(t, a && a->tx_stride_kind == KL_STRIDE_UNKNOWN && !a->coalesced, "tid % 8 is not affine");
  a = access_of(u, as, n, "B4[blockIdx.x * blockDim.x + threadIdx.x]");
  OK(t, a && a->vector_width == 4 && a->tx_stride == 4 && a->coalesced,
     "float4 alias of a float parameter: 4 elements per thread");
  int has8 = 0;
  for (uint32_t k = 0; a && k < a->form.nterms; k++)
    has8 |= a->form.terms[k].var == KL_AV_CONST && !a->form.terms[k].nsyms && a->form.terms[k].coef == 8;
  OK(t, has8, "the alias offset (+2 float4) counts 8 floats");
  free(as);
  kl_unit_free(u);

  /* grid-stride loop: the induction variable carries threadIdx from its
   * initializer and the grid size as its per-iteration step */
  u = parse("__global__ void gs(const float *in, float *out, int n) {\n"
            "  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += blockDim.x * gridDim.x)\n"
            "    out[i] = in[2 * i];\n"
            "}\n");
  fn = first_of(u, KL_N_FUNCTION);
  as = kl_access_patterns(u, fn, &n);
  a = access_of(u, as, n, "out[i]");
  OK(t, a && a->coalesced && a->tx_stride == 1 && a->loop_stride_kind == KL_STRIDE_SYMBOLIC,
     "grid-stride store: coalesced, strided by the grid per iteration");
  a = access_of(u, as, n, "in[2 * i]");
  OK(t, a && !a->coalesced && a->tx_stride == 2, "in[2*i]: stride 2 through the induction variable");
  free(as);
  kl_unit_free(u);
}

static void test_shared(test_batch *t) {
  kl_unit *u = parse("#define TILE 32\n"
                     "__global__ void tr(const float *in, float *out, int n) {\n"
                     "  __shared__ float tile[TILE][TILE];\n"
                     "  __shared__ float pad[TILE][TILE + 1];\n"
                     "  __shared__ double d[64];\n"
                     "  __shared__ float4 v[64];\n"
                     "  int tx = threadIdx.x, ty = threadIdx.y;\n"
                     "  tile[ty][tx] = in[ty * n + tx];\n"
                     "  pad[ty][tx] = tile[tx][ty];\n"
                     "  out[tx] = pad[tx][ty] + d[tx] + d[2 * tx] + tile[0][0] + v[tx].x;\n"
                     "}\n");
  uint32_t fn = first_of(u, KL_N_FUNCTION), n;
  kl_access *as = kl_shared_accesses(u, fn, &n);
  INT_EQ(t, n, 8, "eight shared accesses");
  const kl_access *a = access_of(u, as, n, "tile[ty][tx]");
  OK(t, a && a->is_write && a->tx_stride == 1 && a->bank_ways == 1 && a->elem_bytes == 4,
     "row access: conflict-free");
  a = access_of(u, as, n, "tile[tx][ty]");
  OK(t, a && a->tx_stride == 32 && a->bank_ways == 32, "column of a 32x32 tile: 32-way");
  a = access_of(u, as, n, "pad[tx][ty]");
  OK(t, a && a->tx_stride == 33 && a->bank_ways == 1, "padded column: conflict-free");
  a = access_of(u, as, n, "d[tx]");
  OK(t, a && a->elem_bytes == 8 && a->bank_ways == 1, "doubles in two phases: conflict-free");
  a = access_of(u, as, n, "d[2 * tx]");
  OK(t, a && a->bank_ways == 2, "doubles at stride 2: 2-way");
  a = access_of(u, as, n, "tile[0][0]");
  OK(t, a && a->tx_stride_kind == KL_STRIDE_ZERO && a->bank_ways == 1, "a broadcast");
  a = access_of(u, as, n, "v[tx]");
  OK(t, a && a->elem_bytes == 16 && a->bank_ways == 1, "float4 in four phases");
  OK(t, a && u->nodes[a->param].kind == KL_N_DECLARATOR, "param is the array's declarator");
  free(as);
  kl_unit_free(u);
  /* a declared size no block could hold (found by the fuzzer: the row
   * products of its flat index overflowed int64) is no shared array */
  u = parse("__global__ void k(float *o) {\n"
            "  __shared__ float s[2][4099276460824344800][32][32];\n"
            "  __shared__ float ok[4][32];\n"
            "  o[threadIdx.x] = s[1][0][threadIdx.y][threadIdx.x] + ok[1][threadIdx.x];\n"
            "}\n");
  as = kl_shared_accesses(u, first_of(u, KL_N_FUNCTION), &n);
  INT_EQ(t, n, 1, "an impossibly large array is not analysed; the other one is");
  OK(t, n == 1 && access_of(u, as, n, "ok[1][threadIdx.x]") != NULL, "the small one is found");
  free(as);
  kl_unit_free(u);
}

int main(void) {
  test_batch t = {0, 0};
  test_lexer(&t);
  test_round_trip(&t);
  test_repository_round_trip(&t);
  test_precedence(&t);
  test_structure(&t);
  test_cxx(&t);
  test_opaque(&t);
  test_depth_cap(&t);
  test_constants(&t);
  test_affine(&t);
  test_shared(&t);
  return kl_test_finish(&t);
}
