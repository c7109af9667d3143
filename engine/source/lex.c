/* The lossless lexer: every byte of the input ends up in exactly one token's
 * text or leading trivia. It never fails on content; bytes that start no
 * token become one-byte KL_TOK_INVALID tokens. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "source/internal.h"

uint64_t kl_hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* ---- keywords ------------------------------------------------------------ */

static const struct {
  const char *s;
  kl_kw kw;
} keyword_list[] = {
    {"if", KL_KW_IF}, {"else", KL_KW_ELSE}, {"for", KL_KW_FOR}, {"while", KL_KW_WHILE},
    {"do", KL_KW_DO}, {"return", KL_KW_RETURN}, {"break", KL_KW_BREAK},
    {"continue", KL_KW_CONTINUE}, {"switch", KL_KW_SWITCH}, {"case", KL_KW_CASE},
    {"default", KL_KW_DEFAULT}, {"goto", KL_KW_GOTO}, {"struct", KL_KW_STRUCT},
    {"class", KL_KW_CLASS}, {"union", KL_KW_UNION}, {"enum", KL_KW_ENUM},
    {"typedef", KL_KW_TYPEDEF}, {"template", KL_KW_TEMPLATE}, {"typename", KL_KW_TYPENAME},
    {"using", KL_KW_USING}, {"namespace", KL_KW_NAMESPACE}, {"extern", KL_KW_EXTERN},
    {"static", KL_KW_STATIC}, {"inline", KL_KW_INLINE}, {"__inline__", KL_KW_INLINE},
    {"const", KL_KW_CONST}, {"constexpr", KL_KW_CONSTEXPR}, {"volatile", KL_KW_VOLATILE},
    {"sizeof", KL_KW_SIZEOF}, {"alignof", KL_KW_ALIGNOF}, {"static_cast", KL_KW_STATIC_CAST},
    {"reinterpret_cast", KL_KW_REINTERPRET_CAST}, {"const_cast", KL_KW_CONST_CAST},
    {"dynamic_cast", KL_KW_DYNAMIC_CAST}, {"true", KL_KW_TRUE}, {"false", KL_KW_FALSE},
    {"nullptr", KL_KW_NULLPTR}, {"asm", KL_KW_ASM}, {"__asm__", KL_KW_ASM},
    {"__asm", KL_KW_ASM}, {"auto", KL_KW_AUTO}, {"void", KL_KW_VOID}, {"char", KL_KW_CHAR},
    {"short", KL_KW_SHORT}, {"int", KL_KW_INT}, {"long", KL_KW_LONG}, {"float", KL_KW_FLOAT},
    {"double", KL_KW_DOUBLE}, {"signed", KL_KW_SIGNED}, {"unsigned", KL_KW_UNSIGNED},
    {"bool", KL_KW_BOOL}, {"operator", KL_KW_OPERATOR}, {"decltype", KL_KW_DECLTYPE},
    {"noexcept", KL_KW_NOEXCEPT}, {"public", KL_KW_PUBLIC}, {"private", KL_KW_PRIVATE},
    {"protected", KL_KW_PROTECTED}, {"this", KL_KW_THIS}, {"new", KL_KW_NEW},
    {"delete", KL_KW_DELETE}, {"__restrict__", KL_KW_RESTRICT}, {"__restrict", KL_KW_RESTRICT},
    {"restrict", KL_KW_RESTRICT}, {"__global__", KL_KW_GLOBAL}, {"__device__", KL_KW_DEVICE},
    {"__host__", KL_KW_HOST}, {"__shared__", KL_KW_SHARED}, {"__constant__", KL_KW_CONSTANT},
    {"__forceinline__", KL_KW_FORCEINLINE}, {"__noinline__", KL_KW_FORCEINLINE},
    {"__launch_bounds__", KL_KW_LAUNCH_BOUNDS}, {"__align__", KL_KW_ALIGN},
    {"alignas", KL_KW_ALIGN}, {"__attribute__", KL_KW_ATTRIBUTE},
    {"__declspec", KL_KW_ATTRIBUTE}, {"throw", KL_KW_THROW},
    {"__grid_constant__", KL_KW_GRID_CONSTANT}, {"try", KL_KW_TRY}, {"catch", KL_KW_CATCH},
};

