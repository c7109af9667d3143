-- The cubin cache: content-addressed by the SHA-256 of (source, options,
-- NVRTC version, arch, name expressions, engine version), so an NVRTC
-- upgrade or a changed flag never serves a stale cubin.
--
-- Where: $KLINEAGE_CACHE if set (the cubin folder itself), else
-- $XDG_CACHE_HOME/klineage/cubin, else ~/.cache/klineage/cubin (/tmp/.cache/...
-- without a HOME: never the current folder).
-- Layout: <dir>/<key:1-2>/<key>.cubin, <key>.ptx and <key>.json (arch, log,
-- functions with their ptxas resources, lowered names, and the SHA-256 and
-- size of the cubin and PTX).
--
-- Concurrency and crashes: every file is written to a temporary name and
-- renamed into place (rename is atomic on one file system), and the JSON is
-- renamed last, so it commits the entry. A reader checks the cubin and PTX
-- against the hashes in the JSON; anything torn or missing is a miss and is
-- recompiled and rewritten. Two runs that compile the same key at once both
-- write complete entries (NVRTC's output is deterministic; were it not, a
-- cubin that does not match the JSON's hash would only be a miss).
--
--   cache.dir()                         -> the cubin folder
--   cache.key(source, opts)             -> 64 hex digits
--   cache.lookup(key [, dir])           -> result | false, why ("absent", "torn: ...")
--       a miss is not a failure: its reason is for tests and logs
--   cache.store(key, result [, dir])    -> true | nil, failure (io_error)
--   cache.compile(source, opts)         -> result | nil, failure
--       a compile error is failure.verdict "compile_error", with the
--       message at file:line:col and failure.details (NVRTC's diagnostics)
--       opts: kl.nvrtc.compile's options plus cache_dir (default cache.dir()),
--       compile (default kl.nvrtc.compile, for tests). result.cached says
--       whether it came from the cache; result.key is the key.
--       Compile errors are not cached. On a hit, the log is the one stored
--       (its file name is the one of the first compile).
--   cache.spawn_compile(source, opts) -> job ; cache.finish(job [, timeout])
--       -> as cache.compile. The compile runs in a child process (one host
--       core each), so the engine can start several and keep the GPU busy
--       meanwhile; a hit is answered at once without a child. opts must be
--       plain data (no compile function).
local cjson = require "cjson"
local verdicts = require "klineage.verdicts"
local hash = require "kl.hash"
local proc = require "kl.proc"

local M = {}

M.SCHEMA = "klineage-cubin-1"

function M.dir()
  local env = os.getenv("KLINEAGE_CACHE")
  if env and env ~= "" then return env end
  local xdg = os.getenv("XDG_CACHE_HOME")
  if xdg and xdg ~= "" then return xdg .. "/klineage/cubin" end
  -- never the current folder: a run from any folder writes nothing there
  local home = os.getenv("HOME")
  return (home and home ~= "" and home or "/tmp") .. "/.cache/klineage/cubin"
end

local function nvrtc_version()
  local nvrtc = require "kl.nvrtc"
  local major, minor = nvrtc.version()
  return string.format("%d.%d", major, minor)
end

-- The key. options and names keep their order: NVRTC options are
-- positional (a later -D wins). The engine's version is part of it too:
-- kl.nvrtc adds options of its own, which a new version may change.
function M.key(source, opts)
  opts = opts or {}
  return hash.sha256_parts(M.SCHEMA, source, "engine=" .. require("kl.host").version,
    "arch=" .. (opts.arch or "sm_90"),
    "nvrtc=" .. (opts.nvrtc_version or nvrtc_version()),
    "options=" .. table.concat(opts.options or {}, "\0"),
    "names=" .. table.concat(opts.names or {}, "\0"))
end

local function paths(dir, key)
  local base = string.format("%s/%s/%s", dir, key:sub(1, 2), key)
  return base .. ".cubin", base .. ".ptx", base .. ".json"
end

local function read_all(path)
  local h = io.open(path, "rb")
  if not h then return nil end
  local data = h:read("a")
  h:close()
  return data
end

local write_atomic = require("klineage.files").write_atomic
M.write_atomic = write_atomic

-- JSON numbers come back as floats; ptxas's numbers are integers.
local function integers(t)
  for k, v in pairs(t) do
    if type(v) == "table" then integers(v)
    elseif math.type(v) == "float" and math.tointeger(v) then t[k] = math.tointeger(v) end
  end
  return t
end

function M.lookup(key, dir)
  dir = dir or M.dir()
  local cubin_path, ptx_path, json_path = paths(dir, key)
  local meta_text = read_all(json_path)
  if not meta_text then return false, "absent" end
  local ok, meta = pcall(cjson.decode, meta_text)
  if not ok or type(meta) ~= "table" then return false, "torn: unreadable JSON" end
  local result = { arch = meta.arch, log = meta.log, functions = integers(meta.functions or {}), lowered = meta.lowered or {} }
  for _, part in ipairs({ { "ptx", ptx_path }, { "cubin", cubin_path } }) do
    local name, path = part[1], part[2]
    local want = meta[name .. "_sha256"]
    if want then
      local data = read_all(path)
      if not data then return false, "torn: " .. name .. " missing" end
      if #data ~= meta[name .. "_bytes"] or hash.sha256(data) ~= want then
        return false, "torn: " .. name .. " does not match its hash"
      end
      result[name] = data
    end
  end
  result.cached = true
  result.key = key
  return result
end

function M.store(key, result, dir)
  dir = dir or M.dir()
  local cubin_path, ptx_path, json_path = paths(dir, key)
  local ok, err = proc.mkdir_p(cubin_path:match("^(.*)/"))
  if not ok then return nil, verdicts.failure("io_error", err) end
  local meta = {
    schema = M.SCHEMA, arch = result.arch, log = result.log or "",
    functions = result.functions or {}, lowered = result.lowered or {},
  }
  for _, part in ipairs({ { "ptx", ptx_path }, { "cubin", cubin_path } }) do
    local name, path = part[1], part[2]
    local data = result[name]
    if data then
      local wok, werr = write_atomic(path, data)
      if not wok then return nil, werr end -- a failure already
      meta[name .. "_sha256"] = hash.sha256(data)
      meta[name .. "_bytes"] = #data
    end
  end
  if next(meta.lowered) == nil then meta.lowered = nil end -- cjson writes {} for both; keep it absent
  return write_atomic(json_path, cjson.encode(meta)) -- last: commits the entry
end

function M.compile(source, opts)
  opts = opts or {}
  local dir = opts.cache_dir or M.dir()
  local compile = opts.compile or require("kl.nvrtc").compile
  local nv = {}
  for k, v in pairs(opts) do
    if k ~= "cache_dir" and k ~= "compile" and k ~= "nvrtc_version" then nv[k] = v end
  end
  local key = M.key(source, opts)
  local hit = M.lookup(key, dir)
  if hit then return hit end
  local result, msg, details = compile(source, nv)
  if not result then return nil, verdicts.failure("compile_error", msg, { details = details }) end
  -- A cache that cannot be written (read-only home) must not fail a compile.
  local stored, serr = M.store(key, result, dir)
  result.cached = false
  result.key = key
  if not stored then result.cache_error = serr end
  return result
end

-- A compile in a child process. The child stores its result in the cache;
-- finish() reads it back from there.
function M.spawn_compile(source, opts)
  opts = opts or {}
  local dir = opts.cache_dir or M.dir()
  local key = M.key(source, opts)
  local hit = M.lookup(key, dir)
  if hit then return { result = hit } end
  local child = package.searchpath("klineage.compile_child", package.path)
  local nv = {}
  for k, v in pairs(opts) do
    if k ~= "compile" then nv[k] = v end
  end
  nv.cache_dir = dir
  local p, err = proc.spawn({ argv = { require("kl.host").executable(), "run", child } })
  if not p then return { failed = verdicts.failure("internal", "cannot start a compile: " .. err) } end
  local ok, werr = p:write(cjson.encode({ source = source, opts = nv }) .. "\n", 30)
  p:close_stdin()
  if not ok then
    p:close()
    return { failed = verdicts.failure("internal", "compile child: " .. werr) }
  end
  return { proc = p, key = key, dir = dir }
end

function M.finish(job, timeout)
  if job.result then return job.result end
  if job.failed then return nil, job.failed end
  local p = job.proc
  local line, err = p:read_line(timeout or 600)
  if line then p:wait(10) end
  local stderr = p:stderr()
  p:close()
  if not line then
    return nil, verdicts.failure("internal", string.format("compile child: %s%s", err,
      stderr ~= "" and (": " .. stderr:match("[^\n]*")) or ""))
  end
  local ok, reply = pcall(cjson.decode, line)
  if not ok or type(reply) ~= "table" then return nil, verdicts.failure("internal", "compile child: unreadable reply") end
  if not reply.ok then return nil, verdicts.failure("compile_error", reply.message, { details = reply.details }) end
  local result, why = M.lookup(job.key, job.dir)
  if not result then
    return nil, verdicts.failure("io_error", "compile child compiled, but the cache could not keep it: "
      .. tostring(reply.cache_error or why))
  end
  result.cached = reply.cached
  return result
end

return M
