-- scan([block=B]): a scan done sequentially per output (out[t] = the
-- reduction of f(k) over k <= c, c = t % N the point's place in its row)
-- becomes one block per row: the row goes by in chunks of B, each thread
-- computes one f(c), the block scans the chunk (warp shuffles, then the
-- warps' totals through shared memory) on top of the carry from the
-- chunks before, and each point runs its own code after the loop with the
-- prefix. Quadratic work becomes linear. Legal when f(k) is the same for
-- every point of the row: its loads, with t written as R * N + c, do not
-- depend on c.
local ir = require "klineage.kir.ir"
local geometry = require "klineage.kir.geometry"
local analysis = require "klineage.kir.analysis"
local poly = require "klineage.kir.poly"

local M = { name = "scan" }

local FULL = "0xffffffffu"

local function is_float(t) return t and (t:match("float") or t:match("double")) end

local function combine(op, type_, a, b)
  if op == "+" then return ir.bin("+", a, b) end
  local fn = is_float(type_) and (op == "max" and "fmaxf" or "fminf") or op
  return ir.call(fn, { a, b })
end

function M.apply(k, p)
  local nt = (type(p.block) == "table" and p.block[1]) or p.block or p[1] or 256
  if type(nt) ~= "number" or nt % 32 ~= 0 or nt < 64 or nt > 1024 then return nil, "scan(block=B): 64 to 1024 threads, whole warps" end
  if next(k.schedule) then return nil, "scan goes alone" end
  local out = ir.clone(k)
  local threaded = {}
  for _, ax in ipairs(out.axes) do if ax.block then threaded[#threaded + 1] = ax end end
  if #threaded ~= 1 or threaded[1].dim ~= "x" then return nil, "scan takes a 1-D kernel: one flat axis on x" end
  local axis = threaded[1]
  if not out.guard or out.guard.form ~= "return" then return nil, "scan needs the early-return bounds guard" end
  local a = analysis.analyze(out)
  local at, loop
  for i, s in ipairs(out.body) do
    if s.s == "for" and a.loops[s].kind == "reduce" then
      if loop then return nil, "more than one reduction loop" end
      at, loop = i, a.loops[s]
    elseif s.s == "for" or s.s == "raw" then
      return nil, "a loop that is not a reduction (" .. (s.s == "raw" and "opaque" or a.loops[s].why or "") .. ")"
    end
  end
  if not loop then return nil, "no reduction loop: nothing is scanned" end
  -- + only: max and min would need the type's identity for the first chunk
  if #loop.accs ~= 1 or loop.accs[1].op ~= "+" then return nil, "the loop must combine one accumulator by +" end
  if loop.step ~= 1 then return nil, "the loop does not step by 1" end
  local acc = loop.accs[1]
  -- the row position: hi = c + 1 with c = t % N, an inner digit of the axis
  local c_name
  local hi = analysis.fold(loop.hi)
  if hi.k == "bin" and hi.op == "+" and hi.a.k == "var" and hi.b.k == "num" and hi.b.v == "1" then c_name = hi.a.name end
  local dg = c_name and a.digits[c_name]
  if not (dg and dg.inner and dg.of == axis.name) then
    return nil, "the loop does not run up to the point's own place in a row (k <= t % N)"
  end
  local radix
  for _, s in ipairs(out.body) do
    if s.s == "let" and s.name == c_name then radix = ir.strip_casts(s.init).b end
  end
  if not radix or ir.vars(radix)[axis.name] then return nil, "the row length is not known" end
  local lo_vars = ir.vars(loop.lo)
  if lo_vars[axis.name] or lo_vars[c_name] then return nil, "the loop starts at a place that depends on the point" end
  -- f(k) must be the row's, not the point's: t = R * N + c, c cancels
  local cx = analysis.context(out)
  local t_as = ir.bin("+", ir.bin("*", ir.var("R_"), ir.copy(radix)), ir.var(c_name))
  local defs = {}
  for n, e in pairs(cx.defs) do defs[n] = e end
  local depends
  ir.walk(loop.stmt.body, function(s)
    for _, e in ipairs(ir.exprs(s)) do
      ir.visit(e, function(x)
        if x.k == "index" then
          local full = ir.subst(analysis.inline(x, { defs = defs }), { [axis.name] = t_as })
          local base = full.base
          local off = {}
          while base.k == "bin" and base.op == "+" do off[#off + 1] = base.b; base = base.a end
          local idx = full.idx
          for _, o in ipairs(off) do idx = ir.bin("+", o, idx) end
          local P = poly.of(idx)
          if not P then depends = depends or ir.text(x) .. " is not a polynomial of the row and k" return end
          for key in pairs(P) do
            for n in key:gmatch("[^*]+") do
              if n == c_name then depends = depends or ir.text(x) .. " depends on the point's place " .. c_name end
            end
          end
        end
      end)
    end
  end)
  if depends then return nil, depends end
  -- the acc's type
  local acc_type
  for i = 1, at - 1 do
    local s = out.body[i]
    if s.s == "let" and s.name == acc.name then acc_type = s.type end
  end
  if not acc_type then return nil, "the accumulator is not declared before the loop" end
  if not is_float(acc_type) and acc_type ~= "int" and acc_type ~= "long" and acc_type ~= "long long" then
    return nil, "the accumulator's type " .. acc_type .. " is not scanned by shuffles here"
  end
  -- the contribution of one iteration: the loop body's update of acc
  local contrib
  if #loop.stmt.body == 1 then
    local s = loop.stmt.body[1]
    if s.s == "assign" and s.op == "+=" then contrib = s.rhs end
    if s.s == "assign" and s.op == "=" and s.rhs.k == "call" then
      for _, arg in ipairs(s.rhs.args) do if not (arg.k == "var" and arg.name == acc.name) then contrib = arg end end
    end
    if s.s == "assign" and s.op == "=" and s.rhs.k == "bin" then contrib = s.rhs.b end
  end
  if not contrib then return nil, "the loop body must be one update of " .. acc.name end
  local kvar = loop.var
  local identity = ir.num(0)
  local t, nw = axis.name, nt // 32
  local place = ir.bin("+", ir.var("c0_"), ir.member("threadIdx", "x"))
  local live = ir.bin("&&", ir.bin("<", ir.copy(place), ir.copy(radix)), ir.negate(out.guard.cond))
  local before = {}
  for i = 1, at - 1 do
    -- the code before the loop runs twice (for f(c), then for the point): values only
    if out.body[i].s ~= "let" then return nil, "the code before the loop does more than compute values" end
    before[#before + 1] = out.body[i]
  end
  local after = {}
  for i = at + 1, #out.body do after[#after + 1] = out.body[i] end
  local v = "v_"
  local body = {}
  body[#body + 1] = { s = "let", type = axis.type, name = t, init = ir.bin("+", ir.bin("*", ir.var("row_"), ir.copy(radix)), place) }
  body[#body + 1] = { s = "let", type = "const bool", name = "live_", init = live }
  body[#body + 1] = { s = "let", type = acc_type, name = v, init = identity }
  local first = ir.copy_stmts(before)
  first[#first + 1] = { s = "assign", lhs = ir.var(v), op = "=", rhs = ir.subst(contrib, { [kvar] = ir.var(c_name) }) }
  body[#body + 1] = { s = "if", cond = ir.var("live_"), then_ = first }
  body[#body + 1] = { s = "for", init = { s = "let", type = "int", name = "o_", init = ir.num(1) }, cond = ir.bin("<", ir.var("o_"), ir.num(32)),
    step = { s = "assign", lhs = ir.var("o_"), op = "*=", rhs = ir.num(2) }, body = {
      { s = "let", type = acc_type, name = "n_", init = ir.call("__shfl_up_sync", { ir.var(FULL), ir.var(v), ir.var("o_") }) },
      { s = "if", cond = ir.bin(">=", ir.var("lane_"), ir.var("o_")), then_ = { { s = "assign", lhs = ir.var(v), op = "=",
        rhs = combine(acc.op, acc_type, ir.var("n_"), ir.var(v)) } } } } }
  body[#body + 1] = { s = "if", cond = ir.bin("==", ir.var("lane_"), ir.num(31)), then_ = { { s = "assign",
    lhs = ir.index(ir.var("part_"), ir.var("warp_")), op = "=", rhs = ir.var(v) } } }
  body[#body + 1] = { s = "expr", e = ir.call("__syncthreads", {}) }
  body[#body + 1] = { s = "let", type = acc_type, name = "prefix_", init = ir.var("carry_") }
  body[#body + 1] = { s = "for", init = { s = "let", type = "int", name = "w_", init = ir.num(0) }, cond = ir.bin("<", ir.var("w_"), ir.var("warp_")),
    step = { s = "assign", lhs = ir.var("w_"), op = "++" }, body = { { s = "assign", lhs = ir.var("prefix_"), op = "=",
      rhs = combine(acc.op, acc_type, ir.var("prefix_"), ir.index(ir.var("part_"), ir.var("w_"))) } } }
  body[#body + 1] = { s = "for", init = { s = "let", type = "int", name = "w_", init = ir.num(0) }, cond = ir.bin("<", ir.var("w_"), ir.num(nw)),
    step = { s = "assign", lhs = ir.var("w_"), op = "++" }, body = { { s = "assign", lhs = ir.var("carry_"), op = "=",
      rhs = combine(acc.op, acc_type, ir.var("carry_"), ir.index(ir.var("part_"), ir.var("w_"))) } } }
  body[#body + 1] = { s = "expr", e = ir.call("__syncthreads", {}) }
  local second = ir.copy_stmts(before)
  local scanned = combine(acc.op, acc_type, ir.var("prefix_"), ir.var(v))
  second[#second + 1] = { s = "assign", lhs = ir.var(acc.name), op = "=", rhs = combine(acc.op, acc_type, ir.var(acc.name), scanned) }
  for _, s in ipairs(ir.copy_stmts(after)) do second[#second + 1] = s end
  body[#body + 1] = { s = "if", cond = ir.var("live_"), then_ = second }
  local carry_init = identity
  out.body = { { s = "for", init = { s = "let", type = axis.type, name = "c0_", init = ir.num(0) }, cond = ir.bin("<", ir.var("c0_"), ir.copy(radix)),
    step = { s = "assign", lhs = ir.var("c0_"), op = "+=", rhs = ir.num(nt) }, body = body } }
  out.pre = { { s = "let", type = "const int", name = "lane_", init = ir.bin("%", ir.member("threadIdx", "x"), ir.num(32)) },
    { s = "let", type = "const int", name = "warp_", init = ir.bin("/", ir.member("threadIdx", "x"), ir.num(32)) },
    { s = "raw", text = "__shared__ " .. acc_type .. " part_[" .. nw .. "];", writes = {} },
    { s = "let", type = acc_type, name = "carry_", init = carry_init } }
  out.guard = nil
  local bid = ir.member("blockIdx", "x")
  if axis.cast then bid = { k = "cast", type = axis.cast, a = bid } end
  axis.expr = bid
  axis.name = "row_"
  axis.threads_ann = tostring(nt)
  local radix_ann = require("klineage.kir.launch").annotation_text(radix)
  if not radix_ann then return nil, "the row length " .. ir.text(radix) .. " cannot be written in the launch line" end
  axis.per_block_ann = radix_ann
  local ok, why = geometry.relaunch(out)
  if not ok then return nil, why end
  out.schedule.staged = true
  out.applied[#out.applied + 1] = "scan"
  return out, string.format("legal: %s combines %s over k <= %s, and each term %s is the row's (with %s = R * %s + %s it does not depend on %s); one block of %d a row scans it in chunks with a carry%s",
    acc.name, acc.op, c_name, ir.text(contrib), t, ir.text(radix), c_name, c_name, nt,
    is_float(acc_type) and acc.op == "+" and "; this reassociates a floating-point +: rounding changes, the gate's tolerance decides" or "")
end

function M.candidates(k)
  return { { block = 256 } }
end

return M
