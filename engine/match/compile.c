/* Pattern compiler: a km_pattern_desc (the token list lua/klineage/pattern/init.lua produces)
 * becomes one flat array of km_step plus a string pool, checked for the
 * invariants the matcher relies on (slots in range, brackets balanced). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match/match.h"

#define KM_MAX_STEPS 4096
#define KM_MAX_SLOTS 256
#define KM_MAX_NEST 256

static void set_err(char *err, size_t errlen, uint32_t row, uint32_t col, const char *fmt, ...) {
  if (!err || !errlen) return;
  int n = snprintf(err, errlen, "%u:%u: ", (unsigned)row, (unsigned)col);
  if (n < 0 || (size_t)n >= errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
  va_end(ap);
}

static int is_word(const char *s, size_t n) {
  if (n == 0) return 0;
  unsigned char c = (unsigned char)s[0];
  if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))) return 0;
  for (size_t i = 1; i < n; i++) {
    c = (unsigned char)s[i];
    if (!(c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')))
      return 0;
  }
  return 1;
}

static int closer_of(const char *s, size_t n) {
  if (n != 1) return 0;
  switch (s[0]) {
  case '(': return ')';
  case '[': return ']';
  case '{': return '}';
  default: return 0;
  }
}

static int is_closer(const char *s, size_t n) {
  return n == 1 && (s[0] == ')' || s[0] == ']' || s[0] == '}');
}

/* Appends s[0, n) and a NUL to the pool; returns its offset. */
static uint32_t pool_add(km_pattern *p, const char *s, size_t n) {
  uint32_t off = p->pool_len;
  memcpy(p->pool + off, s, n);
  p->pool[off + n] = '\0';
  p->pool_len += (uint32_t)n + 1;
  return off;
}

/* An operator's characters packed as KL_P*() does; 0 for none. */
static uint32_t pack_op(const char *op) {
  size_t n = op ? strlen(op) : 0;
  if (n < 1 || n > 3) return 0;
  uint32_t v = KL_P1(op[0]);
  if (n >= 2) v |= KL_P1(op[1]) << 8;
  if (n >= 3) v |= KL_P1(op[2]) << 16;
  return v;
}

void km_pattern_free(km_pattern *p) {
  if (!p) return;
  free(p->steps);
  free(p->pool);
  free(p->slot_name);
  free(p->slot_sort);
  free(p->words);
  free(p);
}

const char *km_slot_name(const km_pattern *p, uint32_t slot) {
  return slot < p->nslots ? p->pool + p->slot_name[slot] : NULL;
}

