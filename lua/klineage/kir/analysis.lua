-- What the schedule primitives decide on, computed from the IR:
--
--   analysis.analyze(k) -> {
--     accesses = { { array, kind = "load"|"store"|"atomic", text, index (resolved),
--       coefs = { dim = "text" } (nil when not affine), dims = { dim = true },
--       indirect, loops = { var... } enclosing loops, stride_x = "text" | nil,
--       reuse = { axis... } output axes the index does not depend on } },
--     loops = { [for stmt] = loop } and loops.list in pre-order, loop = { stmt, var,
--       lo, hi (exclusive), kind = "reduce"|"map"|"seq", why, accs = { acc... },
--       depth } with acc = { name, op = "+"|"max"|"min"|"argmax"|"argmin", idx, key },
--     thread_x = the axis on threadIdx.x, digits = { name = { of, inner } } }
--
-- A dimension is an output axis, a digit of one (`t % N`, `t / N % M`),
-- or a loop variable. Indices are resolved through single-assignment lets
-- and pointer lets (`row = x + r * cols`), casts dropped.
local ir = require "klineage.kir.ir"

local M = {}

local MAX_RESOLVE = 16

-- Names assigned anywhere after their declaration.
local function reassigned(k)
  local w = {}
  ir.walk(k.body, function(s)
    for n in pairs(ir.writes(s)) do w[n] = true end
  end)
  return w
end

local function lets(k)
  local map = {}
  for _, s in ipairs(k.uniform) do map[s.name] = s end
  ir.walk(k.body, function(s)
    if s.s == "let" then map[s.name] = map[s.name] and false or s end
    if s.s == "for" and s.init then map[s.init.name] = false end
  end)
  return map
end

local function is_axis_expr(e, axes)
  return e.k == "var" and axes[e.name]
end

-- `t % R`, `t / P % R` or `t / P` over an axis t: a digit.
local function digit_of(e, axes)
  e = ir.strip_casts(e)
  if e.k ~= "bin" then return nil end
  if e.op == "%" then
    local a = ir.strip_casts(e.a)
    if is_axis_expr(a, axes) then return { of = a.name, inner = true } end
    if a.k == "bin" and a.op == "/" and is_axis_expr(ir.strip_casts(a.a), axes) then return { of = ir.strip_casts(a.a).name, inner = false } end
  elseif e.op == "/" and is_axis_expr(ir.strip_casts(e.a), axes) then
    return { of = ir.strip_casts(e.a).name, inner = false }
  end
end

-- Context: the lets to inline, the dimensions, the pointer bases.
local function context(k)
  local axes = {}
  for _, a in ipairs(k.axes) do axes[a.name] = a end
  local w = reassigned(k)
  local defs, digits = {}, {}
  for name, s in pairs(lets(k)) do
    if s and s.init and not w[name] then
      local d = digit_of(s.init, axes)
      if d then digits[name] = d else defs[name] = s.init end
    end
  end
  local params = {}
  for _, p in ipairs(k.params) do params[p.name] = p end
  return { axes = axes, defs = defs, digits = digits, params = params }
end

M.context = function(k) return context(k) end

local MAX_NODES = 400

local function size(e)
  local n = 0
  ir.visit(e, function() n = n + 1 end)
  return n
end

-- A let's definition with the lets under it inlined, once per context
-- (memoized), or nil when it grows past MAX_NODES: a chain of lets that
-- doubles at each step must not blow up, so such a let stays a name.
local function expand(cx, name, keep_casts, depth)
  local cache = keep_casts and cx.inlined or cx.resolved
  if cache == nil then
    cache = {}
    if keep_casts then cx.inlined = cache else cx.resolved = cache end
  end
  local hit = cache[name]
  if hit ~= nil then return hit or nil end
  cache[name] = false -- a cycle (it cannot happen in C, but input is hostile) stays a name
  local e = M.expand_expr(cx.defs[name], cx, keep_casts, depth + 1)
  if size(e) > MAX_NODES then e = nil end
  cache[name] = e or false
  return e
end

