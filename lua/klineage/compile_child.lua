-- The child side of cache.spawn_compile: reads one JSON request line on
-- stdin, { source, opts }, compiles it through the cubin cache, and writes
-- one JSON line: { ok = true, key, cached } or { ok = false, message, details }.
-- Run as `klineage run <this file>`; the parent reads the result from the
-- cache, so the cubin never travels through the pipe.
local cjson = require "cjson"
local cache = require "klineage.cache"

local line = io.read("l")
local ok, req = pcall(cjson.decode, line or "")
if not ok or type(req) ~= "table" or type(req.source) ~= "string" then
  io.write(cjson.encode({ ok = false, message = "compile child: bad request" }), "\n")
  return 2
end
local opts = type(req.opts) == "table" and req.opts or {}
local result, f = cache.compile(req.source, opts)
if result then
  io.write(cjson.encode({ ok = true, key = result.key, cached = result.cached,
                          cache_error = result.cache_error and tostring(result.cache_error) }), "\n")
else
  io.write(cjson.encode({ ok = false, message = f.message, details = f.details }), "\n")
end
return 0
