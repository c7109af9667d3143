-- The skill repository on disk: a folder skills/<arch>/ of record files
-- <id>.lua (klineage.skills.record; text by klineage.skills.serialize),
-- each with its observations beside it in <id>.observations.jsonl, cited
-- by index (klineage.skills.layout).
--
--   store.load(dir) -> { record... } sorted by id, { problem... }
--                    | nil, failure (bad_input: no such folder, not a folder)
--       problem = { path = file, message = one line }: a file that is not a
--       skill (too big, bytecode, not Lua, it raises or loops, its table
--       fails record.validate, its id is not its name, its observations
--       file is missing, too big, not the one it was written with or not
--       JSON lines) is a problem of its own; the rest of the folder still
--       loads. A record file of the layout before (observations inline)
--       loads as it is (klineage.skills.layout).
--   store.save(dir, record [, open]) -> path | nil, failure (bad_input: an
--       invalid record; io_error: the folder cannot be made, a file not
--       written). The observations file is written first, then <id>.lua;
--       a record without observations removes the observations file of
--       its id, since the name is the record's. open(tmp) -> handle makes
--       each temporary (files.write_atomic; tests pass one that fails
--       halfway)
--   store.text(record) -> record_text, observations_text | nil, failure:
--       the two files' text as save writes them (observations_text nil
--       for a record without observations)
--   store.write_all(dir, records) -> { written = paths, removed = paths,
--       kept = paths } | nil, failure: every record saved, then each stale
--       record file (a *.lua whose id is not among them) removed with its
--       observations file, so that a regenerated repository holds exactly
--       the records given. Only files the serializer wrote are removed:
--       a *.lua that starts with its header line (serialize.HEADER), which
--       no hand-written file has, and the <stem>.observations.jsonl beside
--       such a file; any other *.lua there (a note, a helper, a FIFO), and
--       a *.observations.jsonl that no record written or removed owns, is
--       kept and listed in kept. Nothing is removed when a save failed.
--   store.of_context(ctx) -> records, dir | nil, failure: the run context's
--       repository (ctx.skills_dir, else skills/<ctx.arch> of the home),
--       loaded once and kept on ctx; a file that is not a skill is bad
--       input, never silently left out
--   store.path(dir, id) -> dir/<id>.lua
--   store.observations_path(dir, id) -> dir/<id>.observations.jsonl
--   store.MAX_BYTES, store.MAX_OBSERVATION_BYTES, store.LIMITS
--
-- Skill files may come from strangers, so a file is loaded as data, never
-- run as code with our powers: text only (load mode "t": a precompiled
-- chunk is refused), an empty environment (no os, io, require), and the
-- spec sandbox's budget of instructions, memory and wall-clock seconds (a
-- loop, a string doubled forty times or a C function that never returns
-- is stopped, not waited for). What it returns is
-- copied as plain tables, then validated. The observations file is data,
-- never run: read by klineage.base.files under its own cap and parsed as JSON
-- lines.
--
-- Each file of a save is atomic: the text goes to a temporary file in the
-- same folder (files.write_atomic: the pid in its name), flushed and
-- closed, then renamed over the file, so a crash leaves the old file or
-- the new one; a crash between the two files leaves a record whose
-- observations file does not match its sha256, refused when loaded.
local files = require "klineage.base.files"
local layout = require "klineage.skills.layout"
local record = require "klineage.skills.record"
local sandbox = require "klineage.workload.spec_sandbox"
local serialize = require "klineage.skills.serialize"
local verdicts = require "klineage.base.verdicts"

local M = {}

M.MAX_BYTES = 4 * 1024 * 1024
-- The largest observations file read: the shipped pragma_unroll's 253
-- observations are 0.9 MiB, and a merge of many walks pools more. It is
-- parsed outside the sandbox, so the cap is what bounds its memory.
M.MAX_OBSERVATION_BYTES = 32 * 1024 * 1024
M.LIMITS = { instructions = 10 * 1000 * 1000, memory = 256 * 1024 * 1024, seconds = 30 }

local function join(dir, name)
  if dir:sub(-1) == "/" then return dir .. name end
  return dir .. "/" .. name
