-- Run folders: where every run keeps its journal and the kernels it judged.
--
--   <root>/<id>/journal.jsonl   append-only records (klineage.store.journal)
--   <root>/<id>/src/<sha>.cu    every candidate's and baseline's text, once,
--                               by the SHA-256 of its bytes
--
-- The root is, in order: the --journal option of a command, $KLINEAGE_RUNS,
-- $XDG_STATE_HOME/klineage/runs, ~/.local/state/klineage/runs. It never
-- depends on the current directory.
--
--   runs.root([explicit]) -> dir | nil, failure
--   runs.check_name(id) -> true | nil, failure (bad_input): a run's name is
--       one path component: not empty, ".", "..", no "/", no control byte
--   runs.create(root [, id]) -> Run | nil, failure     a new run folder (a named
--       one with a journal already is bad_input; a drawn name is drawn again)
--   runs.open(ref [, root]) -> Run | nil, failure      an existing run, to resume
--       ref is a run id under root, or the path of a run folder; every
--       src/<sha>.cu in it is checked against its name first
--   Both lock the folder (klineage.store.runlock) until run:close(): a second
--   command on it is bad_input naming the holder.
--   runs.find(ref [, root]) -> folder | nil, failure
--   runs.read_source(dir, sha) -> text | nil, failure (bad_input): the
--       stored text src/<sha>.cu, refused when its SHA-256 is not its name
--       (a file swapped after it was written is never shown as genuine)
--   runs.key(t) -> hex: the SHA-256 of t's canonical JSON (sorted keys), the
--       identity of a judgement (what was judged, against what, how)
--   runs.canonical_json(t) -> that text: equal tables give equal bytes, in
--       any process (cjson's key order follows Lua's seeded hash)
--   run:append(record) -> true | nil, failure      journal, then index
--   run:lookup(key) -> the last record appended with that key | nil
--   run:store_source(text) -> sha256, "src/<sha>.cu" | nil, failure
--   run:records() -> every record read back
--   run:close()
local cjson = require "cjson"
local files = require "klineage.base.files"
local journal = require "klineage.store.journal"
local runlock = require "klineage.store.runlock"
local verdicts = require "klineage.base.verdicts"
local hash = require "kl.hash"
local proc = require "kl.proc"

local M = {}

function M.root(explicit)
  if explicit and explicit ~= "" then return explicit end
  local env = os.getenv("KLINEAGE_RUNS")
  if env and env ~= "" then return env end
  local state = os.getenv("XDG_STATE_HOME")
  if state and state ~= "" then return state .. "/klineage/runs" end
  local home = os.getenv("HOME")
  if home and home ~= "" then return home .. "/.local/state/klineage/runs" end
  return nil, verdicts.failure("bad_input", "no folder for runs: set KLINEAGE_RUNS or HOME, or give --journal DIR")
end

