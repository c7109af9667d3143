-- What the shared-memory tree reduction transforms (strided_index,
-- sequential_addressing) share: the step's statement OP(j), the thread
-- index, and renaming the element index.
--
--   lib.norm(s) -> s without blanks;  lib.range(n) -> b, e
--   lib.op_array(stmt, j, s) -> A when stmt is `A[j] op= A[j + s];` (op one
--     of + * & | ^) or `A[j] = F(A[j], A[j + s]);` (F one of fmaxf fminf
--     max min), else nil
--   lib.thread_index(fn, tid) -> whether tid is `X tid = threadIdx.x`, its
--     only declaration in fn, and never written
--   lib.written_in(body, name) -> whether body assigns, increments or takes
--     the address of name
--   lib.renamed(op, from, to) -> op's text with the identifiers `from` renamed
--   lib.block_pow2(unit, fn) -> the block size when fn's `@kl launch` line
--     gives it from the file's constants alone and it is a power of two
local support = require "klineage.transforms.support"

local M = {}

local OPS = { ["+="] = true, ["*="] = true, ["&="] = true, ["|="] = true, ["^="] = true }
local FNS = { fmaxf = true, fminf = true, max = true, min = true }
function M.norm(s) return (s:gsub("%s+", "")) end
function M.range(n) local r = { n:range() }; return r[5], r[6] end
local norm, range = M.norm, M.range

-- The array A when stmt is OP(j) for the index text j (and step s).
function M.op_array(stmt, j, s)
  if not (stmt and stmt.kind == "expr_stmt") then return nil end
  local e = stmt:children()[1]
  if not (e and e.kind == "assign") then return nil end
  local lhs = e:field("lhs")
  local a = lhs.kind == "index" and lhs:field("object")
  if not (a and a.kind == "ident") then return nil end
  local A = a:text()
  local at, next = A .. "[" .. j .. "]", A .. "[" .. j .. "+" .. s .. "]"
  local t = norm(e:text())
  if OPS[e.op] and t == at .. e.op .. next then return A end
  if e.op == "=" then
    for f in pairs(FNS) do if t == at .. "=" .. f .. "(" .. at .. "," .. next .. ")" then return A end end
  end
end

-- Whether tid is `X tid = threadIdx.x` in fn and never written.
function M.thread_index(fn, tid)
  local decls = 0
  for d in fn:body():walk({ "declarator" }) do
    local c = d:children()
    if c[1]:text() == tid then
      if not (c[2] and norm(c[2]:text()) == "threadIdx.x") then return false end
      decls = decls + 1
    end
  end
  if decls ~= 1 then return false end
  for _, id in ipairs(support.uses(fn, tid)) do
    local p = id:parent()
    if (p.kind == "assign" and p:field("lhs").id == id.id) or ((p.kind == "unary" or p.kind == "postfix")
        and (p.op == "++" or p.op == "--" or p.op == "&")) then return false end
  end
  return true
end

function M.written_in(body, s)
  for n in body:walk({ "assign", "unary", "postfix" }) do
    local t = n.kind == "assign" and n:field("lhs") or ((n.op == "++" or n.op == "--" or n.op == "&") and n:children()[1])
    if t and t.kind == "ident" and t:text() == s then return true end
  end
end

-- The step's statement with the element index renamed from `from` to `to`.
function M.renamed(op, from, to)
  local b = range(op)
  local text, out, pos = tostring(op.unit), {}, b
  local _, e = range(op)
  for id in op:walk({ "ident" }) do
    if id:text() == from then
      local ib, ie = range(id)
      out[#out + 1] = text:sub(pos, ib - 1) .. to
      pos = ie + 1
    end
  end
  out[#out + 1] = text:sub(pos, e)
  return table.concat(out)
end

function M.block_pow2(unit, fn)
  local annotations = require "klineage.workload.annotations"
  local text = tostring(unit)
  local ann = annotations.parse(text)
  if not ann then return nil end
  local launch = ann.launches and ann.launches[fn:name()]
  if not launch and fn:info().global then
    local others = 0
    for _, f in ipairs(support.functions(unit, { global = true })) do
      if not (ann.launches and ann.launches[f:name()]) then others = others + 1 end
    end
    if others == 1 then launch = ann.launch end
  end
  if not (launch and launch.block and #launch.block == 1) then return nil end
  local ok, v = pcall(function() return launch.block[1]:eval({}, {}, annotations.constants(text)) end)
  if ok and math.type(v) == "integer" and v > 0 and v & (v - 1) == 0 then return v end
end

return M