end

function M.path(dir, id) return join(dir, id .. ".lua") end
function M.observations_path(dir, id) return join(dir, layout.observations_file(id)) end

-- The record file at path, or nil, message.
local function load_file(dir, path)
  local text, rf = files.read_file(path, M.MAX_BYTES)
  if not text then return nil, rf.message end
  if text:sub(1, 1) == "\27" then return nil, "a precompiled Lua chunk, not a skill record (records are text)" end
  local sb = sandbox.new("the skill file " .. files.display(path))
  local ok, chunk, err = sb:call(M.LIMITS, load, text, "=" .. files.display(path), "t", {})
  if not ok then return nil, chunk end
  if not chunk then return nil, (tostring(err):gsub("\n.*", "")) end
  local ran, value, kind = sb:call(M.LIMITS, chunk)
  if not ran then
    if kind == "error" then return nil, "raised: " .. (tostring(value):gsub("\n.*", "")) end
    return nil, value
  end
  if type(value) ~= "table" then return nil, "returns a " .. type(value) .. ", not a skill record table" end
  local plain, perr = sandbox.plain(value, "the record")
  if not plain then return nil, perr end
  local stem = path:match("([^/]*)%.lua$")
  local observations
  if layout.cites(plain) then
    local opath = M.observations_path(dir, stem)
    local of
    observations, of = files.read_file(opath, M.MAX_OBSERVATION_BYTES, "a skill's observations")
    if not observations then return nil, "its observations: " .. of.message end
  end
  local unpacked, uerr = layout.unpack(plain, stem, observations)
  if not unpacked then return nil, uerr end
  local r, vf = record.validate(unpacked)
  if not r then return nil, vf.message end
  if r.id ~= stem then return nil, string.format("its id is '%s', but the file is named '%s.lua'", r.id, stem) end
  return r
end

