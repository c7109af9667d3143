-- What every report kind says the same way: the run's facts (from its run
-- record), a step's effect, what produced a candidate.
--
--   common.run_facts(run) -> a Markdown list: run, command, backend,
--       device, arch, tool versions, when, resumes
--   common.effect(e) -> "1.076x faster [1.073, 1.080] (cuda compare)" | "not measured: ..."
--   common.producer(p) -> "undo of the transform smem_padding at transpose:tile"
--   common.timed(backend), common.times_nothing(backend) -> what a journal's
--       backend measured (klineage.device.backends.traits; false for a name that
--       is none)
local backends = require "klineage.device.backends"
local escape = require "klineage.report.escape"

local M = {}

local md = escape.md

function M.timed(backend)
  local t = backends.traits(backend)
  return t ~= nil and t.timed
end

function M.times_nothing(backend)
  local t = backends.traits(backend)
  return t ~= nil and not t.profiles
end

local function when(t)
  t = tonumber(t)
  return t and os.date("!%Y-%m-%d %H:%M UTC", math.floor(t)) or "?"
end

function M.run_facts(run)
  local r = run.first
  local dev = type(r.device) == "table" and r.device or {}
  local v = type(r.versions) == "table" and r.versions or {}
  local resumes = 0
  for _, x in ipairs(run.records) do
    if x.kind == "resume" then resumes = resumes + 1 end
  end
  local cmd = {}
  for i, a in ipairs(type(r.command) == "table" and r.command or {}) do cmd[i] = tostring(a) end
  local rows = {
    { "run", escape.code(run.id or "?") },
    { "command", #cmd > 0 and escape.code(table.concat(cmd, " ")) or "-" },
    { "backend", md(r.backend or "?") },
    { "device", md(dev.name or "?") .. (dev.sm_count and string.format(", %d SMs", dev.sm_count) or "")
      .. ((tonumber(dev.clock_mhz) or 0) > 0 and string.format(", %d MHz", dev.clock_mhz) or "") },
    { "arch", md(r.arch or "?") },
    { "tools", md(string.format("klineage %s, NVRTC %s", tostring(v.klineage or "?"), tostring(v.nvrtc or "?"))) },
    { "started", when(r.time) },
    { "sessions", tostring(1 + resumes) .. (resumes > 0 and " (resumed from the journal)" or "") },
  }
  local lines = {}
  for _, row in ipairs(rows) do lines[#lines + 1] = "- " .. row[1] .. ": " .. row[2] end
  return table.concat(lines, "\n")
end

function M.effect(e, backend)
  if type(e) ~= "table" then return "-" end
  if not e.measured then return e.why or "not measured" end
  local ci = type(e.ci) == "table" and e.ci[1] and string.format(" [%.3f, %.3f]", e.ci[1], e.ci[2]) or ""
  return string.format("%.3fx %s%s%s", e.speedup or 0, tostring(e.outcome or ""), ci, backend and (" (" .. backend .. " compare)") or "")
end

function M.producer(p)
  if type(p) ~= "table" then return "?" end
  if p.kind == "transform" then
    local params = {}
    for k, x in pairs(type(p.params) == "table" and p.params or {}) do
      params[#params + 1] = k .. " = " .. tostring(math.type(x) == "float" and math.tointeger(x) or x)
    end
    table.sort(params)
    return string.format("%s of the transform %s at %s%s", p.direction == "undo" and "undo" or "apply", tostring(p.name),
      tostring(p.edit or "?"), #params > 0 and (" (" .. table.concat(params, ", ") .. ")") or "")
  elseif p.kind == "recorded" then
    return "the expert's previous version, " .. tostring(p.name)
  elseif p.kind == "hunk" then
    return string.format("%s of %s reverted alone", tostring(p.edit or "a hunk"), tostring(p.name))
  elseif p.kind == "lineage" then
    return string.format("lineage version %s of %s", tostring(p.params and p.params.version or "?"), tostring(p.name))
  end
  return tostring(p.kind or "?") .. " " .. tostring(p.name or "")
end

return M
