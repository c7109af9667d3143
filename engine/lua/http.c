/* kl.http: one HTTP request through libcurl, for LLM providers.
 * A refused or failed request is an expected failure: nil, err, kind.
 *
 *   http.request{ url = , method = "GET"|"POST", headers = { "K: v", ... },
 *                 body = string, timeout = seconds }
 *     -> { status = int, body = string, headers = { [lower-case name] = value } }
 *      | nil, err, kind
 *   headers are the final response's (after redirects); a name given twice
 *   has its values joined with ", ". kind says why a request failed, for
 *   retry policies: "timeout", "connect" (refused, unreachable), "resolve"
 *   (unknown host), "too_large" (a body over 64 MiB) or "transport".
 *   http.library() -> the path of the libcurl loaded | nil
 *   http.version   -> libcurl's version
 *
 * Ownership: the curl handle, its header list and the response buffers live
 * in one boxed userdata (kl.HttpRequest), created closed and freed by its
 * __gc, so a Lua error (out of memory) never leaks them.
 *
 * libcurl is opened when this module is first required, not linked: its
 * load costs some 15 ms of CPU, and only the LLM clients and `klineage
 * doctor` need it. It is the library the build found (KL_CURL_LIBRARY),
 * else libcurl.so.4 on the loader's path; a missing one makes the require
 * raise. */
#include <ctype.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <lauxlib.h>
#include <lua.h>

#include "core/libpath.h"
#include "lua/newtype.h"

#define REQUEST_MT "kl.HttpRequest"

/* The libcurl functions this module calls, opened once (field names drop
 * the curl_ prefix: curl.h may define curl_easy_setopt as a macro). */
#define CURL_FUNCTIONS(X)                                                                     \
  X(global_init, curl_global_init) X(version_info, curl_version_info)                         \
  X(easy_init, curl_easy_init) X(easy_cleanup, curl_easy_cleanup)                             \
  X(easy_setopt, curl_easy_setopt) X(easy_perform, curl_easy_perform)                         \
  X(easy_getinfo, curl_easy_getinfo) X(easy_strerror, curl_easy_strerror)                     \
  X(slist_append, curl_slist_append) X(slist_free_all, curl_slist_free_all)

static struct {
#define KL_FIELD(field, fn) __typeof__(&fn) field;
  CURL_FUNCTIONS(KL_FIELD)
#undef KL_FIELD
} cu;
static void *cu_handle;

/* Opens libcurl and finds every function, once; raises when it cannot. */
static void need_curl(lua_State *L) {
  if (cu_handle) return;
  const char *path = KL_CURL_LIBRARY;
  void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!h) h = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (!h) luaL_error(L, "kl.http: cannot load libcurl (%s): %s", path, dlerror());
#define KL_FIND(field, fn)                                                                    \
  {                                                                                           \
    void *sym = dlsym(h, #fn);                                                                \
    if (!sym) {                                                                               \
      dlclose(h);                                                                             \
      luaL_error(L, "kl.http: %s has no %s", path, #fn);                                      \
    }                                                                                         \
    memcpy(&cu.field, &sym, sizeof sym);                                                      \
  }
  CURL_FUNCTIONS(KL_FIND)
#undef KL_FIND
  cu_handle = h;
}

typedef struct {
  char *data;
  size_t len, cap;
  int overflow;
} growbuf;

typedef struct {
  CURL *curl;
  struct curl_slist *hdrs;
  growbuf body, head;
} request_box;

/* Responses larger than this are cut off with an error, never buffered. */
#define HTTP_MAX_BODY ((size_t)64 << 20)
/* The headers of one response: more is a broken or hostile server. */
#define HTTP_MAX_HEAD ((size_t)1 << 20)

static int grow_append(growbuf *b, const char *ptr, size_t n, size_t limit) {
  if (b->len + n + 1 > limit) {
    b->overflow = 1;
    return 0;
  }
  if (b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 4096;
    while (cap < b->len + n + 1) cap *= 2;
    char *p = realloc(b->data, cap);
    if (!p) return 0;
    b->data = p;
    b->cap = cap;
  }
  memcpy(b->data + b->len, ptr, n);
  b->len += n;
  return 1;
}

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user) {
  size_t n = size * nmemb;
  return grow_append(user, ptr, n, HTTP_MAX_BODY) ? n : 0;
}

