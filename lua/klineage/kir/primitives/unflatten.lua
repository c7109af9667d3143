-- unflatten(block=BXxBY): a 1-D kernel whose flat index t is split into
-- mixed-radix digits by per-point lets (j = t % N, i = t / N % M,
-- b = t / (M * N)) gets one grid dimension per digit instead: the inner
-- digit on threadIdx.x, the middle one on threadIdx.y, the top one on
-- blockIdx alone, and t rebuilt from them. Points are the same set: the
-- digits of [0, TOP * M * N) are exactly the grid's coordinates. It makes
-- the kernel's structure visible to register_tile and stage.
local ir = require "klineage.kir.ir"
local geometry = require "klineage.kir.geometry"
local poly = require "klineage.kir.poly"
local launch = require "klineage.kir.launch"
local sizes = require "klineage.kir.sizes"

local M = { name = "unflatten" }

-- The digit a let computes from t: { kind = "inner"|"middle"|"top", radix, divisor }.
local function digit(e, t)
  e = ir.strip_casts(e)
  local function is_t(x) x = ir.strip_casts(x) return x.k == "var" and x.name == t end
  if e.k ~= "bin" then return nil end
  if e.op == "%" and is_t(e.a) then return { kind = "inner", radix = e.b } end
  local a = ir.strip_casts(e.a)
  if e.op == "%" and a.k == "bin" and a.op == "/" and is_t(a.a) then return { kind = "middle", divisor = a.b, radix = e.b } end
  if e.op == "/" and is_t(e.a) then return { kind = "top", divisor = e.b } end
end

local function same(a, b)
  local pa, pb = poly.of(a), poly.of(b)
  return pa and pb and poly.is_zero(poly.sub(pa, pb))
end

local TOP = "top_"

-- Whether the kernel already uses `name`: it declares it, or the source
-- defines it (a macro or a file-scope name).
local function taken(k, name)
  return ir.declares(k, name) or (k.prefix or ""):find("%f[%w_]" .. name .. "%f[^%w_]") ~= nil
end