local function folder_names(dir)
  local fs = require "kl.fs"
  local st, serr = fs.stat(dir)
  if not st then
    return nil, verdicts.failure("bad_input", string.format("no skill repository at '%s': %s", files.display(dir), serr))
  end
  if st.type ~= "directory" then
    return nil, verdicts.failure("bad_input", string.format("'%s' is a %s, not a skill repository folder", files.display(dir), st.type))
  end
  local names, lerr = fs.list(dir)
  if not names then return nil, verdicts.failure("bad_input", string.format("cannot list '%s': %s", files.display(dir), lerr)) end
  local out = {}
  for _, name in ipairs(names) do
    if name:match("%.lua$") and name:sub(1, 1) ~= "." then out[#out + 1] = name end
  end
  return out
end

function M.load(dir)
  if type(dir) ~= "string" then error("store.load: a folder path expected", 2) end
  local names, f = folder_names(dir)
  if not names then return nil, f end
  local records, problems = {}, {}
  for _, name in ipairs(names) do
    local path = join(dir, name)
    local r, why = load_file(dir, path)
    if r then records[#records + 1] = r else problems[#problems + 1] = { path = path, message = why } end
  end
  table.sort(records, function(a, b) return a.id < b.id end)
  return records, problems
end

local function ensure_folder(dir)
  local fs = require "kl.fs"
  local st = fs.stat(dir)
  if st and st.type == "directory" then return true end
  if st then
    return nil, verdicts.failure("io_error", string.format("'%s' is a %s, not a folder", files.display(dir), st.type))
  end
  local ok, err = require("kl.proc").mkdir_p(dir)
  if not ok then return nil, verdicts.failure("io_error", string.format("cannot make '%s': %s", files.display(dir), tostring(err))) end
  return true
end

function M.text(r)
  if type(r) ~= "table" then error("store.text: a record expected", 2) end
  local t, observations = layout.pack(r)
  if not t then return nil, observations end
  local text, sf = serialize.record(t)
  if not text then return nil, sf end
  return text, observations
end

local function write(r, path, text, open)
  local wrote, wf = files.write_atomic(path, text, open)
  if wrote then return true end
  return nil, verdicts.failure("io_error", string.format("cannot save the skill %s to '%s': %s", r.id, files.display(path),
    wf.message))
end

function M.save(dir, r, open)
  if type(dir) ~= "string" then error("store.save: a folder path expected", 2) end
  local ok, vf = record.validate(r)
  if not ok then return nil, vf end
  local text, observations = M.text(r)
  if not text then return nil, observations end
  local made, mf = ensure_folder(dir)
  if not made then return nil, mf end
  local path, opath = M.path(dir, r.id), M.observations_path(dir, r.id)
  if observations then
    local wrote, wf = write(r, opath, observations, open)
    if not wrote then return nil, wf end
  end
  local wrote, wf = write(r, path, text, open)
  if not wrote then return nil, wf end
  if not observations and require("kl.fs").stat(opath) then
    local removed, err = os.remove(opath)
    if not removed then
      return nil, verdicts.failure("io_error", string.format("cannot remove '%s': %s", files.display(opath), err))
    end
  end
  return path
end

-- Whether path is a record file the serializer wrote: its first line is
-- the header. Read as every file is (a FIFO is refused, so not ours).
local function ours(path)
  local text = files.read_file(path, M.MAX_BYTES)
  return text ~= nil and text:sub(1, #serialize.HEADER + 1) == serialize.HEADER .. "\n"
end

function M.write_all(dir, records)
  if type(dir) ~= "string" or type(records) ~= "table" then error("store.write_all: a folder and a list of records expected", 2) end
  local keep, written = {}, {}
  for i, r in ipairs(records) do
    local ok, vf = record.validate(r)
    if not ok then return nil, verdicts.failure("bad_input", string.format("record %d: %s", i, vf.message)) end
    if keep[r.id] then return nil, verdicts.failure("bad_input", "two records have the id " .. r.id) end
    keep[r.id] = true
  end
  local made, mf = ensure_folder(dir)
  if not made then return nil, mf end
  for _, r in ipairs(records) do
    local path, f = M.save(dir, r)
    if not path then return nil, f end
    written[#written + 1] = path
  end
  local names, lf = folder_names(dir)
  if not names then return nil, lf end
  local removed, kept = {}, {}
  local function remove(path)
    local ok, err = os.remove(path)
    if not ok then return nil, verdicts.failure("io_error", string.format("cannot remove the stale '%s': %s", files.display(path), err)) end
    removed[#removed + 1] = path
    return true
  end
  local owned = {} -- stems whose observations file is the serializer's
  for id in pairs(keep) do owned[id] = true end
  for _, name in ipairs(names) do
    local path, stem = join(dir, name), name:sub(1, -5)
    if not keep[stem] and not ours(path) then
      kept[#kept + 1] = path
    elseif not keep[stem] then
      owned[stem] = true
      -- the observations first: a crash between the two leaves a record
      -- file that the next write_all still knows as its own
      local opath = M.observations_path(dir, stem)
      if require("kl.fs").stat(opath) then
        local ok, f = remove(opath)
        if not ok then return nil, f end
      end
      local ok, f = remove(path)
      if not ok then return nil, f end
    end
  end
  local all = require("kl.fs").list(dir) or {}
  table.sort(all)
  for _, name in ipairs(all) do
    local stem = name:match("^(.*)%.observations%.jsonl$")
    if stem and name:sub(1, 1) ~= "." and not owned[stem] then kept[#kept + 1] = join(dir, name) end
  end
  return { written = written, removed = removed, kept = kept }
end

function M.of_context(ctx)
  if not ctx.skill_records then
    local dir = ctx.skills_dir or ((require("kl.host").home or ".") .. "/skills/" .. ctx.arch)
    local records, problems = M.load(dir)
    if not records then
      return nil, verdicts.failure("bad_input", problems.message .. (ctx.skills_dir and ""
        or string.format(" (the skill repository of %s; give another with --skills DIR)", ctx.arch)))
    end
    if #problems > 0 then
      return nil, verdicts.failure("bad_input", string.format("%s: %s", files.display(problems[1].path), problems[1].message))
    end
    ctx.skill_records, ctx.skills_dir = records, dir
  end
  return ctx.skill_records, ctx.skills_dir
end

return M
