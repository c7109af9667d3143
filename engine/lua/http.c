/* kl.http: one HTTP request through libcurl, for LLM providers.
 * A refused or failed request is an expected failure: nil, err. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <curl/curl.h>
#include <lauxlib.h>
#include <lua.h>

#include "core/libpath.h"

typedef struct {
  char *data;
  size_t len, cap;
  int overflow;
} growbuf;

/* Responses larger than this are cut off with an error, never buffered. */
#define HTTP_MAX_BODY ((size_t)64 << 20)

static size_t on_body(char *ptr, size_t size, size_t nmemb, void *user) {
  growbuf *b = user;
  size_t n = size * nmemb;
  if (b->len + n + 1 > HTTP_MAX_BODY) {
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
  return n;
}

/* http.request{ url = , method = "GET"|"POST", headers = { "K: v", ... },
 *               body = string, timeout = seconds }
 *   -> { status = int, body = string }  |  nil, err */
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

  /* Validate every header before acquiring anything, so nothing raises
   * while curl state is held on the C stack. */
  lua_Integer nheaders = lua_isnil(L, headers_idx) ? 0 : luaL_len(L, headers_idx);
  for (lua_Integer i = 1; i <= nheaders; i++) {
    if (lua_geti(L, headers_idx, i) != LUA_TSTRING)
      return luaL_error(L, "http.request: headers[%d] is not a string", (int)i);
    lua_pop(L, 1);
  }

  CURL *curl = curl_easy_init();
  if (!curl) {
    lua_pushnil(L);
    lua_pushliteral(L, "curl_easy_init failed");
    return 2;
  }
  struct curl_slist *hdrs = NULL;
  for (lua_Integer i = 1; i <= nheaders; i++) {
    lua_geti(L, headers_idx, i);
    hdrs = curl_slist_append(hdrs, lua_tostring(L, -1));
    lua_pop(L, 1);
  }
  growbuf out = {0};
  char errbuf[CURL_ERROR_SIZE] = "";
  curl_easy_setopt(curl, CURLOPT_URL, url);
  curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, method);
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, hdrs);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &out);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, errbuf);
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, (long)(timeout * 1000));
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_FOLLOWLOCATION, 1L);
  if (body) {
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
  }
  CURLcode rc = curl_easy_perform(curl);
  long status = 0;
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status);
  curl_slist_free_all(hdrs);
  curl_easy_cleanup(curl);

  if (rc != CURLE_OK) {
    lua_pushnil(L);
    if (out.overflow)
      lua_pushfstring(L, "%s: response larger than %d MiB", url, (int)(HTTP_MAX_BODY >> 20));
    else
      lua_pushfstring(L, "%s: %s", url, errbuf[0] ? errbuf : curl_easy_strerror(rc));
    free(out.data);
    return 2;
  }
  lua_createtable(L, 0, 2);
  lua_pushinteger(L, status);
  lua_setfield(L, -2, "status");
  lua_pushlstring(L, out.data ? out.data : "", out.len);
  free(out.data);
  lua_setfield(L, -2, "body");
  return 1;
}

static int http_library(lua_State *L) {
  char buf[PATH_MAX];
  if (kl_library_of((const void *)curl_easy_init, buf, sizeof buf))
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

int luaopen_kl_http(lua_State *L) {
  static int initialized;
  if (!initialized) {
    curl_global_init(CURL_GLOBAL_DEFAULT);
    initialized = 1;
  }
  luaL_newlib(L, http_functions);
  lua_pushstring(L, curl_version_info(CURLVERSION_NOW)->version);
  lua_setfield(L, -2, "version");
  return 1;
}