function M.apply(k, p)
  if next(k.schedule) then return nil, "unflatten goes first" end
  local block = p.block or { 32, 8 }
  local out = ir.clone(k)
  if #out.axes ~= 1 or not out.axes[1].block or out.axes[1].dim ~= "x" then return nil, "unflatten takes a 1-D kernel: one flat axis on x" end
  local axis = out.axes[1]
  local t = axis.name
  if not out.guard or out.guard.form ~= "return" or not axis.extent then return nil, "unflatten needs the early return `if (t >= TOTAL) return;`" end
  local found, at = {}, {}
  for i, s in ipairs(out.body) do
    if s.s == "let" and s.init then
      local d = digit(s.init, t)
      if d then
        if found[d.kind] then return nil, "two " .. d.kind .. " digits of " .. t end
        d.let, found[d.kind], at[i] = s, d, true
      end
    end
  end
  local inner, middle, top = found.inner, found.middle, found.top
  if not inner then return nil, "no inner digit (" .. t .. " % N) among the per-point lets" end
  local span = inner.radix
  if middle then
    if not same(middle.divisor, inner.radix) then return nil, "the middle digit does not divide by the inner radix" end
    span = ir.bin("*", ir.copy(middle.radix), ir.copy(inner.radix))
  end
  if not top then
    -- a kernel that reads the rest of t only through t itself (conv1d's
    -- row start `i - t`): the top digit gets a name of its own, and t,
    -- rebuilt from the digits, keeps every other use right
    if taken(out, TOP) then return nil, "no top digit (" .. t .. " / (N * ...)) among the per-point lets, and " .. TOP .. " is taken" end
    top = { divisor = span, let = { name = TOP, type = (axis.type:gsub("^const%s+", "")) } }
  end
  if not same(top.divisor, span) then return nil, "the top digit does not divide by the product of the radices" end
  -- TOTAL = TOP * span, both written as one term
  local pt, ps = poly.of(axis.extent), poly.of(span)
  local kt, ct = pt and poly.monomial(pt)
  local ks, cs = ps and poly.monomial(ps)
  if not (kt and ks and ct == cs) then return nil, "the guard's bound is not one product of the radices and a count" end
  local rest = {}
  for n in kt:gmatch("[^*]+") do rest[#rest + 1] = n end
  for n in ks:gmatch("[^*]+") do
    local hit
    for i, x in ipairs(rest) do if x == n and not hit then hit = i end end
    if not hit then return nil, "the guard's bound is not a multiple of the radices" end
    table.remove(rest, hit)
  end
  local count = #rest > 0 and table.concat(rest, " * ") or "1"
  for _, e in ipairs({ inner.radix, middle and middle.radix or nil }) do
    local vars = ir.vars(e)
    for n in pairs(vars) do
      for _, s in ipairs(out.body) do
        if s.s == "let" and s.name == n then return nil, "a radix reads " .. n .. ", computed per point" end
      end
    end
  end
  local ann_inner = launch.annotation_of(out, inner.radix)
  local ann_middle = middle and launch.annotation_of(out, middle.radix)
  if not ann_inner or (middle and not ann_middle) then return nil, "a radix cannot be written in the launch line" end
  local bx, by = block[1], block[2] or 1
  if not middle then bx, by = bx * by, 1 end -- one threaded digit takes the whole block
  -- the new axes, the digits' own names
  local ax_x = { name = inner.let.name, type = inner.let.type, dim = "x", block = ir.num(bx), extent = ir.copy(inner.radix),
    extent_ann = ann_inner, threads_ann = tostring(bx), per_block_ann = tostring(bx) }
  local axes = { ax_x }
  local guard = ir.bin(">=", ir.var(ax_x.name), ir.copy(inner.radix))
  local top_dim = "y"
  if middle then
    local ax_y = { name = middle.let.name, type = middle.let.type, dim = "y", block = ir.num(by), extent = ir.copy(middle.radix),
      extent_ann = ann_middle, threads_ann = tostring(by), per_block_ann = tostring(by) }
    axes[#axes + 1] = ax_y
    guard = ir.bin("||", guard, ir.bin(">=", ir.var(ax_y.name), ir.copy(middle.radix)))
    top_dim = "z"
  end
  -- count: the top digit's range as an expression (the grid covers it
  -- exactly, so no guard says it; stage's tile exchange needs a bound)
  local count_e
  for _, n in ipairs(rest) do count_e = count_e and ir.bin("*", count_e, ir.var(n)) or ir.var(n) end
  axes[#axes + 1] = { name = top.let.name, type = top.let.type, dim = top_dim, grid_ann = count, threads_ann = "1", per_block_ann = "1",
    count = count_e or ir.num(1) }
  -- t rebuilt, in its own type, first thing of the per-point code
  local wide = { k = "cast", type = (axis.type:gsub("^const%s+", "")), a = ir.var(top.let.name) }
  local rebuilt = middle and ir.bin("+", ir.bin("*", ir.bin("+", ir.bin("*", wide, ir.copy(middle.radix)), ir.var(middle.let.name)),
    ir.copy(inner.radix)), ir.var(inner.let.name)) or ir.bin("+", ir.bin("*", wide, ir.copy(inner.radix)), ir.var(inner.let.name))
  local body = { { s = "let", type = axis.type, name = t, init = rebuilt } }
  for i, s in ipairs(out.body) do if not at[i] then body[#body + 1] = s end end
  out.body, out.axes = body, axes
  out.guard = { cond = guard, form = "return" }
  local ok, why = geometry.relaunch(out)
  if not ok then return nil, why end
  out.applied[#out.applied + 1] = "unflatten"
  local parts = { inner.let.name .. " < " .. ir.text(inner.radix) }
  if middle then parts[#parts + 1] = middle.let.name .. " < " .. ir.text(middle.radix) end
  parts[#parts + 1] = top.let.name .. " < " .. count
  return out, string.format("legal: %s < %s splits into %s, so the grid's coordinates are the same points once each; %s is rebuilt from them; %s on threadIdx.x, the top digit %s on blockIdx.%s (at most 65535 of them on y or z: klineage schedule checks the bench size)",
    t, ir.text(axis.extent), table.concat(parts, ", "), t, inner.let.name, top.let.name, top_dim)
end

-- 32 x 8; where the bench size (k.sizes) makes the inner digit narrower
-- than a warp, as wide as that digit (a power of two, at least 4) and the
-- rest of 256 threads along the middle one: a batch of 16 x 16 matrices
-- gets a 16 x 16 block a matrix instead of half of each row's lanes idle.
M.THREADS = 256
function M.candidates(k)
  local wide = { block = { 32, 8 } }
  local probe = M.apply(k, wide)
  if not (probe and probe.axes[2] and probe.axes[2].block) then return { wide } end
  local n = sizes.value(probe.axes[1].extent, k.sizes)
  if not n or n >= 32 then return { wide } end
  local bx = 4
  while bx < n do bx = bx * 2 end
  return { { block = { bx, M.THREADS // bx } } }
end

return M
