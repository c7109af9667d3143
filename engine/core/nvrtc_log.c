#include "core/nvrtc_log.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Copies the line starting at p (without its newline) into buf. Returns the
 * start of the next line, or NULL at the end. */
static const char *next_line(const char *p, char *buf, size_t size) {
  if (!p || !*p) return NULL;
  const char *end = strchr(p, '\n');
  size_t n = end ? (size_t)(end - p) : strlen(p);
  size_t k = n < size - 1 ? n : size - 1;
  memcpy(buf, p, k);
  buf[k] = '\0';
  if (k && buf[k - 1] == '\r') buf[k - 1] = '\0';
  return end ? end + 1 : p + n;
}

/* The number right before `unit` in line ("Used 32 registers" -> 32). */
static long number_before(const char *line, const char *unit, int *found) {
  const char *u = strstr(line, unit);
  *found = 0;
  if (!u) return 0;
  const char *q = u;
  while (q > line && q[-1] == ' ') q--;
  const char *digits = q;
  while (digits > line && digits[-1] >= '0' && digits[-1] <= '9') digits--;
  if (digits == q) return 0;
  *found = 1;
  return strtol(digits, NULL, 10);
}

static int find_or_add(kl_ptxas_function *out, int max, int *count, const char *name,
                       size_t len) {
  for (int i = 0; i < *count && i < max; i++)
    if (strlen(out[i].name) == len && strncmp(out[i].name, name, len) == 0) return i;
  int i = (*count)++;
  if (i < max) {
    memset(&out[i], 0, sizeof out[i]);
    size_t k = len < sizeof out[i].name - 1 ? len : sizeof out[i].name - 1;
    memcpy(out[i].name, name, k);
    out[i].name[k] = '\0';
  }
  return i;
}

/* Name between the first pair of quotes, or after "for " to the end. */
static int quoted_name(const char *s, const char **name, size_t *len) {
  const char *a = strchr(s, '\'');
  if (!a) return 0;
  const char *b = strchr(a + 1, '\'');
  if (!b) return 0;
  *name = a + 1;
  *len = (size_t)(b - a - 1);
  return 1;
}

int kl_ptxas_parse(const char *log, kl_ptxas_function *out, int max) {
  char line[1024];
  /* last_name remembers the function being reported even past max, where
   * out[] cannot, so "Function properties for X" after "Compiling entry
   * function 'X'" is not counted twice. */
  char last_name[256] = "";
  int count = 0, current = -1, found;
  for (const char *p = log; (p = next_line(p, line, sizeof line));) {
    const char *s;
    const char *name;
    size_t len;
    int is_entry = 0;
    if ((s = strstr(line, "Compiling entry function ")) && quoted_name(s, &name, &len)) {
      is_entry = 1;
    } else if ((s = strstr(line, "Function properties for "))) {
      name = s + strlen("Function properties for ");
      len = strlen(name);
      while (len && (name[len - 1] == ' ' || name[len - 1] == ':')) len--;
    } else {
      name = NULL;
    }
    if (name) {
      int same = current >= 0 && strlen(last_name) == len && strncmp(last_name, name, len) == 0;
      if (!same) current = find_or_add(out, max, &count, name, len);
      size_t k = len < sizeof last_name - 1 ? len : sizeof last_name - 1;
      memcpy(last_name, name, k);
      last_name[k] = '\0';
      if (is_entry && current < max) out[current].is_entry = 1;
    }
    if (!name && current >= 0 && current < max) {
      kl_ptxas_function *f = &out[current];
      long v;
      if (strstr(line, "stack frame")) {
        v = number_before(line, "bytes stack frame", &found);
        if (found) f->stack = v;
        v = number_before(line, "bytes spill stores", &found);
        if (found) f->spill_stores = v;
        v = number_before(line, "bytes spill loads", &found);
        if (found) f->spill_loads = v;
      } else if (strstr(line, "Used ")) {
        v = number_before(line, "registers", &found);
        if (found) f->registers = (int)v;
        v = number_before(line, "barriers", &found);
        if (found) f->barriers = (int)v;
        v = number_before(line, "bytes smem", &found);
        if (found) f->smem = v;
        v = number_before(line, "bytes cmem[0]", &found);
        if (found) f->cmem0 = v;
      }
    }
  }
  return count;
}

/* "file(12): error: message", "file(3): warning #177-D: message" or
 * "file(12): catastrophic error: ...". The file name may hold parentheses,
 * so the line number is the last "(digits): " of the head. */
