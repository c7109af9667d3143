-- warp_shuffle's softmax idiom: the block reduction helpers
--   __device__ float NAME(float V, float *BUF)
-- of softmax v1 (tree over BUF[E], a leading barrier) and v2 (warp
-- shuffles, one slot per warp BUF[E / 32], a trailing barrier), op max
-- (fmaxf) or sum (+=). The tree form's leading barrier and the shuffle
-- form's trailing one each protect BUF between two reductions, so a unit
-- mixing the two forms would race: one site turns all of a unit's helpers
-- at once, and every __shared__ array that reaches them (directly or
-- through float * parameters of device functions that only pass it on) is
-- resized with them: E for the tree, E / 32 (or WARPS) for the shuffles.
-- Every kernel holding such an array must launch block(E), E a power of
-- two in 32..1024.
local support = require "klineage.transforms.support"
local R = require "klineage.transforms.lib.redux"

local M = {}

local ID = "([%a_][%w_]*)"
local OPS = {
  max = { tree = "%s[%s] = fmaxf(%s[%s], %s[%s + %s]);", slots = "%s = fmaxf(%s, %s[%s]);" },
  sum = { tree = "%s[%s] += %s[%s + %s];", slots = "%s += %s[%s];" },
}

local TREE_COMMENT = "// Tree reductions over the block; every thread gets the result. The leading\n"
  .. "// barrier keeps a new reduction from overwriting `buf` while it is still read.\n"
local SHUFFLE_COMMENT = "// Block reductions: warp results go through one shared slot per warp, and\n"
  .. "// every thread adds the slots in the same order (deterministic). The\n"
  .. "// trailing barrier lets the next reduction reuse `buf`.\n"
local WARP_TEXT = {
  max = "__device__ __forceinline__ float warp_max(float v) {\n#pragma unroll\n"
    .. "  for (int offset = 16; offset > 0; offset >>= 1)\n"
    .. "    v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, offset));\n  return v;\n}\n\n",
  sum = "__device__ __forceinline__ float warp_sum(float v) {\n#pragma unroll\n"
    .. "  for (int offset = 16; offset > 0; offset >>= 1)\n"
    .. "    v += __shfl_xor_sync(0xffffffffu, v, offset);\n  return v;\n}\n\n",
}
local WARP_NAME = { max = "warp_max", sum = "warp_sum" }

-- The (v, buf) parameters of a candidate helper, or nil.
local function params(fn)
  local ps = fn:params()
  if not R.returns(fn, "float") or #ps ~= 2 or not ps[1].name or not ps[2].name then return nil end
  if ps[1].pointer_depth ~= 0 or R.norm(ps[1].type_span.text) ~= "float" then return nil end
  if ps[2].pointer_depth ~= 1 or R.norm(ps[2].base_span.text) ~= "float" or ps[2].const then return nil end
  return ps[1].name, ps[2].name
end

