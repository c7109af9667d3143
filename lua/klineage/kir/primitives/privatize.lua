-- privatize([items=F]): a scatter of atomics into a small array (a
-- histogram) goes first into a copy of the array in the block's shared
-- memory, then one atomic per nonzero entry into the real one. Each thread
-- takes F items, block-strided, so that a block merges many of them. The
-- array's size must be provable from the index: a byte (`unsigned char`
-- load: 256), `x % C` or `x & (2^k - 1)` with a constant, a constant.
--
-- An atomicAdd whose target every thread shares (`atomicAdd(sum, v)`, a
-- dot product's or a count's) needs no copy: each thread adds its items
-- in a register, the block's sums meet by shuffles and one shared slot a
-- warp, and thread 0 makes the block's one atomic.
local ir = require "klineage.kir.ir"
local geometry = require "klineage.kir.geometry"

local M = { name = "privatize" }

local ATOMICS = { atomicAdd = "+", atomicMax = "max", atomicMin = "min" }
-- What a bin of the shared copy starts at: the operation's identity for
-- the element type, so that a bin no update reached is left out of the
-- merge (a 0 start would lose a min above 0 or a max below it)
local IDENTITY = {
  atomicMax = { ["unsigned int"] = "0u", unsigned = "0u", int = "(-2147483647 - 1)", ["unsigned long long"] = "0ull",
                ["unsigned long long int"] = "0ull", ["long long"] = "(-9223372036854775807ll - 1)" },
  atomicMin = { ["unsigned int"] = "0xffffffffu", unsigned = "0xffffffffu", int = "2147483647",
                ["unsigned long long"] = "0xffffffffffffffffull", ["unsigned long long int"] = "0xffffffffffffffffull",
                ["long long"] = "9223372036854775807ll" },
}
local BYTE = { ["unsigned char"] = 256, uint8_t = 256, ["unsigned short"] = 65536, uint16_t = 65536 }
local MAX_BINS = 12288 -- 48 KiB of 4-byte entries

local shared_by_all

-- The number of distinct values an index can take, or nil, why.
local function index_range(k, e, params)
  e = ir.strip_casts(e)
  if e.k == "index" and e.base.k == "var" and params[e.base.name] then
    local n = BYTE[params[e.base.name].base]
    if n then return n end
    return nil, "the bin index " .. ir.text(e) .. " reads " .. params[e.base.name].base .. ": no range the IR can prove"
  end
  if e.k == "num" then
    local c = math.tointeger(tonumber(e.v))
    if c and c >= 0 then return c + 1 end
  end
  if e.k == "bin" and (e.op == "%" or e.op == "&") then
    local c = geometry.value(k, ir.text(ir.strip_casts(e.b)))
    if c and e.op == "%" and c > 0 then return c end
    if c and e.op == "&" and c >= 0 and (c + 1) & c == 0 then return c + 1 end
  end
  return nil, "the bin index " .. ir.text(e) .. " has no range the IR can prove (a byte, x % C, x & (2^k - 1))"
end

-- Whether every thread computes the same index: literals, the kernel's
-- scalar parameters and the declarations before the per-thread code.
shared_by_all = function(k, idx, params)
  local uniform = {}
  for _, st in ipairs(k.uniform or {}) do uniform[st.name] = true end
  local ok = true
  ir.visit(idx, function(x)
    if x.k == "index" or x.k == "call" or x.k == "member" then ok = false end
    if x.k == "var" and not uniform[x.name] and not (params[x.name] and (params[x.name].stars or 0) == 0) then ok = false end
  end)
  return ok
end

-- The per-thread code as `items` items a thread, block-strided: the loop
-- over u_ with the point's own code under its guard.
local function items_loop(out, axis, nt, items)
  local i, i0 = axis.name, axis.name .. "0_"
  local per_item = { { s = "let", type = axis.type, name = i, init = ir.bin("+", ir.var(i0), ir.bin("*", ir.var("u_"), ir.num(nt))) },
    { s = "if", cond = out.guard.form == "return" and ir.negate(out.guard.cond) or ir.copy(out.guard.cond), then_ = out.body } }
  return { s = "for", init = { s = "let", type = "int", name = "u_", init = ir.num(0) }, cond = ir.bin("<", ir.var("u_"), ir.num(items)),
    step = { s = "assign", lhs = ir.var("u_"), op = "++" }, body = per_item }
end

