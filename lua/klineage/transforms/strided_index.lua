-- Strided index for a shared-memory tree reduction (reduction v0_interleaved
-- -> v1_strided_index): at step s the working threads are the first ones
-- (thread t works on element 2 * s * t) instead of every 2s-th, so whole
-- warps go idle instead of every warp diverging.
--
--   interleaved (apply finds it)            strided (undo finds it)
--   for (T s = 1; s < blockDim.x; s *= 2) {  for (T s = 1; s < blockDim.x; s *= 2) {
--     if (tid % (2 * s) == 0) OP(tid);         T index = 2 * s * tid;
--     ...                                      if (index < blockDim.x) OP(index);
--                                              ...
-- OP(j) is `A[j] op= A[j + s];` (op one of + * & | ^) or `A[j] =
-- F(A[j], A[j + s]);` (F one of fmaxf fminf max min). The two forms do the
-- same operations on the same elements with the same operands (element j,
-- j % 2s == 0, j < blockDim.x, reads j + s, which no thread writes at that
-- step), so the result is bit for bit the same. The static check: the
-- loop header is exactly that (s declared there, not written in the body),
-- tid is a local initialized to threadIdx.x and never written, OP touches
-- nothing but A and s, the if has no else, and `index` is a new name
-- (apply) or used only in those two statements (undo).
local support = require "klineage.transforms.support"
local lib = require "klineage.transforms.lib.tree_reduction"
local norm, range = lib.norm, lib.range

local T = {
  name = "strided_index",
  intent = "make the threads that work at each step of a shared-memory tree reduction contiguous, so warps retire instead of diverging",
}

-- s's type text when `loop` is `for (TY s = 1; s < blockDim.x; s *= 2)`.
local function header(loop)
  local init, cond, step = loop:field("init"), loop:field("cond"), loop:field("step")
  local dd = init and init.kind == "decl" and init:declaration()
  if not (dd and #dd.declarators == 1 and dd.declarators[1].init and dd.declarators[1].init.text == "1") then return nil end
  local s = dd.declarators[1].name.text
  if not (cond and norm(cond:text()) == s .. "<blockDim.x" and step and norm(step:text()) == s .. "*=2") then return nil end
  return s, dd.type.text
end

local function site_of(unit, fn, loop)
  local s, ty = header(loop)
  local body = loop:field("body")
  if not (s and body and body.kind == "compound") or lib.written_in(body, s) then return nil end
  local list = {}
  for _, c in ipairs(body:children()) do if c.kind ~= "pragma" then list[#list + 1] = c end end
  for i, st in ipairs(list) do
    local cond, th = st.kind == "if" and st:field("cond"), st.kind == "if" and st:field("then")
    if cond and not st:field("else") then
      local c = norm(cond:text())
      local tid = c:match("^([%a_][%w_]*)%%%(2%*" .. s .. "%)==0$")
      local A = tid and lib.op_array(th, tid, s)
      if A and #support.uses(fn, "index") == 0 and lib.thread_index(fn, tid) then
        return { direction = "apply", s = s, ty = ty, tid = tid, A = A, stmt = st, op = th }
      end
      local d = list[i - 1]
      local dd = c == "index<blockDim.x" and d and d.kind == "decl_stmt" and d:declaration()
      local x = dd and #dd.declarators == 1 and dd.declarators[1]
      tid = x and x.name.text == "index" and x.init and x.init.text:match("^2 %* " .. s .. " %* ([%a_][%w_]*)$")
      A = tid and lib.op_array(th, "index", s)
      if A and lib.thread_index(fn, tid) then
        local only = true
        for _, id in ipairs(support.uses(fn, "index")) do
          local b = range(id)
          local db = range(d)
          local _, se = range(st)
          only = only and b >= db and b <= se
        end
        if only and #support.uses(fn, tid) > 0 then
          return { direction = "undo", s = s, ty = ty, tid = tid, A = A, stmt = st, op = th, decl = d }
        end
      end
    end
  end
end

function T.find(unit)
  local sites = {}
  for _, fn in ipairs(support.functions(unit)) do
    for loop in fn:body():walk({ "for" }) do
      local f = site_of(unit, fn, loop)
      if f then
        f.key = fn:name() .. ":" .. f.A .. "@" .. f.s
        f.line = loop.line
        f.check = string.format("tree loop over %s = 1, 2, 4 ... < blockDim.x; %s is threadIdx.x, never written; "
          .. "the step's statement touches only %s[j] and %s[j + %s], so both forms add the same pairs", f.s, f.tid, f.A, f.A, f.s)
        sites[#sites + 1] = support.site(T, unit, fn, f)
      end
    end
  end
  return sites
end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local text = tostring(site.unit)
  local b, e = range(site.stmt)
  local lb = b
  while lb > 1 and text:sub(lb - 1, lb - 1) ~= "\n" do lb = lb - 1 end
  local ind = text:sub(lb, b - 1)
  if not ind:match("^[ \t]*$") then return support.refuse(site, "the if does not begin its line") end
  return support.edit(site, { { begin = b, ["end"] = e, text = site.ty .. " index = 2 * " .. site.s .. " * " .. site.tid
    .. ";\n" .. ind .. "if (index < blockDim.x) " .. lib.renamed(site.op, site.tid, "index") } })
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local db = range(site.decl)
  local _, e = range(site.stmt)
  return support.edit(site, { { begin = db, ["end"] = e, text = "if (" .. site.tid .. " % (2 * " .. site.s .. ") == 0) "
    .. lib.renamed(site.op, "index", site.tid) } })
end

return T
