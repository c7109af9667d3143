-- lift(text [, opts]) -> kernel IR | nil, reason
-- Lifts a naive one-thread-per-output CUDA kernel (klineage.kir.ir):
-- the coordinates from threadIdx/blockIdx, the bounds guard, and the
-- per-point code after it. opts.kernel names the entry when the file has
-- several __global__ functions (lift_all lifts each); opts.workload (a
-- workload spec) gives k.sizes, the kernel's parameters at its bench size
-- (klineage.kir.sizes), which candidates may shape to. A call to a function
-- of the file stays opaque when klineage.kir.calls finds nothing hidden in
-- it but what it writes through references. A kernel outside the subset
-- gives nil and a one-line reason; no input raises.
local source = require "kl.source"
local ir = require "klineage.kir.ir"
local convert = require "klineage.kir.convert"
local launch_line = require "klineage.kir.launch"
local calls = require "klineage.kir.calls"

local M = {}

-- Words that say the kernel is not one plain thread per output.
local SCHEDULED = {
  __syncthreads = "uses __syncthreads: already scheduled",
  __syncwarp = "uses __syncwarp: already scheduled",
  __shared__ = "uses __shared__ memory: already scheduled",
  gridDim = "uses gridDim: a grid-stride or persistent kernel, not one thread per output",
  asm = "uses inline assembly",
  ["goto"] = "uses goto",
  atomicCAS = "uses atomicCAS: a hand-written synchronization",
  atomicExch = "uses atomicExch: a hand-written synchronization",
  cooperative_groups = "uses cooperative groups: already scheduled",
  __ldg = "uses __ldg: already scheduled",
}
local SCHEDULED_PREFIX = { { "__shfl", "uses warp shuffles: already scheduled" },
  { "__ballot", "uses warp votes: already scheduled" }, { "__any", "uses warp votes: already scheduled" },
  { "__all", "uses warp votes: already scheduled" } }

local THREAD_IDS = { threadIdx = true, blockIdx = true, blockDim = true, gridDim = true }
local DIMS = { x = true, y = true, z = true }

