-- Shared by the kir specs: the kernels to lift and the gate on emu.
--   support.tasks() -> { { name, dir, family, kernel = path, text } } every held-out task
--   support.extra() -> { { name, dir, kernel = path, text } } matmul and the lineages' first versions
--   support.workload(task) -> the loaded spec
--   support.gate(ctx, task, text) -> ok, why: the emitted text against the task's reference
--   support.context() -> an emu context
local files = require "klineage.base.files"
local workload = require "klineage.workload"

local M = {}

local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
M.root = here .. "/../.."
M.suite = M.root .. "/examples/suites/held-out"

local function ls(dir)
  local h = assert(io.popen("ls -1 '" .. dir .. "'"))
  local out = {}
  for name in h:lines() do out[#out + 1] = name end
  h:close()
  table.sort(out)
  return out
end

function M.tasks()
  local split = dofile(M.suite .. "/split.lua")
  local out = {}
  for _, name in ipairs(ls(M.suite)) do
    local dir = M.suite .. "/" .. name
    local text = files.read_text(dir .. "/kernel.cu")
    if text then
      out[#out + 1] = { name = name, dir = dir, family = split.families[name], kernel = dir .. "/kernel.cu", text = text }
    end
  end
  return out
end

function M.extra()
  local out = { { name = "matmul", kernel = M.root .. "/examples/optimize/matmul.cu", dir = M.root .. "/examples/optimize" } }
  for _, w in ipairs(ls(M.root .. "/gpu/workloads")) do
    for _, f in ipairs(ls(M.root .. "/gpu/workloads/" .. w)) do
      if f:match("^v0.*%.cu$") then
        out[#out + 1] = { name = w .. "/" .. f, kernel = M.root .. "/gpu/workloads/" .. w .. "/" .. f,
          dir = M.root .. "/gpu/workloads/" .. w }
      end
    end
  end
  for _, t in ipairs(out) do t.text = assert(files.read_text(t.kernel)) end
  return out
end

local loaded = {}
function M.workload(task)
  if not loaded[task.dir] then loaded[task.dir] = assert(workload.load(task.dir .. "/workload.lua")) end
  return loaded[task.dir]
end

local ctx
function M.context()
  ctx = ctx or assert(require("klineage.device.context").new { backend = "emu", timeout = 600, journal = false })
  return ctx
end

local function why(r)
  for _, k in ipairs({ "compile", "reference", "correct" }) do
    local s = r.stages[k]
    if s and s.verdict ~= "ok" and s.verdict ~= "skipped" then
      return string.format("%s stage: %s: %s", k, s.verdict, tostring(s.message))
    end
  end
  return tostring(r.verdict)
end

local scratch
function M.gate(task, text, label)
  scratch = scratch or require("klineage.cli.testing").scratch_dir()
  local path = scratch .. "/" .. task.name:gsub("/", "_") .. "_" .. (label or "emitted"):gsub("[^%w_]", "_") .. ".cu"
  local h = assert(io.open(path, "wb"))
  h:write(text)
  h:close()
  local w = M.workload(task)
  local r = require("klineage.gate").evaluate(M.context(), { file = path, label = label or "emitted" }, w)
  if r.verdict ~= "ok" then return false, why(r) end
  if r.stages.correct.sizes < #w.test_params then return false, "checked at fewer sizes than the spec's test_params" end
  return true, r
end

return M