-- A helper in either form: { fn, op, form = "tree"|"shuffle", e, v, buf, w }.
local function helper(unit, fn)
  local v, buf = params(fn)
  if not v then return nil end
  local body = R.norm(fn:body())
  local t = body:match("^{ int " .. ID .. " = threadIdx%.x; __syncthreads%(%); ")
  if t then
    local s, e = body:match("for %(int " .. ID .. " = " .. ID .. " / 2; ")
    for op, o in pairs(OPS) do
      local step = s and (op == "max" and o.tree:format(buf, t, buf, t, buf, t, s) or o.tree:format(buf, t, buf, t, s))
      local want = s and string.format("{ int %s = threadIdx.x; __syncthreads(); %s[%s] = %s; __syncthreads(); "
        .. "for (int %s = %s / 2; %s > 0; %s >>= 1) { if (%s < %s) %s __syncthreads(); } return %s[0]; }",
        t, buf, t, v, s, e, s, s, t, s, step, buf)
      if want and body == want then return { fn = fn, op = op, form = "tree", e = e, v = v, buf = buf } end
    end
    return nil
  end
  local w = body:match("^{ " .. v .. " = " .. ID .. "%(" .. v .. "%); ")
  local r, lw, bound = body:match("float " .. ID .. " = " .. buf .. "%[0%]; for %(int " .. ID .. " = 1; [%a_][%w_]* < ([^;]+); ")
  if not (w and r) then return nil end
  for op, o in pairs(OPS) do
    local step = op == "max" and o.slots:format(r, r, buf, lw) or o.slots:format(r, buf, lw)
    local want = string.format("{ %s = %s(%s); if (threadIdx.x %% 32 == 0) %s[threadIdx.x / 32] = %s; __syncthreads(); "
      .. "float %s = %s[0]; for (int %s = 1; %s < %s; ++%s) %s __syncthreads(); return %s; }",
      v, w, v, buf, v, r, buf, lw, lw, bound, lw, step, r)
    if body == want then
      local h = R.function_named(unit, w)
      if not (h and R.warp_op(h) == op) then return nil end
      local e = bound:match("^" .. ID .. " / 32$")
      if not e then
        local d = bound:match("^" .. ID .. "$") and unit:define(bound)
        e = d and not d.function_like and R.norm(d.value.text):match("^%(" .. ID .. " / 32%)$")
      end
      if not e then return nil end
      return { fn = fn, op = op, form = "shuffle", e = e, v = v, buf = buf, w = w, warp = h }
    end
  end
end