-- The __global__ functions with a body, in the file's order.
local function kernels(unit)
  local found = {}
  for _, fn in ipairs(unit:functions()) do
    local info = fn:info()
    if info.global and not info.prototype and fn:body() then found[#found + 1] = fn end
  end
  return found
end

local function pick_kernel(unit, want)
  local found = {}
  for _, fn in ipairs(kernels(unit)) do
    if not want or fn:name() == want then found[#found + 1] = fn end
  end
  if #found == 0 then return nil, want and ("no __global__ function named " .. want) or "no __global__ function with a body" end
  if #found > 1 then
    local names = {}
    for i, fn in ipairs(found) do names[i] = tostring(fn:name()) end
    return nil, string.format("several __global__ functions (%s): name one (--kernel)", table.concat(names, ", "))
  end
  local fn = found[1]
  if fn:info().template then return nil, "a template kernel: instantiate it first" end
  return fn
end

local function scan_words(text)
  for w in text:gmatch("[%a_][%w_]*") do
    if SCHEDULED[w] then return SCHEDULED[w] end
    for _, p in ipairs(SCHEDULED_PREFIX) do
      if w:sub(1, #p[1]) == p[1] then return p[2] end
    end
  end
end

local function thread_member(e)
  e = ir.strip_casts(e)
  if e.k == "member" and e.obj.k == "var" and THREAD_IDS[e.obj.name] and DIMS[e.field] then return e.obj.name, e.field end
end

local function uses_thread_ids(e)
  local hit
  ir.visit(e, function(x)
    if x.k == "var" and THREAD_IDS[x.name] then hit = x.name end
  end)
  return hit
end

-- An axis from `[cast]blockIdx.D * B + threadIdx.D` (either order of the
-- sum and of the product) or `blockIdx.D` alone; nil otherwise.
local function axis_of(let)
  local e = let.init
  if not e then return nil end
  local outer_cast
  if e.k == "cast" then outer_cast, e = e.type, e.a end
  local which, dim = thread_member(e)
  if which == "blockIdx" then return { name = let.name, type = let.type, dim = dim } end
  if e.k ~= "bin" or e.op ~= "+" then return nil end
  local function split(prod, tid)
    local tw, td = thread_member(tid)
    if tw ~= "threadIdx" or prod.k ~= "bin" or prod.op ~= "*" then return nil end
    for _, order in ipairs({ { prod.a, prod.b }, { prod.b, prod.a } }) do
      local bw, bd = thread_member(order[1])
      if bw == "blockIdx" and bd == td then
        local size = order[2]
        local sw = uses_thread_ids(size)
        if sw and not (ir.strip_casts(size).k == "member" and sw == "blockDim" and select(2, thread_member(size)) == td) then
          return nil
        end
        local cast = outer_cast or (order[1].k == "cast" and order[1].type) or (size.k == "cast" and size.type) or nil
        return { name = let.name, type = let.type, dim = td, block = size, cast = cast }
      end
    end
  end
  return split(e.a, e.b) or split(e.b, e.a)
end

-- The guard's terms: return form splits `||`, wrap form `&&`.
local function terms(e, op, out)
  out = out or {}
  if e.k == "bin" and e.op == op then
    terms(e.a, op, out)
    terms(e.b, op, out)
  else
    out[#out + 1] = e
  end
  return out
end

-- Extents from the guard: axis name -> the bound expression.
local function extents(guard, axes)
  local names = {}
  for _, a in ipairs(axes) do names[a.name] = a end
  local found = {}
  local form = guard.form
  for _, t in ipairs(terms(guard.cond, form == "return" and "||" or "&&")) do
    t = t.k == "bin" and t or nil
    if t then
      local lhs, rhs = ir.strip_casts(t.a), ir.strip_casts(t.b)
      local out_ops = form == "return" and { [">="] = "lhs", ["<="] = "rhs" } or { ["<"] = "lhs", [">"] = "rhs" }
      local side = out_ops[t.op]
      local var, bound
      if side == "lhs" then var, bound = lhs, t.b elseif side == "rhs" then var, bound = rhs, t.a end
      if var and var.k == "var" and names[var.name] and not found[var.name] then found[var.name] = bound end
    end
  end
  return found
end

-- Calls to functions of the file: each callee must be one the IR can keep
-- opaque (klineage.kir.calls); the variables it writes through references
-- become the call statement's refs (or a raw loop's writes). An address
-- passed to a builtin is a write too. nil, or the reason to refuse.
local function check_calls(k, check, known, param_names)
  local function local_var(name)
    return not param_names[name] and (known[name] == nil or known[name] == "point")
  end
  local bad
  local function call_in(s, c)
    local r, why = check(c.fn)
    if r == false then return string.format("calls %s, which the IR cannot keep opaque: %s", c.fn, why) end
    local refs = r and { table.unpack(r.refs) } or {}
    if not r and not c.fn:match("^atomic") then
      for i, a in ipairs(c.args) do
        if a.k == "un" and a.op == "&" then
          if a.a.k ~= "var" then return string.format("passes the address of %s to %s: a store the IR does not see", ir.text(a.a), c.fn) end
          refs[#refs + 1] = i
        end
      end
    end
    if #refs == 0 then return nil end
    if not (s.s == "expr" and s.e == c) then
      return string.format("calls %s, which writes through a reference or an address, inside an expression", c.fn)
    end
    for _, i in ipairs(refs) do
      local a = c.args[i]
      if a and a.k == "un" and a.op == "&" then a = a.a end
      if not (a and a.k == "var" and local_var(a.name)) then
        return string.format("%s writes its argument %s: not a variable of the point", c.fn, a and ir.text(a) or "?")
      end
    end
    table.sort(refs)
    s.refs = refs
  end
  local function visit(s)
    if s.s == "raw" then
      for _, c in ipairs(s.calls or {}) do
        local r, why = check(c.fn or "")
        if r == false then bad = bad or string.format("calls %s, which the IR cannot keep opaque: %s", c.fn, why) end
        for _, i in ipairs(r and r.refs or {}) do
          local name = c.args[i]
          if name == false then bad = bad or string.format("%s writes an argument that is not a variable", c.fn) end
          if name then s.writes[name] = true end
        end
      end
      return
    end
    for _, e in ipairs(ir.exprs(s)) do
      ir.visit(e, function(x)
        if x.k == "call" and not bad then bad = call_in(s, x) end
      end)
    end
  end
  ir.walk(k.uniform, visit)
  ir.walk(k.body, visit)
  return bad
end

local function lift_fn(unit, fn, text)
  local body = fn:body()
  if not body then return nil, "a prototype, not a kernel with a body" end
  local why = scan_words(fn:text())
  if why then return nil, why end

  local params = {}
  for _, p in ipairs(fn:params()) do
    if not p.name then return nil, "an unnamed parameter" end
    if p.reference then return nil, "a reference parameter" end
    params[#params + 1] = { name = p.name, base = p.base, stars = p.stars or 0, const = p.const }
  end

  local stmts = convert.stmts_of(body, 0)
  local k = { name = fn:name(), params = params, uniform = {}, axes = {}, body = {}, schedule = {}, applied = {} }
  local known = {} -- names bound before the guard: axis or uniform
  local i = 1
  while i <= #stmts do
    local s = stmts[i]
    if s.s ~= "let" then break end
    local axis = axis_of(s)
    if axis then
      if known[s.name] then return nil, "redeclares " .. s.name end
      k.axes[#k.axes + 1] = axis
      known[s.name] = "axis"
    else
      if s.init and uses_thread_ids(s.init) then
        return nil, string.format("%s mixes thread ids in a way the IR does not model", s.name)
      end
      local reads = s.init and ir.vars(s.init) or {}
      local per_point
      for n in pairs(reads) do
        if known[n] == "axis" or known[n] == "point" then per_point = true end
      end
      known[s.name] = per_point and "point" or "uniform"
      if per_point then k.body[#k.body + 1] = s else k.uniform[#k.uniform + 1] = s end
    end
    i = i + 1
  end
  if #k.axes == 0 then return nil, "no output coordinate from threadIdx/blockIdx (blockIdx.x * B + threadIdx.x)" end

  local s = stmts[i]
  local rest_from = i
  if s and s.s == "if" and not s.else_ then
    local reads = ir.vars(s.cond)
    local on_axis, on_point
    for n in pairs(reads) do
      if known[n] == "axis" then on_axis = true end
      if known[n] == "point" then on_point = n end
    end
    if on_axis then
      if on_point then return nil, "the guard reads " .. on_point .. ", computed from the coordinates" end
      if #s.then_ == 1 and s.then_[1].s == "return" then
        k.guard = { cond = s.cond, form = "return" }
        rest_from = i + 1
      elseif i == #stmts then
        k.guard = { cond = s.cond, form = "wrap" }
        for _, t in ipairs(s.then_) do k.body[#k.body + 1] = t end
        rest_from = #stmts + 1
      end
    end
  end
  for j = rest_from, #stmts do k.body[#k.body + 1] = stmts[j] end

  -- The per-point code sees the thread only through its coordinates.
  local param_names, stored = {}, {}
  for _, p in ipairs(params) do param_names[p.name] = true end
  local bad = check_calls(k, calls.checker(unit), known, param_names)
  ir.walk(k.body, function(st)
    if st.s == "assign" and st.lhs.k == "index" and st.lhs.base.k == "var" then stored[st.lhs.base.name] = true end
    if st.s == "expr" and st.e.k == "call" and st.e.fn:match("^atomic") and st.e.args[1] then
      ir.visit(st.e.args[1], function(x) if x.k == "var" and param_names[x.name] then stored[x.name] = true end end)
    end
  end)
  ir.walk(k.body, function(st)
    for _, e in ipairs(ir.exprs(st)) do
      local w = uses_thread_ids(e)
      if w and not bad then bad = "reads " .. w .. " after the guard: the thread is more than its output coordinates" end
    end
    if st.s == "raw" and not bad then
      for w in st.text:gmatch("[%a_][%w_]*") do
        if THREAD_IDS[w] then bad = "reads " .. w .. " inside an opaque loop" end
      end
    end
    if st.s ~= "raw" then
      for n in pairs(ir.writes(st)) do
        if known[n] ~= nil and known[n] ~= "point" then bad = bad or "writes " .. n .. ", a coordinate or a value every thread shares" end
        if param_names[n] then bad = bad or "writes the parameter " .. n .. " (pointer arithmetic on an argument)" end
      end
    end
    if st.s == "let" and (param_names[st.name] or known[st.name] == "axis" or known[st.name] == "uniform") then
      bad = bad or "redeclares " .. st.name .. ", which the kernel already names"
    end
    if st.s == "for" then
      ir.visit(st.cond, function(x)
        if x.k == "index" and x.base.k == "var" and stored[x.base.name] then
          bad = bad or string.format("the bound of the loop over %s depends on a store (%s)", st.init.name, x.base.name)
        end
      end)
    end
    if st.s == "raw" then
      for n in pairs(st.writes) do
        if known[n] == "axis" or known[n] == "uniform" then bad = bad or "an opaque loop writes " .. n .. ", a coordinate" end
        if param_names[n] then bad = bad or "an opaque loop writes the parameter " .. n end
      end
    end
  end)
  if bad then return nil, bad end

  if k.guard then
    for name, e in pairs(extents(k.guard, k.axes)) do ir.axis(k, name).extent = e end
  end

  local fb, fe = select(5, fn:range())
  local bb = select(5, body:range())
  k.prefix = text:sub(1, fb - 1)
  k.header = text:sub(fb, bb - 1)
  k.suffix = text:sub(fe + 1)
  return k
end

function M.lift(text, opts)
  opts = opts or {}
  if type(text) ~= "string" then return nil, "no kernel text" end
  local unit = source.parse(text)
  local fn, why = pick_kernel(unit, opts.kernel)
  if not fn then return nil, why end
  local ok, k, reason = pcall(lift_fn, unit, fn, text)
  if not ok then
    if type(k) == "table" and k.refusal then return nil, k.refusal end
    return nil, "lift failed: " .. tostring(k):gsub("\n.*", "")
  end
  if not k then return nil, reason end
  local l, lwhy = launch_line.find(unit, k.name)
  if not l then return nil, lwhy end
  k.launch = l
  for _, a in ipairs(k.axes) do
    a.extent_ann = a.extent and launch_line.annotation_of(k, a.extent) or nil
  end
  k.constants = require("klineage.workload.annotations").constants(text)
  -- the bench size, where a workload is given: candidates shaped to it
  k.sizes = opts.workload and require("klineage.kir.sizes").of(k, opts.workload) or nil
  require("klineage.kir.geometry").init(k)
  return k
end

-- Every __global__ function of the file lifted on its own, in the file's
-- order: { { name, kernel } | { name, why } }.
function M.lift_all(text)
  if type(text) ~= "string" then return {} end
  local out = {}
  for _, fn in ipairs(kernels(source.parse(text))) do
    local name = fn:name()
    if name then
      local k, why = M.lift(text, { kernel = name })
      out[#out + 1] = { name = name, kernel = k, why = why }
    end
  end
  return out
end

return M