km_pattern *km_compile(const km_pattern_desc *d, char *err, size_t errlen) {
  if (err && errlen) err[0] = '\0';
  if (!d || (d->ntokens && !d->tokens)) {
    set_err(err, errlen, 1, 1, "no pattern");
    return NULL;
  }
  if (d->ntokens == 0) {
    set_err(err, errlen, 1, 1, "empty pattern");
    return NULL;
  }
  if (d->ntokens >= KM_MAX_STEPS) {
    set_err(err, errlen, d->tokens[0].row, d->tokens[0].col, "pattern too long (%u tokens, at most %u)",
            (unsigned)d->ntokens, (unsigned)KM_MAX_STEPS - 1);
    return NULL;
  }
  if (d->nslots > KM_MAX_SLOTS) {
    set_err(err, errlen, 1, 1, "too many metavariables (%u, at most %u)", (unsigned)d->nslots,
            (unsigned)KM_MAX_SLOTS);
    return NULL;
  }

  /* Validate first, so allocation failures are the only late errors. */
  size_t pool = 1;
  char stack[KM_MAX_NEST];
  uint32_t depth = 0;
  for (uint32_t i = 0; i < d->ntokens; i++) {
    const km_ptoken *t = &d->tokens[i];
    switch (t->kind) {
    case KM_PT_LITERAL:
    case KM_PT_DIRECTIVE:
      if (!t->text || t->len == 0 || t->len > 4096) {
        set_err(err, errlen, t->row, t->col, "empty or oversized literal token");
        return NULL;
      }
      if (memchr(t->text, '\0', t->len)) {
        set_err(err, errlen, t->row, t->col, "NUL byte in a literal token");
        return NULL;
      }
      pool += t->len + 1;
      if (t->kind == KM_PT_LITERAL) {
        int c = closer_of(t->text, t->len);
        if (c) {
          if (depth == KM_MAX_NEST) {
            set_err(err, errlen, t->row, t->col, "brackets nest deeper than %d", KM_MAX_NEST);
            return NULL;
          }
          stack[depth++] = (char)c;
        } else if (is_closer(t->text, t->len)) {
          if (depth == 0 || stack[depth - 1] != t->text[0]) {
            set_err(err, errlen, t->row, t->col, "unbalanced '%c'", t->text[0]);
            return NULL;
          }
          depth--;
        }
      }
      break;
    case KM_PT_META:
    case KM_PT_SEQ:
      if (t->slot < 0 || (uint32_t)t->slot >= d->nslots) {
        set_err(err, errlen, t->row, t->col, "metavariable slot %d out of range", t->slot);
        return NULL;
      }
      if ((unsigned)t->sort > KM_SORT_SEQ || (unsigned)t->ctx > KM_CTX_HEADER) {
        set_err(err, errlen, t->row, t->col, "bad metavariable sort or context");
        return NULL;
      }
      if ((t->kind == KM_PT_SEQ) != (t->sort == KM_SORT_SEQ)) {
        set_err(err, errlen, t->row, t->col, "a sequence metavariable must have the sequence sort");
        return NULL;
      }
      break;
    case KM_PT_ELLIPSIS:
      if ((unsigned)t->ctx > KM_CTX_HEADER) {
        set_err(err, errlen, t->row, t->col, "bad ellipsis context");
        return NULL;
      }
      if (t->slot >= 0 && (uint32_t)t->slot >= d->nslots) {
        set_err(err, errlen, t->row, t->col, "ellipsis slot %d out of range", t->slot);
        return NULL;
      }
      break;
    default:
      set_err(err, errlen, t->row, t->col, "unknown pattern token kind %d", (int)t->kind);
      return NULL;
    }
  }
  if (depth) {
    const km_ptoken *t = &d->tokens[d->ntokens - 1];
    set_err(err, errlen, t->row, t->col, "unclosed bracket (expected '%c')", stack[depth - 1]);
    return NULL;
  }
  for (uint32_t s = 0; s < d->nslots; s++) {
    const char *name = d->slot_names ? d->slot_names[s] : NULL;
    size_t n = name ? strlen(name) : 0;
    if (n > 256) n = 256;
    pool += n + 1;
  }

  km_pattern *p = calloc(1, sizeof *p);
  if (!p) goto oom;
  p->steps = calloc(d->ntokens + 1, sizeof *p->steps);
  p->pool = malloc(pool);
  p->slot_name = calloc(d->nslots ? d->nslots : 1, sizeof *p->slot_name);
  p->slot_sort = calloc(d->nslots ? d->nslots : 1, 1);
  p->words = calloc(d->ntokens, sizeof *p->words);
  if (!p->steps || !p->pool || !p->slot_name || !p->slot_sort || !p->words) goto oom;
  p->pool[0] = '\0';
  p->pool_len = 1;
  p->nslots = d->nslots;
  p->shape = (uint8_t)(d->shape == KM_SHAPE_STMTS ? KM_SHAPE_STMTS : KM_SHAPE_EXPR);

  uint8_t seen[KM_MAX_SLOTS] = {0};
  for (uint32_t s = 0; s < d->nslots; s++) {
    const char *name = d->slot_names ? d->slot_names[s] : NULL;
    size_t n = name ? strlen(name) : 0;
    if (n > 256) n = 256;
    p->slot_name[s] = pool_add(p, name ? name : "", n);
  }
  for (uint32_t i = 0; i < d->ntokens; i++) {
    const km_ptoken *t = &d->tokens[i];
    km_step *st = &p->steps[i];
    st->row = t->row;
    st->col = t->col;
    switch (t->kind) {
    case KM_PT_LITERAL:
      st->op = KM_OP_TOKEN;
      st->text = pool_add(p, t->text, t->len);
      st->len = (uint32_t)t->len;
      p->nliterals++;
      if (is_word(t->text, t->len)) {
        int dup = 0;
        for (uint32_t w = 0; w < p->nwords; w++)
          if (strcmp(p->pool + p->words[w], p->pool + st->text) == 0) dup = 1;
        if (!dup) {
          p->words[p->nwords++] = st->text;
          km_sig_add(&p->word_sig, t->text, t->len);
        }
      }
      break;
    case KM_PT_DIRECTIVE:
      st->op = KM_OP_PP;
      st->text = pool_add(p, t->text, t->len);
      st->len = (uint32_t)t->len;
      p->nliterals++;
      break;
    case KM_PT_META:
      st->op = KM_OP_BIND;
      st->sort = (uint8_t)t->sort;
      st->slot = (uint16_t)t->slot;
      break;
    case KM_PT_SEQ:
      st->op = KM_OP_SEQ;
      st->sort = KM_SORT_SEQ;
      st->ctx = (uint8_t)t->ctx;
      st->slot = (uint16_t)t->slot;
      break;
    case KM_PT_ELLIPSIS:
      st->op = KM_OP_SKIP;
      st->ctx = (uint8_t)t->ctx;
      st->slot = t->slot >= 0 ? (uint16_t)t->slot : KM_NO_SLOT;
      break;
    }
    if (st->slot != KM_NO_SLOT && st->op != KM_OP_TOKEN && st->op != KM_OP_PP && !seen[st->slot]) {
      seen[st->slot] = 1;
      p->slot_sort[st->slot] = st->sort;
    }
  }
  p->steps[d->ntokens].op = KM_OP_END;
  p->nsteps = d->ntokens + 1;

  for (int k = 0; k < 2; k++) {
    p->root_kind[k] = KL_N__COUNT;
    if (d->root_kinds[k]) {
      kl_node_kind kind = kl_kind_from_name(d->root_kinds[k]);
      if (kind == KL_N__COUNT) {
        set_err(err, errlen, d->tokens[0].row, d->tokens[0].col, "unknown node kind '%s'",
                d->root_kinds[k]);
        km_pattern_free(p);
        return NULL;
      }
      p->root_kind[k] = (uint16_t)kind;
    }
  }
  p->root_op = pack_op(d->root_op);
  p->root_strength = (uint8_t)(p->root_kind[0] == KL_N__COUNT ? KM_PREC_UNKNOWN
                                                               : km_root_strength(p->root_kind[0], p->root_op));
  p->child_kind = KL_N__COUNT;
  if (d->child_kind) {
    kl_node_kind kind = kl_kind_from_name(d->child_kind);
    if (kind == KL_N__COUNT) {
      set_err(err, errlen, d->tokens[0].row, d->tokens[0].col, "unknown node kind '%s'", d->child_kind);
      km_pattern_free(p);
      return NULL;
    }
    p->child_kind = (uint16_t)kind;
    p->child_op = pack_op(d->child_op);
  }
  for (uint32_t c = 0; c < d->nchecks && c < KM_MAX_CHECKS; c++) {
    const km_check_desc *cd = &d->checks[c];
    kl_node_kind kind = cd->kind ? kl_kind_from_name(cd->kind) : KL_N__COUNT;
    if (kind == KL_N__COUNT || cd->depth < 1 || cd->depth > 3 || !cd->path) continue; /* unusable: skip */
    km_check *k = &p->checks[p->nchecks];
    int ok = 1;
    for (uint32_t q = 0; q < cd->depth; q++) {
      if (cd->path[q] < 0 || cd->path[q] > 255) ok = 0;
      else k->path[q] = (uint8_t)cd->path[q];
    }
    if (!ok) continue;
    k->depth = (uint8_t)cd->depth;
    k->kind = (uint16_t)kind;
    k->op = pack_op(cd->op);
    p->nchecks++;
  }
  return p;

oom:
  km_pattern_free(p);
  set_err(err, errlen, 1, 1, "out of memory");
  return NULL;
}
