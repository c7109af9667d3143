-- What grid_stride and persistent_grid share: the kernel's launch line and
-- its grid, the thread index blockIdx.x * B + threadIdx.x, the checks that
-- a statement may run for another item than the block's own (no barrier,
-- no warp collective, no blockIdx/gridDim, also in the functions it calls),
-- the jumps that leave a loop body, and text helpers for the edits.
local annotations = require "klineage.workload.annotations"
local expr = require "klineage.base.expr"

local M = {}

function M.norm(s) return (s:gsub("%s+", "")) end
function M.span(n) local r = { n:range() } return r[5], r[6] end

-- The indentation of the line holding byte pos.
function M.indent_at(text, pos)
  local s = pos
  while s > 1 and text:sub(s - 1, s - 1) ~= "\n" do s = s - 1 end
  return text:sub(s, pos - 1):match("^[ \t]*")
end

-- Moves the lines after the first of `s` by `delta` columns (negative:
-- removes up to that many leading blanks).
function M.shift(s, delta)
  if delta >= 0 then return (s:gsub("\n", "\n" .. string.rep(" ", delta))) end
  return (s:gsub("\n( *)", function(b) return "\n" .. b:sub(1 - delta) end))
end

-- The bytes of line `n` (1-based): first, last (without the newline).
local function line_bytes(text, n)
  local pos = 1
  for _ = 2, n do pos = assert(text:find("\n", pos, true)) + 1 end
  local e = text:find("\n", pos, true)
  return pos, (e or #text + 1) - 1
end

-- Byte span of the balanced "(...)" after clause `word` in text[a..b].
local function clause(text, a, b, word)
  local s = text:sub(a, b):find("%f[%w_]" .. word .. "%s*%(")
  if not s then return nil end
  local open = text:find("(", a + s - 1, true)
  local depth = 0
  for i = open, b do
    local c = text:sub(i, i)
    if c == "(" then depth = depth + 1 elseif c == ")" then
      depth = depth - 1
      if depth == 0 then return open + 1, i - 1 end
    end
  end
end

local function top_comma(s)
  local depth = 0
  for i = 1, #s do
    local c = s:sub(i, i)
    if c == "(" then depth = depth + 1 elseif c == ")" then depth = depth - 1
    elseif c == "," and depth == 0 then return true end
  end
  return false
end

-- The launch line of kernel fn: { line, grid = span, block = span } of the
-- grid's and block's arguments (1-D only), or nil, why.
function M.launch(unit, fn)
  local text = tostring(unit)
  local named, unnamed = {}, {}
  for _, a in ipairs(unit:annotations()) do
    local k = a.text:match("^launch%s*%(%s*([%a_][%w_]*)%s*%)")
    if k then named[k] = a elseif a.text:match("^launch%f[^%w_]") then unnamed[#unnamed + 1] = a end
  end
  local a = named[fn:name()]
  if not a then
    local free = 0
    for _, g in ipairs(unit:functions()) do
      local info = g:info()
      if info.global and g:body() and not info.prototype and not named[g:name()] then free = free + 1 end
    end
    if free ~= 1 or #unnamed ~= 1 then return nil, "no launch line names " .. fn:name() end
    a = unnamed[1]
  end
  local lb, le = line_bytes(text, a.line)
  local gb, ge = clause(text, lb, le, "grid")
  local bb, be = clause(text, lb, le, "block")
  if not gb or not bb then return nil, "the launch line has no grid(...) or block(...)" end
  local g, b = text:sub(gb, ge), text:sub(bb, be)
  if top_comma(g) or top_comma(b) then return nil, "the launch is not 1-D" end
  return { line = a.line, grid = { begin = gb, ["end"] = ge, text = g }, block = { begin = bb, ["end"] = be, text = b } }
end

-- The integer value of a launch expression over the unit's constants only.
function M.const_value(unit, s)
  local v = expr.eval(s, annotations.constants(tostring(unit)))
  return math.type(v) == "integer" and v or nil
end

-- B when `s` is blockIdx.x * B + threadIdx.x (an integer cast on blockIdx.x
-- allowed) with B the launch's block size or blockDim.x.
function M.thread_index(s, block)
  local n = M.norm(s)
  n = n:gsub("^%((%a[%w_]*)%)blockIdx", "blockIdx")
  local b = n:match("^blockIdx%.x%*(.+)%+threadIdx%.x$") or n:match("^threadIdx%.x%+blockIdx%.x%*(.+)$")
  if b == "blockDim.x" or (b and b == M.norm(block)) then return b end
end

local TYPEWORDS = { int = true, long = true, unsigned = true, signed = true, short = true, size_t = true }
local function type_words(inner)
  for w in inner:gmatch("[%a_][%w_]*") do if not TYPEWORDS[w] then return false end end
  return true
end

-- Whether parameter p of fn is a plain integer.
function M.int_param(p)
  return p.pointer_depth == 0 and not p.reference and p.base_span and type_words(p.base_span.text) or false
end

-- The launch-language form of a C bound (integer casts dropped), when every
-- name in it is an integer parameter of fn or an integer constant of the
-- unit. Kernel parameters are taken to be the workload's parameters of the
-- same name, as every lineage's launch lines read them.
function M.launch_bound(unit, fn, s)
  local e = s:gsub("%(([%a_][%w_ ]*)%)%s*", function(inner) if type_words(inner) then return "" end end)
  local c = expr.compile(e)
  if not c then return nil end
  local ints, consts = {}, annotations.constants(tostring(unit))
  for _, p in ipairs(fn:params()) do if M.int_param(p) then ints[p.name] = true end end
  for _, name in ipairs(c.names) do
    if not ints[name] and not consts[name] then return nil end
  end
  return (e:gsub("^%s+", ""):gsub("%s+$", ""))
end

-- The unit's functions with bodies, by name.
local function functions_by_name(unit)
  local out = {}
  for _, g in ipairs(unit:functions()) do
    if g:body() and not g:info().prototype then
      local l = out[g:name()] or {}
      l[#l + 1] = g
      out[g:name()] = l
    end
  end
  return out
end

local function collective(name)
  return name:match("^__sync") or name:match("_sync$") or name:match("^__shfl") or name:match("^__ballot")
    or name:match("^__any") or name:match("^__all") or name:match("^__activemask") or name:match("^__reduce_")
    or name:match("^__match")
end

-- nil when `node` (and every function of the unit it calls, transitively)
-- reads no blockIdx/gridDim and, unless opts.barriers, calls no barrier or
-- warp collective; else why not. opts.own_block: node itself may read
-- blockIdx (its callees may not).
function M.item_local(unit, node, opts)
  opts = opts or {}
  local fns, seen = functions_by_name(unit), {}
  local function scan(n, top)
    for id in n:walk({ "ident" }) do
      local t = id:text()
      if (t == "blockIdx" and not (top and opts.own_block)) or t == "gridDim" then return string.format("line %d reads %s", id.line, t) end
      if t == "this_grid" or t == "grid_group" then return "it uses a cooperative grid" end
    end
    for c in n:walk({ "call" }) do
      local callee = c:field("callee")
      local name = callee and callee.kind == "ident" and callee:text()
      if name then
        if collective(name) and not opts.barriers then
          return string.format("line %d calls %s, which needs the block's threads together", c.line, name)
        end
        if fns[name] and not seen[name] then
          seen[name] = true
          for _, g in ipairs(fns[name]) do
            local why = scan(g:body())
            if why then return why .. " (in " .. name .. ")" end
          end
        end
      end
    end
  end
  return scan(node, true)
end

local LOOPS = { ["for"] = true, ["while"] = true, ["do"] = true, range_for = true }

-- The return/break/continue statements of `body` that leave it: returns
-- not in a lambda, breaks not in a nested loop or switch, continues not in
-- a nested loop; `nested_return` when a return sits in a nested loop.
function M.jumps(body)
  local out = { returns = {}, breaks = {}, continues = {}, nested_return = false }
  for j in body:walk({ "return", "break", "continue" }) do
    local loop, switch, lambda = false, false, false
    local p = j:parent()
    while p and p.id ~= body.id do
      if LOOPS[p.kind] then loop = true elseif p.kind == "switch" then switch = true
      elseif p.kind == "lambda" then lambda = true end
      p = p:parent()
    end
    if j.kind == "return" and not lambda then
      if loop then out.nested_return = true else out.returns[#out.returns + 1] = j end
    elseif j.kind == "break" and not loop and not switch then out.breaks[#out.breaks + 1] = j
    elseif j.kind == "continue" and not loop then out.continues[#out.continues + 1] = j end
  end
  return out
end

-- nil when `node` neither writes the variable `name`, takes its address
-- nor declares another of that name; else why not.
function M.read_only(node, name)
  for id in node:walk({ "ident" }) do
    if id:text() == name then
      local p = id:parent()
      if p.kind == "assign" and p:field("lhs") and p:field("lhs").id == id.id then return "it assigns " .. name end
      if (p.kind == "unary" or p.kind == "postfix") and (p.op == "++" or p.op == "--" or p.op == "&") then
        return "it changes or takes the address of " .. name
      end
      if p.kind == "declarator" and p:field("name") and p:field("name").id == id.id then
        return "it declares another " .. name
      end
    end
  end
end

-- The identifiers `name` in node, member names left out.
function M.uses(node, name)
  local out = {}
  for id in node:walk({ "ident" }) do
    if id:text() == name then
      local p = id:parent()
      local m = p and p.kind == "member" and p:field("member")
      if not (m and m.id == id.id) then out[#out + 1] = id end
    end
  end
  return out
end

-- The single declarator of a declaration statement or a for's init:
-- type text, name, value node; nil when it is not one `T name = value`.
function M.single_decl(d)
  if not d then return nil end
  local decl = d.kind == "decl_stmt" and d:children()[1] or d
  if not decl or decl.kind ~= "decl" then return nil end
  local ds, ty = {}, nil
  for _, c in ipairs(decl:children()) do
    if c.kind == "declarator" then ds[#ds + 1] = c elseif c.kind == "type" then ty = c end
  end
  if #ds ~= 1 or not ty or not ds[1]:field("name") or not ds[1]:field("value") then return nil end
  if ty:text():find("[*&%[]") or ds[1]:text():match("^[^=]*"):find("[%[*&]") then return nil end
  return { type = ty:text(), name = ds[1]:field("name"):text(), value = ds[1]:field("value") }
end

-- Whether the statements of `list` after index k mention `name`.
function M.used_after(list, k, name)
  for j = k + 1, #list do if #M.uses(list[j], name) > 0 then return true end end
  return false
end

-- Code uses of the word `name` in the unit outside the bytes [skip_b, skip_e]:
-- identifiers, preprocessor lines other than its own #define, @kl lines.
function M.other_uses(unit, name, skip_b, skip_e)
  local count, text = 0, tostring(unit)
  local function outside(b) return not (skip_b and b >= skip_b and b <= skip_e) end
  for id in unit:walk({ "ident" }) do
    if id:text() == name and outside((M.span(id))) then count = count + 1 end
  end
  for pp in unit:walk({ "preproc" }) do
    local t = pp:text()
    if not t:match("^#%s*define%s+" .. name .. "%f[^%w_]") then
      for _ in t:gmatch("%f[%w_]" .. name .. "%f[^%w_]") do count = count + 1 end
    end
  end
  for _, a in ipairs(unit:annotations()) do
    local lb, le = line_bytes(text, a.line)
    local s = text:sub(lb, le)
    local pos = 1
    while true do
      local b, e = s:find("%f[%w_]" .. name .. "%f[^%w_]", pos)
      if not b then break end
      if outside(lb + b - 1) then count = count + 1 end
      pos = e + 1
    end
  end
  return count
end

-- The edit that deletes the #define of `name`, when it is an unconditional
-- object-like define that nothing else reads once [skip_b, skip_e] is gone.
function M.drop_define(unit, name, skip_b, skip_e)
  local d = unit:define(name)
  if not d or d.function_like or d.conditional or d.redefined or d.in_function then return nil end
  if M.other_uses(unit, name, skip_b, skip_e) > 0 then return nil end
  return { begin = d.line.begin, ["end"] = d.line["end"], text = "" }
end

-- The edit that puts `line` (with its newline) after the define of `after`
-- when there is one, else after the unit's last top-level define, else
-- after the last @kl line.
function M.add_define(unit, line, after)
  local d = after and unit:define(after)
  if not (d and not d.in_function and not d.conditional) then
    d = nil
    for _, x in ipairs(unit:defines()) do if not x.in_function and not x.conditional then d = x end end
  end
  if d then return { begin = d.line["end"] + 1, ["end"] = d.line["end"], text = line .. "\n" } end
  local anns = unit:annotations()
  if #anns == 0 then return nil end
  local _, le = line_bytes(tostring(unit), anns[#anns].line)
  return { begin = le + 2, ["end"] = le + 1, text = line .. "\n" }
end

-- The edit that deletes statement `s` with its whole line (and a comment
-- after it there), when it is alone on it.
function M.drop_line(unit, s)
  local text = tostring(unit)
  local b, e = M.span(s)
  local lb = b
  while lb > 1 and text:sub(lb - 1, lb - 1):match("[ \t]") do lb = lb - 1 end
  local le = e
  while text:sub(le + 1, le + 1):match("[ \t]") do le = le + 1 end
  local trailing = text:match("^//[^\n]*", le + 1)  -- a comment on the statement's line goes with it
  if trailing then le = le + #trailing end
  if (lb == 1 or text:sub(lb - 1, lb - 1) == "\n") and text:sub(le + 1, le + 1) == "\n" then
    return { begin = lb, ["end"] = le + 1, text = "" }
  end
  return { begin = b, ["end"] = e, text = "" }
end

-- The statements of a compound node, trivia left out.
function M.statements(compound)
  local out = {}
  for _, c in ipairs(compound:children()) do out[#out + 1] = c end
  return out
end

return M
