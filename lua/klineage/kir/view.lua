-- A kernel's IR as plain data (for `klineage lift --json`) and as lines
-- of text: the coordinates, the guard, the accesses and loops the
-- analysis found, and the legal single primitive applications.
--
--   view.data(k) -> table      view.lines(k) -> { "line"... }
local ir = require "klineage.kir.ir"
local analysis = require "klineage.kir.analysis"
local emit = require "klineage.kir.emit"
local schedule = require "klineage.kir.schedule"

local M = {}

function M.data(k)
  local a = analysis.analyze(k)
  local d = { kernel = k.name, launch = { grid = k.launch.grid, block = k.launch.block }, axes = {}, accesses = {}, loops = {},
    candidates = {} }
  for _, ax in ipairs(k.axes) do
    d.axes[#d.axes + 1] = { name = ax.name, type = ax.type, dim = ax.dim, block = ax.block and ir.text(ax.block) or nil,
      extent = ax.extent and ir.text(ax.extent) or nil, coordinate = ir.text(emit.axis_expr(ax)) }
  end
  if k.guard then d.guard = { cond = ir.text(k.guard.cond), form = k.guard.form } end
  d.uniform = {}
  for _, s in ipairs(k.uniform) do d.uniform[#d.uniform + 1] = s.name end
  for _, x in ipairs(a.accesses) do
    d.accesses[#d.accesses + 1] = { array = x.array, kind = x.kind, text = x.text, indirect = x.indirect, coefs = x.coefs,
      stride_x = x.stride_x, reuse = x.reuse, loops = x.loops }
  end
  for _, l in ipairs(a.loops.list) do
    local accs = {}
    for _, c in ipairs(l.accs) do accs[#accs + 1] = { name = c.name, op = c.op } end
    d.loops[#d.loops + 1] = { var = l.var, kind = l.kind, why = l.why, accumulators = accs,
      lo = l.lo and ir.text(l.lo) or nil, hi = l.hi and ir.text(l.hi) or nil }
  end
  for _, c in ipairs(schedule.candidates(k)) do d.candidates[#d.candidates + 1] = { apply = c.text, reason = c.reason } end
  d.body = emit.body_text(k)
  return d
end

function M.lines(k)
  local d = M.data(k)
  local out = { string.format("kernel %s: launch grid(%s) block(%s)", d.kernel, table.concat(d.launch.grid, ", "),
    table.concat(d.launch.block, ", ")) }
  for _, ax in ipairs(d.axes) do
    out[#out + 1] = string.format("  axis %-6s on %s: %s%s", ax.name, ax.dim, ax.coordinate, ax.extent and ("  (< " .. ax.extent .. ")") or "")
  end
  out[#out + 1] = "  guard " .. (d.guard and (d.guard.form .. ": " .. d.guard.cond) or "none")
  for _, l in ipairs(analysis.describe(analysis.analyze(k))) do out[#out + 1] = "  " .. l end
  out[#out + 1] = "legal primitive applications:"
  for _, c in ipairs(d.candidates) do out[#out + 1] = "  " .. c.apply .. "  -- " .. c.reason end
  if #d.candidates == 0 then out[#out + 1] = "  none" end
  return out
end

return M
