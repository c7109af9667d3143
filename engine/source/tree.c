/* Token trees: links every ( [ { to its closer (tok.match, both ways) with an
 * explicit stack, so nesting depth costs heap, never C stack. Then template
 * angle brackets are linked where the shape is unambiguous. */
#include <stdlib.h>

#include "source/internal.h"

static uint32_t closer_of(uint32_t sub) {
  return sub == '(' ? ')' : sub == '[' ? ']' : sub == '{' ? '}' : 0;
}

/* 0 for ( ), 1 for [ ], 2 for { } */
static uint32_t bracket_class(uint32_t sub) {
  return sub == '(' || sub == ')' ? 0 : sub == '[' || sub == ']' ? 1 : 2;
}

static int is_p(const kl_token *t, uint32_t sub) {
  return t->kind == KL_TOK_PUNCT && t->sub == sub;
}

/* Is the '<' at i a template bracket? Looks for its '>' within the same
 * bracket level, allowing nested angles, and decides from the tokens around.
 * On success links the pairs and returns 1. */
static int try_angle(kl_unit *u, uint32_t i) {
  kl_token *t = u->tokens;
  uint32_t stack[32];
  uint32_t depth = 0;
  uint32_t k = i;
  uint32_t limit = i + 256 < u->ntokens ? i + 256 : u->ntokens - 1;
  const kl_token *prev = i > 0 ? &t[i - 1] : NULL;
  int sure = prev && prev->kind == KL_TOK_KEYWORD &&
             (prev->sub == KL_KW_TEMPLATE || prev->sub == KL_KW_STATIC_CAST ||
              prev->sub == KL_KW_REINTERPRET_CAST || prev->sub == KL_KW_CONST_CAST ||
              prev->sub == KL_KW_DYNAMIC_CAST);
  if (!sure && !(prev && prev->kind == KL_TOK_IDENT)) return 0;
  while (k < limit) {
    const kl_token *c = &t[k];
    if (c->kind == KL_TOK_PUNCT) {
      uint32_t s = c->sub;
      if (s == '<') {
        /* a nested '<' must itself follow a name or be a template header */
        if (k != i && !(t[k - 1].kind == KL_TOK_IDENT ||
                        (t[k - 1].kind == KL_TOK_KEYWORD && t[k - 1].sub == KL_KW_TEMPLATE)))
          goto undo;
        if (depth == 32) goto undo;
        stack[depth++] = k;
      } else if (s == '>') {
        uint32_t open = stack[--depth];
        if (depth == 0) {
          /* what follows a closed template argument list */
          const kl_token *n = &t[k + 1];
          int ok = sure || n->kind == KL_TOK_IDENT || n->kind == KL_TOK_KEYWORD ||
                   n->kind == KL_TOK_EOF ||
                   (n->kind == KL_TOK_PUNCT &&
                    (n->sub == '(' || n->sub == KL_P2(':', ':') || n->sub == '{' ||
                     n->sub == ')' || n->sub == ';' || n->sub == '*' || n->sub == '&' ||
                     n->sub == ',' || n->sub == '>' || n->sub == KL_P2('&', '&') ||
                     n->sub == KL_P3('<', '<', '<') || n->sub == '.' || n->sub == ']'));
          if (!ok) goto undo;
          /* link every pair found on the way (recorded in order) */
          t[open].match = k;
          t[k].match = open;
          t[open].flags |= KL_TF_ANGLE;
          t[k].flags |= KL_TF_ANGLE;
          return 1;
        }
        t[open].match = k;
        t[k].match = open;
        t[open].flags |= KL_TF_ANGLE;
        t[k].flags |= KL_TF_ANGLE;
      } else if (s == KL_P2('>', '>') && depth >= 2) {
        /* A<B<int>>: one token closes two lists; both openers point at it,
         * and it points back at the outer one */
        uint32_t inner = stack[--depth], outer = stack[--depth];
        t[inner].match = k;
        t[outer].match = k;
        t[k].match = outer;
        t[inner].flags |= KL_TF_ANGLE;
        t[outer].flags |= KL_TF_ANGLE;
        t[k].flags |= KL_TF_ANGLE;
        if (depth == 0) {
          const kl_token *n = &t[k + 1];
          int ok = sure || n->kind == KL_TOK_IDENT || n->kind == KL_TOK_KEYWORD ||
                   (n->kind == KL_TOK_PUNCT &&
                    (n->sub == '(' || n->sub == KL_P2(':', ':') || n->sub == '{' ||
                     n->sub == ')' || n->sub == ';' || n->sub == '*' || n->sub == '&' ||
                     n->sub == ',' || n->sub == '>' || n->sub == KL_P3('<', '<', '<')));
          if (!ok) goto undo;
          return 1;
        }
      } else if (s == '(' || s == '[' || s == '{') {
        if (c->match == KL_NONE || s == '{') goto undo;
        k = c->match;
      } else if (s == ';' || s == '}' || s == ')' || s == ']' || s == KL_P2('&', '&') ||
                 s == KL_P2('|', '|') || s == KL_P2('>', '>') || s == '?' ||
                 s == KL_P3('<', '<', '<') || s == KL_P3('>', '>', '>') || (s == '=' && !sure)) {
        goto undo;
      }
    } else if (c->kind == KL_TOK_PP || c->kind == KL_TOK_EOF || c->kind == KL_TOK_STRING) {
      goto undo;
    }
    k++;
  }
undo:
  /* unlink inner pairs linked before the failure */
  for (uint32_t j = i; j <= k && j < u->ntokens; j++) {
    if (t[j].flags & KL_TF_ANGLE) {
      t[j].flags &= (uint8_t)~KL_TF_ANGLE;
      t[j].match = KL_NONE;
    }
  }
  return 0;
}

