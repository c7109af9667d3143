-- Sequential addressing for a shared-memory tree reduction (reduction
-- v1_strided_index -> v2_sequential): at step s the first s threads fold
-- A[tid + s] into A[tid], halving s, instead of thread t working on
-- element 2 * s * t: a warp's accesses are then consecutive words, 32
-- banks, where the strided index made 2s-way bank conflicts.
--
--   strided (apply finds it)                 sequential (undo finds it)
--   for (T s = 1; s < N; s *= 2) {            for (T s = N / 2; s > 0; s >>= 1) {
--     T index = 2 * s * tid;                    if (tid < s) OP(tid);
--     if (index < N) OP(index);                 __syncthreads();
--     __syncthreads();                        }
--   }
-- OP(j) as in strided_index (lib/tree_reduction.lua). The static check:
-- the loop body is exactly those statements; N is blockDim.x with the
-- kernel's `@kl launch` block a power of two, or a constant of the file
-- that is a power of two (both forms then fold exactly the first N
-- elements, reading none past them); tid is threadIdx.x, never written;
-- s is declared in the header. The pairs differ: max, min and the bitwise
-- ops give the same bits, a float sum or product is reassociated (the
-- gate's tolerance judges it; v1 and v2 differ so).
local support = require "klineage.transforms.support"
local lib = require "klineage.transforms.lib.tree_reduction"
local norm, range = lib.norm, lib.range

local T = {
  name = "sequential_addressing",
  intent = "let the first s threads fold the upper half at each tree step, so shared-memory accesses are consecutive and conflict-free",
}

-- Whether N (text) is a power of two the reduction may rely on.
local function size_ok(unit, fn, n)
  if n == "blockDim.x" then return lib.block_pow2(unit, fn) ~= nil end
  if not n:match("^[%a_][%w_]*$") then return false end
  local v = unit:constant(n)
  return math.type(v) == "integer" and v > 0 and v & (v - 1) == 0
end

local function body_stmts(loop)
  local body = loop:field("body")
  if not (body and body.kind == "compound") then return nil end
  local list = {}
  for _, c in ipairs(body:children()) do if c.kind ~= "pragma" then list[#list + 1] = c end end
  local last = list[#list]
  if not (last and norm(last:text()) == "__syncthreads();") then return nil end
  return list
end

local function if_op(st)
  if st and st.kind == "if" and not st:field("else") then return norm(st:field("cond"):text()), st:field("then") end
end

-- The strided form: { s, ty, n, tid, A, decl, stmt, op }.
local function strided(unit, fn, loop)
  local init, cond, step = loop:field("init"), loop:field("cond"), loop:field("step")
  local dd = init and init.kind == "decl" and init:declaration()
  local x = dd and #dd.declarators == 1 and dd.declarators[1]
  if not (x and x.init and x.init.text == "1" and cond and step) then return nil end
  local s = x.name.text
  local n = norm(cond:text()):match("^" .. s .. "<(.+)$")
  local list = body_stmts(loop)
  if not (n and norm(step:text()) == s .. "*=2" and list and #list == 3) then return nil end
  local d = list[1].kind == "decl_stmt" and list[1]:declaration()
  local ix = d and #d.declarators == 1 and d.declarators[1]
  local tid = ix and ix.name.text == "index" and ix.init and norm(ix.init.text):match("^2%*" .. s .. "%*([%a_][%w_]*)$")
  local c, th = if_op(list[2])
  local A = tid and c == "index<" .. n and lib.op_array(th, "index", s)
  if not (A and lib.thread_index(fn, tid) and size_ok(unit, fn, n)) then return nil end
  for _, id in ipairs(support.uses(fn, "index")) do
    local b = range(id)
    local db, _ = range(list[1])
    local _, se = range(list[2])
    if b < db or b > se then return nil end
  end
  return { s = s, ty = dd.type.text, n = n, tid = tid, A = A, decl = list[1], stmt = list[2], op = th }
end

-- The sequential form: { s, ty, n, tid, A, stmt, op }.
local function sequential(unit, fn, loop)
  local init, cond, step = loop:field("init"), loop:field("cond"), loop:field("step")
  local dd = init and init.kind == "decl" and init:declaration()
  local x = dd and #dd.declarators == 1 and dd.declarators[1]
  if not (x and x.init and cond and step) then return nil end
  local s = x.name.text
  local n = norm(x.init.text):match("^(.+)/2$")
  local list = body_stmts(loop)
  if not (n and norm(cond:text()) == s .. ">0" and norm(step:text()) == s .. ">>=1" and list and #list == 2) then return nil end
  local c, th = if_op(list[1])
  local tid = c and c:match("^([%a_][%w_]*)<" .. s .. "$")
  local A = tid and lib.op_array(th, tid, s)
  if not (A and lib.thread_index(fn, tid) and size_ok(unit, fn, n) and #support.uses(fn, "index") == 0) then return nil end
  return { s = s, ty = dd.type.text, n = n, tid = tid, A = A, stmt = list[1], op = th }
end

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit)) do
    for loop in fn:body():walk({ "for" }) do
      local f, dir = strided(unit, fn, loop), "apply"
      if not f then f, dir = sequential(unit, fn, loop), "undo" end
      if f then
        f.direction, f.loop = dir, loop
        f.key = fn:name() .. ":" .. f.A .. "@" .. f.s
        f.line = loop.line
        f.check = string.format("tree loop over %s[0 .. %s), %s a power of two; %s is threadIdx.x, never written; "
          .. "the step touches only %s[j] and %s[j + %s]; a float + or * is reassociated", f.A, f.n, f.n, f.tid, f.A, f.A, f.s)
        sites[#sites + 1] = support.site(T, unit, fn, f)
      end
    end
  end
  return sites
end

local function header_edits(loop, init, cond, step)
  local x = loop:field("init"):declaration().declarators[1]
  local cb, ce = range(loop:field("cond"))
  local sb, se = range(loop:field("step"))
  return { { begin = x.init.begin, ["end"] = x.init["end"], text = init }, { begin = cb, ["end"] = ce, text = cond },
           { begin = sb, ["end"] = se, text = step } }
end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local edits = header_edits(site.loop, site.n .. " / 2", site.s .. " > 0", site.s .. " >>= 1")
  local db = range(site.decl)
  local _, e = range(site.stmt)
  edits[#edits + 1] = { begin = db, ["end"] = e, text = "if (" .. site.tid .. " < " .. site.s .. ") "
    .. lib.renamed(site.op, "index", site.tid) }
  return support.edit(site, edits)
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local text = tostring(site.unit)
  local b, e = range(site.stmt)
  local lb = b
  while lb > 1 and text:sub(lb - 1, lb - 1) ~= "\n" do lb = lb - 1 end
  local ind = text:sub(lb, b - 1)
  if not ind:match("^[ \t]*$") then return support.refuse(site, "the if does not begin its line") end
  local edits = header_edits(site.loop, "1", site.s .. " < " .. site.n, site.s .. " *= 2")
  edits[#edits + 1] = { begin = b, ["end"] = e, text = site.ty .. " index = 2 * " .. site.s .. " * " .. site.tid
    .. ";\n" .. ind .. "if (index < " .. site.n .. ") " .. lib.renamed(site.op, site.tid, "index") }
  return support.edit(site, edits)
end

return T
