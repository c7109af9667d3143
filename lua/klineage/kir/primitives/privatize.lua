-- privatize([items=F]): a scatter of atomics into a small array (a
-- histogram) goes first into a copy of the array in the block's shared
-- memory, then one atomic per nonzero entry into the real one. Each thread
-- takes F items, block-strided, so that a block merges many of them. The
-- array's size must be provable from the index: a byte (`unsigned char`
-- load: 256), `x % C` or `x & (2^k - 1)` with a constant.
local ir = require "klineage.kir.ir"
local geometry = require "klineage.kir.geometry"

local M = { name = "privatize" }

local ATOMICS = { atomicAdd = "+", atomicMax = "max", atomicMin = "min" }
local BYTE = { ["unsigned char"] = 256, uint8_t = 256, ["unsigned short"] = 65536, uint16_t = 65536 }
local MAX_BINS = 12288 -- 48 KiB of 4-byte entries

-- The number of distinct values an index can take, or nil, why.
local function index_range(k, e, params)
  e = ir.strip_casts(e)
  if e.k == "index" and e.base.k == "var" and params[e.base.name] then
    local n = BYTE[params[e.base.name].base]
    if n then return n end
    return nil, "the bin index " .. ir.text(e) .. " reads " .. params[e.base.name].base .. ": no range the IR can prove"
  end
  if e.k == "bin" and (e.op == "%" or e.op == "&") then
    local c = geometry.value(k, ir.text(ir.strip_casts(e.b)))
    if c and e.op == "%" and c > 0 then return c end
    if c and e.op == "&" and c >= 0 and (c + 1) & c == 0 then return c + 1 end
  end
  return nil, "the bin index " .. ir.text(e) .. " has no range the IR can prove (a byte, x % C, x & (2^k - 1))"
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
  end
  if not (array and params[array]) then return nil, "the atomic's target is not an element of a parameter" end
  local bins, why = index_range(out, idx, params)
  if not bins then return nil, why end
  if bins > MAX_BINS then return nil, bins .. " bins do not fit in shared memory" end
  local elem = params[array].base
  local priv, tid, e = "priv_", "tid_", "e_"
  site.e.args[1] = { k = "un", op = "&", a = ir.index(ir.var(priv), ir.copy(idx)) }

  local i, i0 = axis.name, axis.name .. "0_"
  local per_item = { { s = "let", type = axis.type, name = i, init = ir.bin("+", ir.var(i0), ir.bin("*", ir.var("u_"), ir.num(nt))) } }
  local live = out.guard.form == "return" and ir.negate(out.guard.cond) or ir.copy(out.guard.cond)
  per_item[#per_item + 1] = { s = "if", cond = live, then_ = out.body }
  local clear = { s = "for", init = { s = "let", type = "int", name = e, init = ir.var(tid) }, cond = ir.bin("<", ir.var(e), ir.num(bins)),
    step = { s = "assign", lhs = ir.var(e), op = "+=", rhs = ir.num(nt) },
    body = { { s = "assign", lhs = ir.index(ir.var(priv), ir.var(e)), op = "=", rhs = ir.num(0) } } }
  local flush_call = ir.call(site.e.fn, { { k = "un", op = "&", a = ir.index(ir.var(array), ir.var(e)) }, ir.index(ir.var(priv), ir.var(e)) })
  local flush = { s = "for", init = { s = "let", type = "int", name = e, init = ir.var(tid) }, cond = ir.bin("<", ir.var(e), ir.num(bins)),
    step = { s = "assign", lhs = ir.var(e), op = "+=", rhs = ir.num(nt) },
    body = { { s = "if", cond = ir.bin("!=", ir.index(ir.var(priv), ir.var(e)), ir.num(0)), then_ = { { s = "expr", e = flush_call } } } } }
  out.body = {
    clear,
    { s = "expr", e = ir.call("__syncthreads", {}) },
    { s = "for", init = { s = "let", type = "int", name = "u_", init = ir.num(0) }, cond = ir.bin("<", ir.var("u_"), ir.num(items)),
      step = { s = "assign", lhs = ir.var("u_"), op = "++" }, body = per_item },
    { s = "expr", e = ir.call("__syncthreads", {}) },
    flush,
  }
  out.guard = nil
  local bid = ir.member("blockIdx", axis.dim)
  if axis.cast then bid = { k = "cast", type = axis.cast, a = bid } end
  axis.expr = ir.bin("+", ir.bin("*", bid, ir.num(nt * items)), ir.member("threadIdx", axis.dim))
  axis.name = i0
  axis.per_block_ann = tostring(nt * items)
  out.pre = { { s = "let", type = "const int", name = tid, init = ir.member("threadIdx", axis.dim) },
    { s = "raw", text = "__shared__ " .. elem .. " " .. priv .. "[" .. bins .. "];", writes = {} } }
  local ok, gwhy = geometry.relaunch(out)
  if not ok then return nil, gwhy end
  out.schedule.staged = true
  out.applied[#out.applied + 1] = "privatize"
  return out, string.format("legal: %s's index stays below %d (%s), so a block's %d-entry copy in shared memory takes every update; %d item(s) a thread; one %s per nonzero entry merges it%s",
    array, bins, ir.text(idx), bins, items, site.e.fn,
    (elem == "float" or elem == "double") and "; this reassociates each bin's floating-point sum: the gate's tolerance decides" or "; integer updates commute exactly")
end

function M.candidates(k)
  return { { items = 1 }, { items = 8 } }
end

return M