/* One header line at a time; a status line starts a new response (a
 * redirect or a 100 Continue), whose headers replace the previous ones. */
static size_t on_header(char *ptr, size_t size, size_t nmemb, void *user) {
  growbuf *b = user;
  size_t n = size * nmemb;
  if (n >= 5 && memcmp(ptr, "HTTP/", 5) == 0) b->len = 0;
  return grow_append(b, ptr, n, HTTP_MAX_HEAD) ? n : 0;
}

static void request_release(request_box *r) {
  if (r->curl) cu.easy_cleanup(r->curl);
  r->curl = NULL;
  cu.slist_free_all(r->hdrs);
  r->hdrs = NULL;
  free(r->body.data);
  free(r->head.data);
  memset(&r->body, 0, sizeof r->body);
  memset(&r->head, 0, sizeof r->head);
}

static int request_gc(lua_State *L) {
  request_release(luaL_checkudata(L, 1, REQUEST_MT));
  return 0;
}

/* Pushes the table of the raw header block: lower-case names, trimmed
 * values, repeated names joined with ", ". */
static void push_headers(lua_State *L, const char *p, size_t len) {
  lua_newtable(L);
  const char *end = p + len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    const char *colon = memchr(p, ':', (size_t)(eol - p));
    int status_line = eol - p >= 5 && memcmp(p, "HTTP/", 5) == 0;
    if (colon && colon > p && !status_line) {
      luaL_Buffer name;
      luaL_buffinit(L, &name);
      for (const char *c = p; c < colon; c++) luaL_addchar(&name, (char)tolower((unsigned char)*c));
      luaL_pushresult(&name);
      const char *v = colon + 1, *ve = eol;
      while (v < ve && (*v == ' ' || *v == '\t')) v++;
      while (ve > v && (ve[-1] == '\r' || ve[-1] == ' ' || ve[-1] == '\t')) ve--;
      lua_pushvalue(L, -1);
      if (lua_rawget(L, -3) == LUA_TSTRING) {
        lua_pushliteral(L, ", ");
        lua_pushlstring(L, v, (size_t)(ve - v));
        lua_concat(L, 3);
      } else {
        lua_pop(L, 1);
        lua_pushlstring(L, v, (size_t)(ve - v));
      }
      lua_rawset(L, -3);
    }
    p = eol + 1;
  }
}

static const char *error_kind(CURLcode rc, int overflow) {
  if (overflow) return "too_large";
  switch (rc) {
  case CURLE_OPERATION_TIMEDOUT: return "timeout";
  case CURLE_COULDNT_CONNECT: return "connect";
  case CURLE_COULDNT_RESOLVE_HOST:
  case CURLE_COULDNT_RESOLVE_PROXY: return "resolve";
  default: return "transport";
  }
}

