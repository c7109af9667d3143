-- segscan([block=B] [, chunks=G]): a segmented sum done by walking back
-- from each point, `for (j = i;; --j) { acc += f(j); if (starts(j)) break; }`
-- (y[i] = f(s) + ... + f(i), s the last j <= i where a segment starts),
-- becomes a segmented block scan. A block takes G chunks of B points in
-- turn: each thread computes f(i) and starts(i) once, the warp scans the
-- (flag, value) pairs by shuffles (a flag stops the sum from the left),
-- the warps' totals meet through shared memory, and a carry runs from
-- chunk to chunk. The segment still open where the block begins is summed
-- once, by one thread walking back as the kernel did. The work per point
-- goes from its segment's length to a constant.
--
-- Legal when the walk's body is exactly the update then the test, and
-- f(j) and starts(j) read j and values every thread shares, nothing
-- the kernel writes: then any thread computes them for any j.
local ir = require "klineage.kir.ir"
local analysis = require "klineage.kir.analysis"
local geometry = require "klineage.kir.geometry"

local M = { name = "segscan" }

local FULL = "0xffffffffu"
local PURE = { expf = true, exp = true, logf = true, log = true, sqrtf = true, sqrt = true, fabsf = true, fabs = true,
               fmaxf = true, fminf = true, fmax = true, fmin = true, __ldg = true, max = true, min = true, abs = true }
local SCANNED = { float = true, double = true, int = true, long = true, ["long long"] = true }

local function zero(e)
  e = ir.strip_casts(e)
  return e.k == "num" and tonumber((e.v:gsub("[fFuUlL]+$", ""))) == 0
end