#define KW_SLOTS 512
static struct {
  const char *s;
  uint8_t len;
  uint8_t kw;
} kw_table[KW_SLOTS];

static unsigned kw_slot(const char *s, size_t len) {
  return (unsigned)((len * 131u + (unsigned char)s[0] * 31u + (unsigned char)s[len - 1] * 7u +
                     (unsigned char)s[len / 2]) &
                    (KW_SLOTS - 1));
}

static void kw_init(void) {
  for (size_t i = 0; i < sizeof keyword_list / sizeof keyword_list[0]; i++) {
    size_t len = strlen(keyword_list[i].s);
    unsigned h = kw_slot(keyword_list[i].s, len);
    while (kw_table[h].s) h = (h + 1) & (KW_SLOTS - 1);
    kw_table[h].s = keyword_list[i].s;
    kw_table[h].len = (uint8_t)len;
    kw_table[h].kw = (uint8_t)keyword_list[i].kw;
  }
}

static pthread_once_t tables_once = PTHREAD_ONCE_INIT;
static void cclass_init(void);
static void tables_init(void) {
  cclass_init();
  kw_init();
}

kl_kw kl_keyword(const char *s, size_t len) {
  if (len < 2 || len > 20) return KL_KW_NONE;
  pthread_once(&tables_once, tables_init);
  unsigned h = kw_slot(s, len);
  while (kw_table[h].s) {
    if (kw_table[h].len == len && memcmp(kw_table[h].s, s, len) == 0)
      return (kl_kw)kw_table[h].kw;
    h = (h + 1) & (KW_SLOTS - 1);
  }
  return KL_KW_NONE;
}

/* ---- character classes ----------------------------------------------------- */

enum { C_ID = 1, C_DIGIT = 2, C_SPACE = 4, C_PUNCT = 8, C_PUNCT_ALONE = 16 };
static uint8_t cclass[256];

static void cclass_init(void) {
  for (int c = 0; c < 256; c++) {
    uint8_t k = 0;
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$') k |= C_ID;
    if (c >= '0' && c <= '9') k |= C_DIGIT | C_ID;
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v') k |= C_SPACE;
    if (c && strchr("{}[]()<>;:,.?~!%^&*-+=|/#\\@`", c)) k |= C_PUNCT;
    /* punctuators that never start a longer one */
    if (c && strchr("{}[]();,?~@`\\", c)) k |= C_PUNCT_ALONE;
    cclass[c] = k;
  }
}

