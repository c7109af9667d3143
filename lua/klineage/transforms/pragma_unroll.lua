-- #pragma unroll on a for loop with a constant trip count: the compiler
-- replicates the body, so the loop's index arithmetic folds into constant
-- offsets, register arrays indexed by it stay in registers, and the
-- branches go away.
--
-- The static check (both directions): a `for` loop whose trip count is a
-- constant with the file's integer constants (annot.trip_count) and that
-- has at most one #pragma unroll before it. Undo removes that pragma's line
-- (a bare one or one with an integer count, which becomes the site's
-- factor); apply inserts `#pragma unroll` (factor 0) or `#pragma unroll N`
-- on the line before the loop (flush left, as the lineages write pragmas,
-- unless the unit indents most of its own). The key, "<fn>:for#<i>",
-- counts the function's for loops in source order: a pragma line is not a
-- loop, so the index survives both edits. Apply checks its own result: the reparsed
-- loop must carry exactly the pragma written, or the site is refused
-- (a placement the parser does not attach to the loop).
local annot = require "klineage.transforms.lib.annot"
local support = require "klineage.transforms.support"

local T = {
  name = "pragma_unroll",
  family = "decoration",
  intent = "unroll a constant-trip for loop so its index math folds into constants and its register arrays stay in registers",
  params = { factor = { 0, 2, 4, 8 } }, -- 0: a bare #pragma unroll (full unroll of a constant trip count)
}

-- The unroll pragmas among the loop's pragmas, and the insert point.
local function unrolls(loop)
  local list, insert = loop:pragmas()
  local n = 0
  for _, p in ipairs(list or {}) do
    local ok, info = pcall(p.pragma_info, p)
    if ok and info and info.unroll then n = n + 1 end
  end
  return n, insert
end

-- Each for loop of each function with its key, in source order.
local function loops(unit)
  local out = {}
  for _, f in ipairs(annot.functions(unit)) do
    local i = 0
    for loop in f.fn:body():walk({ "for" }) do
      i = i + 1
      out[#out + 1] = { fn = f.fn, key = f.name .. ":for#" .. i, loop = loop }
    end
  end
  return out
end

-- Whether the unit writes its pragmas indented like code; the lineages
-- (and so the default) put them flush left.
local function indents_pragmas(unit)
  local indented, flush = 0, 0
  for p in unit:walk({ "pragma" }) do
    if p.col > 1 then indented = indented + 1 else flush = flush + 1 end
  end
  return indented > flush
end

function T.find(unit)
  local sites, consts = {}, annot.constants(unit)
  local indent = indents_pragmas(unit)
  for _, l in ipairs(loops(unit)) do
    local trips = annot.trip_count(l.loop, consts)
    local n, insert = unrolls(l.loop)
    if trips and n <= 1 then
      local u = l.loop:unroll()
      local fields = { key = l.key, loop = l.loop, line = l.loop.line, trips = trips }
      if u then
        local count = u.count and u.count.int
        local factor = (not u.count and 0) or (math.type(count) == "integer" and count >= 1 and count) or nil
        if factor then
          fields.direction, fields.params, fields.pragma = "undo", { factor = factor }, u
          fields.check = string.format("the for loop at line %d runs %d times and has #pragma unroll%s", l.loop.line,
            trips, factor > 0 and (" " .. factor) or "")
          sites[#sites + 1] = support.site(T, unit, l.fn, fields)
        end
      elseif insert then
        fields.direction, fields.insert = "apply", insert
        if not indent and insert.prefix:match("^[ \t]*$") then fields.prefix = "" end
        fields.check = string.format("the for loop at line %d runs a constant %d times and has no unroll pragma",
          l.loop.line, trips)
        sites[#sites + 1] = support.site(T, unit, l.fn, fields)
      end
    end
  end
  return sites
end

local function factor_of(params)
  local f = params and params.factor
  if f == nil then return 0 end
  if math.type(f) ~= "integer" or f < 0 or f > 1024 then return nil end
  return f
end

function T.apply(site, params)
  local ok, fail = support.same_unit(site, T, "apply")
  if not ok then return nil, fail end
  local factor = factor_of(params)
  if not factor then return support.refuse(site, "factor must be an integer from 0 (bare) to 1024") end
  local i = site.insert
  local text = (site.prefix or i.prefix) .. "#pragma unroll" .. (factor > 0 and (" " .. factor) or "") .. i.suffix
  local out, f = support.edit(site, { { begin = i.begin, ["end"] = i["end"], text = text } })
  if not out then return nil, f end
  -- The pragma must now belong to this very loop.
  for _, l in ipairs(loops(support.unit(out))) do
    if l.key == site.key then
      local u = l.loop:unroll()
      local got = u and (u.count and u.count.int or (not u.count and 0))
      if got == factor then return out end
    end
  end
  return support.refuse(site, "the inserted pragma does not attach to the loop")
end

function T.undo(site)
  local ok, fail = support.same_unit(site, T, "undo")
  if not ok then return nil, fail end
  local line = site.pragma.line
  return support.edit(site, { { begin = line.begin, ["end"] = line["end"], text = "" } })
end

return T
