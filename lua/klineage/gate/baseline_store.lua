-- The baseline's outputs on disk: what the baseline kernel wrote at one
-- test size and seed, kept across processes, so that the next process
-- judging candidates against the same baseline need not run it again.
-- Only where the backend runs host code (emu): a baseline there is a
-- deterministic function of its build, the engine, the spec, the size and
-- the seed, and on the CPU it is the costly part of an evaluation (the
-- naive reduction's v0 runs about a second a trial). A GPU runs it in
-- milliseconds, so cuda keeps to the worker's own copies (gate/session.lua).
--
-- Only the reference side is kept, never a verdict: every candidate still
-- runs and is compared, and the C reference check (gate/reference.lua)
-- still compares the baseline's outputs, from here or from a run, with
-- reference.c's. A stored entry is used only when it is whole and is the
-- one asked for: its header names its key (an entry copied or renamed from
-- another key is foreign) and the size and SHA-256 of each output, checked
-- against the bytes; anything else is a miss, and the baseline runs again
-- and replaces it. The folder follows klineage.device.cache's rules for
-- other local users (private folders, files of this user's that no one
-- else can write); a file others could write is a miss.
--
--   store.key(parts) -> 64 hex digits; parts = { build (the baseline's emu
--       build key), entry, spec (the spec's hash, an in-place form's own),
--       params (the size's parameters), seed, outputs = { { name, type,
--       count }... } }, with the runtime's identity (store.runtime())
--   store.runtime() -> 64 hex digits, once a process: the engine binary and
--       the Lua that shapes a baseline's run (filling, poisoning, running
--       the spec's launches), so that a rebuilt engine never reads what an
--       older one stored
--   store.dir() -> the default folder (the emu cache's outputs/), owned
--       | nil, failure
--   store.lookup(dir, owned, key, names) -> { [name] = bytes } | false, why
--       ("absent", "torn: ...", "foreign: ...", "loose: ...") | nil, failure
--   store.save(dir, owned, key, outputs) -> true | nil, failure
--       outputs = { { name, bytes }... } in the spec's order
--       owned: how many of dir's last components are klineage's (1 for a
--       folder of one's own, store.dir() says for the default)
--   store.of_context(ctx) -> { dir, owned } | nil: where the gate keeps
--       the context's baseline outputs: ctx.baseline_store (false: nowhere;
--       a folder: there), by default store.dir(), on a backend that runs
--       host code only
--   store.path(dir, key) -> the entry's file (for tests)
--   store.MAX_BYTES: outputs larger in all are not stored
local cjson = require "cjson"
local backends = require "klineage.device.backends"
local cache = require "klineage.device.cache"
local hash = require "kl.hash"
local host = require "kl.host"

local M = {}

M.SCHEMA = "klineage-baseline-outputs-1"
M.MAX_BYTES = 64 << 20

-- The Lua that decides what a baseline's run writes, beside the engine.
local RUNTIME_MODULES = {
  "klineage.gate.session", "klineage.workload", "klineage.workload.alias", "klineage.workload.spec_sandbox",
  "klineage.device.emu_worker", "klineage.device.emu",
}

local runtime_id

function M.runtime()
  if runtime_id then return runtime_id end
  local parts = { M.SCHEMA, host.version }
  local function add(path)
    local h = path and io.open(path, "rb")
    if not h then error("baseline_store: cannot read " .. tostring(path) .. " for the runtime's identity", 0) end
    parts[#parts + 1] = hash.sha256(h:read("a"))
    h:close()
  end
  add(host.executable())
  for _, name in ipairs(RUNTIME_MODULES) do add(package.searchpath(name, package.path)) end
  runtime_id = hash.sha256_parts(table.unpack(parts))
  return runtime_id
end

function M.key(parts)
  local params = {}
  for k, v in pairs(parts.params) do params[#params + 1] = k .. "=" .. string.format("%q", v) end
  table.sort(params)
  local outputs = {}
  for i, o in ipairs(parts.outputs) do outputs[i] = string.format("%s:%s:%d", o.name, o.type, o.count) end
  return hash.sha256_parts(M.runtime(), "build=" .. parts.build, "entry=" .. parts.entry, "spec=" .. parts.spec,
    "params=" .. table.concat(params, ","), "seed=" .. tostring(parts.seed), "outputs=" .. table.concat(outputs, ","))
end

function M.dir()
  local emu_dir, owned = cache.location("emu")
  if not emu_dir then return nil, owned end
  return emu_dir .. "/outputs", owned + 1
end

function M.of_context(ctx)
  local where = ctx.baseline_store
  if where == false or not (backends.traits(ctx.backend) or {}).host_code then return nil end
  if type(where) == "string" then return { dir = where, owned = 1 } end
  local dir, owned = M.dir()
  if not dir then return nil end
  return { dir = dir, owned = owned }
end

function M.path(dir, key) return string.format("%s/%s.out", dir, key) end

-- An entry is one file: a JSON header line { schema, key, outputs = {
-- { name, bytes, sha256 }... } }, then the outputs' bytes one after another.
function M.lookup(dir, owned, key, names)
  local ok, f = cache.private_dir(dir, owned, false)
  if not ok then return ok, f end
  local data, why = cache.read_private(M.path(dir, key))
  if not data then return data, why end
  local nl = data:find("\n", 1, true)
  local hok, header = pcall(cjson.decode, nl and data:sub(1, nl - 1) or "")
  if not hok or type(header) ~= "table" or type(header.outputs) ~= "table" then return false, "torn: no header" end
  if header.schema ~= M.SCHEMA then return false, "foreign: schema " .. tostring(header.schema) end
  if header.key ~= key then return false, "foreign: the entry is for another key" end
  if #header.outputs ~= #names then return false, "foreign: other outputs" end
  local out, at = {}, nl + 1
  for i, o in ipairs(header.outputs) do
    local n = type(o) == "table" and math.tointeger(o.bytes)
    if not n or n < 0 or o.name ~= names[i] then return false, "foreign: other outputs" end
    local bytes = data:sub(at, at + n - 1)
    if #bytes ~= n or hash.sha256(bytes) ~= o.sha256 then
      return false, string.format("torn: '%s' does not match its hash", o.name)
    end
    out[o.name] = bytes
    at = at + n
  end
  if at ~= #data + 1 then return false, "torn: bytes past the outputs" end
  return out
end

function M.save(dir, owned, key, outputs)
  local total, header, body = 0, { schema = M.SCHEMA, key = key, outputs = {} }, {}
  for i, o in ipairs(outputs) do
    total = total + #o.bytes
    header.outputs[i] = { name = o.name, bytes = #o.bytes, sha256 = hash.sha256(o.bytes) }
    body[i] = o.bytes
  end
  if total > M.MAX_BYTES then return true end -- not worth the disk: the baseline runs again
  local ok, f = cache.private_dir(dir, owned, true)
  if not ok then return nil, f end
  return cache.write_private(M.path(dir, key), cjson.encode(header) .. "\n" .. table.concat(body))
end

return M
