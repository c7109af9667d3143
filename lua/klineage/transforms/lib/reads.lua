-- Whether a kernel only reads through a pointer parameter: the static
-- check restrict and ldg share. A pointer is "only read" when every use of
-- its name in the function is the array of a subscript that is read as a
-- value. Anything the parser did not structure counts as a write, since
-- nothing here can see what it does.
--
--   reads.of(unit, fn, name [, { ldg = true }]) -> { { ix, call } ... } | nil, why
--       ix: each subscript node p[e]; call: the __ldg(&p[e]) around it
--       (only with opts.ldg, where __ldg's `&` is a read). why names the
--       line and the use that is not a read.
--   reads.written(unit, fn, name) -> true unless reads.of finds only reads
--       (a pointer the kernel never uses is not written)
local support = require "klineage.transforms.support"

local M = {}

local WRITES = { ["++"] = true, ["--"] = true, ["&"] = true }

-- Functions outside the unit known to take an argument by reference.
local REF_LIBRARY = { swap = true, ["std::swap"] = true, ["cuda::std::swap"] = true }

-- Functions of the unit with a reference parameter, by name: an element
-- passed to one may be written through the reference.
local function ref_takers(unit)
  local out = {}
  for _, fn in ipairs(unit:functions()) do
    for _, p in ipairs(fn:params()) do
      if p.reference then out[fn:name() or ""] = true end
    end
  end
  return out
end

-- The parent of the element `ix` names and the node under it: climbs
-- parentheses and member accesses (p[i].x is still the element's storage).
local function context(ix)
  local n, p = ix, ix:parent()
  while p and (p.kind == "paren" or (p.kind == "member" and p:field("object") and p:field("object").id == n.id)) do
    n, p = p, p:parent()
  end
  return p, n
end

local function span(n)
  local _, _, _, _, b, e = n:range()
  return b, e
end

-- The `__ldg(&p[e])` call around subscript `ix`, or nil.
local function ldg_call(ix)
  local amp = ix:parent()
  if not (amp and amp.kind == "unary" and amp.op == "&") then return nil end
  local call = amp:parent()
  local callee = call and call.kind == "call" and call:field("callee")
  if callee and callee:text() == "__ldg" and #call:children() == 2 then return call end
end

-- nil when the subscript `ix` is read as a value, else what it is.
local function write_kind(ix, refs)
  local p, inner = context(ix)
  if not p then return nil end
  if p.kind == "assign" and p:field("lhs") and p:field("lhs").id == inner.id then return "stores to it" end
  if (p.kind == "unary" or p.kind == "postfix") and WRITES[p.op] then
    return p.op == "&" and "takes an element's address" or "increments it"
  end
  if p.kind == "index" and p:field("object") and p:field("object").id == inner.id then return "indexes an element (p[i][j])" end
  if p.kind == "declarator" and p:parent() then
    -- `T &r = p[i]`: an '&' in the declaration before the value
    local db, vb = select(5, p:parent():range()), span(inner)
    if p:parent():text():sub(1, vb - db):find("&", 1, true) then return "binds a reference to an element" end
  end
  if p.kind == "call" then
    local callee = p:field("callee")
    if callee and callee.id == inner.id then return "calls a member of an element" end
    local name = callee and callee:text() or ""
    if refs[name] or REF_LIBRARY[name] then return "passes an element to " .. name .. ", which takes a reference" end
  end
  return nil
end

-- Comments, string and character literals blanked: what is left is code.
local function code_only(text)
  local out, i, n = {}, 1, #text
  while i <= n do
    local c, two = text:sub(i, i), text:sub(i, i + 1)
    if two == "//" then
      local e = text:find("\n", i, true) or n + 1
      i = e
    elseif two == "/*" then
      local _, e = text:find("*/", i + 2, true)
      i = (e or n) + 1
      out[#out + 1] = " "
    elseif c == '"' or c == "'" then
      local j = i + 1
      while j <= n and text:sub(j, j) ~= c do
        if text:sub(j, j) == "\\" then j = j + 1 end
        j = j + 1
      end
      out[#out + 1] = " "
      i = j + 1
    else
      out[#out + 1] = c
      i = i + 1
    end
  end
  return table.concat(out)
end

local function words(text, name)
  local count = 0
  for _ in code_only(text):gmatch("%f[%w_]" .. name:gsub("%p", "%%%0") .. "%f[^%w_]") do count = count + 1 end
  return count
end

-- Why `name` is used where the parser gave no structure (an opaque
-- region, an asm statement), or appears in a macro of the unit, or nil.
local function unstructured(unit, fn, name)
  local body = fn:body()
  local seen = 0
  for id in body:walk({ "ident" }) do if id:text() == name then seen = seen + 1 end end
  if words(body:text(), name) > seen then
    for n in body:walk({ "opaque", "asm" }) do
      if words(n:text(), name) > 0 then
        return string.format("line %d uses it in %s the parser did not structure", n.line,
          n.kind == "asm" and "an asm statement" or "a region")
      end
    end
    return "a use of it lies where the parser did not structure the code"
  end
  -- a macro the function uses whose text names it, unless as one of the
  -- macro's own parameters (CEIL_DIV(x, y) names no kernel's x)
  for _, d in ipairs(unit:defines()) do
    local own = false
    for _, mp in ipairs(d.params or {}) do own = own or mp.text == name end
    if d.value and not own and words(d.value.text, name) > 0 and words(body:text(), d.name.text) > 0 then
      return string.format("the macro %s (line %d) names it, and what a macro does is not seen", d.name.text, d.name.line)
    end
  end
end

function M.of(unit, fn, name, opts)
  local uses = support.uses(fn, name)
  if #uses == 0 then return nil, "the kernel never reads through it" end
  local why = unstructured(unit, fn, name)
  if why then return nil, why end
  local refs = ref_takers(unit)
  local out = {}
  for _, id in ipairs(uses) do
    local ix = id:parent()
    if not (ix and ix.kind == "index" and ix:field("object") and ix:field("object").id == id.id) then
      return nil, string.format("line %d uses it as '%s', not as a subscript", id.line, ix and ix:text() or name)
    end
    local call = opts and opts.ldg and ldg_call(ix)
    if not call then
      local w = write_kind(ix, refs)
      if w then return nil, string.format("line %d %s", id.line, w) end
    end
    out[#out + 1] = { ix = ix, call = call or nil }
  end
  return out
end

function M.written(unit, fn, name)
  if #support.uses(fn, name) == 0 and not unstructured(unit, fn, name) then return false end
  return M.of(unit, fn, name) == nil
end

return M