-- Canonical JSON: object keys sorted, so that equal tables give equal text.
local function canonical(v, out)
  local t = type(v)
  if t == "table" then
    local pairs_, n = {}, 0
    for k, x in pairs(v) do
      n = n + 1
      pairs_[n] = { tostring(k), x }
    end
    if n == #v then -- a list (or empty)
      out[#out + 1] = "["
      for i, x in ipairs(v) do
        if i > 1 then out[#out + 1] = "," end
        canonical(x, out)
      end
      out[#out + 1] = "]"
    else
      table.sort(pairs_, function(a, b) return a[1] < b[1] end)
      out[#out + 1] = "{"
      for i, kv in ipairs(pairs_) do
        if i > 1 then out[#out + 1] = "," end
        out[#out + 1] = cjson.encode(kv[1]) .. ":"
        canonical(kv[2], out)
      end
      out[#out + 1] = "}"
    end
  elseif t == "number" then
    out[#out + 1] = math.type(v) == "integer" and string.format("%d", v) or string.format("%.17g", v)
  else
    out[#out + 1] = cjson.encode(v)
  end
  return out
end

function M.key(t) return hash.sha256(table.concat(canonical(t, {}))) end
function M.canonical_json(t) return table.concat(canonical(t, {})) end

local Run = {}
Run.__index = Run

function M.check_name(id)
  local why
  if type(id) ~= "string" or id == "" then why = "it is empty"
  elseif id == "." or id == ".." then why = "'.' and '..' are not names"
  elseif id:find("/", 1, true) then why = "it holds a '/'"
  elseif id:find("%c") then why = "it holds a control character"
  elseif #id > 200 then why = "it is over 200 bytes" end
  if not why then return true end
  return nil, verdicts.failure("bad_input", string.format("'%s' is not a run name (one folder name under the runs folder): %s",
    files.display(tostring(id)), why))
end

-- Whether dir holds a journal: true, or false, why. Never opened here: an
-- open blocks on a FIFO.
local function is_run(dir)
  local ok, why = files.regular(dir .. "/journal.jsonl")
  if ok then return true end
  return false, require("kl.fs").stat(dir .. "/journal.jsonl") and string.format("its journal.jsonl is %s", why)
    or "it has no journal.jsonl"
end

function M.find(ref, root)
  if type(ref) ~= "string" or ref == "" then return nil, verdicts.failure("bad_input", "no run given") end
  if ref:find("/", 1, true) or ref == "." or ref == ".." then
    local ok, why = is_run(ref)
    if ok then return (ref:gsub("/+$", "")) end
    return nil, verdicts.failure("bad_input", string.format("'%s' is not a run folder (%s)", files.display(ref), why))
  end
  local r, f = M.root(root)
  if not r then return nil, f end
  local ok, why = is_run(r .. "/" .. ref)
  if ok then return r .. "/" .. ref end
  if why:find("^its") then
    return nil, verdicts.failure("bad_input", string.format("'%s/%s' is not a run folder (%s)", files.display(r), files.display(ref), why))
  end
  return nil, verdicts.failure("bad_input", string.format("no run '%s' under %s", files.display(ref), files.display(r)))
end

local SHA = "^" .. string.rep("%x", 64) .. "$"

function M.read_source(dir, sha)
  if type(sha) ~= "string" or not sha:match(SHA) then
    return nil, verdicts.failure("bad_input", string.format("'%s' is not a source hash", files.display(tostring(sha))))
  end
  local path = dir .. "/src/" .. sha .. ".cu"
  local text, f = files.read_text(path)
  if not text then return nil, f end
  if hash.sha256(text) ~= sha then
    return nil, verdicts.failure("bad_input", string.format("'%s' does not match its SHA-256: it changed after the run "
      .. "stored it, and is refused (remove the run folder, or restore the file)", files.display(path)), { stage = "hash" })
  end
  return text
end

-- Every stored source of a run folder, checked before a resume reuses it.
local function check_sources(dir)
  local names = require("kl.fs").list(dir .. "/src")
  for _, name in ipairs(names or {}) do
    local sha = name:match("^(%x+)%.cu$")
    if sha and #sha == 64 then
      local ok, f = M.read_source(dir, sha)
      if not ok then return nil, f end
    end
  end
  return true
end

local function open_folder(dir, id, resume)
  local made, merr = proc.mkdir_p(dir)
  if not made then
    return nil, verdicts.failure("io_error", string.format("cannot open the journal in %s: %s", files.display(dir), tostring(merr)))
  end
  local lock, lf = runlock.acquire(dir)
  if not lock then return nil, lf end
  if resume then
    local ok, sf = check_sources(dir)
    if not ok then
      lock:release()
      return nil, sf
    end
  end
  local j, err = journal.open(dir .. "/journal.jsonl")
  if not j then
    lock:release()
    local why = string.format("cannot open the journal in %s: %s", files.display(dir), err.message)
    return nil, verdicts.failure(err.verdict == "bad_input" and "bad_input" or "io_error", why)
  end
  local self = setmetatable({ dir = dir, id = id, journal = j, lock = lock, index = {}, stored = {} }, Run)
  local records, rf = journal.read(dir .. "/journal.jsonl")
  if not records then
    self:close()
    return nil, rf
  end
  for _, r in ipairs(records) do
    if r.key then self.index[r.key] = r end
  end
  self.previous = records
  return self
end

function M.create(root, id)
  local r, f = M.root(root)
  if not r then return nil, f end
  local stat = require("kl.fs").stat
  if not id then
    -- A drawn name is never one already there: taking it would count that
    -- run's cycles against this one's budget.
    for _ = 1, 8 do
      id = journal.new_run_id()
      if not stat(r .. "/" .. id) then break end
    end
  end
  local ok, nf = M.check_name(id)
  if not ok then return nil, nf end
  if stat(r .. "/" .. id .. "/journal.jsonl") then
    return nil, verdicts.failure("bad_input", string.format("the run %s is already in %s: resume it, or name another",
      id, files.display(r)))
  end
  return open_folder(r .. "/" .. id, id)
end

function M.open(ref, root)
  local dir, f = M.find(ref, root)
  if not dir then return nil, f end
  return open_folder(dir, dir:match("([^/]+)$"), true)
end

function Run:append(record)
  local ok, err = self.journal:append(record)
  if not ok then return nil, verdicts.failure("io_error", "cannot append to the journal: " .. err.message) end
  if record.key then self.index[record.key] = record end
  return true
end

function Run:lookup(key) return self.index[key] end

function Run:store_source(text)
  local sha = hash.sha256(text)
  local rel = "src/" .. sha .. ".cu"
  if self.stored[sha] then return sha, rel end
  local path = self.dir .. "/" .. rel
  if require("kl.fs").stat(path) then
    -- There already: kept only when it is this text (a swapped file is refused, never reused).
    local ok, f = M.read_source(self.dir, sha)
    if not ok then return nil, f end
  else
    local ok, err = proc.mkdir_p(self.dir .. "/src")
    if not ok then return nil, verdicts.failure("io_error", err) end
    local wok, werr = files.write_atomic(path, text)
    if not wok then return nil, werr end
  end
  self.stored[sha] = true
  return sha, rel
end

function Run:records()
  return journal.read(self.dir .. "/journal.jsonl")
end

function Run:close()
  self.journal:close()
  if self.lock then self.lock:release() end
end

return M
