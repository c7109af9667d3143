-- The child side of cache.spawn_compile: reads one JSON request line on
-- stdin, { source, opts }, compiles it through the cubin cache, and writes
-- one JSON line: { ok = true, key, cached } or { ok = false, message, details }.
-- Run as `klineage run <this file>`; the parent reads the result from the
-- cache, so the cubin never travels through the pipe, unless the cache
-- could not keep it: then the reply holds it (result, base64).
local cjson = require "cjson"
local cache = require "klineage.device.cache"

local line = io.read("l")
local ok, req = pcall(cjson.decode, line or "")
if not ok or type(req) ~= "table" or type(req.source) ~= "string" then
  io.write(cjson.encode({ ok = false, message = "compile child: bad request" }), "\n")
  return 2
end
local opts = type(req.opts) == "table" and req.opts or {}
opts.in_process = true -- this is the child: the parent holds the time limit
local result, f = cache.compile(req.source, opts)
if result and result.cache_error then
  -- the cache could not keep it (a read-only home): the result comes whole
  local b64 = require("klineage.device.worker.protocol").base64
  io.write(cjson.encode({ ok = true, key = result.key, cached = false, cache_error = tostring(result.cache_error),
                          result = { ptx_b64 = result.ptx and b64(result.ptx), cubin_b64 = result.cubin and b64(result.cubin),
                                     log = result.log, arch = result.arch, functions = result.functions,
                                     lowered = result.lowered } }), "\n")
elseif result then
  io.write(cjson.encode({ ok = true, key = result.key, cached = result.cached }), "\n")
else
  io.write(cjson.encode({ ok = false, message = f.message, details = f.details }), "\n")
end
return 0