-- The __shared__ arrays reaching the helpers: { { fn, decl, name } } or
-- nil, why. `chain` names the functions a buffer parameter may go to.
local function roots(unit, helpers)
  local pass = {}   -- function name -> index of its buffer parameter
  for name in pairs(helpers) do if name ~= "e" then pass[name] = 2 end end
  local out, seen = {}, {}
  local function trace(fn, name, depth)
    if depth > 4 then return "the buffer goes through too many functions" end
    -- Every use of `name` in fn is an argument of a call to a function in pass.
    local decl = R.shared_decl(fn, name)
    for _, id in ipairs(R.idents(fn, name)) do
      if not (decl and R.within(id, decl)) then
        local c = id:parent()
        local callee = c and c.kind == "call" and c:field("callee")
        local at
        for i, ch in ipairs(c and c.kind == "call" and c:children() or {}) do if ch.id == id.id then at = i - 1 end end
        if not (callee and pass[callee:text()] == at) then
          return string.format("%s uses %s at line %d other than passing it to the reductions", fn:name(), name, id.line)
        end
      end
    end
    if decl then
      local e, v = R.block_constant(unit, fn, helpers.e)
      if not (fn:info().global and e and v) then return fn:name() .. " does not launch block(" .. helpers.e .. ")" end
      if not seen[decl.id] then out[#out + 1] = { fn = fn, decl = decl, name = name } seen[decl.id] = true end
      return nil
    end
    -- A float * parameter passed on: follow every caller.
    local pos
    for i, p in ipairs(fn:params()) do
      if p.name == name and p.pointer_depth == 1 and R.norm(p.base_span.text) == "float" and not p.const then pos = i end
    end
    if not pos or fn:info().global then return fn:name() .. ": " .. name .. " is neither a __shared__ array nor a float * parameter" end
    if pass[fn:name()] and pass[fn:name()] ~= pos then return fn:name() .. " passes two buffers" end
    pass[fn:name()] = pos
    local calls = R.calls(unit, fn:name())
    if #calls == 0 then return fn:name() .. " is never called" end
    for _, c in ipairs(calls) do
      local arg = c:children()[pos + 1]
      if not (arg and arg.kind == "ident") then return "a call of " .. fn:name() .. " passes no plain buffer name" end
      local caller = c:parent()
      while caller and caller.kind ~= "function" do caller = caller:parent() end
      local why = caller and trace(caller, arg:text(), depth + 1)
      if not caller then return "a call of " .. fn:name() .. " is outside any function" end
      if why then return why end
    end
  end
  for name, h in pairs(helpers) do
    if name ~= "e" then
      for _, c in ipairs(R.calls(unit, name)) do
        local arg = c:children()[3]
        if #c:children() ~= 3 or not (arg and arg.kind == "ident") then return nil, "a call of " .. name .. " passes no plain buffer name" end
        local caller = c:parent()
        while caller and caller.kind ~= "function" do caller = caller:parent() end
        if not caller then return nil, "a call of " .. name .. " is outside any function" end
        if helpers[caller:name()] then return nil, name .. " is called by another reduction" end
        local why = trace(caller, arg:text(), 0)
        if why then return nil, why end
      end
    end
  end
  if #out == 0 then return nil, "no __shared__ array reaches the reductions" end
  return out
end

-- The unit's helpers, all in one form: a description, or nil, why.
local function scan(unit)
  local hs, list = { }, {}
  for _, fn in ipairs(R.functions(unit)) do
    local h = helper(unit, fn)
    if h then
      if hs[fn:name()] then return nil, "two functions named " .. fn:name() end
      hs[fn:name()] = h
      list[#list + 1] = h
    end
  end
  if #list == 0 then return nil, "no block reduction helper" end
  local form, e = list[1].form, list[1].e
  for _, h in ipairs(list) do
    if h.form ~= form or h.e ~= e then return nil, "the helpers are not all in one form over one block constant" end
  end
  local v = R.define_int(unit, e)
  if not (R.is_pow2(v) and v >= 32 and v <= 1024) then return nil, e .. " is not a power of two in 32..1024" end
  hs.e = e
  local rs, why = roots(unit, hs)
  if not rs then return nil, why end
  local names = {}
  for _, h in ipairs(list) do names[#names + 1] = h.fn:name() end
  table.sort(names)
  return { list = list, form = form, e = e, roots = rs, key = table.concat(names, "+") }
end

function M.find(T, unit)
  local d = scan(unit)
  if not d then return {} end
  local first = d.list[1].fn
  return { support.site(T, unit, first, { direction = d.form == "tree" and "apply" or "undo", key = d.key, softmax = true,
    line = first.line, form = d,
    check = string.format("%s: block %s helpers over %s (a power of two), called by every thread with __shared__ %s",
      d.key, d.form == "tree" and "tree" or "shuffle", d.e, d.roots[1].name) }) }
end

local function refind(T, site, direction)
  local ok, f0 = support.same_unit(site, T, direction)
  if not ok then return nil, f0 end
  local d = scan(site.unit)
  if not d or d.key ~= site.key or (d.form == "tree") ~= (direction == "apply") then
    return support.refuse(site, "the block reductions are no longer in the form this site found")
  end
  return d
end

-- Names for the new body's locals: free of the parameters, #defines and
-- top-level functions.
local function fresh(unit, fn, base)
  local used = {}
  for _, p in ipairs(fn:params()) do if p.name then used[p.name] = true end end
  for _, d in ipairs(unit:defines()) do used[d.name.text] = true end
  for _, g in ipairs(unit:functions()) do used[g:name()] = true end
  local n, i = base, 1
  while used[n] do i = i + 1 n = base .. i end
  return n
end

-- Replaces the comment right above fn when it speaks of the barriers.
local function comment_edit(unit, fn, text)
  local cb, ce, ctext = R.comment_above(unit, (R.span(fn)))
  if cb and ctext:find("barrier", 1, true) then return { begin = cb, ["end"] = ce, text = text } end
end

function M.apply(T, site)
  local d, f = refind(T, site, "apply")
  if not d then return nil, f end
  local unit, e = site.unit, d.e
  local warps = unit:define("WARPS")
  local slots = (warps and R.norm(warps.value.text) == "(" .. e .. " / 32)") and "WARPS" or e .. " / 32"
  local edits, need = {}, {}
  for _, h in ipairs(d.list) do
    local w = WARP_NAME[h.op]
    local have = R.function_named(unit, w)
    if have then
      if R.warp_op(have) ~= h.op or R.span(have) > R.span(d.list[1].fn) then return support.refuse(site, w .. " is some other function") end
    elseif unit:has_word(w) then
      return support.refuse(site, "the name " .. w .. " is taken")
    else
      need[h.op] = true
    end
    local r, lw = fresh(unit, h.fn, "r"), fresh(unit, h.fn, "w")
    local step = h.op == "max" and OPS.max.slots:format(r, r, h.buf, lw) or OPS.sum.slots:format(r, h.buf, lw)
    edits[#edits + 1] = { node = h.fn:body(), text = string.format("{\n  %s = %s(%s);\n  if (threadIdx.x %% 32 == 0) %s[threadIdx.x / 32] = %s;\n"
      .. "  __syncthreads();\n  float %s = %s[0];\n  for (int %s = 1; %s < %s; ++%s) %s\n  __syncthreads();\n  return %s;\n}",
      h.v, w, h.v, h.buf, h.v, r, h.buf, lw, lw, slots, lw, step, r) }
    edits[#edits + 1] = comment_edit(unit, h.fn, SHUFFLE_COMMENT)
  end
  if need.max or need.sum then
    local at = R.before_function(unit, d.list[1].fn)
    local text = "// Butterfly reductions inside a warp: every lane ends with the result.\n"
      .. (need.max and WARP_TEXT.max or "") .. (need.sum and WARP_TEXT.sum or "")
    table.insert(edits, 1, { begin = at, ["end"] = at - 1, text = text })
  end
  for _, r in ipairs(d.roots) do
    local _, size = R.shared_decl(r.fn, r.name)
    if size == e then edits[#edits + 1] = { node = r.decl, text = string.format("__shared__ float %s[%s];", r.name, slots) } end
  end
  local a = R.top_stmt(unit, string.format('static_assert((%s & (%s - 1)) == 0, "the tree needs a power-of-two block");', e, e))
  if a then edits[#edits + 1] = { node = a, text = string.format('static_assert(%s %% 32 == 0, "whole warps only");', e) } end
  return support.edit(site, edits)
end

function M.undo(T, site)
  local d, f = refind(T, site, "undo")
  if not d then return nil, f end
  local unit, e = site.unit, d.e
  local edits, uses = {}, {}
  for _, h in ipairs(d.list) do
    local t, s = fresh(unit, h.fn, "tid"), fresh(unit, h.fn, "s")
    local step = h.op == "max" and OPS.max.tree:format(h.buf, t, h.buf, t, h.buf, t, s) or OPS.sum.tree:format(h.buf, t, h.buf, t, s)
    edits[#edits + 1] = { node = h.fn:body(), text = string.format("{\n  int %s = threadIdx.x;\n  __syncthreads();\n  %s[%s] = %s;\n"
      .. "  __syncthreads();\n  for (int %s = %s / 2; %s > 0; %s >>= 1) {\n    if (%s < %s) %s\n    __syncthreads();\n  }\n  return %s[0];\n}",
      t, h.buf, t, h.v, s, e, s, s, t, s, step, h.buf) }
    edits[#edits + 1] = comment_edit(unit, h.fn, TREE_COMMENT)
    uses[h.w] = (uses[h.w] or 0) + 1
  end
  -- A warp helper called only by these bodies goes with them.
  for w, n in pairs(uses) do
    local h = R.function_named(unit, w)
    if h and #R.calls(unit, w) == n then table.insert(edits, 1, R.delete_function(unit, h)) end
  end
  table.sort(edits, function(a, b) return (a.begin or R.span(a.node)) < (b.begin or R.span(b.node)) end)
  for _, r in ipairs(d.roots) do
    local _, size = R.shared_decl(r.fn, r.name)
    if size ~= e then edits[#edits + 1] = { node = r.decl, text = string.format("__shared__ float %s[%s];", r.name, e) } end
  end
  local a = R.top_stmt(unit, string.format('static_assert(%s %% 32 == 0, "whole warps only");', e))
  if a then edits[#edits + 1] = { node = a, text = string.format('static_assert((%s & (%s - 1)) == 0, "the tree needs a power-of-two block");', e, e) } end
  return support.edit(site, edits)
end

return M
