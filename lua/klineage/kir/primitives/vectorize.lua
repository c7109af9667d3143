-- vectorize(W): W = 2 or 4 consecutive points per thread of a 1-D
-- elementwise kernel, each operand whose subscript is the axis itself
-- moved as one float2/float4 (int2/int4): the first point is a multiple
-- of W and buffers start aligned (cudaMalloc: 256 bytes), so the vector
-- access is aligned. Points past the extent go through a scalar tail.
local ir = require "klineage.kir.ir"
local geometry = require "klineage.kir.geometry"
local analysis = require "klineage.kir.analysis"

local M = { name = "vectorize" }

local COMP = { "x", "y", "z", "w" }
local VEC = { float = "float", int = "int", ["unsigned int"] = "uint", unsigned = "uint" }

function M.apply(k, p)
  local w = p.width or p[1]
  if w ~= 2 and w ~= 4 then return nil, "vectorize(2) or vectorize(4)" end
  if k.schedule.points or k.schedule.split or k.schedule.staged then return nil, "vectorize goes alone after map" end
  local out = ir.clone(k)
  local threaded = {}
  for _, ax in ipairs(out.axes) do if ax.block then threaded[#threaded + 1] = ax end end
  if #threaded ~= 1 or threaded[1].dim ~= "x" then return nil, "vectorize takes a 1-D kernel: one axis with threads, on x" end
  local axis = threaded[1]
  if not axis.extent or not axis.extent_ann then return nil, "the guard gives no bound for " .. axis.name end
  if not out.guard or out.guard.form ~= "return" and out.guard.form ~= "wrap" then return nil, "no bounds guard" end
  local params = {}
  for _, prm in ipairs(out.params) do params[prm.name] = prm end
  local bad
  ir.walk(out.body, function(s)
    if s.s == "for" or s.s == "raw" then bad = "a loop in the per-point code: vectorize takes straight-line elementwise code" end
    if s.s == "return" or s.s == "break" or s.s == "continue" then bad = "leaves the per-point code early (" .. s.s .. ")" end
    if s.s == "expr" then bad = "calls " .. (s.e.fn or "something") .. " as a statement (an atomic?)" end
  end)
  if bad then return nil, bad end
  local i = axis.name
  local function contiguous(e)
    return e.k == "index" and e.base.k == "var" and params[e.base.name] and params[e.base.name].stars == 1 and
      ir.strip_casts(e.idx).k == "var" and ir.strip_casts(e.idx).name == i
  end
  -- every store: unconditional, Y[i], of a vectorizable type
  local vec_loads, vec_stores, order = {}, {}, {}
  for _, s in ipairs(out.body) do
    if s.s == "assign" and s.lhs.k == "index" then
      if not contiguous(s.lhs) then return nil, "the store " .. ir.text(s.lhs) .. " is not contiguous in " .. i end
      if s.op ~= "=" then return nil, "the store " .. ir.text(s.lhs) .. " reads its old value" end
      local name = s.lhs.base.name
      if not VEC[params[name].base] then return nil, name .. " holds " .. params[name].base .. ": no vector type" end
      if not vec_stores[name] then vec_stores[name] = true; order[#order + 1] = name end
    end
  end
  local nested
  ir.walk(out.body, function(s, depth)
    if s.s == "if" then
      ir.walk(s.then_, function(t) if t.s == "assign" and t.lhs.k == "index" then nested = ir.text(t.lhs) end end)
      if s.else_ then ir.walk(s.else_, function(t) if t.s == "assign" and t.lhs.k == "index" then nested = ir.text(t.lhs) end end) end
    end
  end)
  if nested then return nil, "the store " .. nested .. " is conditional: a vector store would write every lane" end
  if #order == 0 then return nil, "no store to vectorize" end
  ir.walk(out.body, function(s)
    for _, e in ipairs(ir.exprs(s)) do
      ir.visit(e, function(x)
        if contiguous(x) and not (s.s == "assign" and x == s.lhs) and VEC[params[x.base.name].base] and not vec_stores[x.base.name] then
          vec_loads[x.base.name] = true
        end
      end)
    end
  end)
  local loads = {}
  for name in pairs(vec_loads) do loads[#loads + 1] = name end
  table.sort(loads)

  local i0 = i .. "0_"
  local function vtype(name) return VEC[params[name].base] .. w end
  local function vlet(name) return name .. "_v" end
  local vec = {}
  for _, name in ipairs(loads) do
    local cst = (params[name].const and "const " or "") .. vtype(name) .. " *"
    vec[#vec + 1] = { s = "let", type = "const " .. vtype(name), name = vlet(name),
      init = { k = "un", op = "*", a = { k = "cast", type = cst, a = { k = "un", op = "&", a = ir.index(ir.var(name), ir.var(i0)) } } } }
  end
  for _, name in ipairs(order) do vec[#vec + 1] = { s = "let", type = vtype(name), name = vlet(name) } end
  for u = 1, w do
    local lane = ir.map_stmts(out.body, function(x)
      if contiguous(x) and (vec_loads[x.base.name] or vec_stores[x.base.name]) then
        return { k = "member", obj = ir.var(vlet(x.base.name)), field = COMP[u] }
      end
    end)
    lane = ir.subst_stmts(lane, { [i] = u == 1 and ir.var(i0) or ir.bin("+", ir.var(i0), ir.num(u - 1)) })
    local scoped = false
    for _, t in ipairs(lane) do if t.s == "let" then scoped = true end end
    if scoped then
      vec[#vec + 1] = { s = "block", body = lane }
    else
      for _, t in ipairs(lane) do vec[#vec + 1] = t end
    end
  end
  for _, name in ipairs(order) do
    vec[#vec + 1] = { s = "assign", lhs = { k = "un", op = "*", a = { k = "cast", type = vtype(name) .. " *",
      a = { k = "un", op = "&", a = ir.index(ir.var(name), ir.var(i0)) } } }, op = "=", rhs = ir.var(vlet(name)) }
  end
  -- the scalar tail: the original per-point code, one point at a time
  local tail_body = { { s = "let", type = axis.type, name = i, init = ir.bin("+", ir.var(i0), ir.var("u_")) } }
  local out_cond = out.guard.form == "return" and out.guard.cond or ir.negate(out.guard.cond)
  tail_body[#tail_body + 1] = { s = "if", cond = ir.copy(out_cond), then_ = { { s = "break" } } }
  for _, s in ipairs(ir.copy_stmts(out.body)) do tail_body[#tail_body + 1] = s end
  local tail = { s = "for", init = { s = "let", type = "int", name = "u_", init = ir.num(0) }, cond = ir.bin("<", ir.var("u_"), ir.num(w)),
    step = { s = "assign", lhs = ir.var("u_"), op = "++" }, body = tail_body }
  local full = ir.bin("<=", ir.bin("+", ir.var(i0), ir.num(w)), ir.copy(axis.extent))
  out.body = { { s = "if", cond = full, then_ = vec, else_ = { tail } } }
  out.guard = { cond = ir.subst(out_cond, { [i] = ir.var(i0) }), form = "return" }
  local base = require("klineage.kir.emit").axis_expr(axis)
  axis.expr = ir.bin("*", base, ir.num(w))
  axis.name = i0
  axis.per_block_ann = geometry.simple(axis.threads_ann) .. " * " .. w
  local ok, why = geometry.relaunch(out)
  if not ok then return nil, why end
  out.schedule.vector = w
  out.applied[#out.applied + 1] = "vectorize"
  return out, string.format("legal: %d consecutive points of %s per thread; %s moved as %s-wide vectors (the subscript is %s itself, the first point a multiple of %d, buffers aligned); the points past a multiple of %d go through the scalar tail",
    w, i, table.concat(loads, ", ") .. (#loads > 0 and " and " or "") .. table.concat(order, ", "), w, i, w, w)
end

function M.candidates(k)
  return { { 4 }, { 2 } }
end

return M
