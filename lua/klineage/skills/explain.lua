-- A skill record in plain English, with its evidence, for `klineage skills
-- explain` and reports.
--
--   explain.skill(record) -> text (lines joined by "\n", no final newline)
--
--   smem_tiling (sm_90, learned, confidence low: 3 supporting, 1 contradicting)
--   Intent: ...
--   Applied by: the transform smem_tiling with BK = 8.
--   Applies when: N % 8 == 0 and occupancy ≥ 25 % after the change (3 helped, 0 did not).
--   Not when: registers > 128 per thread after the change: <why> (guard, from the walk).
--   Effect: 1.45x median (1.10x to 1.90x over 3 measurements); registers +6 per thread, ...
--   Evidence:
--     sgemm v1_coalesced.cu -> v2_smem_tiles.cu: helped, 1.448x (run R, record dc917f79)
--
-- Every condition and value is said by klineage.skills.describe, so that a
-- condition reads the same here as in a report. The record is expected
-- valid (record.validate); explain raises on misuse only.
local describe = require "klineage.skills.describe"
local workload = require "klineage.workload"

local M = {}

-- Resource facts by the name a reader knows; others keep the fact's name.
local LABELS = { registers = "registers", smem_per_block = "shared memory", smem_static = "static shared memory",
                 occupancy = "occupancy", spill_stores = "spill stores", spill_loads = "spill loads", stack = "stack" }

local function ratio(x) return string.format("%.2fx", x) end
local function measured_ratio(x) return string.format("%.3fx", x) end

local function support_text(s)
  if not s then return nil end
  return string.format("%d helped, %d did not", s.helped, s.not_helped)
end

local function same_support(list)
  local first = list[1] and list[1].support
  if not first then return nil end
  for _, c in ipairs(list) do
    local s = c.support
    if not s or s.helped ~= first.helped or s.not_helped ~= first.not_helped then return nil end
  end
  return first
end

local function header(r)
  local c = r.confidence
  local conf
  if c.level == "seen once" then
    conf = string.format("seen once: %d supporting, %d contradicting", c.supporting, c.contradicting)
  else
    conf = string.format("confidence %s: %d supporting, %d contradicting", c.level, c.supporting, c.contradicting)
  end
  return string.format("%s (%s, %s, %s)", r.id, r.arch, r.status, conf)
end

local function applied_by(m)
  if m.transform then
    local p = workload.params_text(m.params or {})
    return "Applied by: the transform " .. m.transform .. (p ~= "" and (" with " .. p) or "") .. "."
  end
  if m.schedule then
    local p = workload.params_text(m.params or {})
    return "Applied by: a prior over the search's kernel-IR schedules of the family " .. m.schedule .. ": its conditions "
      .. "rank those schedules down, or block them, where they speak against the kernel" .. (p ~= ""
      and ("; the parameters it saw pay: " .. p) or "") .. "."
  end
  if m.template then return "Applied by: a template edit (the pattern's before text rewritten to its after text)." end
  return "Applied by: an LLM, shown the example edit."
end

local function preconditions_line(list)
  if #list == 0 then return "Applies when: always (no precondition was learned)." end
  local shared = same_support(list)
  local parts = {}
  for i, c in ipairs(list) do
    parts[i] = describe.condition(c)
    if not shared and c.support then parts[i] = parts[i] .. " (" .. support_text(c.support) .. ")" end
  end
  local text = "Applies when: " .. table.concat(parts, " and ")
  if shared then text = text .. " (" .. support_text(shared) .. ")" end
  return text .. "."
end

local FROM = { walk = "from the walk", probe = "from a probe" }

