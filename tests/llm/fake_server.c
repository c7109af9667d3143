/* A fake LLM server for tests/lua/llm_spec.lua: plain HTTP/1.1 on
 * 127.0.0.1, one request at a time, no dependencies.
 *
 *   fake_server ANSWERS_DIR      prints its port on a line, then serves
 *                                until killed
 *
 * The path picks the behaviour; the API shape comes from its end
 * (".../chat/completions": OpenAI, ".../messages": Anthropic):
 *   /ok/A/...            200 with the answer ANSWERS_DIR/A.md
 *   /429/N/T/A/...       the first N requests of this path: 429 with
 *                        Retry-After: 1; then as /ok/A
 *   /429date/N/T/A/...   as /429, Retry-After as an HTTP date 2 s ahead
 *   /500/N/T/A/...       the first N requests: 500; then as /ok/A
 *   /drop/N/T/A/...      the first N requests: closed with no answer; then as /ok/A
 *   /hang/...            reads the request, never answers
 *   /echo/...            400, the body is the request's head and body
 *   /echo_ok/...         200, the answer text is the request's head and body
 *   /status/C/...        status C with a JSON error body
 *   /garbage/...         200 with a body that is not JSON
 * T is any tag, so that each test case counts its own requests. */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_REQUEST (4 << 20)
#define MAX_PATHS 256
#define MAX_HUNG 64

static const char *answers_dir;
static struct {
  char path[512];
  int hits;
} counts[MAX_PATHS];
static int ncounts;

static int hit(const char *path) {
  for (int i = 0; i < ncounts; i++)
    if (strcmp(counts[i].path, path) == 0) return ++counts[i].hits;
  if (ncounts == MAX_PATHS) return 1;
  snprintf(counts[ncounts].path, sizeof counts[ncounts].path, "%s", path);
  counts[ncounts].hits = 1;
  return counts[ncounts++].hits;
}

static void send_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return;
    p += w;
    n -= (size_t)w;
  }
}

static void respond(int fd, int status, const char *extra_headers, const char *type, const char *body, size_t len) {
  char head[1024];
  int n = snprintf(head, sizeof head,
                   "HTTP/1.1 %d Fake\r\nContent-Type: %s\r\nContent-Length: %zu\r\n%sConnection: close\r\n\r\n",
                   status, type, len, extra_headers ? extra_headers : "");
  send_all(fd, head, (size_t)n);
  send_all(fd, body, len);
}

/* text as a JSON string literal, malloc'd */
static char *json_string(const char *s, size_t n) {
  char *out = malloc(n * 6 + 3), *o = out;
  if (!out) exit(1);
  *o++ = '"';
  for (size_t i = 0; i < n; i++) {
    unsigned char c = (unsigned char)s[i];
    if (c == '"' || c == '\\') *o++ = '\\', *o++ = (char)c;
    else if (c == '\n') *o++ = '\\', *o++ = 'n';
    else if (c == '\r') *o++ = '\\', *o++ = 'r';
    else if (c == '\t') *o++ = '\\', *o++ = 't';
    else if (c < 0x20) o += sprintf(o, "\\u%04x", c);
    else *o++ = (char)c;
  }
  *o++ = '"';
  *o = '\0';
  return out;
}

static void answer(int fd, const char *path, const char *text, size_t n) {
  char *s = json_string(text, n);
  size_t cap = strlen(s) + 512;
  char *body = malloc(cap);
  if (!body) exit(1);
  size_t plen = strlen(path);
  if (plen >= 9 && strcmp(path + plen - 9, "/messages") == 0)
    snprintf(body, cap,
             "{\"id\":\"msg_fake\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"fake\","
             "\"content\":[{\"type\":\"text\",\"text\":%s}],\"stop_reason\":\"end_turn\","
             "\"usage\":{\"input_tokens\":11,\"output_tokens\":7}}", s);
  else if (plen >= 17 && strcmp(path + plen - 17, "/chat/completions") == 0)
    snprintf(body, cap,
             "{\"id\":\"chatcmpl-fake\",\"object\":\"chat.completion\",\"model\":\"fake\","
             "\"choices\":[{\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":%s},"
             "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":11,\"completion_tokens\":7}}", s);
  else {
    free(s);
    free(body);
    respond(fd, 404, NULL, "text/plain", "no such API\n", 12);
    return;
  }
  respond(fd, 200, NULL, "application/json", body, strlen(body));
  free(s);
  free(body);
}

static void answer_file(int fd, const char *path, const char *name) {
  char file[1024];
  snprintf(file, sizeof file, "%s/%s.md", answers_dir, name);
  FILE *f = fopen(file, "rb");
  if (!f) {
    respond(fd, 404, NULL, "text/plain", "no such answer\n", 15);
    return;
  }
  static char text[1 << 20];
  size_t n = fread(text, 1, sizeof text, f);
  fclose(f);
  answer(fd, path, text, n);
}

