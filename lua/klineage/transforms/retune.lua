-- Retune a power-of-two #define constant (a tile size, the block size, a
-- per-thread count): the best value depends on the problem size and the
-- GPU, so the expert's value is one point of a space worth searching.
--
-- A tunable define is a top-level, unconditional, never redefined
-- `#define NAME <power of two>` that is a tuning knob (lib/knobs.lua: it
-- reaches, itself or through other defines, the @kl launch line, a shared
-- array's extent or the kernel's thread arithmetic, and no problem size,
-- hardware constant, fragment shape or literal block shape depends on it),
-- and reaches no @kl requires line that names workload parameters (whether
-- the sizes still pass those is unknowable here). A new value is allowed when the
-- text with it still holds together (lib/layout.consistent: its
-- static_asserts, its requires over constants, every launch within CUDA's
-- limits and its __launch_bounds__, at most 48 KiB of static shared
-- memory; registers are the gate's). When the value alone breaks a
-- static_assert or requires, one partner define named there with it is
-- scaled by the inverse ratio (BLOCK * MIN_BLOCKS == 1024), else by the
-- same one; a value no partner rescues is not offered.
--
-- Undo, the simplification, halves the value (a value of 16 to 1024, so
-- apply can bring it back: site.params = { value = the current value });
-- apply takes params.value among the powers of two 16..1024 it allows
-- (site.values), doubling by default.
local support = require "klineage.transforms.support"
local knobs = require "klineage.transforms.lib.knobs"
local layout = require "klineage.transforms.lib.layout"
local annotations = require "klineage.workload.annotations"

local SPACE = {}
for k = 4, 10 do SPACE[#SPACE + 1] = 1 << k end

local T = {
  name = "retune",
  family = "decoration",
  intent = "retune a power-of-two tile, block or per-thread #define within the kernel's constraints, since the best value depends on size and GPU",
  params = { value = SPACE },
}

local function power_of_two(v) return math.type(v) == "integer" and v >= 1 and v & (v - 1) == 0 end

-- The define's new text for `value`, with a partner rescaled when needed,
-- or nil. defs: the tunable defines by name; coupled: names that share a
-- static_assert or requires with it, in source order.
local function retuned(unit, d, value, defs, coupled)
  local text = tostring(unit)
  local function with(edits)
    table.sort(edits, function(a, b) return a.begin > b.begin end)
    local out = text
    for _, e in ipairs(edits) do out = out:sub(1, e.begin - 1) .. e.text .. out:sub(e["end"] + 1) end
    return out
  end
  local own = { begin = d.value.begin, ["end"] = d.value["end"], text = tostring(value) }
  local out = with({ own })
  if layout.consistent(out) then return out end
  for _, name in ipairs(coupled) do
    local p = defs[name]
    for _, scaled in ipairs({ p.value.int * d.value.int // value, p.value.int * value // d.value.int }) do
      local exact = scaled * value == p.value.int * d.value.int or scaled * d.value.int == p.value.int * value
      if scaled >= 1 and exact and scaled ~= p.value.int then
        out = with({ own, { begin = p.value.begin, ["end"] = p.value["end"], text = tostring(scaled) } })
        if layout.consistent(out) then return out, name end
      end
    end
  end
end

-- The tunable defines and, for each, the defines coupled with it.
local function tunables(unit)
  local text = tostring(unit)
  local ann = annotations.parse(text)
  if not ann or not layout.consistent(text) then return {} end
  local defines = unit:defines()
  local reach = layout.closure(defines)
  local consts = annotations.constants(text)
  local sized, constraints = {}, {}
  for _, r in ipairs(ann.requires) do
    local params = false
    for _, n in ipairs(r.expr.names) do if consts[n] == nil then params = true end end
    local ws = {}
    for _, n in ipairs(r.expr.names) do ws[n] = true end
    if params then for n in pairs(ws) do sized[n] = true end end
    constraints[#constraints + 1] = ws
  end
  for call in unit:walk({ "call" }) do
    local callee = call:field("callee")
    if callee and callee:text() == "static_assert" and call:children()[2] then
      constraints[#constraints + 1] = layout.words(call:children()[2]:text())
    end
  end
  local defs, order, reached = {}, {}, {}
  for _, d in ipairs(defines) do
    local ok = not d.function_like and not d.in_function and not d.conditional and not d.redefined
      and d.value.text:match("^%d+$") and power_of_two(d.value.int)
    if ok then
      local r = reach(d.name.text)
      local limited = false
      for n in pairs(r) do if sized[n] then limited = true end end
      local reaches = not limited and knobs.reaches(unit, ann, reach, d.name.text)
      if reaches and not knobs.why_not(unit, ann, reach, d) then
        defs[d.name.text], order[#order + 1] = d, d.name.text
        reached[d.name.text] = reaches
      end
    end
  end
  local out = {}
  for _, name in ipairs(order) do
    local mine, coupled = reach(name), {}
    for _, other in ipairs(order) do
      if other ~= name then
        local theirs = reach(other)
        for _, ws in ipairs(constraints) do
          local a, b = false, false
          for w in pairs(ws) do a = a or mine[w]; b = b or theirs[w] end
          if a and b then coupled[#coupled + 1] = other break end
        end
      end
    end
    out[#out + 1] = { define = defs[name], coupled = coupled, reaches = reached[name] }
  end
  return out, defs
end

-- Why the define is a knob, in words (lib/knobs.lua has the rule).
local function why_knob(name, reaches)
  return string.format("%s reaches %s, and no problem size, hardware constant (the warp size) or wmma/mma fragment "
    .. "shape depends on it, nor a block shape the launch writes as literals", name, reaches)
end

function T.find(unit)
  local sites = {}
  local list, defs = tunables(unit)
  for _, t in ipairs(list) do
    local d, v = t.define, t.define.value.int
    local name, key = d.name.text, "define:" .. d.name.text
    if v >= SPACE[1] and v <= SPACE[#SPACE] then
      local text, partner = retuned(unit, d, v // 2, defs, t.coupled)
      if text then
        sites[#sites + 1] = support.site(T, unit, nil, { direction = "undo", key = key, line = d.name.line,
          define = name, text = text, params = { value = v },
          check = string.format("%s = %d halves to %d%s: %s, and the kernel's static_asserts, requires and launch still hold",
            name, v, v // 2, partner and (" (with " .. partner .. " rescaled)") or "", why_knob(name, t.reaches)) })
      end
    end
    -- An apply site needs its default, the doubled value, to be allowed:
    -- then undo's halving always has its way back.
    local values, texts = {}, {}
    for _, nv in ipairs(SPACE) do
      if nv ~= v then
        local text = retuned(unit, d, nv, defs, t.coupled)
        if text then values[#values + 1], texts[nv] = nv, text end
      end
    end
    if texts[2 * v] then
      sites[#sites + 1] = support.site(T, unit, nil, { direction = "apply", key = key, line = d.name.line,
        define = name, values = values, texts = texts, value = v,
        check = string.format("%s = %d may become any of %s within the kernel's static_asserts, requires and launch: %s",
          name, v, table.concat(values, ", "), why_knob(name, t.reaches)) })
    end
  end
  return sites
end

function T.apply(site, params)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local value = params and params.value
  if value == nil then
    value = 2 * site.value
  elseif math.type(value) ~= "integer" then
    return nil, require("klineage.base.verdicts").failure("bad_input", "retune: params.value must be an integer")
  end
  if not site.texts[value] then
    return support.refuse(site, string.format("%s = %s is not among the allowed values %s", site.define,
      tostring(value), table.concat(site.values, ", ")))
  end
  return site.texts[value]
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  return site.text
end

return T