int kl_balance(kl_unit *u) {
  kl_token *t = u->tokens;
  uint32_t cap = 64, depth = 0;
  /* openers of each kind on the stack: a closer with none of its kind
   * open is known unbalanced at once, without scanning the stack (which
   * made "((((...]]]]" quadratic) */
  uint32_t open[3] = {0, 0, 0};
  uint32_t *stack = malloc(cap * sizeof *stack);
  if (!stack) return 0;
  for (uint32_t i = 0; i < u->ntokens; i++) {
    if (t[i].kind != KL_TOK_PUNCT) continue;
    uint32_t s = t[i].sub;
    if (s == '(' || s == '[' || s == '{') {
      if (depth == cap) {
        uint32_t *bigger = realloc(stack, cap * 2 * sizeof *stack);
        if (!bigger) {
          free(stack);
          return 0;
        }
        stack = bigger;
        cap *= 2;
      }
      stack[depth++] = i;
      open[bracket_class(s)]++;
    } else if (s == ')' || s == ']' || s == '}') {
      /* find the nearest opener of this kind; openers above it stay
       * unmatched. A closer with no opener at all stays unmatched. Each
       * opener scanned over leaves the stack: linear in all. */
      uint32_t cls = bracket_class(s);
      if (open[cls] == 0) {
        kl_diag_add(u, "KLS003", "unbalanced closing bracket", i, i + 1);
        continue;
      }
      uint32_t d = depth;
      while (d > 0 && closer_of(t[stack[d - 1]].sub) != s) d--;
      for (uint32_t k = d; k < depth; k++) {
        open[bracket_class(t[stack[k]].sub)]--;
        kl_diag_add(u, "KLS003", "unclosed bracket", stack[k], stack[k] + 1);
      }
      open[cls]--;
      depth = d - 1;
      t[stack[depth]].match = i;
      t[i].match = stack[depth];
    }
  }
  for (uint32_t k = 0; k < depth; k++)
    kl_diag_add(u, "KLS003", "unclosed bracket", stack[k], stack[k] + 1);
  free(stack);
  for (uint32_t i = 1; i < u->ntokens; i++)
    if (is_p(&t[i], '<') && !(t[i].flags & KL_TF_ANGLE)) try_angle(u, i);
  return 1;
}
