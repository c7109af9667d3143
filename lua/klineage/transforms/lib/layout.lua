-- Helpers of the layout transforms (retune): whether a kernel text still
-- makes sense after its #define constants change. Nothing here edits.
--
--   layout.words(text) -> { word = true }  the identifiers of a C expression
--   layout.closure(defines) -> function(name) -> { name = true }: the name
--       and every define whose value reaches it through other defines
--   layout.c_values(text, exprs) -> { value | false... }: each C integer
--       expression evaluated as kl.source evaluates constants in text
--   layout.consistent(text) -> true | nil, why: the static_asserts hold,
--       the requires lines over constants alone hold, every launch's block
--       (and grid, smem) over constants alone is within CUDA's limits and
--       its kernel's __launch_bounds__, and the static shared memory plus
--       the constant dynamic smem is at most 48 KiB
local source = require "kl.source"
local annotations = require "klineage.workload.annotations"

local M = {}

function M.words(text)
  local out = {}
  for w in text:gmatch("[%a_][%w_]*") do out[w] = true end
  return out
end

function M.closure(defines)
  local users = {}
  for _, d in ipairs(defines) do
    for w in pairs(M.words(d.value.text)) do
      users[w] = users[w] or {}
      users[w][#users[w] + 1] = d.name.text
    end
  end
  return function(name)
    local seen, todo = { [name] = true }, { name }
    while #todo > 0 do
      for _, u in ipairs(users[table.remove(todo)] or {}) do
        if not seen[u] then seen[u], todo[#todo + 1] = true, u end
      end
    end
    return seen
  end
end

-- kl.source folds `constexpr` integers with C's rules (integer division
-- included), which the annotation language refuses: evaluate through it.
function M.c_values(text, exprs)
  local lines = { text, "\n" }
  for i, e in ipairs(exprs) do
    lines[#lines + 1] = string.format("constexpr long long kl_layout_value_%d = (%s);\n", i, e)
  end
  local consts = {}
  for _, c in ipairs(source.parse(table.concat(lines)):constants()) do consts[c.name] = c.value end
  local out = {}
  for i = 1, #exprs do
    local v = consts["kl_layout_value_" .. i]
    out[i] = math.type(v) == "integer" and v or false
  end
  return out
end

local ELEMENT = { char = 1, short = 2, half = 2, __half = 2, float = 4, int = 4, unsigned = 4, ["unsigned int"] = 4,
                  double = 8, float2 = 8, int2 = 8, ["long long"] = 8, float4 = 16, int4 = 16, double2 = 16 }

local function static_smem(unit)
  local bytes = 0
  local function add(dc)
    if not (dc and dc.shared) or dc.extern then return end
    for _, dd in ipairs(dc.declarators) do
      local n = dd.stars == 0 and (ELEMENT[dc.base.text] or 16) or 8 -- an unknown type counts as 16 bytes
      for _, dim in ipairs(dd.dims) do
        if not dim.int then return nil end
        n = n * dim.int
      end
      bytes = bytes + n
    end
    return true
  end
  for _, dc in ipairs(unit:declarations()) do
    if add(dc) == nil and dc.shared and not dc.extern then return nil end
  end
  for stmt in unit:walk({ "decl_stmt" }) do
    local dc = stmt:declaration()
    if add(dc) == nil and dc and dc.shared and not dc.extern then return nil end
  end
  return bytes
end

local BLOCK_MAX = { 1024, 1024, 64 }
local GRID_MAX = { 2147483647, 65535, 65535 }

-- The value of a compiled annotation expression over constants alone, or
-- nil when it names anything else (a workload parameter: the gate's part).
local function constant(c, consts)
  for _, n in ipairs(c.names) do if consts[n] == nil then return nil end end
  local v = c:eval(consts)
  return v
end

local function check_launch(launch, consts, max_threads)
  if not launch then return true, 0 end
  local threads = 1
  for k, c in ipairs(launch.block) do
    local v = constant(c, consts)
    if v == nil then threads = nil
    elseif math.type(v) ~= "integer" or v < 1 or v > BLOCK_MAX[k] then return nil, "block dimension " .. k .. " = " .. tostring(v)
    elseif threads then threads = threads * v end
  end
  if threads and threads > 1024 then return nil, threads .. " threads per block" end
  if threads and max_threads and threads > max_threads then return nil, "the block exceeds __launch_bounds__(" .. max_threads .. ")" end
  for k, c in ipairs(launch.grid) do
    local v = constant(c, consts)
    if v ~= nil and (math.type(v) ~= "integer" or v < 1 or v > GRID_MAX[k]) then return nil, "grid dimension " .. k .. " = " .. tostring(v) end
  end
  local smem = launch.smem and constant(launch.smem, consts) or 0
  return true, smem
end

function M.consistent(text)
  local unit = source.parse(text)
  local ann = annotations.parse(text)
  if not ann then return nil, "the annotations do not parse" end
  local consts = annotations.constants(text)
  local asserts = {}
  for call in unit:walk({ "call" }) do
    local callee = call:field("callee")
    if callee and callee:text() == "static_assert" then
      local arg = call:children()[2]
      if not arg then return nil, "a static_assert without a condition" end
      asserts[#asserts + 1] = arg:text()
    end
  end
  for i, v in ipairs(M.c_values(text, asserts)) do
    if not v or v == 0 then return nil, "static_assert(" .. asserts[i] .. ") fails" end
  end
  for _, r in ipairs(ann.requires) do
    local v = constant(r.expr, consts)
    if v ~= nil and (v == false or v == 0) then return nil, "requires " .. r.text .. " fails" end
  end
  local dynamic = 0
  local bounds = {}
  for _, fn in ipairs(unit:functions()) do
    if fn:info().global then
      local lb = fn:launch_bounds()
      if lb and lb.present and lb.max_threads then
        if not lb.max_threads.int then return nil, "__launch_bounds__ of " .. fn:name() .. " is not a constant" end
        bounds[fn:name()] = lb.max_threads.int
      end
    end
  end
  local default_bound
  for name, b in pairs(bounds) do
    if not ann.launches[name] then default_bound = math.min(default_bound or b, b) end
  end
  local ok, smem = check_launch(ann.launch, consts, default_bound)
  if not ok then return nil, smem end
  dynamic = math.max(dynamic, smem)
  for name, launch in pairs(ann.launches) do
    ok, smem = check_launch(launch, consts, bounds[name])
    if not ok then return nil, smem end
    dynamic = math.max(dynamic, smem)
  end
  local static = static_smem(unit)
  if not static then return nil, "a shared array's size is not a constant" end
  if static + dynamic > annotations.SMEM_DEFAULT_LIMIT then
    return nil, string.format("%d bytes of shared memory", static + dynamic)
  end
  return true
end

return M