function M.expand_expr(e, cx, keep_casts, depth)
  depth = depth or 0
  if depth > MAX_RESOLVE then return e end
  return ir.map(e, function(x)
    if x.k == "cast" and not keep_casts then return M.expand_expr(x.a, cx, keep_casts, depth + 1) end
    if x.k == "var" and cx.defs[x.name] then
      local d = expand(cx, x.name, keep_casts, depth)
      if d then return ir.copy(d) end
    end
  end)
end

-- Inlines single-assignment lets, casts kept (the text a thread could
-- evaluate elsewhere: a cooperative load computes other threads' indices).
function M.inline(e, cx) return M.expand_expr(e, cx, true) end

-- Inlines them with casts dropped: the index arithmetic the analysis reads.
local function resolve(e, cx) return M.expand_expr(e, cx, false) end

local function has_dim(e, dims)
  local hit = false
  ir.visit(e, function(x)
    if x.k == "var" and dims[x.name] then hit = true end
  end)
  return hit
end

-- Folds integer literals: -(2) -> -2, 1 + -1 -> 0.
function M.fold(e)
  local function n(x) return x.k == "num" and math.tointeger(tonumber(x.v)) end
  if e.k == "un" and e.op == "-" then
    local a = M.fold(e.a)
    if n(a) then return ir.num(-n(a)) end
    return { k = "un", op = "-", a = a }
  end
  if e.k == "bin" and (e.op == "+" or e.op == "*") then
    local a, b = M.fold(e.a), M.fold(e.b)
    if n(a) and n(b) then return ir.num(e.op == "+" and n(a) + n(b) or n(a) * n(b)) end
    return ir.bin(e.op, a, b)
  end
  return e
end

-- The affine form { dim = coef expr, [0] = const present } or nil.
local function affine(e, dims)
  if not has_dim(e, dims) then return { } end
  if e.k == "var" then return { [e.name] = ir.num(1) } end
  if e.k == "un" and e.op == "-" then
    local f = affine(e.a, dims)
    if not f then return nil end
    local out = {}
    for d, c in pairs(f) do out[d] = { k = "un", op = "-", a = c } end
    return out
  end
  if e.k == "bin" and (e.op == "+" or e.op == "-") then
    local fa, fb = affine(e.a, dims), affine(e.b, dims)
    if not (fa and fb) then return nil end
    local out = {}
    for d, c in pairs(fa) do out[d] = c end
    for d, c in pairs(fb) do
      local cb = e.op == "-" and { k = "un", op = "-", a = c } or c
      out[d] = out[d] and M.fold(ir.bin("+", out[d], cb)) or M.fold(cb)
      if out[d].k == "num" and out[d].v == "0" then out[d] = nil end
    end
    return out
  end
  if e.k == "bin" and e.op == "*" then
    local inv, var
    if not has_dim(e.a, dims) then inv, var = e.a, e.b elseif not has_dim(e.b, dims) then inv, var = e.b, e.a end
    if not inv then return nil end
    local f = affine(var, dims)
    if not f then return nil end
    local out = {}
    for d, c in pairs(f) do out[d] = (c.k == "num" and c.v == "1") and inv or ir.bin("*", c, inv) end
    return out
  end
  return nil
end
M.affine = affine

-- The array a subscript reads, and the offset of a pointer let.
local function base_of(e, cx)
  e = resolve(e, cx)
  local offset
  while true do
    if e.k == "var" then return e.name, offset end
    if e.k == "bin" and e.op == "+" then
      local ptr, off = e.a, e.b
      if ptr.k ~= "var" and e.b.k == "var" and cx.params[e.b.name] then ptr, off = e.b, e.a end
      offset = offset and ir.bin("+", off, offset) or off
      e = ptr
    elseif e.k == "bin" and e.op == "-" then
      offset = offset and ir.bin("+", { k = "un", op = "-", a = e.b }, offset) or { k = "un", op = "-", a = e.b }
      e = e.a
    else
      return nil
    end
  end
end

local function access(cx, e, kind, loops, thread_x)
  local array, offset = base_of(e.base, cx)
  local idx = resolve(e.idx, cx)
  if offset then idx = ir.bin("+", offset, idx) end
  local dims = {}
  for name in pairs(cx.axes) do dims[name] = true end
  for name in pairs(cx.digits) do dims[name] = true end
  for _, l in ipairs(loops) do dims[l] = true end
  local indirect = false
  ir.visit(idx, function(x)
    if x.k == "index" then indirect = true end
  end)
  local a = { array = array or "?", kind = kind, text = ir.text(e), index = idx, indirect = indirect,
    loops = { table.unpack(loops) }, dims = {}, reuse = {} }
  local f = not indirect and affine(idx, dims) or nil
  for name in pairs(ir.vars(idx)) do
    if dims[name] then a.dims[name] = true end
  end
  if f then
    a.coefs = {}
    for d, c in pairs(f) do a.coefs[d] = ir.text(c) end
    if thread_x then
      local s = f[thread_x]
      for dn, dg in pairs(cx.digits) do
        if dg.of == thread_x and f[dn] and dg.inner then s = s and M.fold(ir.bin("+", s, f[dn])) or f[dn] end
      end
      a.stride_x = s and ir.text(s) or "0"
    end
  end
  for name in pairs(cx.axes) do
    local uses = a.dims[name]
    for dn, dg in pairs(cx.digits) do
      if dg.of == name and a.dims[dn] then uses = true end
    end
    if not uses then a.reuse[#a.reuse + 1] = name end
  end
  table.sort(a.reuse)
  return a
end

-- Loop bounds of a canonical `for (T v = lo; v < hi | v <= hi; ++v | v++ | v += 1)`.
local function bounds(s)
  if not (s.init and s.init.init) then return nil end
  local v = s.init.name
  local c, st = s.cond, s.step
  local step = st.s == "assign" and st.lhs.k == "var" and st.lhs.name == v and
    (st.op == "++" and 1 or (st.op == "+=" and st.rhs.k == "num" and math.tointeger(tonumber(st.rhs.v))))
  if not step or step < 1 or c.k ~= "bin" or not (c.a.k == "var" and c.a.name == v) then return nil end
  if c.op == "<" then return v, s.init.init, c.b, step end
  if c.op == "<=" then return v, s.init.init, ir.bin("+", c.b, ir.num(1)), step end
end
M.bounds = bounds

local function reads(e, name)
  return ir.vars(e)[name] == true
end

-- The combine of acc from one statement, or nil.
local function combine_of(s, name)
  if s.s ~= "assign" or s.lhs.k ~= "var" or s.lhs.name ~= name then return nil end
  if s.op == "+=" and not reads(s.rhs, name) then return "+", s.rhs end
  if s.op ~= "=" then return nil end
  local r = s.rhs
  if r.k == "bin" and r.op == "+" then
    if r.a.k == "var" and r.a.name == name and not reads(r.b, name) then return "+", r.b end
  end
  if r.k == "call" and #r.args == 2 then
    local ops = { fmaxf = "max", fminf = "min", max = "max", min = "min", fmax = "max", fmin = "min" }
    local op = ops[r.fn]
    if op then
      for i = 1, 2 do
        local other = r.args[3 - i]
        if r.args[i].k == "var" and r.args[i].name == name and not reads(other, name) then return op, other end
      end
    end
  end
end

-- argmax/argmin: `if (f(v) > f(best)) best = v;` or
-- `if (d < best_d) { best_d = d; best = v; }`.
local function arg_combine(s, var, outside)
  if s.s ~= "if" or s.else_ then return nil end
  local c = s.cond
  if c.k ~= "bin" or not (c.op == ">" or c.op == "<") then return nil end
  local dir = c.op == ">" and "argmax" or "argmin"
  local th = s.then_
  if #th == 1 and th[1].s == "assign" and th[1].op == "=" and th[1].lhs.k == "var" and outside[th[1].lhs.name] and
      th[1].rhs.k == "var" and th[1].rhs.name == var then
    local idx = th[1].lhs.name
    if ir.equal(ir.subst(c.a, { [var] = ir.var(idx) }), c.b) and reads(c.a, var) then
      return { { name = idx, op = dir, idx = idx, key = c.a, var = var } }
    end
  end
  if #th == 2 and c.b.k == "var" and outside[c.b.name] then
    local val = c.b.name
    local sv, si
    for _, t in ipairs(th) do
      if t.s == "assign" and t.op == "=" and t.lhs.k == "var" then
        if t.lhs.name == val and ir.equal(t.rhs, c.a) then sv = t end
        if outside[t.lhs.name] and t.lhs.name ~= val and t.rhs.k == "var" and t.rhs.name == var then si = t end
      end
    end
    if sv and si and c.a.k == "var" then
      return { { name = val, op = dir, val = val, idx = si.lhs.name, key = c.a, var = var },
        { name = si.lhs.name, op = dir, partner = val } }
    end
  end
end

local function classify(loop, cx, outside)
  local s = loop.stmt
  local accs, why = {}, nil
  local written = {}
  local stores = {}
  local function note(n, v) if not why then why = string.format(n, v) end end
  local function visit(stmts, inner_vars)
    for _, t in ipairs(stmts) do
      local arg = arg_combine(t, loop.var, outside)
      if arg then
        for _, a in ipairs(arg) do
          if accs[a.name] and accs[a.name].op ~= a.op then note("%s is combined two ways", a.name) end
          accs[a.name] = a
          written[a.name] = true
        end
      elseif t.s == "assign" and t.lhs.k == "var" and outside[t.lhs.name] then
        local op = combine_of(t, t.lhs.name)
        if not op then note("%s is assigned inside the loop without an associative combine", t.lhs.name) end
        if accs[t.lhs.name] and accs[t.lhs.name].op ~= op then note("%s is combined two ways", t.lhs.name) end
        accs[t.lhs.name] = accs[t.lhs.name] or { name = t.lhs.name, op = op }
        written[t.lhs.name] = true
      elseif t.s == "assign" and t.lhs.k == "index" then
        stores[#stores + 1] = t
      elseif t.s == "expr" then
        note("calls %s inside the loop", t.e.fn or "a function")
      elseif t.s == "raw" then
        note("an opaque loop inside the loop")
      elseif t.s == "return" or t.s == "break" or t.s == "continue" then
        note("leaves the loop early (%s)", t.s)
      end
      if t.s == "if" and not arg then
        visit(t.then_, inner_vars)
        if t.else_ then visit(t.else_, inner_vars) end
      elseif t.s == "for" then
        visit(t.body, inner_vars)
      elseif t.s == "block" then
        visit(t.body, inner_vars)
      end
    end
  end
  visit(s.body)
  -- an accumulator read anywhere but its own combine is a scan
  ir.walk(s.body, function(t)
    for _, e in ipairs(ir.exprs(t)) do
      for name in pairs(ir.vars(e)) do
        local a = accs[name]
        if a then
          local own = (t.s == "assign" and t.lhs.k == "var" and t.lhs.name == name)
          if a.op == "argmax" or a.op == "argmin" then own = true end
          if not own and not (t.s == "assign" and t.lhs.k == "var" and accs[t.lhs.name]) then
            note("%s is read inside the loop: a scan, not a reduction", name)
          end
        end
      end
    end
  end)
  loop.accs = {}
  for _, a in pairs(accs) do loop.accs[#loop.accs + 1] = a end
  table.sort(loop.accs, function(x, y) return x.name < y.name end)
  loop.stores = stores
  if why then
    loop.kind, loop.why = "seq", why
  elseif #loop.accs > 0 and #stores == 0 then
    loop.kind = "reduce"
  elseif #loop.accs == 0 and #stores > 0 then
    loop.kind = "map"
    for _, st in ipairs(stores) do
      local idx = resolve(st.lhs.idx, cx)
      local f = affine(idx, { [loop.var] = true })
      if not (f and f[loop.var]) then loop.kind, loop.why = "seq", "a store inside the loop does not move with " .. loop.var end
    end
  elseif #loop.accs > 0 then
    loop.kind, loop.why = "seq", "the loop both accumulates and stores"
  else
    loop.kind, loop.why = "seq", "the loop neither accumulates nor stores"
  end
  return loop
end

function M.analyze(k)
  local cx = context(k)
  local thread_x = ir.axis_on(k, "x")
  local out = { accesses = {}, loops = { list = {} }, digits = cx.digits, thread_x = thread_x and thread_x.name }
  -- a scope: the scalars declared so far, copied into each nested body
  -- (a loop's accumulators are the scalars declared before it)
  local function copy_scope(scope)
    local c = {}
    for n in pairs(scope) do c[n] = true end
    return c
  end
  local function exprs_access(e, loops, skip_store)
    ir.visit(e, function(x)
      if x.k == "index" and x ~= skip_store then
        out.accesses[#out.accesses + 1] = access(cx, x, "load", loops, out.thread_x)
      end
    end)
  end
  local function visit(stmts, loops, scope)
    for _, s in ipairs(stmts) do
      if s.s == "let" then scope[s.name] = true end
      if s.s == "assign" and s.lhs.k == "index" then
        out.accesses[#out.accesses + 1] = access(cx, s.lhs, "store", loops, out.thread_x)
        exprs_access(s.lhs.idx, loops)
        if s.rhs then exprs_access(s.rhs, loops) end
      elseif s.s == "expr" and s.e.k == "call" and s.e.fn:match("^atomic") then
        local target = s.e.args[1]
        if target and target.k == "un" and target.op == "&" and target.a.k == "index" then
          out.accesses[#out.accesses + 1] = access(cx, target.a, "atomic", loops, out.thread_x)
          exprs_access(target.a.idx, loops)
        elseif target then
          out.accesses[#out.accesses + 1] = access(cx, ir.index(target, ir.num(0)), "atomic", loops, out.thread_x)
        end
        for i = 2, #s.e.args do exprs_access(s.e.args[i], loops) end
      else
        for _, e in ipairs(ir.exprs(s)) do exprs_access(e, loops) end
      end
      if s.s == "for" then
        local v, lo, hi, step = bounds(s)
        local loop = { stmt = s, var = s.init and s.init.name or "?", lo = lo, hi = hi, step = step, canonical = v ~= nil,
          depth = #loops }
        local outside = {}
        for n in pairs(scope) do outside[n] = true end
        classify(loop, cx, outside)
        if not loop.canonical then loop.kind, loop.why = "seq", "not a constant-step loop with a < or <= bound" end
        out.loops[s] = loop
        out.loops.list[#out.loops.list + 1] = loop
        local inner = { table.unpack(loops) }
        inner[#inner + 1] = loop.var
        visit(s.body, inner, copy_scope(scope))
      elseif s.s == "if" then
        visit(s.then_, loops, copy_scope(scope))
        if s.else_ then visit(s.else_, loops, copy_scope(scope)) end
      elseif s.s == "block" then
        visit(s.body, loops, scope)
      end
    end
  end
  visit(k.body, {}, {})
  return out
end

-- One line per access, for `klineage lift`.
function M.describe(a)
  local lines = {}
  for _, x in ipairs(a.accesses) do
    local coefs = {}
    if x.coefs then
      for d, c in pairs(x.coefs) do coefs[#coefs + 1] = d .. ":" .. c end
      table.sort(coefs)
    end
    lines[#lines + 1] = string.format("%-6s %-28s %s  stride_x=%s%s%s", x.kind, x.text,
      x.indirect and "indirect" or (x.coefs and "affine{" .. table.concat(coefs, ", ") .. "}" or "non-affine"),
      x.stride_x or "?", #x.reuse > 0 and "  reused across " .. table.concat(x.reuse, ",") or "",
      #x.loops > 0 and "  in " .. table.concat(x.loops, ",") or "")
  end
  for _, l in ipairs(a.loops.list) do
    local accs = {}
    for _, c in ipairs(l.accs) do accs[#accs + 1] = c.name .. " " .. tostring(c.op or "?") end
    lines[#lines + 1] = string.format("loop   %-6s %s%s", l.var, l.kind,
      l.why and (": " .. l.why) or (#accs > 0 and " (" .. table.concat(accs, ", ") .. ")" or ""))
  end
  return lines
end

return M
