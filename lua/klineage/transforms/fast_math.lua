-- Fast-math intrinsics: expf -> __expf, logf -> __logf, sinf -> __sinf,
-- cosf -> __cosf, powf -> __powf, float x / y -> __fdividef(x, y) and
-- 1.0f / sqrtf(x) -> rsqrtf(x): the SFU's approximations instead of the
-- accurate libm sequences (a few instructions instead of tens).
--
-- A site is one (function, intrinsic): every eligible call of that
-- function at once, like -use_fast_math scoped to the function. Per call
-- would multiply the sites by the number of calls (softmax v5 has 16 expf)
-- with sites that the gate judges alike: a function's calls share its
-- inputs' domain (softmax exponentiates x - max <= 0 everywhere), and the
-- accuracy the workload asks for is the function's, not the call's.
--
-- Static checks. A division is offered only when both operands are float
-- by the declarations of the names in them (lib/fast_math.lua; unknown
-- means no), and not when the denominator is a literal above 2^126, where
-- __fdividef returns 0. powf with an integral literal exponent is not
-- offered: its base may then be negative, where __powf gives NaN. A
-- function that pins its rounding with __f*_r[nzud] intrinsics (raytrace's
-- intersect: "so that all versions round identically") is left alone, and
-- so is a family whose names the unit defines itself. The intrinsics'
-- error bounds are in each site's check: whether they fit the workload's
-- tolerance is the gate's judgement (on emu every intrinsic is exact).
-- Undo reverts every intrinsic call of the family in the function, and is
-- offered only when each reverted call is one apply would offer again.
local support = require "klineage.transforms.support"
local lib = require "klineage.transforms.lib.fast_math"
local prec = require "klineage.transforms.lib.precedence"