static int parse_diag_head(const char *line, kl_diagnostic *d) {
  const char *close = NULL;
  for (const char *q = strstr(line, "): "); q; q = strstr(q + 1, "): ")) {
    const char *open = q;
    while (open > line && open[-1] >= '0' && open[-1] <= '9') open--;
    if (open > line && open < q && open[-1] == '(') {
      close = q;
      break;
    }
  }
  if (!close) return 0;
  const char *open = close;
  while (open[-1] != '(') open--;
  open--; /* at '(' */
  const char *rest = close + 3;
  static const char *const severities[] = {"catastrophic error", "error", "warning"};
  for (size_t i = 0; i < sizeof severities / sizeof severities[0]; i++) {
    size_t n = strlen(severities[i]);
    if (strncmp(rest, severities[i], n) != 0) continue;
    const char *after = rest + n;
    if (after[0] == ' ' && after[1] == '#') { /* diagnostic number: " #177-D" */
      after += 2;
      while (*after && *after != ':' && *after != ' ') after++;
    }
    if (*after != ':') continue;
    size_t flen = (size_t)(open - line);
    if (flen >= sizeof d->file) flen = sizeof d->file - 1;
    memcpy(d->file, line, flen);
    d->file[flen] = '\0';
    d->line = atoi(open + 1);
    d->col = 0;
    snprintf(d->severity, sizeof d->severity, "%s", severities[i]);
    const char *msg = after + 1;
    while (*msg == ' ') msg++;
    snprintf(d->message, sizeof d->message, "%.*s", (int)sizeof d->message - 1, msg);
    return 1;
  }
  return 0;
}

/* The EDG front end prints the source line indented by two spaces, then a
 * caret line under it: the column is the caret's, less that indent. */
static int caret_column(const char *line) {
  const char *c = strchr(line, '^');
  if (!c) return 0;
  for (const char *q = line; q < c; q++)
    if (*q != ' ' && *q != '\t') return 0;
  int col = (int)(c - line) + 1 - 2;
  return col >= 1 ? col : 1;
}

/* A line that reports an error with no source location: ptxas's
 * ("ptxas error   : Entry function 'k' uses too much shared data ..."),
 * ptxas's fatal ones, nvlink's, or NVRTC's own ("nvrtc: error: ..."). The
 * word must stand alone and be followed by a colon, so a kernel named
 * error_kernel in a resource report is no error. */
static int is_unlocated_error(const char *line) {
  static const char *const words[] = {"error", "fatal"};
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
    size_t n = strlen(words[i]);
    for (const char *q = strstr(line, words[i]); q; q = strstr(q + 1, words[i])) {
      if (q > line && q[-1] != ' ') continue;
      const char *after = q + n;
      while (*after == ' ') after++;
      if (*after == ':') return 1;
    }
  }
  return 0;
}

int kl_nvrtc_first_diagnostic(const char *log, kl_diagnostic *d) {
  char line[1024], first_text[512] = "", first_error[512] = "";
  kl_diagnostic warning;
  int have_warning = 0;
  memset(d, 0, sizeof *d);
  for (const char *p = log; (p = next_line(p, line, sizeof line));) {
    kl_diagnostic cur;
    if (!first_text[0] && line[0]) snprintf(first_text, sizeof first_text, "%.*s", (int)sizeof first_text - 1, line);
    if (!parse_diag_head(line, &cur)) {
      if (!first_error[0] && is_unlocated_error(line))
        snprintf(first_error, sizeof first_error, "%.*s", (int)sizeof first_error - 1, line);
      continue;
    }
    /* Look ahead: source line, then caret line. */
    char src[1024], caret[1024];
    const char *q = next_line(p, src, sizeof src);
    if (q && next_line(q, caret, sizeof caret)) cur.col = caret_column(caret);
    if (strcmp(cur.severity, "warning") != 0) {
      *d = cur;
      return 1;
    }
    if (!have_warning) {
      warning = cur;
      have_warning = 1;
    }
  }
  /* An error with no location (ptxas's) is the cause of a failure where
   * the front end only warned. */
  if (first_error[0]) {
    snprintf(d->message, sizeof d->message, "%s", first_error);
    return 0;
  }
  if (have_warning) {
    *d = warning;
    return 1;
  }
  snprintf(d->message, sizeof d->message, "%s", first_text);
  return 0;
}

int kl_nvrtc_log_has_error(const char *log) {
  char line[1024];
  for (const char *p = log; (p = next_line(p, line, sizeof line));) {
    kl_diagnostic cur;
    if (parse_diag_head(line, &cur) ? strcmp(cur.severity, "warning") != 0 : is_unlocated_error(line)) return 1;
  }
  return 0;
}
