-- Charts as inline SVG, drawn here in Lua: no script, no external file, no
-- font but the page's. Every chart is <svg role="img"> with a <title> (and
-- a <desc> listing its numbers, for a reader that shows no pictures), axes
-- with tick labels and the unit, and colours that stay apart in grey
-- print. Every text in a chart goes through escape.html.
--
--   svg.bar_chart(spec) -> svg text
--     spec = { id, title, unit (the value axis: "ms", "%", "x"),
--              bars = { { label, value | nil (drawn as "n/a"), low, high
--                         (an interval, drawn as a whisker), note } },
--              reference = { value, label } (a dashed line across: the
--                         vendor's bar, "no change" at 1x),
--              log = true (a logarithmic value axis: times over decades),
--              width = 720, height = 340 }
--   svg.line_chart(spec) -> svg text
--     spec = { id, title, unit, x_label,
--              series = { { name, points = { { x = number, y = number | nil,
--                           label } } } },
--              width = 720, height = 300 }
--   svg.ticks(lo, hi [, count]) -> nice linear tick values covering [lo, hi]
--   svg.log_ticks(lo, hi) -> tick values for a log axis covering [lo, hi]
--   svg.number(v) -> a short label for v ("0.25", "1.5k", "2e-05")
local escape = require "klineage.report.escape"

local M = {}

M.COLOURS = { "#2b5c8a", "#b35900", "#3a7d3a", "#7a3b8f", "#a8323e", "#1f7f7f" }
local INK, GRID, MUTED = "#222222", "#d0d0d0", "#666666"

local function esc(s) return escape.html(s) end

local function fmt(x) return (string.format("%.2f", x):gsub("%.?0+$", "")) end

function M.number(v)
  if v == 0 then return "0" end
  local a = math.abs(v)
  if a >= 1e6 then return fmt(v / 1e6) .. "M" end
  if a >= 1e4 then return fmt(v / 1e3) .. "k" end
  if a >= 100 then return string.format("%.0f", v) end
  if a >= 1 then return (string.format("%.2f", v):gsub("%.?0+$", "")) end
  if a >= 0.001 then return (string.format("%.4f", v):gsub("0+$", ""):gsub("%.$", "")) end
  return string.format("%.0e", v)
end

function M.ticks(lo, hi, count)
  count = count or 5
  if hi <= lo then hi = lo + 1 end
  local raw = (hi - lo) / count
  local mag = 10 ^ math.floor(math.log(raw, 10))
  local step = mag
  for _, f in ipairs({ 1, 2, 2.5, 5, 10 }) do
    step = f * mag
    if step >= raw then break end
  end
  local out, v = {}, math.floor(lo / step + 1e-9) * step
  while v <= hi + step * 1e-6 do
    out[#out + 1] = math.abs(v) < step * 1e-9 and 0 or v
    v = v + step
  end
  if out[#out] < hi then out[#out + 1] = out[#out] + step end
  return out
end

function M.log_ticks(lo, hi)
  local a, b = math.floor(math.log(lo, 10) + 1e-9), math.ceil(math.log(hi, 10) - 1e-9)
  if b <= a then b = a + 1 end
  local out = {}
  for e = a, b do
    out[#out + 1] = 10 ^ e
    -- few decades: 2 and 5 between them keep the axis readable
    if b - a <= 2 and e < b then
      out[#out + 1] = 2 * 10 ^ e
      out[#out + 1] = 5 * 10 ^ e
    end
  end
  return out
end

-- The opening of a chart and its accessible name and description.
local function open(spec, w, h, desc)
  local id = esc(spec.id or "chart")
  return {
    string.format('<svg class="chart" role="img" viewBox="0 0 %d %d" width="%d" height="%d" '
      .. 'aria-labelledby="%s-title %s-desc">', w, h, w, h, id, id),
    string.format('<title id="%s-title">%s</title>', id, esc(spec.title or "chart")),
    string.format('<desc id="%s-desc">%s</desc>', id, esc(desc)),
  }
end

local function text(out, x, y, s, attrs)
  out[#out + 1] = string.format('<text x="%.1f" y="%.1f"%s>%s</text>', x, y, attrs and (" " .. attrs) or "", esc(s))
end

local function line(out, x1, y1, x2, y2, attrs)
  out[#out + 1] = string.format('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" %s/>', x1, y1, x2, y2, attrs)
end

-- A value axis: scale(v) -> y, and its ticks drawn with grid lines.
local function value_axis(out, lo, hi, log, top, bottom, left, right, unit)
  local ticks = log and M.log_ticks(lo, hi) or M.ticks(lo, hi)
  lo, hi = math.min(lo, ticks[1]), math.max(hi, ticks[#ticks])
  local function scale(v)
    if log then
      return bottom - (math.log(v, 10) - math.log(lo, 10)) / (math.log(hi, 10) - math.log(lo, 10)) * (bottom - top)
    end
    return bottom - (v - lo) / (hi - lo) * (bottom - top)
  end
  for _, t in ipairs(ticks) do
    if t >= lo and t <= hi then
      local y = scale(t)
      line(out, left, y, right, y, string.format('stroke="%s" stroke-width="0.5"', GRID))
      line(out, left - 4, y, left, y, string.format('stroke="%s"', INK))
      text(out, left - 7, y + 4, M.number(t), 'text-anchor="end" font-size="11"')
    end
  end
  line(out, left, top, left, bottom, string.format('stroke="%s"', INK))
  line(out, left, bottom, right, bottom, string.format('stroke="%s"', INK))
  text(out, 14, (top + bottom) / 2, unit .. (log and " (log scale)" or ""),
    string.format('text-anchor="middle" font-size="12" transform="rotate(-90 14 %.1f)"', (top + bottom) / 2))
  return scale, lo, hi
end

local function short(label, n)
  label = tostring(label)
  if utf8.len(label) and utf8.len(label) > n then
    return label:sub(1, utf8.offset(label, n) - 1) .. "…"
  end
  return label
end

function M.bar_chart(spec)
  local bars = spec.bars or {}
  if #bars == 0 then error("svg.bar_chart: no bars", 2) end
  local unit = spec.unit or ""
  local lo, hi = math.huge, -math.huge
  local function see(v)
    if v and v == v and (not spec.log or v > 0) then
      lo, hi = math.min(lo, v), math.max(hi, v)
    end
  end
  for _, b in ipairs(bars) do see(b.value); see(b.low); see(b.high) end
  if spec.reference then see(spec.reference.value) end
  if lo == math.huge then error("svg.bar_chart: no bar has a value", 2) end
  if not spec.log then lo = math.min(lo, 0) end
  local maxlen = 0
  for _, b in ipairs(bars) do maxlen = math.max(maxlen, utf8.len(short(b.label, 28)) or #b.label) end
  local w, h = spec.width or 720, (spec.height or 340) + math.floor(maxlen * 4.2)
  -- the first bar's rotated label reaches left of its bar: room for it
  local left, right, top = math.max(64, math.floor(maxlen * 4.6) - 10), w - 16, 30
  local bottom = h - 16 - math.floor(maxlen * 4.2) - 8
  local desc = {}
  for _, b in ipairs(bars) do
    desc[#desc + 1] = string.format("%s: %s", b.label, b.value and (M.number(b.value) .. " " .. unit) or "n/a")
  end
  if spec.reference then desc[#desc + 1] = string.format("%s: %s %s", spec.reference.label, M.number(spec.reference.value), unit) end
  local out = open(spec, w, h, table.concat(desc, "; "))
  text(out, w / 2, 18, spec.title or "", 'text-anchor="middle" font-size="14" font-weight="bold"')
  local scale = value_axis(out, lo, hi, spec.log, top, bottom, left, right, unit)
  local slot = (right - left) / #bars
  local bw = math.max(4, math.min(48, slot * 0.6))
  for i, b in ipairs(bars) do
    local cx = left + slot * (i - 0.5)
    if b.value and (not spec.log or b.value > 0) then
      local y = scale(b.value)
      local base = spec.log and bottom or scale(math.max(lo, 0))
      out[#out + 1] = string.format('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s</title></rect>',
        cx - bw / 2, math.min(y, base), bw, math.abs(base - y), M.COLOURS[1],
        esc(string.format("%s: %s %s%s", b.label, M.number(b.value), unit, b.note and (" (" .. b.note .. ")") or "")))
      if b.low and b.high and (not spec.log or b.low > 0) then
        local y1, y2 = scale(b.low), scale(b.high)
        local attrs = string.format('stroke="%s" stroke-width="1.5"', INK)
        line(out, cx, y1, cx, y2, attrs)
        line(out, cx - bw / 4, y1, cx + bw / 4, y1, attrs)
        line(out, cx - bw / 4, y2, cx + bw / 4, y2, attrs)
      end
    else
      text(out, cx, bottom - 4, "n/a", string.format('text-anchor="middle" font-size="10" fill="%s"', MUTED))
    end
    local ly = bottom + 14
    text(out, cx, ly, short(b.label, 28),
      string.format('text-anchor="end" font-size="11" transform="rotate(-40 %.1f %.1f)"', cx, ly))
  end
  if spec.reference then
    local y = scale(spec.reference.value)
    line(out, left, y, right, y, string.format('stroke="%s" stroke-width="1.5" stroke-dasharray="6 4"', M.COLOURS[2]))
    text(out, right - 4, y - 5, string.format("%s %s %s", spec.reference.label, M.number(spec.reference.value), unit),
      -- a white halo keeps the label readable over a bar
      string.format('text-anchor="end" font-size="11" fill="%s" stroke="#ffffff" stroke-width="3" paint-order="stroke"', M.COLOURS[2]))
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

local MARKERS = { "circle", "square", "diamond", "triangle", "down", "ring" }

local function marker(out, kind, x, y, colour, tip)
  local shape
  if kind == "square" then
    shape = string.format('<rect x="%.1f" y="%.1f" width="7" height="7" fill="%s">', x - 3.5, y - 3.5, colour)
  elseif kind == "diamond" then
    shape = string.format('<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s">', x, y - 5, x + 5, y, x, y + 5, x - 5, y, colour)
  elseif kind == "triangle" then
    shape = string.format('<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s">', x, y - 5, x + 5, y + 4, x - 5, y + 4, colour)
  elseif kind == "down" then
    shape = string.format('<polygon points="%.1f,%.1f %.1f,%.1f %.1f,%.1f" fill="%s">', x, y + 5, x + 5, y - 4, x - 5, y - 4, colour)
  elseif kind == "ring" then
    shape = string.format('<circle cx="%.1f" cy="%.1f" r="4" fill="#ffffff" stroke="%s" stroke-width="2">', x, y, colour)
  else
    shape = string.format('<circle cx="%.1f" cy="%.1f" r="4" fill="%s">', x, y, colour)
  end
  local tag = shape:match("^<(%a+)")
  out[#out + 1] = shape .. "<title>" .. esc(tip) .. "</title></" .. tag .. ">"
end

local LEGEND_STEP, LEGEND_TEXT = 160, 140

function M.line_chart(spec)
  local series = spec.series or {}
  local unit = spec.unit or ""
  local xlo, xhi, ylo, yhi = math.huge, -math.huge, math.huge, -math.huge
  local labels = {}
  for _, s in ipairs(series) do
    for _, p in ipairs(s.points) do
      xlo, xhi = math.min(xlo, p.x), math.max(xhi, p.x)
      if p.y then ylo, yhi = math.min(ylo, p.y), math.max(yhi, p.y) end
      labels[p.x] = labels[p.x] or p.label
    end
  end
  if ylo == math.huge then error("svg.line_chart: no point has a value", 2) end
  ylo = math.min(ylo, 0)
  if xhi == xlo then xlo, xhi = xlo - 1, xhi + 1 end
  local w, h = spec.width or 720, spec.height or 300
  local left, right, top, bottom = 64, w - 20, 30, h - 52
  -- The legend: an entry every LEGEND_STEP px, each needing LEGEND_TEXT px
  -- before the right edge, in as many rows as it takes; the plot moves
  -- down by the rows added.
  local per_row = math.max(1, (right - left - 10 - LEGEND_TEXT) // LEGEND_STEP + 1)
  local legend_rows = #series > 1 and (#series + per_row - 1) // per_row or 1
  top = top + 14 * (legend_rows - 1)
  local desc = {}
  for _, s in ipairs(series) do
    for _, p in ipairs(s.points) do
      desc[#desc + 1] = string.format("%s%s: %s", #series > 1 and (s.name .. " ") or "", p.label or M.number(p.x),
        p.y and (M.number(p.y) .. " " .. unit) or "n/a")
    end
  end
  local out = open(spec, w, h, table.concat(desc, "; "))
  text(out, w / 2, 18, spec.title or "", 'text-anchor="middle" font-size="14" font-weight="bold"')
  local scale_y = value_axis(out, ylo, yhi, false, top, bottom, left, right, unit)
  local pad = (right - left) * 0.04
  local function scale_x(x) return left + pad + (x - xlo) / (xhi - xlo) * (right - left - 2 * pad) end
  local xs = {}
  for x in pairs(labels) do xs[#xs + 1] = x end
  table.sort(xs)
  for i, x in ipairs(xs) do
    local px = scale_x(x)
    line(out, px, bottom, px, bottom + 4, string.format('stroke="%s"', INK))
    -- the outermost labels grow inward, so that neither is cut at the edge
    local anchor = #xs > 1 and (i == 1 and "start" or i == #xs and "end") or "middle"
    text(out, px, bottom + 16, labels[x] and short(labels[x], 32) or M.number(x),
      string.format('text-anchor="%s" font-size="11"', anchor))
  end
  text(out, (left + right) / 2, h - 18, spec.x_label or "", 'text-anchor="middle" font-size="12"')
  for i, s in ipairs(series) do
    local colour = M.COLOURS[(i - 1) % #M.COLOURS + 1]
    local pts = {}
    for _, p in ipairs(s.points) do
      if p.y then pts[#pts + 1] = string.format("%.1f,%.1f", scale_x(p.x), scale_y(p.y)) end
    end
    if #pts > 1 then
      out[#out + 1] = string.format('<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>', table.concat(pts, " "),
        colour, i > 1 and ' stroke-dasharray="5 3"' or "")
    end
    for _, p in ipairs(s.points) do
      if p.y then
        marker(out, MARKERS[(i - 1) % #MARKERS + 1], scale_x(p.x), scale_y(p.y), colour,
          string.format("%s%s: %s %s", #series > 1 and (s.name .. ", ") or "", p.label or M.number(p.x), M.number(p.y), unit))
      end
    end
  end
  if #series > 1 then
    for i, s in ipairs(series) do
      local colour = M.COLOURS[(i - 1) % #M.COLOURS + 1]
      local lx, ly = left + 10 + ((i - 1) % per_row) * LEGEND_STEP, 34 + 14 * ((i - 1) // per_row)
      marker(out, MARKERS[(i - 1) % #MARKERS + 1], lx, ly, colour, s.name)
      text(out, lx + 9, ly + 4, short(s.name, 22), 'font-size="11"')
    end
  end
  out[#out + 1] = "</svg>"
  return table.concat(out, "\n")
end

return M