/* Length of a valid UTF-8 multi-byte sequence at s (>= 0x80), else 0. */
static size_t utf8_len(const unsigned char *s, const unsigned char *end) {
  unsigned c = s[0];
  size_t n;
  unsigned min;
  if (c >= 0xC2 && c <= 0xDF) n = 2, min = 0x80;
  else if (c >= 0xE0 && c <= 0xEF) n = 3, min = 0x800;
  else if (c >= 0xF0 && c <= 0xF4) n = 4, min = 0x10000;
  else return 0;
  if ((size_t)(end - s) < n) return 0;
  unsigned cp = c & (0x7F >> n);
  for (size_t i = 1; i < n; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

/* ---- the scanner ----------------------------------------------------------- */

/* What the lexer compares a word with: its first occurrence's text, kept
 * compact (the tokens array is too large to probe on every identifier), and
 * its keyword, looked up once per distinct word. */
typedef struct lex_word {
  uint32_t off, len;
  uint8_t kw;
} lex_word;

typedef struct lexer {
  kl_unit *u;
  const unsigned char *s;
  uint32_t n, i;
  uint32_t line, line_start;
  uint32_t ntok, cap;
  uint32_t open_launch;  /* unmatched <<< seen: decides whether >>> is one token */
  uint32_t acap;
  struct lex_word *words; /* each distinct word's first text and kl_kw    */
  uint32_t wcap;
  int oom;
} lexer;

static void newline_at(lexer *lx, uint32_t i) {
  lx->line++;
  lx->line_start = i + 1;
}

/* Counts the newlines in s[a, b) into the position. */
static void advance_lines(lexer *lx, uint32_t a, uint32_t b) {
  const unsigned char *p = lx->s + a, *e = lx->s + b;
  while (p < e && (p = memchr(p, '\n', (size_t)(e - p))) != NULL) {
    newline_at(lx, (uint32_t)(p - lx->s));
    p++;
  }
}

static int at_line_continuation(const lexer *lx, uint32_t i) {
  if (lx->s[i] != '\\') return 0;
  if (i + 1 < lx->n && lx->s[i + 1] == '\n') return 2;
  if (i + 2 < lx->n && lx->s[i + 1] == '\r' && lx->s[i + 2] == '\n') return 3;
  return 0;
}

static void record_annotation(lexer *lx, uint32_t b, uint32_t e) {
  /* b points at "//"; an annotation is "// @kl ..." */
  uint32_t i = b + 2;
  while (i < e && (lx->s[i] == ' ' || lx->s[i] == '\t')) i++;
  if (e - i < 3 || memcmp(lx->s + i, "@kl", 3) != 0) return;
  i += 3;
  if (i < e && !(lx->s[i] == ' ' || lx->s[i] == '\t')) return;
  while (i < e && (lx->s[i] == ' ' || lx->s[i] == '\t')) i++;
  uint32_t j = e;
  while (j > i && (lx->s[j - 1] == ' ' || lx->s[j - 1] == '\t' || lx->s[j - 1] == '\r')) j--;
  kl_unit *u = lx->u;
  if (u->nannotations == lx->acap) {
    uint32_t cap = lx->acap ? lx->acap * 2 : 8;
    kl_annotation *a = realloc(u->annotations, cap * sizeof *a);
    if (!a) {
      lx->oom = 1;
      return;
    }
    u->annotations = a;
    lx->acap = cap;
  }
  u->annotations[u->nannotations++] = (kl_annotation){i, j - i, lx->line};
}

/* The end of a block comment whose text starts at b: just past its closing
 * star-slash, or n, setting *unterminated, when the source ends first. */
static uint32_t block_comment_end(const unsigned char *s, uint32_t n, uint32_t b, int *unterminated) {
  const unsigned char *p = s + b;
  while ((p = memchr(p, '*', n - (uint32_t)(p - s))) != NULL) {
    if ((uint32_t)(p - s) + 1 < n && p[1] == '/') return (uint32_t)(p - s) + 2;
    p++;
  }
  *unterminated = 1;
  return n;
}

/* Skips whitespace, comments and line continuations from lx->i.
 * Sets *unterminated when a block comment runs off the end. */
static void skip_trivia(lexer *lx, int *unterminated) {
  const unsigned char *s = lx->s;
  uint32_t n = lx->n, i = lx->i;
  /* a UTF-8 byte order mark opens the file's first trivia */
  if (i == 0 && n >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) i = 3;
  for (;;) {
    while (i < n && (cclass[s[i]] & C_SPACE)) {
      if (s[i] == '\n') newline_at(lx, i);
      i++;
    }
    if (i + 1 < n && s[i] == '/' && s[i + 1] == '/') {
      uint32_t b = i;
      /* a // comment continues over backslash-newline */
      for (;;) {
        const unsigned char *nl = memchr(s + i, '\n', n - i);
        uint32_t e = nl ? (uint32_t)(nl - s) : n;
        uint32_t k = e;
        if (k > i && s[k - 1] == '\r') k--;
        if (nl && k > i && s[k - 1] == '\\') {
          newline_at(lx, e);
          i = e + 1;
          continue;
        }
        record_annotation(lx, b, e);
        i = e;
        break;
      }
      continue;
    }
    if (i + 1 < n && s[i] == '/' && s[i + 1] == '*') {
      uint32_t b = i + 2;
      uint32_t e = block_comment_end(s, n, b, unterminated);
      advance_lines(lx, b, e);
      i = e;
      continue;
    }
    uint32_t c = i < n ? (uint32_t)at_line_continuation(lx, i) : 0;
    if (c) {
      newline_at(lx, i + c - 1);
      i += c;
      continue;
    }
    break;
  }
  lx->i = i;
}

/* Scans a quoted literal body from i (just after the opening quote) to the
 * closing quote; stops before an unescaped newline. Returns the end. */
static uint32_t scan_quoted(lexer *lx, uint32_t i, unsigned char q, int *unterminated) {
  const unsigned char *s = lx->s;
  while (i < lx->n) {
    unsigned char c = s[i];
    if (c == q) return i + 1;
    if (c == '\n') break;
    if (c == '\\' && i + 1 < lx->n) {
      if (s[i + 1] == '\n') newline_at(lx, i + 1);
      else if (s[i + 1] == '\r' && i + 2 < lx->n && s[i + 2] == '\n') {
        newline_at(lx, i + 2);
        i++;
      }
      i += 2;
      continue;
    }
    i++;
  }
  *unterminated = 1;
  return i;
}

/* R"delim( ... )delim": i points at the opening quote. Returns the end or 0
 * when the delimiter is malformed (then it lexes as an ordinary string). */
static uint32_t scan_raw(lexer *lx, uint32_t i, int *unterminated) {
  const unsigned char *s = lx->s;
  uint32_t d = i + 1, k = d;
  while (k < lx->n && k - d <= 16 && s[k] != '(') {
    unsigned char c = s[k];
    if (c == ' ' || c == ')' || c == '\\' || c == '\t' || c == '\n' || c == '"') return 0;
    k++;
  }
  if (k >= lx->n || s[k] != '(') return 0;
  uint32_t dlen = k - d;
  uint32_t j = k + 1;
  while (j < lx->n) {
    const unsigned char *p = memchr(s + j, ')', lx->n - j);
    if (!p) break;
    uint32_t q = (uint32_t)(p - s);
    if (q + 1 + dlen < lx->n && memcmp(s + q + 1, s + d, dlen) == 0 && s[q + 1 + dlen] == '"') {
      advance_lines(lx, k, q + 2 + dlen);
      return q + 2 + dlen;
    }
    j = q + 1;
  }
  advance_lines(lx, k, lx->n);
  *unterminated = 1;
  return lx->n;
}

/* A preprocessor line from '#': through continuations, block comments and
 * literals, to the end of the line (newline excluded). */
static uint32_t scan_pp(lexer *lx, uint32_t i, int *unterminated) {
  const unsigned char *s = lx->s;
  uint32_t n = lx->n;
  while (i < n) {
    unsigned char c = s[i];
    if (c == '\n') break;
    uint32_t k = (uint32_t)at_line_continuation(lx, i);
    if (k) {
      newline_at(lx, i + k - 1);
      i += k;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '*') {
      uint32_t e = block_comment_end(s, n, i + 2, unterminated);
      advance_lines(lx, i, e);
      i = e;
      continue;
    }
    if (c == '/' && i + 1 < n && s[i + 1] == '/') {
      /* a line comment ends the directive, continuations included */
      for (;;) {
        const unsigned char *nl = memchr(s + i, '\n', n - i);
        uint32_t e = nl ? (uint32_t)(nl - s) : n;
        uint32_t k2 = e;
        if (k2 > i && s[k2 - 1] == '\r') k2--;
        if (nl && k2 > i && s[k2 - 1] == '\\') {
          newline_at(lx, e);
          i = e + 1;
          continue;
        }
        i = e;
        break;
      }
      break;
    }
    if (c == '"' || c == '\'') {
      /* `#error don't` is legal: an open quote in a directive is no error */
      int open_quote = 0;
      i = scan_quoted(lx, i + 1, c, &open_quote);
      continue;
    }
    i++;
  }
  /* the trailing \r of a CRLF line stays with the newline (trivia) */
  if (i > 0 && i < n && s[i] == '\n' && s[i - 1] == '\r') i--;
  return i;
}

static uint32_t scan_number(const lexer *lx, uint32_t i, int *is_float) {
  const unsigned char *s = lx->s;
  int hex = s[i] == '0' && i + 1 < lx->n && (s[i + 1] == 'x' || s[i + 1] == 'X');
  *is_float = 0;
  while (i < lx->n) {
    unsigned char c = s[i];
    if ((c == 'e' || c == 'E') && !hex) {
      *is_float = 1;
      i++;
      if (i < lx->n && (s[i] == '+' || s[i] == '-')) i++;
      continue;
    }
    if ((c == 'p' || c == 'P') && hex) {
      *is_float = 1;
      i++;
      if (i < lx->n && (s[i] == '+' || s[i] == '-')) i++;
      continue;
    }
    if (c == '.') {
      *is_float = 1;
      i++;
      continue;
    }
    if (c == '\'' && i + 1 < lx->n && (cclass[s[i + 1]] & C_ID)) {
      i++;
      continue;
    }
    if (cclass[c] & C_ID) {
      i++;
      continue;
    }
    break;
  }
  return i;
}

static const char *const punct3[] = {"<<<", ">>>", "<<=", ">>=", "...", "->*", "<=>"};
/* Two-character punctuators by first character: the second characters
 * that complete one (:: -> ++ -- << >> <= >= == != && || op= ## .*). */
static const char *const two_char_second[256] = {
    [':'] = ":", ['-'] = ">-=", ['+'] = "+=", ['<'] = "<=", ['>'] = ">=", ['='] = "=",
    ['!'] = "=", ['&'] = "&=", ['|'] = "|=", ['*'] = "=", ['/'] = "=", ['%'] = "=",
    ['^'] = "=", ['#'] = "#", ['.'] = "*",
};

static uint32_t scan_punct(lexer *lx, uint32_t i, uint32_t *sub) {
  const unsigned char *s = lx->s;
  uint32_t left = lx->n - i;
  if (cclass[s[i]] & C_PUNCT_ALONE) {
    *sub = KL_P1(s[i]);
    return i + 1;
  }
  unsigned char c0 = s[i];
  if (left >= 3 && (c0 == '<' || c0 == '>' || c0 == '.' || c0 == '-')) {
    for (size_t k = 0; k < sizeof punct3 / sizeof punct3[0]; k++) {
      if (memcmp(s + i, punct3[k], 3) != 0) continue;
      if (k == 1 && !lx->open_launch) continue; /* >>> only closes a <<< */
      if (k == 0) lx->open_launch++;
      if (k == 1) lx->open_launch--;
      *sub = KL_P3(s[i], s[i + 1], s[i + 2]);
      return i + 3;
    }
  }
  if (left >= 2 && s[i + 1] && two_char_second[s[i]] && strchr(two_char_second[s[i]], s[i + 1])) {
    *sub = KL_P2(s[i], s[i + 1]);
    return i + 2;
  }
  *sub = KL_P1(s[i]);
  return i + 1;
}

/* ---- the word table (distinct identifiers and keywords) -------------------- */

/* A word hash that reads 8 bytes at a time: identifiers are hashed once per
 * token, so this sits on the lexer's hot path. */
static uint32_t word_hash(const char *s, size_t n) {
  size_t len = n;
  uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
  while (n >= 8) {
    uint64_t w;
    memcpy(&w, s, 8);
    h = (h ^ w) * 0xff51afd7ed558ccdull;
    h ^= h >> 32;
    s += 8;
    n -= 8;
  }
  /* the last n < 8 bytes: one overlapping 8-byte load when the word is
   * that long, else byte by byte (a memcpy of n bytes into a word made a
   * store-forwarding stall on every identifier) */
  uint64_t w = 0;
  if (n && len >= 8) {
    memcpy(&w, s + n - 8, 8);
    w >>= 8 * (8 - n);
  } else {
    for (size_t i = 0; i < n; i++) w |= (uint64_t)(unsigned char)s[i] << (8 * i);
  }
  h = (h ^ w) * 0xc4ceb9fe1a85ec53ull;
  h ^= h >> 29;
  return (uint32_t)h;
}

static int word_grow(kl_unit *u) {
  uint32_t cap = u->word_cap ? u->word_cap * 2 : 256;
  uint32_t *table = calloc(cap, sizeof *table);
  if (!table) return 0;
  for (uint32_t k = 0; k < u->word_cap; k++) {
    uint32_t w = u->word_hash[k];
    if (!w) continue;
    const kl_token *t = &u->tokens[u->word_tok[w - 1]];
    uint32_t h = word_hash(u->src + t->off, t->len);
    while (table[h & (cap - 1)]) h++;
    table[h & (cap - 1)] = w;
  }
  free(u->word_hash);
  u->word_hash = table;
  u->word_cap = cap;
  uint32_t *wt = realloc(u->word_tok, (cap / 2 + 1) * sizeof *wt);
  if (!wt) return 0;
  u->word_tok = wt;
  return 1;
}

static uint32_t word_find(const kl_unit *u, const char *s, size_t len, uint32_t *slot) {
  if (!u->word_cap) return KL_NONE;
  uint32_t h = word_hash(s, len);
  for (;; h++) {
    uint32_t w = u->word_hash[h & (u->word_cap - 1)];
    if (!w) {
      if (slot) *slot = h & (u->word_cap - 1);
      return KL_NONE;
    }
    const kl_token *t = &u->tokens[u->word_tok[w - 1]];
    if (t->len == len && memcmp(u->src + t->off, s, len) == 0) return w - 1;
  }
}

uint32_t kl_unit_word(const kl_unit *u, const char *s, size_t len) {
  return word_find(u, s, len, NULL);
}

/* The word id of token tok (text src[off, off + len)), a new one when it
 * is the first of its text. KL_NONE on out of memory. */
static uint32_t word_intern(lexer *lx, uint32_t tok, uint32_t off, uint32_t len) {
  kl_unit *u = lx->u;
  if ((u->nwords + 1) * 2 > u->word_cap && !word_grow(u)) return KL_NONE;
  const char *s = u->src + off;
  uint32_t mask = u->word_cap - 1;
  for (uint32_t h = word_hash(s, len);; h++) {
    uint32_t *slot = &u->word_hash[h & mask];
    if (*slot) {
      const lex_word *lw = &lx->words[*slot - 1];
      if (lw->len == len && memcmp(u->src + lw->off, s, len) == 0) return *slot - 1;
      continue;
    }
    if (u->nwords == lx->wcap) {
      uint32_t cap = lx->wcap ? lx->wcap * 2 : 256;
      lex_word *bigger = realloc(lx->words, cap * sizeof *bigger);
      if (!bigger) return KL_NONE;
      lx->words = bigger;
      lx->wcap = cap;
    }
    uint32_t w = u->nwords++;
    u->word_tok[w] = tok;
    lx->words[w] = (lex_word){off, len, (uint8_t)kl_keyword(s, len)};
    *slot = w + 1;
    return w;
  }
}

/* ---- main loop ---------------------------------------------------------------- */

static kl_token *new_token(lexer *lx) {
  kl_unit *u = lx->u;
  if (lx->ntok == lx->cap) {
    /* a unit of one-byte tokens (garbage) outgrows the first guess */
    kl_unit_impl *ui = kl_unit_impl_of(u);
    kl_token *t = kl_src_grow(u->tokens, (size_t)lx->ntok * sizeof *t, &ui->tokens_cap,
                              ((size_t)lx->cap + 1) * sizeof *t);
    if (!t) {
      lx->oom = 1;
      return NULL;
    }
    u->tokens = t;
    size_t cap = ui->tokens_cap / sizeof *t;
    lx->cap = cap < UINT32_MAX ? (uint32_t)cap : UINT32_MAX;
  }
  return &u->tokens[lx->ntok++];
}

int kl_lex(kl_unit *u) {
  /* the static tables are built once, safely across threads */
  pthread_once(&tables_once, tables_init);
  lexer lx = {.u = u, .s = (const unsigned char *)u->src, .n = u->len, .line = 1};
  /* sized once from the length: real CUDA has one token per 4.7 bytes */
  kl_unit_impl *ui = kl_unit_impl_of(u);
  u->tokens = kl_src_alloc(((size_t)u->len / 4 + 16) * sizeof *u->tokens, &ui->tokens_cap);
  if (!u->tokens) return 0;
  lx.cap = (uint32_t)(ui->tokens_cap / sizeof *u->tokens);
  uint32_t last_line = 0;
  for (;;) {
    uint32_t tb = lx.i;
    int unterminated = 0;
    skip_trivia(&lx, &unterminated);
    if (unterminated) kl_diag_add(u, "KLS005", "unterminated comment", lx.ntok, lx.ntok + 1);
    kl_token *t = new_token(&lx);
    if (!t) {
      free(lx.words);
      return 0;
    }
    uint32_t b = lx.i;
    t->trivia_off = tb;
    t->trivia_len = b - tb;
    t->off = b;
    t->line = lx.line;
    t->col = b - lx.line_start + 1;
    t->match = KL_NONE;
    t->word = KL_NONE;
    t->sub = 0;
    t->flags = lx.line != last_line ? KL_TF_LINE_START : 0;
    t->reserved = 0;
    if (b >= lx.n) {
      t->kind = KL_TOK_EOF;
      t->len = 0;
      break;
    }
    const unsigned char *s = lx.s;
    unsigned char c = s[b];
    uint32_t e;
    int unt = 0;
    if (c == '#' && (t->flags & KL_TF_LINE_START)) {
      t->kind = KL_TOK_PP;
      e = scan_pp(&lx, b + 1, &unt);
    } else if (cclass[c] & C_DIGIT || (c == '.' && b + 1 < lx.n && (cclass[s[b + 1]] & C_DIGIT))) {
      int fl;
      e = scan_number(&lx, b, &fl);
      t->kind = fl ? KL_TOK_FLOAT : KL_TOK_INT;
    } else if ((cclass[c] & C_ID) || c >= 0x80) {
      t->kind = KL_TOK_IDENT;
      e = b;
      while (e < lx.n) {
        if (cclass[s[e]] & C_ID) e++;
        else if (s[e] >= 0x80) {
          size_t k = utf8_len(s + e, s + lx.n);
          if (!k) break;
          e += (uint32_t)k;
        } else
          break;
      }
      if (e == b) { /* an invalid byte */
        t->kind = KL_TOK_INVALID;
        e = b + 1;
        kl_diag_add(u, "KLS004", "invalid byte", lx.ntok - 1, lx.ntok);
      } else if (e < lx.n && (s[e] == '"' || s[e] == '\'')) {
        /* encoding prefixes: u8 u U L, with R for raw strings */
        uint32_t plen = e - b;
        const char *p = (const char *)s + b;
        int raw = plen >= 1 && p[plen - 1] == 'R';
        uint32_t base = raw ? plen - 1 : plen;
        int ok = base == 0 || (base == 1 && (p[0] == 'u' || p[0] == 'U' || p[0] == 'L')) ||
                 (base == 2 && p[0] == 'u' && p[1] == '8');
        if (ok && raw && s[e] == '"') {
          uint32_t r = scan_raw(&lx, e, &unt);
          if (r) {
            t->kind = KL_TOK_STRING;
            e = r;
            goto done;
          }
        }
        if (ok && !raw) {
          t->kind = s[e] == '"' ? KL_TOK_STRING : KL_TOK_CHAR;
          e = scan_quoted(&lx, e + 1, s[e], &unt);
          goto done;
        }
      }
      if (t->kind != KL_TOK_INVALID) {
        /* (return"x" and case'a' arrive here too: a keyword before a quote)
         * The keyword test runs once per distinct word, not per token. */
        t->len = e - b;
        uint32_t tok = lx.ntok - 1;
        uint32_t w = word_intern(&lx, tok, b, e - b);
        if (w == KL_NONE) {
          free(lx.words);
          return 0;
        }
        t = &u->tokens[tok];
        t->word = w;
        t->sub = lx.words[w].kw;
        t->kind = t->sub ? KL_TOK_KEYWORD : KL_TOK_IDENT;
      }
    } else if (c == '"' || c == '\'') {
      t->kind = c == '"' ? KL_TOK_STRING : KL_TOK_CHAR;
      e = scan_quoted(&lx, b + 1, c, &unt);
    } else if (cclass[c] & C_PUNCT) {
      t->kind = KL_TOK_PUNCT;
      e = scan_punct(&lx, b, &t->sub);
    } else {
      t->kind = KL_TOK_INVALID;
      e = b + 1;
      kl_diag_add(u, "KLS004", "invalid byte", lx.ntok - 1, lx.ntok);
    }
  done:
    t->len = e - b;
    if (unt) {
      t->flags |= KL_TF_UNTERMINATED;
      kl_diag_add(u, "KLS005", "unterminated literal", lx.ntok - 1, lx.ntok);
    }
    lx.i = e;
    last_line = lx.line;
    if (lx.oom) break;
  }
  free(lx.words);
  u->ntokens = lx.ntok;
  return !lx.oom;
}
