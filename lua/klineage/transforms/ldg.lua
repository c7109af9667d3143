-- __ldg(&p[i]) for the reads of a read-only pointer parameter: the load
-- goes through the read-only (texture) data cache, which does not compete
-- with L1 stores and serves a warp's scattered reads better.
--
-- The static check: p is a one-level pointer parameter of a __global__
-- kernel whose element type has an __ldg overload (float, double, int,
-- unsigned, the 64-bit integers, char/short, and their CUDA vector types),
-- and every use of p is a subscript read as restrict.lua checks (no store,
-- ++/--, &p[i], p[i][j], and nothing that binds a reference to the element:
-- a reference declaration or an argument of this unit's functions taking
-- references). Like restrict, it trusts that no other pointer of the launch
-- writes p's memory. Apply wraps every such read; undo turns every
-- `__ldg(&p[e])` back into `p[e]` and is offered when p's other uses are
-- plain subscript reads. Key "<kernel>:<param>".
local annot = require "klineage.transforms.lib.annot"
local support = require "klineage.transforms.support"

local T = {
  name = "ldg",
  intent = "load a read-only parameter's elements through __ldg so they come through the read-only data cache",
}

local ELEMENT = {}
for t in ([[char;signed char;unsigned char;short;unsigned short;int;unsigned;unsigned int;long;unsigned long;
  long long;unsigned long long;float;double;char2;char4;uchar2;uchar4;short2;short4;ushort2;ushort4;
  int2;int4;uint2;uint4;longlong2;ulonglong2;float2;float4;double2]]):gmatch("[^;]+") do
  ELEMENT[t:gsub("^%s+", "")] = true
end

local WRITES = { ["++"] = true, ["--"] = true, ["&"] = true }

-- The context of the element `ix` names: climbs through parentheses and
-- member accesses (p[i].x is still the element's storage), so a store to
-- p[i].x is seen as one. Returns the parent and the node under it.
local function context(ix)
  local n, p = ix, ix:parent()
  while p and (p.kind == "paren" or (p.kind == "member" and p:field("object") and p:field("object").id == n.id)) do
    n, p = p, p:parent()
  end
  return p, n
end

-- Names of the unit's functions with a reference parameter.
local function ref_takers(unit)
  local out = {}
  for _, fn in ipairs(unit:functions()) do
    for _, p in ipairs(fn:params()) do
      if p.reference then out[fn:name() or ""] = true end
    end
  end
  return out
end

-- Whether the subscript `ix` is only read, as a value.
local function read_only(ix, refs)
  local p, inner = context(ix)
  if not p then return true end
  if p.kind == "assign" and p:field("lhs") and p:field("lhs").id == inner.id then return false end
  if (p.kind == "unary" or p.kind == "postfix") and WRITES[p.op] then return false end
  if p.kind == "index" and p:field("object") and p:field("object").id == inner.id then return false end -- p[i][j], p[i].a[j]
  if p.kind == "declarator" and p:parent() then
    -- `T &r = p[i]`: an '&' in the declaration before the value
    local d = p:parent()
    local db, vb = select(5, d:range()), select(5, inner:range())
    if d:text():sub(1, vb - db):find("&", 1, true) then return false end
  end
  if p.kind == "call" and refs[p:field("callee") and p:field("callee"):text() or ""] then return false end
  return true
end

-- The `__ldg(&p[e])` call around subscript `ix`, or nil.
local function ldg_call(ix)
  local amp = ix:parent()
  if not (amp and amp.kind == "unary" and amp.op == "&") then return nil end
  local call = amp:parent()
  local callee = call and call.kind == "call" and call:field("callee")
  if callee and callee:text() == "__ldg" and #call:children() == 2 then return call end
end

-- The param's reads { {ix, call} } (call: the __ldg around it) or nil, why.
local function reads(fn, name, refs)
  local uses = support.uses(fn, name)
  if #uses == 0 then return nil, "never used" end
  local out = {}
  for _, id in ipairs(uses) do
    local ix = id:parent()
    if not (ix and ix.kind == "index" and ix:field("object") and ix:field("object").id == id.id) then
      return nil, "line " .. id.line .. " uses it other than as a subscript"
    end
    local call = ldg_call(ix)
    if not call and not read_only(ix, refs) then return nil, "line " .. id.line .. " writes or binds it" end
    out[#out + 1] = { ix = ix, call = call }
  end
  return out
end

local function element(p)
  local base = p.base_span and p.base_span.text
  return base and ELEMENT[(base:gsub("%s+", " "))] and base
end

function T.find(unit)
  local sites, refs = {}, ref_takers(unit)
  for _, k in ipairs(annot.functions(unit, { global = true })) do
    for _, p in ipairs(k.fn:params()) do
      local elem = p.pointer_depth == 1 and not p.reference and p.name and p.name ~= "" and element(p)
      local rs = elem and reads(k.fn, p.name, refs)
      if rs then
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