-- The walk's update and test: acc += f(j); if (starts(j)) break;
local function walk_parts(walk)
  local j = walk.init.name
  local st = walk.step
  local back = st and st.s == "assign" and st.lhs.k == "var" and st.lhs.name == j and
    (st.op == "--" or (st.op == "-=" and st.rhs and st.rhs.k == "num" and st.rhs.v == "1"))
  if not back then return nil, "the walk does not step back by one (--" .. j .. ")" end
  local b = walk.body
  if #b == 1 and b[1].s == "block" then b = b[1].body end
  local upd, test = b[1], b[2]
  if #b ~= 2 or not (upd.s == "assign" and upd.op == "+=" and upd.lhs.k == "var") or
     not (test.s == "if" and not test.else_ and #test.then_ == 1 and test.then_[1].s == "break") then
    return nil, "the walk's body is not `acc += f(" .. j .. "); if (starts(" .. j .. ")) break;`"
  end
  return { j = j, acc = upd.lhs.name, f = upd.rhs, starts = test.cond }
end

function M.apply(k, p)
  local nt = (type(p.block) == "table" and p.block[1]) or p.block or p[1] or 256
  local chunks = p.chunks or 8
  if type(nt) ~= "number" or nt % 32 ~= 0 or nt < 64 or nt > 1024 then return nil, "segscan(block=B): 64 to 1024 threads, whole warps" end
  if type(chunks) ~= "number" or chunks < 1 or chunks > 64 then return nil, "segscan(chunks=G): 1 to 64 chunks a block" end
  if next(k.schedule) then return nil, "segscan goes alone" end
  local out = ir.clone(k)
  local threaded = {}
  for _, ax in ipairs(out.axes) do if ax.block then threaded[#threaded + 1] = ax end end
  if #out.axes ~= 1 or #threaded ~= 1 or threaded[1].dim ~= "x" then return nil, "segscan takes a 1-D kernel: one flat axis on x" end
  local axis = threaded[1]
  if not out.guard or out.guard.form ~= "return" or not axis.extent then return nil, "segscan needs the early-return bounds guard" end
  local at, walk
  for i, s in ipairs(out.body) do
    if s.s == "raw" and s.walk then
      if walk then return nil, "more than one walk" end
      at, walk = i, s.walk
    elseif s.s == "for" or s.s == "raw" then
      return nil, "a loop besides the walk"
    end
  end
  if not walk then return nil, "no walk back (`for (j = i;; --j)`, ended by a break) to scan" end
  local parts, why = walk_parts(walk)
  if not parts then return nil, why end
  local j = parts.j
  if ir.text(ir.strip_casts(walk.init.init)) ~= axis.name then return nil, "the walk does not start at the point (" .. j .. " = " .. axis.name .. ")" end
  -- the accumulator: declared before the walk at 0, of a type shuffles carry
  local acc_type
  for i = 1, at - 1 do
    local s = out.body[i]
    if s.s ~= "let" then return nil, "the code before the walk does more than compute values" end
    if s.name == parts.acc then
      if not zero(s.init) then return nil, parts.acc .. " does not start at 0" end
      acc_type = s.type
    end
  end
  if not acc_type then return nil, "the accumulator " .. parts.acc .. " is not declared before the walk" end
  if not SCANNED[acc_type] then return nil, "the accumulator's type " .. acc_type .. " is not scanned by shuffles here" end
  for i = at + 1, #out.body do
    local bad
    ir.walk({ out.body[i] }, function(s) if s.s == "return" or s.s == "raw" then bad = true end end)
    if bad then return nil, "the code after the walk returns or loops: every thread must reach the barriers" end
  end
  -- f(j) and starts(j): j and shared values only, nothing the kernel writes
  local cx = analysis.context(out)
  local known = {}
  for _, prm in ipairs(out.params) do known[prm.name] = true end
  for _, s in ipairs(out.uniform) do known[s.name] = true end
  local written = {}
  for _, x in ipairs(analysis.analyze(out).accesses) do if x.kind ~= "load" then written[x.array] = true end end
  local f, starts = analysis.inline(parts.f, cx), analysis.inline(parts.starts, cx)
  for _, e in ipairs({ f, starts }) do
    local bad
    ir.visit(e, function(x)
      if x.k == "var" and x.name ~= j and not known[x.name] then
        bad = bad or ir.text(e) .. " reads " .. x.name .. ": not every thread can compute it for any " .. j
      end
      if x.k == "call" and not PURE[x.fn] then bad = bad or ir.text(e) .. " calls " .. x.fn end
      if x.k == "index" then
        local base = x.base
        while base.k == "bin" or base.k == "cast" do base = base.a or base end
        if base.k ~= "var" or written[base.name] then bad = bad or ir.text(e) .. " reads what the kernel writes" end
      end
    end)
    if bad then return nil, bad end
  end

  local t, nw, per = axis.name, nt // 32, nt * chunks
  local at_point = { [j] = ir.var(t) }
  local function stmt_call(fn, args) return { s = "expr", e = ir.call(fn, args) } end
  local function let(type_, name, init) return { s = "let", type = type_, name = name, init = init } end
  local function assign(lhs, rhs, op) return { s = "assign", lhs = lhs, op = op or "=", rhs = rhs } end
  local function combine_into(flag, value, into)
    -- (flag, value) after what is in `into`: a segment starting there stops the sum
    return assign(ir.var(into), { k = "tern", c = flag, a = value, b = ir.bin("+", ir.var(into), ir.copy(value)) })
  end
  local body = {}
  body[#body + 1] = let("const long", "first_", ir.bin("*", { k = "cast", type = "long", a = ir.var("chunk_") }, ir.num(per)))
  -- the open segment before the block: the kernel's own walk, once
  local back = { let(acc_type, "s_", ir.num(0)),
    { s = "for", init = let(walk.init.type, j, ir.bin("-", ir.var("first_"), ir.num(1))), cond = ir.var("true"),
      step = assign(ir.var(j), nil, "--"), body = {
        assign(ir.var("s_"), ir.copy(f), "+="),
        { s = "if", cond = ir.copy(starts), then_ = { { s = "break" } } } } },
    assign(ir.var("open_"), ir.var("s_")) }
  body[#body + 1] = { s = "if", cond = ir.bin("&&", ir.bin("==", ir.member("threadIdx", "x"), ir.num(0)), ir.bin(">", ir.var("first_"), ir.num(0))),
    then_ = back }
  body[#body + 1] = stmt_call("__syncthreads", {})
  body[#body + 1] = let(acc_type, "carry_", { k = "tern", c = ir.bin(">", ir.var("first_"), ir.num(0)), a = ir.var("open_"), b = ir.num(0) })
  local tile = {}
  tile[#tile + 1] = let(axis.type, t, ir.bin("+", ir.var("c0_"), ir.member("threadIdx", "x")))
  tile[#tile + 1] = let("const bool", "live_", ir.negate(out.guard.cond))
  tile[#tile + 1] = let(acc_type, "v_", ir.num(0))
  tile[#tile + 1] = let("int", "f_", ir.num(0))
  tile[#tile + 1] = { s = "if", cond = ir.var("live_"), then_ = {
    assign(ir.var("v_"), ir.subst(f, at_point)),
    assign(ir.var("f_"), { k = "tern", c = ir.subst(starts, at_point), a = ir.num(1), b = ir.num(0) }) } }
  tile[#tile + 1] = { s = "for", init = let("int", "o_", ir.num(1)), cond = ir.bin("<", ir.var("o_"), ir.num(32)),
    step = assign(ir.var("o_"), ir.num(2), "*="), body = {
      let(acc_type, "nv_", ir.call("__shfl_up_sync", { ir.var(FULL), ir.var("v_"), ir.var("o_") })),
      let("int", "nf_", ir.call("__shfl_up_sync", { ir.var(FULL), ir.var("f_"), ir.var("o_") })),
      { s = "if", cond = ir.bin(">=", ir.var("lane_"), ir.var("o_")), then_ = {
        { s = "if", cond = { k = "un", op = "!", a = ir.var("f_") }, then_ = { assign(ir.var("v_"), ir.var("nv_"), "+=") } },
        assign(ir.var("f_"), ir.var("nf_"), "|=") } } } }
  tile[#tile + 1] = { s = "if", cond = ir.bin("==", ir.var("lane_"), ir.num(31)), then_ = {
    assign(ir.index(ir.var("part_"), ir.var("warp_")), ir.var("v_")),
    assign(ir.index(ir.var("flag_"), ir.var("warp_")), ir.var("f_")) } }
  tile[#tile + 1] = stmt_call("__syncthreads", {})
  tile[#tile + 1] = let(acc_type, "prefix_", ir.var("carry_"))
  -- the warps' totals before `upto`, in order, after what is in `into`
  local function over_warps(upto, into)
    return { s = "for", init = let("int", "w_", ir.num(0)), cond = ir.bin("<", ir.var("w_"), upto),
      step = assign(ir.var("w_"), nil, "++"),
      body = { combine_into(ir.index(ir.var("flag_"), ir.var("w_")), ir.index(ir.var("part_"), ir.var("w_")), into) } }
  end
  tile[#tile + 1] = over_warps(ir.var("warp_"), "prefix_")
  tile[#tile + 1] = over_warps(ir.num(nw), "carry_")
  tile[#tile + 1] = stmt_call("__syncthreads", {})
  local point = {}
  for i = 1, at - 1 do point[#point + 1] = ir.copy_stmts({ out.body[i] })[1] end
  point[#point + 1] = assign(ir.var(parts.acc), { k = "tern", c = ir.var("f_"), a = ir.var("v_"), b = ir.bin("+", ir.var("prefix_"), ir.var("v_")) })
  for i = at + 1, #out.body do point[#point + 1] = ir.copy_stmts({ out.body[i] })[1] end
  tile[#tile + 1] = { s = "if", cond = ir.var("live_"), then_ = point }
  body[#body + 1] = { s = "for", init = let("long", "c0_", ir.var("first_")),
    cond = ir.bin("&&", ir.bin("<", ir.var("c0_"), ir.bin("+", ir.var("first_"), ir.num(per))), ir.bin("<", ir.var("c0_"), ir.copy(axis.extent))),
    step = assign(ir.var("c0_"), ir.num(nt), "+="), body = tile }
  out.body = body
  out.pre = { let("const int", "lane_", ir.bin("%", ir.member("threadIdx", "x"), ir.num(32))),
    let("const int", "warp_", ir.bin("/", ir.member("threadIdx", "x"), ir.num(32))),
    { s = "raw", text = "__shared__ " .. acc_type .. " part_[" .. nw .. "];", writes = {} },
    { s = "raw", text = "__shared__ int flag_[" .. nw .. "];", writes = {} },
    { s = "raw", text = "__shared__ " .. acc_type .. " open_;", writes = {} } }
  out.guard = nil
  local bid = ir.member("blockIdx", "x")
  if axis.cast then bid = { k = "cast", type = axis.cast, a = bid } end
  axis.expr, axis.name = bid, "chunk_"
  axis.threads_ann, axis.per_block_ann = tostring(nt), tostring(per)
  local ok, gwhy = geometry.relaunch(out)
  if not ok then return nil, gwhy end
  out.schedule.staged = true
  out.applied[#out.applied + 1] = "segscan"
  return out, string.format("legal: each point walks back from %s adding %s until %s holds, a sum over its segment; f and the test read only %s and values every thread shares, so a block of %d takes %d chunks of %d points in turn: the chunk's (flag, value) pairs scanned by shuffles, the warps' totals through shared memory, a carry from chunk to chunk, and the segment open before the block summed once by a walk back%s",
    t, ir.text(parts.f), ir.text(parts.starts), j, nt, chunks, nt,
    (acc_type == "float" or acc_type == "double") and "; this reassociates a floating-point +: rounding changes, the gate's tolerance decides" or "")
end

function M.candidates(k)
  return { { block = 256, chunks = 8 } }
end

return M
