/* kl.hash: content hashes (engine/core/hash.h).
 *
 *   hash.sha256(data)        -> 64 lowercase hex digits
 *   hash.sha256_parts(...)   -> the SHA-256 of the strings framed as
 *                               "<decimal length>:<bytes>" one after another,
 *                               so ("ab", "c") and ("a", "bc") differ: the
 *                               cache key of a tuple of fields. */
#include <stdio.h>

#include <lauxlib.h>
#include <lua.h>

#include "core/hash.h"

static void push_hex(lua_State *L, const unsigned char d[KL_SHA256_BYTES]) {
  static const char digits[] = "0123456789abcdef";
  char hex[2 * KL_SHA256_BYTES];
  for (int i = 0; i < KL_SHA256_BYTES; i++) {
    hex[2 * i] = digits[d[i] >> 4];
    hex[2 * i + 1] = digits[d[i] & 15];
  }
  lua_pushlstring(L, hex, sizeof hex);
}

static int l_sha256(lua_State *L) {
  size_t n;
  const char *s = luaL_checklstring(L, 1, &n);
  kl_sha256 h;
  unsigned char d[KL_SHA256_BYTES];
  kl_sha256_init(&h);
  kl_sha256_update(&h, s, n);
  kl_sha256_final(&h, d);
  push_hex(L, d);
  return 1;
}

static int l_sha256_parts(lua_State *L) {
  int top = lua_gettop(L);
  kl_sha256 h;
  unsigned char d[KL_SHA256_BYTES];
  kl_sha256_init(&h);
  for (int i = 1; i <= top; i++) {
    size_t n;
    const char *s = luaL_checklstring(L, i, &n);
    char frame[32];
    int len = snprintf(frame, sizeof frame, "%zu:", n);
    kl_sha256_update(&h, frame, (size_t)len);
    kl_sha256_update(&h, s, n);
  }
  kl_sha256_final(&h, d);
  push_hex(L, d);
  return 1;
}

static const luaL_Reg hash_functions[] = {
    {"sha256", l_sha256},
    {"sha256_parts", l_sha256_parts},
    {NULL, NULL},
};

int luaopen_kl_hash(lua_State *L) {
  luaL_newlib(L, hash_functions);
  return 1;
}