static int http_request(lua_State *L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  lua_getfield(L, 1, "url");
  const char *url = luaL_checkstring(L, -1);
  lua_getfield(L, 1, "method");
  const char *method = luaL_optstring(L, -1, "GET");
  lua_getfield(L, 1, "body");
  size_t body_len = 0;
  const char *body = luaL_optlstring(L, -1, NULL, &body_len);
  lua_getfield(L, 1, "timeout");
  lua_Number timeout = luaL_optnumber(L, -1, 60);
  lua_getfield(L, 1, "headers");
  int headers_idx = lua_gettop(L);
  if (!lua_isnil(L, headers_idx)) luaL_checktype(L, headers_idx, LUA_TTABLE);

  lua_Integer nheaders = lua_isnil(L, headers_idx) ? 0 : luaL_len(L, headers_idx);
  for (lua_Integer i = 1; i <= nheaders; i++) {
    if (lua_geti(L, headers_idx, i) != LUA_TSTRING)
      return luaL_error(L, "http.request: headers[%d] is not a string", (int)i);
    lua_pop(L, 1);
  }

  /* closed first, then acquire: from here a raise frees everything */
  request_box *r = lua_newuserdatauv(L, sizeof *r, 0);
  memset(r, 0, sizeof *r);
  luaL_setmetatable(L, REQUEST_MT);
  r->curl = cu.easy_init();
  if (!r->curl) {
    lua_pushnil(L);
    lua_pushliteral(L, "curl_easy_init failed");
    lua_pushliteral(L, "transport");
    return 3;
  }
  for (lua_Integer i = 1; i <= nheaders; i++) {
    lua_geti(L, headers_idx, i);
    struct curl_slist *grown = cu.slist_append(r->hdrs, lua_tostring(L, -1));
    lua_pop(L, 1);
    if (!grown) return luaL_error(L, "http.request: out of memory");
    r->hdrs = grown;
  }
  char errbuf[CURL_ERROR_SIZE] = "";
  CURL *curl = r->curl;
  cu.easy_setopt(curl, CURLOPT_URL, url);
  cu.easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
  cu.easy_setopt(curl, CURLOPT_HTTPHEADER, r->hdrs);
  cu.easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  cu.easy_setopt(curl, CURLOPT_WRITEDATA, &r->body);
  cu.easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  cu.easy_setopt(curl, CURLOPT_HEADERDATA, &r->head);
  cu.easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  cu.easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
  cu.easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  cu.easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  if (body) {
    cu.easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    cu.easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
  }
  CURLcode rc = cu.easy_perform(curl);
  long status = 0;
  cu.easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);

  if (rc != CURLE_OK) {
    lua_pushnil(L);
    if (r->body.overflow)
      lua_pushfstring(L, "%s: response larger than %d MiB", url, (int)(HTTP_MAX_BODY >> 20));
    else if (r->head.overflow)
      lua_pushfstring(L, "%s: response headers larger than %d MiB", url, (int)(HTTP_MAX_HEAD >> 20));
    else
      lua_pushfstring(L, "%s: %s", url, errbuf[0] ? errbuf : cu.easy_strerror(rc));
    lua_pushstring(L, error_kind(rc, r->body.overflow || r->head.overflow));
    request_release(r);
    return 3;
  }
  lua_createtable(L, 0, 3);
  lua_pushinteger(L, status);
  lua_setfield(L, -2, "status");
  lua_pushlstring(L, r->body.data ? r->body.data : "", r->body.len);
  lua_setfield(L, -2, "body");
  push_headers(L, r->head.data ? r->head.data : "", r->head.len);
  lua_setfield(L, -2, "headers");
  request_release(r);
  return 1;
}

static int http_library(lua_State *L) {
  char buf[PATH_MAX];
  if (kl_library_of((const void *)cu.easy_init, buf, sizeof buf))
    lua_pushstring(L, buf);
  else
    lua_pushnil(L);
  return 1;
}

static const luaL_Reg http_functions[] = {
    {"request", http_request},
    {"library", http_library},
    {NULL, NULL},
};

static const luaL_Reg request_meta[] = {
    {"__gc", request_gc},
    {"__close", request_gc},
    {NULL, NULL},
};

int luaopen_kl_http(lua_State *L) {
  static int initialized;
  need_curl(L);
  if (!initialized) {
    cu.global_init(CURL_GLOBAL_DEFAULT);
    initialized = 1;
  }
  kl_newtype(L, REQUEST_MT, request_meta, NULL);
  luaL_newlib(L, http_functions);
  lua_pushstring(L, cu.version_info(CURLVERSION_NOW)->version);
  lua_setfield(L, -2, "version");
  return 1;
}
