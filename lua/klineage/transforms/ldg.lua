-- __ldg(&p[i]) for the reads of a read-only pointer parameter: the load
-- goes through the read-only (texture) data cache, which does not compete
-- with L1 stores and serves a warp's scattered reads better.
--
-- The static check: p is a one-level pointer parameter of a __global__
-- kernel whose element type has an __ldg overload (float, double, int,
-- unsigned, the 64-bit integers, char/short, and their CUDA vector types),
-- and every use of p is a subscript read (lib/reads.lua, as restrict: no
-- store, ++/--, &p[i], p[i][j], reference binding, element passed to a
-- function taking a reference, nothing in an opaque region or asm), and no
-- parameter that may be the same buffer is written (lib/aliasing.lua: the
-- workload's alias declaration as facts.alias; unknown without one). The
-- read-only cache is not coherent with the launch's own stores, so a
-- buffer written in place must never be read through it. Both directions
-- hold to the check, so undo's result always has its apply site back.
-- Apply wraps every such read; undo turns every
-- `__ldg(&p[e])` back into `p[e]` and is offered when p's other uses are
-- plain subscript reads. Key "<kernel>:<param>".
local aliasing = require "klineage.transforms.lib.aliasing"
local annot = require "klineage.transforms.lib.annot"
local reads = require "klineage.transforms.lib.reads"
local support = require "klineage.transforms.support"

local T = {
  name = "ldg",
  family = "decoration",
  intent = "load a read-only parameter's elements through __ldg so they come through the read-only data cache",
}

local ELEMENT = {}
for t in ([[char;signed char;unsigned char;short;unsigned short;int;unsigned;unsigned int;long;unsigned long;
  long long;unsigned long long;float;double;char2;char4;uchar2;uchar4;short2;short4;ushort2;ushort4;
  int2;int4;uint2;uint4;longlong2;ulonglong2;float2;float4;double2]]):gmatch("[^;]+") do
  ELEMENT[t:gsub("^%s+", "")] = true
end

local function element(p)
  local base = p.base_span and p.base_span.text
  return base and ELEMENT[(base:gsub("%s+", " "))] and base
end

function T.find(unit, facts)
  local sites = {}
  for _, k in ipairs(annot.functions(unit, { global = true })) do
    for index, p in ipairs(k.fn:params()) do
      local elem = p.pointer_depth == 1 and not p.reference and p.name and p.name ~= "" and element(p)
      local rs = elem and reads.of(unit, k.fn, p.name, { ldg = true })
      if rs and not aliasing.conflict(unit, k.fn, index, facts) then
        local wrapped = 0
        for _, r in ipairs(rs) do if r.call then wrapped = wrapped + 1 end end
        local fields = { key = k.name .. ":" .. p.name, param = p, reads = rs, line = p.node.line }
        if wrapped > 0 then
          fields.direction = "undo"
          fields.check = string.format("%d reads of %s (%s) go through __ldg and its other uses are subscript reads",
            wrapped, p.name, elem)
          sites[#sites + 1] = support.site(T, unit, k.fn, fields)
        else
          fields.direction = "apply"
          fields.check = string.format("%s (%s, which __ldg loads) is only read through subscripts", p.name, elem)
          sites[#sites + 1] = support.site(T, unit, k.fn, fields)
        end
      end
    end
  end
  return sites
end

local function span(n)
  local _, _, _, _, b, e = n:range()
  return b, e
end

function T.apply(site)
  local ok, fail = support.same_unit(site, T, "apply")
  if not ok then return nil, fail end
  local edits = {}
  for _, r in ipairs(site.reads) do
    local b, e = span(r.ix)
    edits[#edits + 1] = { begin = b, ["end"] = b - 1, text = "__ldg(&" }
    edits[#edits + 1] = { begin = e + 1, ["end"] = e, text = ")" }
  end
  return support.edit(site, edits)
end

function T.undo(site)
  local ok, fail = support.same_unit(site, T, "undo")
  if not ok then return nil, fail end
  local edits = {}
  for _, r in ipairs(site.reads) do
    if r.call then
      -- Keep p[e] and drop what the call puts around it: nested calls
      -- (p[__ldg(&p[i])]) then edit disjoint bytes.
      local cb, ce = span(r.call)
      local ib, ie = span(r.ix)
      edits[#edits + 1] = { begin = cb, ["end"] = ib - 1, text = "" }
      edits[#edits + 1] = { begin = ie + 1, ["end"] = ce, text = "" }
    end
  end
  return support.edit(site, edits)
end

return T
