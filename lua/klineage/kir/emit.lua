-- emit(kernel) -> CUDA C text, or nil, reason
-- The one emitter: the text before the kernel (its comments, #defines and
-- `@kl launch` line, rewritten when a schedule changed the geometry), the
-- kernel's own header (name, signature, parameter names), then the body
-- from the IR:
--   uniform lets; k.pre (lane and warp ids a schedule adds); the
--   coordinates; the guard; the per-point code. With k.schedule.points
--   = { var, count } the coordinates, guard and per-point code repeat in a
--   loop over the thread's points, where `return` means `continue`.
local ir = require "klineage.kir.ir"
local launch = require "klineage.kir.launch"

local M = {}

local IND = "  "

local function decl(type_, name)
  if type_:sub(-1) == "*" then return type_ .. name end
  return type_ .. " " .. name
end

local SIMPLE = { let = true, assign = true, expr = true, discard = true, ["return"] = true, ["break"] = true,
  ["continue"] = true }

local function simple_text(s, ctx)
  if s.s == "let" then
    if s.init then return decl(s.type, s.name) .. " = " .. ir.text(s.init) .. ";" end
    return decl(s.type, s.name) .. ";"
  end
  if s.s == "assign" then
    if s.op == "++" or s.op == "--" then return ir.text(s.lhs) .. s.op .. ";" end
    return ir.text(s.lhs) .. " " .. s.op .. " " .. ir.text(s.rhs) .. ";"
  end
  if s.s == "expr" then return ir.text(s.e) .. ";" end
  if s.s == "discard" then return ir.text({ k = "cast", type = "void", a = s.e }) .. ";" end
  if s.s == "return" then return M.leave(ctx) end
  return s.s .. ";"
end

-- What `return` becomes: the next point of a thread's points (at their
-- loop's level), the end of a persistent block's turn, or the return.
function M.leave(ctx)
  if ctx.in_points and ctx.loop_depth == 0 then return "continue;" end
  if ctx.persist then return "goto " .. ctx.persist .. ";" end
  return "return;"
end

local function step_text(s)
  return (simple_text(s, {}):gsub(";$", ""))
end

local emit_stmts