local T = {
  name = "fast_math",
  family = "decoration",
  intent = "replace accurate libm float math by the hardware's fast approximations (__expf, __fdividef, rsqrtf, ...) where the tolerance allows",
  -- results move within the intrinsics' error: whether a workload's
  -- tolerance holds is the gate's judgement, on emu too (gpu/emu/prelude.h)
  changes_results = true,
  -- an operator the edit writes gets the emitter's spacing, not the
  -- original's, and a division undo wrote keeps its parentheses once it is
  -- a call again: the same tokens less parentheses (that precedence holds
  -- is tests/lua/fast_math_property_spec.lua's check, on parsed trees)
  round_trip = "tokens",
  undo_keeps = { "(", ")" },
}

-- libm name -> intrinsic, arity, error bound (CUDA Programming Guide, intrinsic functions).
local CALLS = {
  expf = { "__expf", 1, "2 + floor(1.173 |x|) ulp" },
  logf = { "__logf", 1, "2^-21.41 absolute in [0.5, 2], else 3 ulp" },
  sinf = { "__sinf", 1, "2^-21.41 absolute in [-pi, pi], larger outside (arguments are not bounded statically)" },
  cosf = { "__cosf", 1, "2^-21.41 absolute in [-pi, pi], larger outside (arguments are not bounded statically)" },
  powf = { "__powf", 2, "that of exp2(y * log2(x)), growing with |y log2 x|" },
}
local ORDER = { "__expf", "__logf", "__sinf", "__cosf", "__powf", "__fdividef", "rsqrtf" }
local LIBM = { __expf = "expf", __logf = "logf", __sinf = "sinf", __cosf = "cosf", __powf = "powf",
               __fdividef = "/", rsqrtf = "1.0f / sqrtf" }

local function args(call) local c = call:children(); return { table.unpack(c, 2) } end
local function callee(call) local c = call:field("callee"); return c and c.kind == "ident" and c:text() end

local function huge_literal(n)
  n = lib.strip(n)
  if n.kind ~= "float_lit" then return false end
  local v = tonumber((n:text():gsub("[fFlL]$", "")))
  return v ~= nil and math.abs(v) > 2.0 ^ 126
end

local function integral_literal(n)
  n = lib.strip(n)
  if n.kind == "unary" and n.op == "-" then n = lib.strip(n:children()[1]) end
  if n.kind == "int_lit" then return true end
  if n.kind ~= "float_lit" then return false end
  local v = tonumber((n:text():gsub("[fFlL]$", "")))
  return v ~= nil and v == math.floor(v)
end

local function is_one_f(n) return n.kind == "float_lit" and n:text():match("^1%.?0*[fF]$") ~= nil end

-- The reasons a libm form is not offered: nil when it is.
local function call_ok(name, a)
  if name == "powf" and integral_literal(a[2]) then return "an integral literal exponent (the base may be negative)" end
end
local function div_ok(ty, lhs, rhs)
  if ty(lhs) ~= "float" or ty(rhs) ~= "float" then return "an operand is not known to be float" end
  if huge_literal(rhs) then return "a literal denominator above 2^126" end
end

-- Families the unit names itself (a function or macro called expf).
local function shadowed(unit)
  local own = {}
  for _, f in ipairs(unit:functions()) do own[f:name()] = true end
  for _, d in ipairs(unit:defines()) do own[d.name.text] = true end
  local out = {}
  for intr, libm in pairs(LIBM) do
    local base = libm == "/" and "__fdividef" or libm == "1.0f / sqrtf" and "sqrtf" or libm
    if own[intr] or own[base] or (intr == "rsqrtf" and own.sqrtf) then out[intr] = true end
  end
  return out
end

-- Per family: the libm forms (apply) and the intrinsic calls (undo, with
-- `bad` set when one of them would not be offered once reverted).
local function scan(unit, fn)
  local ty = lib.types(unit, fn)
  local fam = {}
  for _, i in ipairs(ORDER) do fam[i] = { libm = {}, intr = {} } end
  for n in fn:body():walk({ "call", "binary" }) do
    if n.kind == "call" then
      local name, a = callee(n), args(n)
      local c = CALLS[name]
      if c and #a == c[2] and not call_ok(name, a) then table.insert(fam[c[1]].libm, n) end
      if LIBM[name] and CALLS[LIBM[name]] and #a == CALLS[LIBM[name]][2] then
        local f = fam[name]
        f.intr[#f.intr + 1] = n
        f.bad = f.bad or call_ok(LIBM[name], a)
      elseif name == "__fdividef" and #a == 2 then
        fam.__fdividef.intr[#fam.__fdividef.intr + 1] = n
        fam.__fdividef.bad = fam.__fdividef.bad or div_ok(ty, a[1], a[2])
      elseif name == "rsqrtf" and #a == 1 then
        table.insert(fam.rsqrtf.intr, n)
      end
    elseif n.op == "/" then
      local lhs, rhs = n:field("lhs"), n:field("rhs")
      if not div_ok(ty, lhs, rhs) then table.insert(fam.__fdividef.libm, n) end
      if is_one_f(lhs) and rhs.kind == "call" and callee(rhs) == "sqrtf" and #args(rhs) == 1 then
        table.insert(fam.rsqrtf.libm, n)
      end
    end
  end
  return fam
end

local function pinned(fn)
  for id in fn:body():walk({ "ident" }) do
    if id:text():match("^__[fd]%a+_r[nzud]$") then return id:text() end
  end
end

local function describe(intr, n, undo)
  local what
  if intr == "__fdividef" then
    what = string.format("%d float division(s), both operands float by their declarations and no literal denominator above 2^126; __fdividef is within 2 ulp for |y| <= 2^126 and gives 0 above", n)
  elseif intr == "rsqrtf" then
    what = string.format("%d 1.0f / sqrtf(x); rsqrtf is within 2 ulp", n)
  else
    local libm = LIBM[intr]
    what = string.format("%d %s call(s)%s; %s's error is %s", n, libm,
      libm == "powf" and " without integral literal exponents" or "", intr, CALLS[libm][3])
  end
  return (undo and "intrinsic form of: " or "") .. what .. "; the gate judges it against the workload's tolerance"
end

function T.find(unit)
  local sites, seen = {}, {}
  local shadow = shadowed(unit)
  for _, fn in ipairs(support.functions(unit)) do
    local base = fn:name()
    seen[base] = (seen[base] or 0) + 1
    local fname = seen[base] > 1 and base .. "#" .. seen[base] or base
    if not pinned(fn) then
      local fam = scan(unit, fn)
      for _, intr in ipairs(ORDER) do
        local f = fam[intr]
        local key = fname .. ":" .. intr
        if not shadow[intr] and #f.libm > 0 then
          sites[#sites + 1] = support.site(T, unit, fn, { direction = "apply", key = key, intrinsic = intr,
            nodes = f.libm, line = f.libm[1].line, check = describe(intr, #f.libm) })
        end
        if not shadow[intr] and #f.intr > 0 and not f.bad then
          sites[#sites + 1] = support.site(T, unit, fn, { direction = "undo", key = key, intrinsic = intr,
            nodes = f.intr, line = f.intr[1].line, check = describe(intr, #f.intr, true) })
        end
      end
    end
  end
  return sites
end

-- The call's argument list, parentheses included, as a byte range.
local function after_callee(call)
  local _, ce = lib.range(call:field("callee"))
  local _, e = lib.range(call)
  return { ce + 1, e }
end

-- An operand moved into a call's argument list: its own parentheses go,
-- unless it is a comma expression, which they keep one argument.
local function argument(n) return { node = lib.strip(n), need = prec.ARG } end

function T.apply(site)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local repl = {}
  for _, n in ipairs(site.nodes) do
    local r
    if site.intrinsic == "__fdividef" then
      r = lib.replacement(n, prec.PRIMARY,
        { "__fdividef(", argument(n:field("lhs")), ", ", argument(n:field("rhs")), ")" })
    elseif site.intrinsic == "rsqrtf" then
      r = lib.replacement(n, prec.PRIMARY, { "rsqrtf", after_callee(n:field("rhs")) })
    else
      r = lib.replacement(n:field("callee"), prec.PRIMARY, { site.intrinsic })
    end
    repl[r.node.id] = r
  end
  return lib.render(site.unit, 1, #tostring(site.unit), repl)
end

-- Undo writes divisions: each operand is parenthesised by its own level
-- (a nested intrinsic counts as the division it becomes), and the division
-- by the place it takes (x * (a / b), -(a / b), a / (b / c)).
function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  local repl = {}
  for _, n in ipairs(site.nodes) do
    local r
    if site.intrinsic == "__fdividef" then
      local a = args(n)
      r = lib.replacement(n, prec.MUL, { { node = a[1], need = prec.LEFT_OF(prec.MUL) }, " / ",
        { node = a[2], need = prec.RIGHT_OF(prec.MUL) } })
    elseif site.intrinsic == "rsqrtf" then
      r = lib.replacement(n, prec.MUL, { "1.0f / sqrtf", after_callee(n) })
    else
      r = lib.replacement(n:field("callee"), prec.PRIMARY, { LIBM[site.intrinsic] })
    end
    repl[r.node.id] = r
  end
  return lib.render(site.unit, 1, #tostring(site.unit), repl)
end

return T
