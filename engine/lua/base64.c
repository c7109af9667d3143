/* kl.base64: the worker protocol's binary fields (RFC 4648 base64, with
 * padding). The worker's replies carry buffer contents this way, and Lua
 * moved them at some 10 MB/s: too slow for the outputs the gate keeps.
 *
 *   base64.encode(bytes) -> text
 *   base64.decode(text) -> bytes | nil, message
 *       text is groups of 4 characters; in a group, a '=' third character
 *       ends it after one byte, a '=' fourth after two. The messages say
 *       "base64 length is not a multiple of 4" or "invalid base64 at <i>"
 *       (i: the 1-based position of the group). */
#include <lauxlib.h>
#include <lua.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

static int l_encode(lua_State *L) {
  size_t n;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
  size_t out_len = (n + 2) / 3 * 4;
  luaL_Buffer b;
  char *o = luaL_buffinitsize(L, &b, out_len + 1);
  size_t j = 0;
  for (size_t i = 0; i < n; i += 3) {
    unsigned v = (unsigned)s[i] << 16;
    if (i + 1 < n) v |= (unsigned)s[i + 1] << 8;
    if (i + 2 < n) v |= s[i + 2];
    o[j++] = alphabet[v >> 18];
    o[j++] = alphabet[(v >> 12) & 63];
    o[j++] = i + 1 < n ? alphabet[(v >> 6) & 63] : '=';
    o[j++] = i + 2 < n ? alphabet[v & 63] : '=';
  }
  luaL_pushresultsize(&b, out_len);
  return 1;
}

/* The value of a base64 character, or -1. */
static int value_of(unsigned char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

static int l_decode(lua_State *L) {
  size_t n;
  const unsigned char *s = (const unsigned char *)luaL_checklstring(L, 1, &n);
  if (n % 4 != 0) {
    lua_pushnil(L);
    lua_pushliteral(L, "base64 length is not a multiple of 4");
    return 2;
  }
  luaL_Buffer b;
  char *o = luaL_buffinitsize(L, &b, n / 4 * 3 + 1);
  size_t j = 0;
  for (size_t i = 0; i < n; i += 4) {
    int a = value_of(s[i]), bv = value_of(s[i + 1]);
    int c = s[i + 2] == '=' ? 0 : value_of(s[i + 2]);
    int d = s[i + 3] == '=' ? 0 : value_of(s[i + 3]);
    if (a < 0 || bv < 0 || c < 0 || d < 0) {
      luaL_pushresultsize(&b, 0);
      lua_pop(L, 1);
      lua_pushnil(L);
      lua_pushfstring(L, "invalid base64 at %I", (lua_Integer)i + 1);
      return 2;
    }
    unsigned v = (unsigned)a << 18 | (unsigned)bv << 12 | (unsigned)c << 6 | (unsigned)d;
    o[j++] = (char)(v >> 16);
    if (s[i + 2] == '=') continue;
    o[j++] = (char)(v >> 8);
    if (s[i + 3] == '=') continue;
    o[j++] = (char)v;
  }
  luaL_pushresultsize(&b, j);
  return 1;
}

static const luaL_Reg base64_functions[] = {
    {"encode", l_encode},
    {"decode", l_decode},
    {NULL, NULL},
};

int luaopen_kl_base64(lua_State *L) {
  luaL_newlib(L, base64_functions);
  return 1;
}