local function guard_line(g)
  local text = "Not when: " .. describe.condition(g)
  if g.why and g.why ~= "" then text = text .. ": " .. g.why end
  local tags = { "guard" }
  if g.source then tags[#tags + 1] = FROM[g.source] end
  if g.support then tags[#tags + 1] = support_text(g.support) end
  return text .. " (" .. table.concat(tags, ", ") .. ")."
end

local function signed(fact, delta)
  local magnitude = describe.value(fact, math.abs(delta))
  if delta == 0 then return "±" .. magnitude end
  return (delta > 0 and "+" or "-") .. magnitude
end

local function effect_line(e)
  local parts = {}
  local s = e and e.speedup
  if s then
    if s.n == 1 then
      parts[1] = ratio(s.median) .. " (seen once)"
    else
      parts[1] = string.format("%s median (%s to %s over %d measurements)", ratio(s.median), ratio(s.min), ratio(s.max), s.n)
    end
  else
    parts[1] = "not measured"
  end
  local res = e and e.resources
  if res and next(res) then
    local names = {}
    for k in pairs(res) do names[#names + 1] = k end
    table.sort(names)
    local items = {}
    for i, k in ipairs(names) do items[i] = (LABELS[k] or k) .. " " .. signed(k, res[k]) end
    parts[#parts + 1] = table.concat(items, ", ")
  end
  return "Effect: " .. table.concat(parts, "; ") .. "."
end

local function evidence_line(ev)
  local what = ev.lineage and ev.step and (ev.lineage .. " " .. ev.step) or ev.step or ev.lineage or ev.site or "a step"
  local result = {}
  if ev.outcome then result[#result + 1] = ev.outcome end
  if ev.speedup then result[#result + 1] = measured_ratio(ev.speedup) end
  if ev.measured == false then result[#result + 1] = "not measured" end
  local where = "run " .. ev.run .. ", record " .. ev.key:sub(1, 8)
  local text = "  " .. what
  if #result > 0 then text = text .. ": " .. table.concat(result, ", ") end
  return text .. " (" .. where .. ")"
end

local function change_text(c)
  if type(c) == "string" then return c end
  if type(c) == "table" and type(c.why) == "string" then return c.why end
  if type(c) == "table" and type(c.what) == "string" then return c.what end
  return require("klineage.skills.serialize").value(c) or tostring(c)
end

local PATTERN_SHOWN = 400 -- characters of a template's pattern in the explanation

function M.skill(r)
  if type(r) ~= "table" or type(r.id) ~= "string" then error("explain.skill: a skill record expected", 2) end
  local lines = { header(r), "Intent: " .. r.intent, applied_by(r.materialize) }
  if r.pattern.source then
    -- A template's pattern can be a whole kernel: its start says which; show has it all.
    local text = r.pattern.source:gsub("%s+", " ")
    if utf8.len(text) and utf8.len(text) > PATTERN_SHOWN then
      text = text:sub(1, utf8.offset(text, PATTERN_SHOWN + 1) - 1) .. string.format(" … (%d characters; skills show has it whole)", #text)
    end
    lines[#lines + 1] = "Pattern: " .. text
  end
  if require("klineage.skills.record").never_helped(r) then
    lines[#lines + 1] = string.format("Applies when: nowhere yet: it did not help in any of its %d labelled observations, "
      .. "so it is blocked by its evidence wherever it matches.", r.confidence.contradicting)
  else
    lines[#lines + 1] = preconditions_line(r.preconditions)
  end
  for _, g in ipairs(r.guards) do lines[#lines + 1] = guard_line(g) end
  lines[#lines + 1] = effect_line(r.effect)
  if r.status == "transferred" then
    lines[#lines + 1] = "Transferred from " .. r.transferred_from .. ":"
    for _, c in ipairs(r.changes or {}) do lines[#lines + 1] = "  " .. change_text(c) end
  end
  if #r.evidence == 0 then
    lines[#lines + 1] = "Evidence: none recorded."
  else
    lines[#lines + 1] = "Evidence:"
    for _, ev in ipairs(r.evidence) do lines[#lines + 1] = evidence_line(ev) end
  end
  return table.concat(lines, "\n")
end

return M