-- The block takes nt * items points: the axis renamed to its first, the
-- guard gone into the items' loop, tid_ and then `pre` before the body,
-- the launch redone.
local function retile(out, axis, nt, items, body, pre)
  table.insert(pre, 1, { s = "let", type = "const int", name = "tid_", init = ir.member("threadIdx", axis.dim) })
  out.body, out.guard, out.pre = body, nil, pre
  local bid = ir.member("blockIdx", axis.dim)
  if axis.cast then bid = { k = "cast", type = axis.cast, a = bid } end
  axis.expr = ir.bin("+", ir.bin("*", bid, ir.num(nt * items)), ir.member("threadIdx", axis.dim))
  axis.name = axis.name .. "0_"
  axis.per_block_ann = tostring(nt * items)
  local ok, why = geometry.relaunch(out)
  if not ok then return nil, why end
  out.schedule.staged = true
  out.applied[#out.applied + 1] = "privatize"
  return out
end

function M.apply(k, p)
  local items = p.items or p[1] or 1
  if type(items) ~= "number" or items < 1 or items > 64 then return nil, "items is 1 to 64 a thread" end
  if next(k.schedule) then return nil, "privatize goes alone after map" end
  local out = ir.clone(k)
  local params = {}
  for _, prm in ipairs(out.params) do params[prm.name] = prm end
  local threaded = {}
  for _, ax in ipairs(out.axes) do if ax.block then threaded[#threaded + 1] = ax end end
  if #threaded ~= 1 then return nil, "privatize takes a 1-D kernel: one axis with threads" end
  local axis = threaded[1]
  if not axis.extent_ann or not out.guard then return nil, "the guard gives no bound for " .. axis.name end
  local nt = geometry.value(out, axis.threads_ann)
  if not nt then return nil, "the block size " .. axis.threads_ann .. " is not a constant of the kernel" end
  local site, bad
  ir.walk(out.body, function(s)
    if s.s == "expr" and s.e.k == "call" and ATOMICS[s.e.fn] then
      if site then bad = "more than one atomic" end
      site = s
    elseif s.s == "expr" then bad = "calls " .. tostring(s.e.fn)
    elseif s.s == "assign" and s.lhs.k == "index" then bad = "stores " .. ir.text(s.lhs) .. " besides the atomic"
    elseif s.s == "return" or s.s == "raw" or s.s == "break" or s.s == "continue" then bad = "leaves or hides control flow (" .. s.s .. ")" end
  end)
  if bad then return nil, bad end
  if not site then return nil, "no atomic scatter to privatize" end
  local target = site.e.args[1]
  local array, idx
  if target.k == "un" and target.op == "&" and target.a.k == "index" and target.a.base.k == "var" then
    array, idx = target.a.base.name, target.a.idx
  elseif target.k == "bin" and target.op == "+" and target.a.k == "var" then
    array, idx = target.a.name, target.b
  elseif target.k == "var" then
    array, idx = target.name, ir.num(0)
  end
  if not (array and params[array]) then return nil, "the atomic's target is not an element of a parameter" end
  if site.e.fn == "atomicAdd" and shared_by_all(out, idx, params) then
    return M.one_target(out, site, axis, nt, items, params[array].base)
  end
  local bins, why = index_range(out, idx, params)
  if not bins then return nil, why end
  if bins > MAX_BINS then return nil, bins .. " bins do not fit in shared memory" end
  local elem = params[array].base
  local start = "0"
  if IDENTITY[site.e.fn] then
    start = IDENTITY[site.e.fn][elem]
    if not start then return nil, site.e.fn .. " on " .. elem .. ": no identity to start the shared copy at" end
  end
  local priv, tid, e = "priv_", "tid_", "e_"
  site.e.args[1] = { k = "un", op = "&", a = ir.index(ir.var(priv), ir.copy(idx)) }

  local clear = { s = "for", init = { s = "let", type = "int", name = e, init = ir.var(tid) }, cond = ir.bin("<", ir.var(e), ir.num(bins)),
    step = { s = "assign", lhs = ir.var(e), op = "+=", rhs = ir.num(nt) },
    body = { { s = "assign", lhs = ir.index(ir.var(priv), ir.var(e)), op = "=", rhs = ir.var(start) } } }
  local flush_call = ir.call(site.e.fn, { { k = "un", op = "&", a = ir.index(ir.var(array), ir.var(e)) }, ir.index(ir.var(priv), ir.var(e)) })
  local flush = { s = "for", init = { s = "let", type = "int", name = e, init = ir.var(tid) }, cond = ir.bin("<", ir.var(e), ir.num(bins)),
    step = { s = "assign", lhs = ir.var(e), op = "+=", rhs = ir.num(nt) },
    body = { { s = "if", cond = ir.bin("!=", ir.index(ir.var(priv), ir.var(e)), ir.var(start)), then_ = { { s = "expr", e = flush_call } } } } }
  local body = { clear, { s = "expr", e = ir.call("__syncthreads", {}) }, items_loop(out, axis, nt, items),
    { s = "expr", e = ir.call("__syncthreads", {}) }, flush }
  local ok, gwhy = retile(out, axis, nt, items, body, { { s = "raw", text = "__shared__ " .. elem .. " " .. priv .. "[" .. bins .. "];", writes = {} } })
  if not ok then return nil, gwhy end
  return out, string.format("legal: %s's index stays below %d (%s), so a block's %d-entry copy in shared memory, each entry starting at %s's identity %s, takes every update; %d item(s) a thread; one %s per entry that left its identity merges it%s",
    array, bins, ir.text(idx), bins, site.e.fn, start, items, site.e.fn,
    (elem == "float" or elem == "double") and "; this reassociates each bin's floating-point sum: the gate's tolerance decides" or "; integer updates commute exactly")
end

-- The one-target form: the atomic becomes `acc_ += value` on a register,
-- and the block's sum goes out in one atomic.
function M.one_target(out, site, axis, nt, items, elem)
  if nt % 32 ~= 0 then return nil, "a block of " .. nt .. " threads: the one-target form sums whole warps" end
  local ACC, LANE, WARP, PART, OFF, W = "acc_", "lane_", "warp_", "part_", "o_", "w_" -- (o_: the butterfly's offset)
  for _, n in ipairs({ ACC, LANE, WARP, PART, OFF, W, "tid_", "u_" }) do
    if ir.declares(out, n) then return nil, "the kernel already names " .. n end
  end
  local target, value = site.e.args[1], site.e.args[2]
  site.e, site.s = nil, "assign"
  site.lhs, site.op, site.rhs = ir.var(ACC), "+=", value
  local warps = nt // 32
  local body = {
    { s = "let", type = elem, name = ACC, init = ir.num(0) },
    items_loop(out, axis, nt, items),
    require("klineage.kir.primitives.split_reduce").warp_combine({ name = ACC, op = "+" }, { [ACC] = elem }, 32),
    { s = "if", cond = ir.bin("==", ir.var(LANE), ir.num(0)), then_ = {
      { s = "assign", lhs = ir.index(ir.var(PART), ir.var(WARP)), op = "=", rhs = ir.var(ACC) } } },
    { s = "expr", e = ir.call("__syncthreads", {}) },
    { s = "if", cond = ir.bin("==", ir.var("tid_"), ir.num(0)), then_ = {
      { s = "for", init = { s = "let", type = "int", name = W, init = ir.num(1) }, cond = ir.bin("<", ir.var(W), ir.num(warps)),
        step = { s = "assign", lhs = ir.var(W), op = "++" },
        body = { { s = "assign", lhs = ir.var(ACC), op = "+=", rhs = ir.index(ir.var(PART), ir.var(W)) } } },
      { s = "expr", e = ir.call("atomicAdd", { target, ir.var(ACC) }) } } },
  }
  local ok, gwhy = retile(out, axis, nt, items, body, { { s = "let", type = "const int", name = LANE, init = ir.bin("%", ir.var("tid_"), ir.num(32)) },
    { s = "let", type = "const int", name = WARP, init = ir.bin("/", ir.var("tid_"), ir.num(32)) },
    { s = "raw", text = "__shared__ " .. elem .. " " .. PART .. "[" .. warps .. "];", writes = {} } })
  if not ok then return nil, gwhy end
  return out, string.format("legal: every thread adds to %s, one place: each adds its %d item(s) a thread in a register, the block's sums meet by shuffles and one shared slot a warp, and thread 0 makes the block's one atomicAdd%s",
    ir.text(target), items, (elem == "float" or elem == "double") and "; this reassociates the floating-point sum: the gate's tolerance decides" or "; integer updates commute exactly")
end

function M.candidates(k)
  return { { items = 1 }, { items = 8 } }
end

return M
