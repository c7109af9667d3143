-- The cubin cache: content-addressed by the SHA-256 of (source, options,
-- NVRTC version, arch, name expressions, engine version), so an NVRTC
-- upgrade or a changed flag never serves a stale cubin.
--
-- Where: $KLINEAGE_CACHE if set (the cubin folder itself), else
-- $XDG_CACHE_HOME/klineage/cubin (an absolute XDG_CACHE_HOME), else
-- $HOME/.cache/klineage/cubin, else the same under the home folder of the
-- password database; never the current folder or /tmp.
--
-- Other local users. The cache is read back (a cubin runs on the GPU; the
-- emu cache, lua/klineage/device/emu.lua, holds shared objects that run on the
-- host), so nothing is read from or written to it before every component
-- of its path passed kl.safedir's checks (engine/core/safedir.h): the
-- cache's own folders (the cubin folder, klineage/ above the default one,
-- the two-digit shards) real folders owned by this user with no group or
-- other write bit, created 0700; the folders above them owned by root or
-- this user, and writable by others only with the sticky bit. Every file is
-- a regular file of this user's that others cannot write, written through a
-- new 0600 temporary. A cache that fails the checks is the failure
-- io_error naming the path and why, never a silent fallback elsewhere; a
-- file of ours that others could write is a miss and is replaced.
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
--   cache.dir()                         -> the cubin folder | nil, failure (no home)
--   cache.location(leaf)                -> dir, owned | nil, failure: the default
--       folder of a cache ("cubin", "emu" = $KLINEAGE_CACHE/emu or
--       .../klineage/emu) and how many of its last components are klineage's
--   cache.private_dir(dir [, owned = 1 [, create = true]]) -> true | nil, failure
--       (io_error) | false, why when create is false and it does not exist yet
--   cache.write_private(path, data)     -> true | nil, failure (io_error)
--   cache.read_private(path) -> data | false, "absent" | "loose: why" (a
--       file others can write: a miss) | nil, failure (io_error: refused)
--   cache.key(source, opts)             -> 64 hex digits
--   cache.lookup(key [, dir [, owned]]) -> result | false, why ("absent", "torn: ...")
--       | nil, failure (io_error: the cache is refused)
--       a miss is not a failure: its reason is for tests and logs
--   cache.store(key, result [, dir [, owned]]) -> true | nil, failure (io_error)
--   cache.compile(source, opts)         -> result | nil, failure
--       a compile error is failure.verdict "compile_error", with the
--       message at file:line:col and failure.details (NVRTC's diagnostics)
--       opts: kl.nvrtc.compile's options plus cache_dir (default cache.dir()),
--       cache_owned (how many of its last components are klineage's: 1),
--       time_limit (seconds, default M.TIME_LIMIT), compile (a function
--       run in this process instead of kl.nvrtc.compile, for tests).
--       result.cached says whether it came from the cache; result.key is
--       the key.
--       A miss compiles in a child process (spawn_compile) under the time
--       limit: NVRTC cannot be stopped inside this one (its flow callback
--       is not called while the front end evaluates constants), and a
--       kernel's constexpr work can hold it for hours. Past the limit the
--       child's process group is killed, and the failure is verdict
--       "compile_timeout". in_process = true compiles here, with no limit
--       (compile_child.lua, which runs under its parent's).
--       Compile errors are not cached. On a hit, the log is the one stored
--       (its file name is the one of the first compile).
--   cache.spawn_compile(source, opts) -> job ; cache.finish(job [, timeout])
--       -> as cache.compile; past timeout (default opts.time_limit, else
--       M.TIME_LIMIT) the child is killed: "compile_timeout". The compile runs in a child process (one host
--       core each), so the engine can start several and keep the GPU busy
--       meanwhile; a hit is answered at once without a child. opts must be
--       plain data (no compile function).
local cjson = require "cjson"
local verdicts = require "klineage.base.verdicts"
local hash = require "kl.hash"
local proc = require "kl.proc"
local safedir = require "kl.safedir"

local M = {}

M.SCHEMA = "klineage-cubin-1"

-- Seconds a compile may take (NVRTC here, g++ in emu.lua) unless the run
-- context says otherwise: a real kernel compiles in seconds.
M.TIME_LIMIT = 120

local function env(name)
  local v = os.getenv(name)
  if v and v ~= "" then return v end
  return nil
end

-- The user's cache base: $XDG_CACHE_HOME (the XDG spec ignores a relative
-- one), else $HOME/.cache, else the password database's home/.cache.
local function user_cache()
  local xdg = env("XDG_CACHE_HOME")
  if xdg and xdg:sub(1, 1) == "/" then return xdg end
  local home = env("HOME")
  if not home then
    local why
    home, why = safedir.home()
    if not home then
      return nil, verdicts.failure("io_error", "no cache folder: set KLINEAGE_CACHE, XDG_CACHE_HOME or HOME (" .. why .. ")")
    end
  end
  return home .. "/.cache"
end

function M.location(leaf)
  local root = env("KLINEAGE_CACHE")
  if root then
    if leaf == "cubin" then return root, 1 end
    return root .. "/" .. leaf, 2
  end
  local base, f = user_cache()
  if not base then return nil, f end
  return base .. "/klineage/" .. leaf, 2
end

function M.dir()
  local dir, f = M.location("cubin")
  if not dir then return nil, f end
  return dir
end

function M.private_dir(dir, owned, create)
  if create == nil then create = true end
  local ok, why, absent = safedir.ensure(dir, owned or 1, create)
  if ok then return true end
  if absent then return false, "absent" end
  -- why names the component at fault: the folder itself, or one above it;
  -- or says what could not be done (a read-only home)
  local what = why:find("'" .. dir .. "'", 1, true) and "the cache folder" or string.format("the cache folder '%s'", dir)
  local verb = why:find("^cannot ") and " cannot be used: " or " is refused: "
  return nil, verdicts.failure("io_error", what .. verb .. why, { path = dir })
end

-- Writes through a new 0600 temporary and a rename, as files.write_atomic,
-- so that no one else can write the file between its creation and its use.
function M.write_private(path, data)
  return require("klineage.base.files").write_atomic(path, data, safedir.open_private)
end

-- A file of the cache, read only when kl.safedir accepts it: data, or
-- false, "absent" | "loose: why" (writable by others: a miss, replaced by
-- the next store), or nil, failure.
function M.read_private(path)
  local ok, why, what = safedir.check_file(path)
  if ok == nil then
    return nil, verdicts.failure("io_error", "the cache file " .. why .. ": it is refused", { path = path })
  end
  if not ok then return false, what == "absent" and "absent" or "loose: " .. why end
  local h = io.open(path, "rb")
  if not h then return false, "absent" end
  local data = h:read("a")
  h:close()
  return data
end

-- The folder a call names, with its owned count: the default location's,
-- else an explicit folder's own last component.
local function where(dir, owned)
  if dir then return dir, owned or 1 end
  local d, o = M.location("cubin")
  if not d then return nil, o end
  return d, o
end

local function nvrtc_version()
  local nvrtc = require "kl.nvrtc"
  local major, minor = nvrtc.version()
  return string.format("%d.%d", major, minor)
end

-- The key. options and names keep their order: NVRTC options are
-- positional (a later -D wins). The engine's version is part of it too:
-- kl.nvrtc adds options of its own, which a new version may change, and
-- include folders that depend on the toolkit found (CUDA 13's cccl).
function M.key(source, opts)
  opts = opts or {}
  return hash.sha256_parts(M.SCHEMA, source, "engine=" .. require("kl.host").version,
    "includes=" .. table.concat(require("kl.nvrtc").include_paths(), "\0"),
    "arch=" .. (opts.arch or "sm_90"),
    "nvrtc=" .. (opts.nvrtc_version or nvrtc_version()),
    "options=" .. table.concat(opts.options or {}, "\0"),
    "names=" .. table.concat(opts.names or {}, "\0"))
end

local function paths(dir, key)
  local base = string.format("%s/%s/%s", dir, key:sub(1, 2), key)
  return base .. ".cubin", base .. ".ptx", base .. ".json"
end

M.write_atomic = require("klineage.base.files").write_atomic

-- JSON numbers come back as floats; ptxas's numbers are integers.
local function integers(t)
  for k, v in pairs(t) do
    if type(v) == "table" then integers(v)
    elseif math.type(v) == "float" and math.tointeger(v) then t[k] = math.tointeger(v) end
  end
  return t
end

function M.lookup(key, dir, owned)
  local d, o = where(dir, owned)
  if not d then return nil, o end
  local ok, f = M.private_dir(d .. "/" .. key:sub(1, 2), o + 1, false)
  if not ok then return ok, f end
  local cubin_path, ptx_path, json_path = paths(d, key)
  local meta_text, merr = M.read_private(json_path)
  if meta_text == nil then return nil, merr end
  if not meta_text then return false, merr end
  local ok, meta = pcall(cjson.decode, meta_text)
  if not ok or type(meta) ~= "table" then return false, "torn: unreadable JSON" end
  local result = { arch = meta.arch, log = meta.log, functions = integers(meta.functions or {}), lowered = meta.lowered or {} }
  for _, part in ipairs({ { "ptx", ptx_path }, { "cubin", cubin_path } }) do
    local name, path = part[1], part[2]
    local want = meta[name .. "_sha256"]
    if want then
      local data, derr = M.read_private(path)
      if data == nil then return nil, derr end
      if not data then return false, "torn: " .. name .. " " .. (derr == "absent" and "missing" or derr) end
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

function M.store(key, result, dir, owned)
  local d, o = where(dir, owned)
  if not d then return nil, o end
  local cubin_path, ptx_path, json_path = paths(d, key)
  local ok, err = M.private_dir(cubin_path:match("^(.*)/"), o + 1, true)
  if not ok then return nil, err end
  local meta = {
    schema = M.SCHEMA, arch = result.arch, log = result.log or "",
    functions = result.functions or {}, lowered = result.lowered or {},
  }
  for _, part in ipairs({ { "ptx", ptx_path }, { "cubin", cubin_path } }) do
    local name, path = part[1], part[2]
    local data = result[name]
    if data then
      local wok, werr = M.write_private(path, data)
      if not wok then return nil, werr end -- a failure already
      meta[name .. "_sha256"] = hash.sha256(data)
      meta[name .. "_bytes"] = #data
    end
  end
  if next(meta.lowered) == nil then meta.lowered = nil end -- cjson writes {} for both; keep it absent
  return M.write_private(json_path, cjson.encode(meta)) -- last: commits the entry
end

-- The cache folder for opts (cache_dir, cache_owned) once it passed the
-- checks, or is absent (store makes it): dir, owned | nil, failure. A
-- refused folder fails the compile (someone may be planting entries); one
-- that cannot be made (a read-only home) is left to store, whose failure
-- only goes into result.cache_error.
local function cache_for(opts)
  local dir, owned = where(opts.cache_dir, opts.cache_owned)
  if not dir then return nil, owned end
  local ok, f = M.private_dir(dir, owned, false)
  if ok == nil then return nil, f end
  return dir, owned
end

local NOT_NVRTC = { cache_dir = true, cache_owned = true, compile = true, nvrtc_version = true,
                    time_limit = true, in_process = true }

function M.compile(source, opts)
  opts = opts or {}
  if not opts.compile and not opts.in_process then
    return M.finish(M.spawn_compile(source, opts))
  end
  local dir, owned = cache_for(opts)
  if not dir then return nil, owned end
  local compile = opts.compile or require("kl.nvrtc").compile
  local nv = {}
  for k, v in pairs(opts) do
    if not NOT_NVRTC[k] then nv[k] = v end
  end
  local key = M.key(source, opts)
  local hit, hf = M.lookup(key, dir, owned)
  if hit then return hit end
  if hit == nil then return nil, hf end
  local result, msg, details = compile(source, nv)
  if not result then return nil, verdicts.failure("compile_error", msg, { details = details }) end
  -- A cache that cannot be written (read-only home) must not fail a compile.
  local stored, serr = M.store(key, result, dir, owned)
  result.cached = false
  result.key = key
  if not stored then result.cache_error = serr end
  return result
end

-- A compile in a child process. The child stores its result in the cache;
-- finish() reads it back from there.
function M.spawn_compile(source, opts)
  opts = opts or {}
  local dir, owned = cache_for(opts)
  if not dir then return { failed = owned } end
  local key = M.key(source, opts)
  local hit, hf = M.lookup(key, dir, owned)
  if hit then return { result = hit } end
  if hit == nil then return { failed = hf } end
  local child = package.searchpath("klineage.device.compile_child", package.path)
  local nv = {}
  for k, v in pairs(opts) do
    if k ~= "compile" then nv[k] = v end
  end
  nv.cache_dir, nv.cache_owned, nv.time_limit = dir, owned, nil
  -- a group of its own: a kill at the limit takes everything it started
  local p, err = proc.spawn({ argv = { require("kl.host").executable(), "run", child }, group = true })
  if not p then return { failed = verdicts.failure("internal", "cannot start a compile: " .. err) } end
  local ok, werr = p:write(cjson.encode({ source = source, opts = nv }) .. "\n", 30)
  p:close_stdin()
  if not ok then
    p:close()
    return { failed = verdicts.failure("internal", "compile child: " .. werr) }
  end
  return { proc = p, key = key, dir = dir, owned = owned, limit = opts.time_limit or M.TIME_LIMIT,
           name = opts.name }
end

-- A before(i) hook for gate.evaluate_all: candidates i.. compile ahead in
-- child processes (one host core each, `ahead` at most) while the worker
-- judges candidate i; the gate then finds them cached. A failed compile
-- shows again, with its message, in the gate's compile stage.
function M.compile_ahead(candidates, arch, ahead)
  local jobs = {}
  ahead = ahead or math.max(1, require("kl.host").cpu_count() - 1)
  return function(i)
    for k = i, math.min(i + ahead, #candidates) do
      if not jobs[k] then jobs[k] = M.spawn_compile(candidates[k].source, { arch = arch, name = candidates[k].label }) end
    end
    M.finish(jobs[i])
  end
end

-- A result the child sent whole, since the cache could not keep it: a
-- cache that cannot be written must not fail a compile.
local function whole(reply, key)
  local protocol = require "klineage.device.worker.protocol"
  local r = reply.result
  local result = { log = r.log, arch = r.arch, functions = integers(r.functions or {}), lowered = r.lowered or {},
                   cached = false, key = key, cache_error = reply.cache_error }
  for _, name in ipairs({ "ptx", "cubin" }) do
    if r[name .. "_b64"] then
      local data, err = protocol.unbase64(r[name .. "_b64"])
      if not data then return nil, verdicts.failure("internal", "compile child: " .. tostring(err)) end
      result[name] = data
    end
  end
  return result
end

function M.finish(job, timeout)
  if job.result then return job.result end
  if job.failed then return nil, job.failed end
  local p = job.proc
  local limit = timeout or job.limit or M.TIME_LIMIT
  local line, err = p:read_line(limit)
  if line then p:wait(10) end
  local stderr = p:stderr()
  p:close() -- kills the child's group if it is still running
  if err == "timeout" then
    return nil, verdicts.failure("compile_timeout", string.format(
      "%s: NVRTC did not finish within the compile time limit of %g s: the compile was stopped",
      job.name or "kernel.cu", limit), { limit = limit })
  end
  if not line then
    return nil, verdicts.failure("internal", string.format("compile child: %s%s", err,
      stderr ~= "" and (": " .. stderr:match("[^\n]*")) or ""))
  end
  local ok, reply = pcall(cjson.decode, line)
  if not ok or type(reply) ~= "table" then return nil, verdicts.failure("internal", "compile child: unreadable reply") end
  if not reply.ok then return nil, verdicts.failure("compile_error", reply.message, { details = reply.details }) end
  if type(reply.result) == "table" then return whole(reply, job.key) end
  local result, why = M.lookup(job.key, job.dir, job.owned)
  if result == nil then return nil, why end
  if not result then
    return nil, verdicts.failure("io_error", "compile child compiled, but the cache could not keep it: "
      .. tostring(reply.cache_error or why))
  end
  result.cached = reply.cached
  return result
end

return M
