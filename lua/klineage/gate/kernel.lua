-- A candidate kernel made ready for the gate: its text, its cubin from the
-- content-addressed cache, its entry's parameter kinds and its @kl
-- annotations.
--
--   kernel.read(candidate) -> text | nil, failure (bad_input)
--       candidate = { file = path [, source = text] [, kernel = entry] [, label] }
--   kernel.signature(source, entry) -> kinds | nil, failure (bad_input)
--       kinds[i] is "buf" for a pointer parameter, else a scalar type name
--       of klineage.base.types ("i32", "f32", "u64", ...)
--   kernel.baseline_of(w) -> the lineage's first version as a candidate | nil
--   kernel.prepare(candidate, w, arch [, limit]) -> k, stage | nil, stage
--       stage is the compile stage of the record ({ verdict, message, ms,
--       cached, functions, cubin_bytes }); k = { source, entry, kinds,
--       cubin, file, sha256, resources, module, compile_limit }; limit is
--       the seconds each compile of k may take (NVRTC here, emu's host
--       compile at the load), default cache.TIME_LIMIT
local annotations = require "klineage.workload.annotations"
local cache = require "klineage.device.cache"
local files = require "klineage.base.files"
local types = require "klineage.base.types"
local verdicts = require "klineage.base.verdicts"
local hash = require "kl.hash"
local host = require "kl.host"

local M = {}

-- The parameters of function node fn (named `what` in messages), or nil,
-- failure when its list holds a preprocessor line: with #if branches in a
-- parameter list only the preprocessor knows the real signature, and a
-- guess would pack the wrong arguments.
function M.plain_params(fn, what)
  local list = fn:field("params")
  for _, c in ipairs(list and list:children() or {}) do
    if c.kind == "preproc" or c.kind == "pragma" then
      return nil, verdicts.failure("bad_input", string.format(
        "the parameter list of %s holds a preprocessor line (line %d: %s): the gate cannot tell which parameters it has",
        what, c.line, c:text()))
    end
  end
  return fn:params()
end

function M.signature(source, name)
  local unit = require("kl.source").parse(source)
  for _, fn in ipairs(unit:functions()) do
    local n = fn:field("name")
    if n and n:text() == name then
      local params, failure = M.plain_params(fn, name)
      if not params then return nil, failure end
      local kinds = {}
      for i, p in ipairs(params) do
        if p.pointer_depth > 0 then
          kinds[i] = "buf"
        else
          local kind = types.of_c(p.base or p.type)
          local t = kind and types.get(kind)
          if not (t and t.scalar) then
            return nil, verdicts.failure("bad_input", string.format(
              "parameter %d (%s) of %s has a type the gate cannot pass: %s", i, p.name, name, p.type))
          end
          kinds[i] = kind
        end
      end
      return kinds
    end
  end
  return nil, verdicts.failure("bad_input", "no function '" .. name .. "' in the source")
end

-- The baseline a workload's candidates are judged against: its lineage's
-- first version, or nil when it has no lineage.
function M.baseline_of(w)
  if not w.lineage or not w.lineage[1] then return nil end
  return { file = w.dir .. "/" .. w.lineage[1], label = w.lineage[1] }
end

function M.read(c)
  if c.source then return c.source end
  if type(c.file) ~= "string" then return nil, verdicts.failure("bad_input", "the candidate has neither source nor file") end
  return files.read_text(c.file)
end

local function refused(stage, f)
  stage.verdict, stage.message = f.verdict, f.message
  return nil, stage
end

function M.prepare(c, w, arch, limit)
  local t0 = host.clock()
  local stage = {}
  local source, rerr = M.read(c)
  if not source then return refused(stage, rerr) end
  local entry = c.kernel or w.kernel
  local res, cerr = cache.compile(source, { arch = arch, name = c.file or "candidate.cu", time_limit = limit })
  stage.ms = (host.clock() - t0) * 1e3
  if not res then return refused(stage, cerr) end
  stage.cached = res.cached
  stage.functions = res.functions
  stage.cubin_bytes = res.cubin and #res.cubin or 0
  local kinds, serr = M.signature(source, entry)
  if not kinds then return refused(stage, serr) end
  local ann, aerr = annotations.parse(source, c.file)
  if not ann then return refused(stage, aerr) end
  stage.verdict = "ok"
  return {
    source = source, entry = entry, kinds = kinds, cubin = res.cubin, file = c.file or "candidate.cu",
    sha256 = hash.sha256(source), resources = res.functions[entry],
    module = "m" .. hash.sha256(source .. entry):sub(1, 16), compile_limit = limit,
  }, stage
end

return M