/* The path's segments after the first k, as the answer name. */
static const char *segment(const char *path, int k, char *out, size_t cap) {
  const char *p = path;
  for (int i = 0; i <= k; i++) {
    p = strchr(p, '/');
    if (!p) return NULL;
    p++;
  }
  const char *end = strchr(p, '/');
  size_t n = end ? (size_t)(end - p) : strlen(p);
  if (n >= cap) n = cap - 1;
  memcpy(out, p, n);
  out[n] = '\0';
  return out;
}

/* Returns 1 when the connection is to be left open (a hang). */
static int serve(int fd, const char *req, size_t len) {
  char method[16], path[512];
  if (sscanf(req, "%15s %511s", method, path) != 2) {
    respond(fd, 400, NULL, "text/plain", "bad request\n", 12);
    return 0;
  }
  char mode[32], a1[64], a3[128];
  if (!segment(path, 0, mode, sizeof mode)) mode[0] = '\0';
  if (strcmp(mode, "hang") == 0) return 1;
  if (strcmp(mode, "ok") == 0 && segment(path, 1, a1, sizeof a1)) {
    answer_file(fd, path, a1);
  } else if ((strcmp(mode, "429") == 0 || strcmp(mode, "429date") == 0 || strcmp(mode, "500") == 0 ||
              strcmp(mode, "drop") == 0) &&
             segment(path, 1, a1, sizeof a1) && segment(path, 3, a3, sizeof a3)) {
    if (hit(path) > atoi(a1)) {
      answer_file(fd, path, a3);
    } else if (mode[0] == 'd') {
      /* closed unanswered: the client sees an empty reply */
    } else if (mode[0] == '5') {
      respond(fd, 500, NULL, "application/json", "{\"error\":{\"message\":\"fake overload\"}}", 38);
    } else {
      char extra[128];
      if (strcmp(mode, "429") == 0) {
        snprintf(extra, sizeof extra, "Retry-After: 1\r\n");
      } else {
        time_t t = time(NULL) + 2;
        struct tm tm;
        gmtime_r(&t, &tm);
        strftime(extra, sizeof extra, "Retry-After: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
      }
      respond(fd, 429, extra, "application/json", "{\"error\":{\"message\":\"slow down\"}}", 34);
    }
  } else if (strcmp(mode, "echo") == 0) {
    respond(fd, 400, NULL, "text/plain", req, len);
  } else if (strcmp(mode, "echo_ok") == 0) {
    answer(fd, path, req, len);
  } else if (strcmp(mode, "status") == 0 && segment(path, 1, a1, sizeof a1)) {
    char body[128];
    int n = snprintf(body, sizeof body, "{\"error\":{\"message\":\"fake error %s\"}}", a1);
    respond(fd, atoi(a1), NULL, "application/json", body, (size_t)n);
  } else if (strcmp(mode, "garbage") == 0) {
    respond(fd, 200, NULL, "application/json", "<html>not json", 14);
  } else {
    respond(fd, 404, NULL, "text/plain", "no such mode\n", 13);
  }
  return 0;
}

/* Reads one request (head and Content-Length body) into buf; returns its length. */
static size_t read_request(int fd, char *buf, size_t cap) {
  size_t len = 0, need = 0;
  for (;;) {
    ssize_t r = read(fd, buf + len, cap - 1 - len);
    if (r <= 0) break;
    len += (size_t)r;
    buf[len] = '\0';
    char *end = strstr(buf, "\r\n\r\n");
    if (end && !need) {
      size_t body = 0;
      for (char *h = buf; h && h < end; h = strstr(h, "\r\n"), h = h ? h + 2 : NULL)
        if (strncasecmp(h, "Content-Length:", 15) == 0) body = (size_t)strtoul(h + 15, NULL, 10);
      need = (size_t)(end + 4 - buf) + body;
    }
    if (need && len >= need) break;
    if (len + 1 >= cap) break;
  }
  return len;
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: fake_server ANSWERS_DIR\n");
    return 2;
  }
  answers_dir = argv[1];
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in a = {0};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (s < 0 || bind(s, (struct sockaddr *)&a, sizeof a) != 0 || listen(s, 16) != 0) {
    perror("fake_server");
    return 1;
  }
  socklen_t al = sizeof a;
  getsockname(s, (struct sockaddr *)&a, &al);
  printf("%d\n", ntohs(a.sin_port));
  fflush(stdout);
  static char buf[MAX_REQUEST];
  int hung[MAX_HUNG], nhung = 0;
  for (;;) {
    int c = accept(s, NULL, NULL);
    if (c < 0) continue;
    size_t len = read_request(c, buf, sizeof buf);
    if (serve(c, buf, len) && nhung < MAX_HUNG) hung[nhung++] = c; /* held open, never answered */
    else close(c);
  }
  (void)hung;
}