local function emit_stmt(s, out, ind, ctx)
  local pad = string.rep(IND, ind)
  if SIMPLE[s.s] then
    out[#out + 1] = pad .. simple_text(s, ctx)
  elseif s.s == "pragma" then
    out[#out + 1] = pad .. s.text
  elseif s.s == "raw" then
    out[#out + 1] = pad .. s.text
  elseif s.s == "block" then
    out[#out + 1] = pad .. "{"
    emit_stmts(s.body, out, ind + 1, ctx)
    out[#out + 1] = pad .. "}"
  elseif s.s == "if" then
    local head = pad .. "if (" .. ir.text(s.cond) .. ")"
    if not s.else_ and #s.then_ == 1 and SIMPLE[s.then_[1].s] then
      out[#out + 1] = head .. " " .. simple_text(s.then_[1], ctx)
      return
    end
    out[#out + 1] = head .. " {"
    emit_stmts(s.then_, out, ind + 1, ctx)
    if s.else_ then
      if #s.else_ == 1 and s.else_[1].s == "if" then
        local inner = {}
        emit_stmt(s.else_[1], inner, ind, ctx)
        inner[1] = pad .. "} else " .. inner[1]:sub(#pad + 1)
        for _, l in ipairs(inner) do out[#out + 1] = l end
        return
      end
      out[#out + 1] = pad .. "} else {"
      emit_stmts(s.else_, out, ind + 1, ctx)
    end
    out[#out + 1] = pad .. "}"
  elseif s.s == "for" then
    local head = pad .. "for (" .. (s.init and simple_text(s.init, ctx) or ";") .. " " .. ir.text(s.cond) .. "; " .. step_text(s.step) .. ")"
    local inner = { in_points = ctx.in_points, loop_depth = ctx.loop_depth + 1, persist = ctx.persist }
    if #s.body == 1 and SIMPLE[s.body[1].s] then
      out[#out + 1] = head .. " " .. simple_text(s.body[1], inner)
      return
    end
    out[#out + 1] = head .. " {"
    emit_stmts(s.body, out, ind + 1, inner)
    out[#out + 1] = pad .. "}"
  else
    error("kir.emit: unknown statement kind " .. tostring(s.s))
  end
end

emit_stmts = function(stmts, out, ind, ctx)
  for _, s in ipairs(stmts) do emit_stmt(s, out, ind, ctx) end
end

-- The coordinate's expression: the schedule's, or the kernel's own form.
function M.axis_expr(a)
  if a.expr then return a.expr end
  local bid = ir.member("blockIdx", a.dim)
  if a.cast then bid = { k = "cast", type = a.cast, a = bid } end
  -- one thread along the axis: threadIdx is 0 there
  if not a.block or (a.block.k == "num" and a.block.v == "1") then return bid end
  return ir.bin("+", ir.bin("*", bid, ir.copy(a.block)), ir.member("threadIdx", a.dim))
end

local function point_code(k, out, ind, ctx)
  local pad = string.rep(IND, ind)
  for _, a in ipairs(k.axes) do
    out[#out + 1] = pad .. decl(a.type, a.name) .. " = " .. ir.text(M.axis_expr(a)) .. ";"
  end
  local body = k.body
  if k.guard and k.guard.form == "return" then
    out[#out + 1] = pad .. "if (" .. ir.text(k.guard.cond) .. ") " .. M.leave(ctx)
  elseif k.guard then
    body = { { s = "if", cond = k.guard.cond, then_ = k.body } }
  end
  emit_stmts(body, out, ind, ctx)
end

local function kernel_code(k, out, ind, persist)
  local pad = string.rep(IND, ind)
  local ctx = { in_points = false, loop_depth = 0, persist = persist }
  -- (persist emits the uniform lets before its loop: its bound reads them)
  if not persist then emit_stmts(k.uniform, out, ind, ctx) end
  emit_stmts(k.pre or {}, out, ind, ctx)
  local points = k.schedule and k.schedule.points
  if points then
    out[#out + 1] = pad .. "for (int " .. points.var .. " = 0; " .. points.var .. " < " .. points.count .. "; ++" ..
      points.var .. ") {"
    point_code(k, out, ind + 1, { in_points = true, loop_depth = 0, persist = persist })
    out[#out + 1] = pad .. "}"
  else
    point_code(k, out, ind, ctx)
  end
end

function M.body_text(k)
  local out = { "{" }
  local fold = k.schedule and k.schedule.persist
  if fold then
    -- persist: the body is one turn of the block's loop over the unfolded grid
    local persist = require "klineage.kir.primitives.persist"
    local var, axis, label = persist.var(fold.dim), ir.axis_on(k, fold.dim), persist.NEXT
    emit_stmts(k.uniform, out, 1, { in_points = false, loop_depth = 0 })
    -- the turn's index steps: the axis's type without its const
    local vtype = tostring(axis.type or "int"):gsub("^const%s+", ""):gsub("%s+const$", "")
    out[#out + 1] = string.format("%sfor (%s %s = blockIdx.%s; %s < %s; %s += gridDim.%s) {", IND, vtype, var,
      fold.dim, var, ir.text(fold.count), var, fold.dim)
    out[#out + 1] = IND .. IND .. "{"
    kernel_code(k, out, 3, label)
    out[#out + 1] = IND .. IND .. "}"
    out[#out + 1] = IND .. label .. ":"
    out[#out + 1] = IND .. IND .. (fold.barrier and "__syncthreads();" or ";")
    out[#out + 1] = IND .. "}"
  else
    kernel_code(k, out, 1, nil)
  end
  out[#out + 1] = "}"
  return table.concat(out, "\n")
end

function M.emit(k)
  local prefix = k.prefix
  if k.launch.changed then
    local p, why = launch.rewrite(prefix, k.launch)
    if not p then return nil, why end
    prefix = p
  end
  local header, hwhy = require("klineage.kir.primitives.bound").header(k)
  if not header then return nil, hwhy end
  -- file-scope declarations a schedule adds (split_reduce's slots across blocks)
  local globals = k.globals and #k.globals > 0 and (table.concat(k.globals, "\n") .. "\n") or ""
  return prefix .. globals .. header .. M.body_text(k) .. k.suffix
end

return M
