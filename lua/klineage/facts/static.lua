-- Static facts of one function, from kl.source alone: loops and their
-- constant trip counts, accesses per pointer parameter, shared arrays,
-- barriers, integer constants, __launch_bounds__, #pragma unroll.
--
--   static.add(f, unit, fn, consts [, params]) -> loop_bounds
--     adds the facts to f (klineage.facts); loop_bounds: the names of the
--     constants used in loop bounds (for the workload's divisibility facts).
--
-- Trip counts: a for loop `for (T v = A; v OP B; STEP)` with OP one of
-- < <= > >= != and STEP ++v, v++, --v, v--, v += C, v -= C, where A, B and
-- C evaluate (klineage.base.expr, C integer division) to integers with the
-- kernel's constants (loop.N.trip_count) or with the workload params too
-- (loop.N.trip_count_at_workload). Any other loop has no trip count.
local expr = require "klineage.base.expr"

local M = {}

local LOOP_KINDS = { "for", "while", "do" }
local LOOP_KIND = { ["for"] = true, ["while"] = true, ["do"] = true }

local function eval_int(text, envs)
  if not text or #text > 400 then return nil end
  local c = expr.compile(text, { c_division = true })
  if not c then return nil end
  local v = c:eval(table.unpack(envs))
  if math.type(v) == "integer" then return v, c.names end
end

local function cdiv(a, b) return -((-a) // b) end

-- The trip count of a counted loop, or nil.
local function trips(lo, op, hi, step)
  if not (lo and hi and step) or step == 0 then return nil end
  local n
  if op == "<" and step > 0 then n = cdiv(hi - lo, step)
  elseif op == "<=" and step > 0 then n = (hi - lo) // step + 1
  elseif op == ">" and step < 0 then n = cdiv(lo - hi, -step)
  elseif op == ">=" and step < 0 then n = (lo - hi) // (-step) + 1
  elseif op == "!=" and (hi - lo) % step == 0 and (hi - lo) // step >= 0 then n = (hi - lo) // step
  else return nil end
  return math.max(n, 0)
end

local FLIP = { ["<"] = ">", ["<="] = ">=", [">"] = "<", [">="] = "<=", ["!="] = "!=" }

-- { var, lo, op, hi, step } texts of a counted for loop, or nil.
local function counted(loop)
  local init, cond, step = loop:field("init"), loop:field("cond"), loop:field("step")
  if not (init and cond and step) then return nil end
  local var, lo
  if init.kind == "decl" or init.kind == "decl_stmt" then
    local ok, d = pcall(init.declaration, init)
    local dl = ok and d and d.declarators and d.declarators[1]
    if not dl or #d.declarators ~= 1 or not dl.init then return nil end
    var, lo = dl.name.text, dl.init.text
  elseif init.kind == "assign" and init.op == "=" then
    var, lo = init:field("lhs"):text(), init:field("rhs"):text()
  else
    return nil
  end
  if cond.kind ~= "binary" or not FLIP[cond.op] then return nil end
  local op, hi = cond.op, nil
  if cond:field("lhs"):text() == var then hi = cond:field("rhs"):text()
  elseif cond:field("rhs"):text() == var then hi, op = cond:field("lhs"):text(), FLIP[cond.op]
  else return nil end
  local st
  if step.kind == "unary" or step.kind == "postfix" then
    local operand = step:field("operand")
    if not operand or operand:text() ~= var then return nil end
    if step.op == "++" then st = "1" elseif step.op == "--" then st = "-1" else return nil end
  elseif step.kind == "assign" and (step.op == "+=" or step.op == "-=") then
    if step:field("lhs"):text() ~= var then return nil end
    st = step:field("rhs"):text()
    if step.op == "-=" then st = "-(" .. st .. ")" end
  else
    return nil
  end
  return { var = var, lo = lo, op = op, hi = hi, step = st }
end

local function loop_depth(node, fn_body)
  local d = 0
  local n = node
  while n and not n:equals(fn_body) do
    if LOOP_KIND[n.kind] then d = d + 1 end
    n = n:parent()
  end
  return d
end

local function inside_loop(node, fn_body)
  local n = node:parent()
  while n and not n:equals(fn_body) do
    if LOOP_KIND[n.kind] then return true end
    n = n:parent()
  end
  return false
end

local function is_barrier(call)
  local callee = call:field("callee")
  return callee and callee:text() == "__syncthreads"
end

local function add_loops(f, fn, body, consts, params, bound_names)
  local count, max_depth, constant, unrolls = 0, 0, 0, 0
  local env_c, env_w = { consts }, params and { params, consts } or nil
  for loop in body:walk(LOOP_KINDS) do
    count = count + 1
    local key = "loop." .. count .. "."
    local depth = loop_depth(loop, body)
    if depth > max_depth then max_depth = depth end
    f:set(key .. "kind", loop.kind, "source")
    f:set(key .. "depth", depth, "source")
    local nbar = 0
    for call in loop:walk({ "call" }) do if is_barrier(call) then nbar = nbar + 1 end end
    f:set(key .. "barriers", nbar, "source")
    local u = loop.unroll and loop:unroll()
    if u then
      unrolls = unrolls + 1
      f:set(key .. "pragma_unroll", true, "source")
      f:set(key .. "unroll", u.count and u.count.int, "source") -- bare, or N unknown: absent
    end
    local c = loop.kind == "for" and counted(loop)
    if c then
      f:set(key .. "var", c.var, "source")
      local lo, n1 = eval_int(c.lo, env_c)
      local hi, n2 = eval_int(c.hi, env_c)
      local st, n3 = eval_int(c.step, env_c)
      local n = trips(lo, c.op, hi, st)
      if n then
        constant = constant + 1
        f:set(key .. "trip_count", n, "source")
        for _, names in ipairs({ n1, n2, n3 }) do
          for _, nm in ipairs(names) do bound_names[nm] = true end
        end
      end
      if env_w then
        local wn = trips(eval_int(c.lo, env_w), c.op, eval_int(c.hi, env_w), eval_int(c.step, env_w))
        if wn then f:set(key .. "trip_count_at_workload", wn, "workload") end
      end
      -- a bound in a workload loop: K in k < K, TILE in k0 += TILE
      for _, t in ipairs({ c.hi, c.step }) do
        local comp = #t <= 400 and expr.compile(t, { c_division = true })
        if comp then for _, nm in ipairs(comp.names) do if consts[nm] then bound_names[nm] = true end end end
      end
    end
  end
  f:set("loops.count", count, "source")
  f:set("loops.max_depth", max_depth, "source")
  f:set("loops.constant_trips", constant, "source")
  f:set("pragma_unroll.count", unrolls, "source")
end

local KIND_RANK = { zero = 0, const = 1, symbolic = 2, unknown = 3 }

local function add_accesses(f, unit, fn)
  local by_name = {}
  for _, p in ipairs(fn:params()) do if p.name then by_name[p.name] = p end end
  for name, a in pairs(unit:access_patterns(fn)) do
    local key = "access." .. name .. "."
    f:set(key .. "count", #a.accesses, "source")
    f:set(key .. "reads", a.reads, "source")
    f:set(key .. "writes", a.writes, "source")
    f:set(key .. "coalesced", a.coalesced, "source")
    f:set(key .. "loop_reuse", a.loop_reuse, "source")
    local worst, stride, width, in_loop = "zero", 0, 1, 0
    for _, x in ipairs(a.accesses) do
      if KIND_RANK[x.tx_stride_kind] > KIND_RANK[worst] then worst = x.tx_stride_kind end
      if math.type(x.tx_stride) == "integer" and math.abs(x.tx_stride) > math.abs(stride) then stride = x.tx_stride end
      if (x.vector_width or 1) > width then width = x.vector_width end
      if x.loop then in_loop = in_loop + 1 end
    end
    f:set(key .. "tx_stride_kind", worst, "source")
    if KIND_RANK[worst] <= 1 then f:set(key .. "tx_stride", stride, "source") end
    f:set(key .. "vector_width", width, "source")
    f:set(key .. "in_loop", in_loop, "source")
    local p = by_name[name]
    if p then
      f:set(key .. "const", p.const == true, "source")
      f:set(key .. "restrict", p.restrict == true, "source")
    end
  end
end

local function declarator_of(decl_node, name)
  local n = decl_node
  while n and n.kind ~= "decl" and n.kind ~= "decl_stmt" do n = n:parent() end
  if not n then return nil end
  local d = n:declaration()
  for _, x in ipairs(d and d.declarators or {}) do
    if x.name and x.name.text == name then return x end
  end
end

local function add_shared(f, unit, fn)
  local count, total, all_known = 0, 0, true
  for name, a in pairs(unit:shared_accesses(fn)) do
    count = count + 1
    local key = "shared." .. name .. "."
    f:set(key .. "elem_bytes", a.elem_bytes, "source")
    if a.bank_ways and a.bank_ways > 0 then f:set(key .. "bank_ways", a.bank_ways, "source") end
    local d = declarator_of(a.decl, name)
    local bytes, dims = a.elem_bytes, {}
    if d and #d.dims > 0 and a.elem_bytes and a.elem_bytes > 0 then
      for _, dim in ipairs(d.dims) do
        if math.type(dim.int) ~= "integer" or dim.int <= 0 then bytes = nil break end
        bytes = bytes * dim.int
        dims[#dims + 1] = tostring(dim.int)
      end
    else
      bytes = nil
    end
    if bytes then
      f:set(key .. "bytes", bytes, "source")
      f:set(key .. "dims", table.concat(dims, "x"), "source")
      total = total + bytes
    else
      all_known = false
    end
  end
  f:set("shared.count", count, "source")
  if all_known then f:set("shared.bytes", total, "source") end
end

local function add_barriers(f, body)
  local n, in_loop = 0, 0
  for call in body:walk({ "call" }) do
    if is_barrier(call) then
      n = n + 1
      if inside_loop(call, body) then in_loop = in_loop + 1 end
    end
  end
  f:set("barriers.count", n, "source")
  f:set("barriers.in_loop", in_loop, "source")
end

local function add_bounds(f, fn)
  local lb = fn:launch_bounds()
  if not lb.present then return end
  if lb.max_threads and lb.max_threads.int then f:set("launch_bounds.max_threads", lb.max_threads.int, "source") end
  if lb.min_blocks and lb.min_blocks.int then f:set("launch_bounds.min_blocks", lb.min_blocks.int, "source") end
end

function M.add(f, unit, fn, consts, params)
  for name, v in pairs(consts) do f:set("define." .. name, v, "source") end
  local bound_names = {}
  local body = fn:body()
  if body then
    add_loops(f, fn, body, consts, params, bound_names)
    add_barriers(f, body)
  end
  add_accesses(f, unit, fn)
  add_shared(f, unit, fn)
  add_bounds(f, fn)
  return bound_names
end

return M
