-- first_add_on_load's static check, shared with grid_stride_reduce: the
-- reduction lineage's one-element load (v2) or two-element load (v3-v5)
-- into a shared array that is only summed, the launch line and the
-- functions mirroring its grid. See first_add_on_load.lua for the idiom.
local R = require "klineage.transforms.lib.redux"

local M = {}

local ID = "([%a_][%w_]*)"

-- The load statements at k: a table of names, or nil.
function M.load_form(st, k)
  local a = st[k] and R.norm(st[k])
  if not a then return nil end
  local i, d, two = a:match("^unsigned " .. ID .. " = blockIdx%.x %* %(([%w_%.]+) %* 2%) %+ threadIdx%.x;$")
  if i then two = true else
    i, d = a:match("^unsigned " .. ID .. " = blockIdx%.x %* ([%w_%.]+) %+ threadIdx%.x;$")
  end
  if not i or not (d == "blockDim.x" or d:match("^[%a_][%w_]*$")) then return nil end
  local f = { i = i, d = d, two = two, k = k }
  if not two then
    local sd, t, n, x = R.norm(st[k + 1] or "?"):match("^" .. ID .. "%[" .. ID .. "%] = " .. i .. " < %(unsigned%)" .. ID
      .. " %? " .. ID .. "%[" .. i .. "%] : 0%.0f;$")
    if not sd then return nil end
    f.sd, f.t, f.n, f.x, f.last = sd, t, n, x, k + 1
    return f
  end
  local v, n, x = R.norm(st[k + 1] or "?"):match("^float " .. ID .. " = " .. i .. " < %(unsigned%)" .. ID .. " %? "
    .. ID .. "%[" .. i .. "%] : 0%.0f;$")
  if not v then return nil end
  local want2 = string.format("if (%s + %s < (unsigned)%s) %s += %s[%s + %s];", i, d, n, v, x, i, d)
  if R.norm(st[k + 2] or "?") ~= want2 then return nil end
  local sd, t = R.norm(st[k + 3] or "?"):match("^" .. ID .. "%[" .. ID .. "%] = " .. v .. ";$")
  if not sd then return nil end
  f.v, f.n, f.x, f.sd, f.t, f.last = v, n, x, sd, t, k + 3
  return f
end

-- nil when the shared array is only summed and read out at [0], else why.
function M.only_summed(unit, fn, f, store)
  local decl = R.shared_decl(fn, f.sd)
  for _, id in ipairs(R.idents(fn, f.sd)) do
    local p = id:parent()
    if R.within(id, store) or R.within(id, decl) then goto ok end
    if p.kind == "call" then
      local callee = p:field("callee"):text()
      local h = R.function_named(unit, callee)
      if not (h and R.is_warp_reduce(h)) then return "it is passed to " .. callee end
      goto ok
    end
    if p.kind ~= "index" or p:field("object").id ~= id.id then return "line " .. id.line .. " uses it as a pointer" end
    do
      local a = p:parent()
      if a.kind == "assign" and a.op == "+=" then
        local lhs, rhs = a:field("lhs"), a:field("rhs")
        if lhs.kind == "index" and R.norm(lhs:field("object")) == f.sd and rhs.kind == "index"
          and R.norm(rhs:field("object")) == f.sd then goto ok end
      end
      if a.kind == "assign" and a.op == "=" and a:field("rhs").id == p.id and R.norm(p) == f.sd .. "[0]"
        and R.norm(a:field("lhs")):match("^[%a_][%w_]*%[blockIdx%.x%]$") then goto ok end
      return "line " .. id.line .. " uses it as '" .. R.norm(a) .. "', not a sum step"
    end
    ::ok::
  end
end

-- The functions mirroring the grid: (P + E - 1) / E or its 2 * E form.
function M.mirrors(unit, fn, e, two)
  local out = {}
  for _, g in ipairs(R.functions(unit)) do
    if g:name() ~= fn:name() then
      local mirror
      local ps, st = g:params(), R.stmts(g)
      if #ps == 1 and ps[1].name and #st == 1 then
        local p = ps[1].name
        local want = two and string.format("return (%s + 2 * %s - 1) / (2 * %s);", p, e, e)
          or string.format("return (%s + %s - 1) / %s;", p, e, e)
        if R.norm(st[1]) == want then mirror = { stmt = st[1], p = p } end
      end
      if mirror then out[#out + 1] = mirror else
        for b in g:body():walk({ "binary" }) do
          local rhs = b.op == "/" and R.norm(b:field("rhs")):gsub("[()]", "")
          if rhs == e or rhs == "2 * " .. e or rhs == e .. " * 2" then
            return nil, g:name() .. " divides by " .. e .. " (the grid may be computed there)"
          end
        end
      end
    end
  end
  return out
end

function M.check(unit, fn)
  local st = R.stmts(fn)
  for k = 1, #st do
    local f = M.load_form(st, k)
    if f then
      if f.t ~= R.tid_name(fn) then return nil, "the shared store is not at threadIdx.x" end
      local p = nil
      for _, q in ipairs(fn:params()) do if q.name == f.n then p = q end end
      if not (p and p.pointer_depth == 0 and R.norm(p.type_span.text) == "int" and R.read_only(fn, f.n)) then
        return nil, f.n .. " is not an int parameter the kernel only reads"
      end
      for _, name in ipairs({ f.i, f.v }) do
        for _, id in ipairs(R.idents(fn, name)) do
          local inside = false
          for j = k, f.last do if R.within(id, st[j]) then inside = true end end
          if not inside then return nil, name .. " is used past the load (line " .. id.line .. ")" end
        end
      end
      if not R.shared_decl(fn, f.sd) then return nil, f.sd .. " is not a __shared__ float array of the kernel" end
      local why = M.only_summed(unit, fn, f, st[f.last])
      if why then return nil, f.sd .. ": " .. why end
      for m in fn:body():walk({ "member" }) do
        local t = R.norm(m)
        if t:match("^gridDim") then return nil, "the kernel uses gridDim" end
        if t == "blockIdx.x" and not R.within(m, st[k]) then
          local ix = m:parent()
          local a = ix and ix.kind == "index" and ix:field("index").id == m.id and ix:parent()
          if not (a and a.kind == "assign" and a.op == "=" and a:field("lhs").id == ix.id) then
            return nil, "blockIdx.x is used at line " .. m.line .. " as more than an output index"
          end
        end
      end
      local l = R.launch(unit, fn:name())
      if not l or not l.block or not l.block:match("^[%a_][%w_]*$") then return nil, "no launch line with block(E)" end
      f.e, f.launch = l.block, l
      if not R.define_int(unit, f.e) then return nil, f.e .. " is not an integer #define" end
      if f.d ~= "blockDim.x" and f.d ~= f.e then return nil, "the index uses " .. f.d .. ", the launch block(" .. f.e .. ")" end
      local want = f.two and string.format("cdiv(%s, 2 * %s)", f.n, f.e) or string.format("cdiv(%s, %s)", f.n, f.e)
      if l.grid ~= want then return nil, "the launch grid is " .. l.grid .. ", not " .. want end
      local ms, mf = M.mirrors(unit, fn, f.e, f.two)
      if not ms then return nil, mf end
      f.mirrors = ms
      return f
    end
  end
  return nil, "no one-element (or two-element) load into a shared array"
end


return M
