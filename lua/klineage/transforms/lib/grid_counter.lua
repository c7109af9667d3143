-- persistent_grid's work-counter idiom (raytrace v5): the kernel's last
-- statement is
--     for (;;) {
--       int base = 0;
--       if (lane == 0) base = atomicAdd(&work[0], 32);
--       base = __shfl_sync(MASK, base, 0);
--       if (base >= N) break;
--       int r = base + lane;
--       if (r < N) S
--     }
-- with `lane = threadIdx.x % 32` declared before. Undo gives one thread per
-- item: `int r = blockIdx.x * B + threadIdx.x; if (r >= N) return; S`.
local support = require "klineage.transforms.support"
local L = require "klineage.transforms.lib.grid_loops"

local M = {}

local function is_if(n, cond)
  return n.kind == "if" and not n:field("else") and L.norm(n:field("cond"):text()) == cond
end

local function count(node, name)
  local c = 0
  for id in node:walk({ "ident" }) do if id:text() == name then c = c + 1 end end
  return c
end

function M.find(unit, fn, launch)
  local body = fn:body()
  local stmts = L.statements(body)
  local f = stmts[#stmts]
  if not f or f.kind ~= "for" or f:field("init") or f:field("cond") or f:field("step") then return nil end
  local loop = f:field("body")
  local s = loop and loop.kind == "compound" and L.statements(loop) or {}
  if #s ~= 6 then return nil end
  local lane, lane_stmt
  for k = 1, #stmts - 1 do
    local d = stmts[k].kind == "decl_stmt" and L.single_decl(stmts[k])
    local v = d and L.norm(d.value:text())
    if v == "threadIdx.x%32" or v == "threadIdx.x&31" then lane, lane_stmt = d.name, stmts[k] end
  end
  local d1 = lane and L.single_decl(s[1])
  if not d1 or L.norm(d1.value:text()) ~= "0" then return nil end
  local base = d1.name
  if not is_if(s[2], lane .. "==0") then return nil end
  local cnt = L.norm(s[2]:field("then"):text()):match("^" .. base .. "=atomicAdd%(&([%w_]+%[0%]),32%);$")
  local mask = L.norm(s[3]:text()):match("^" .. base .. "=__shfl_sync%(([%w_]+)," .. base .. ",0%);$")
  if not cnt or not mask or s[4].kind ~= "if" or s[4]:field("else") or s[4]:field("then").kind ~= "break" then return nil end
  local c4 = s[4]:field("cond")
  if c4.op ~= ">=" or c4:field("lhs"):text() ~= base then return nil end
  local n = c4:field("rhs"):text()
  local d5 = L.single_decl(s[5])
  if not d5 or L.norm(d5.value:text()) ~= base .. "+" .. lane then return nil end
  local r = d5.name
  if not is_if(s[6], r .. "<" .. L.norm(n)) then return nil end
  local S = s[6]:field("then")
  local nl = L.launch_bound(unit, fn, n)
  if not nl or L.item_local(unit, S) or L.read_only(S, r) or count(fn:body(), "blockIdx") > 0
      or count(fn:body(), "gridDim") > 0 then
    return nil
  end
  for _, p in ipairs(fn:params()) do if p.name and p.name ~= "" and L.read_only(S, p.name) then return nil end end
  local j = L.jumps(S)
  if #j.returns > 0 or j.nested_return or #j.breaks > 0 or #j.continues > 0 then return nil end
  local old = L.norm(launch.grid.text)
  if unit:define(old) and L.other_uses(unit, old, launch.grid.begin, launch.grid["end"]) > 0 then return nil end
  local v = L.const_value(unit, launch.grid.text)
  return { loop = f, lane = lane, lane_stmt = lane_stmt, r = r, type = d5.type, S = S, bound = n,
    grid = "cdiv(" .. nl .. ", " .. launch.block.text .. ")", counter = cnt:match("^[%w_]+"), mask = mask,
    k = v and v % 132 == 0 and v // 132 or nil,
    check = string.format("the kernel ends in a for (;;) whose warps take 32 items at a time from %s by one atomicAdd and __shfl_sync, then run `if (%s < %s)` on code with no barrier, warp collective, blockIdx/gridDim or jump out; the grid becomes cdiv(%s, %s)",
      cnt, r, n, nl, launch.block.text) }
end

function M.undo(site)
  local c, unit = site.counter, site.unit
  local text = tostring(unit)
  local fb, fe = L.span(c.loop)
  local ind = L.indent_at(text, fb)
  local fn
  for _, g in ipairs(support.functions(unit, { global = true })) do if g:name() == site.fn then fn = g end end
  local from = fb
  -- The lane exists for the fetch only: drop it (and the comments up to the loop) when nothing else reads it.
  local lane_uses = #L.uses(fn:body(), c.lane) - #L.uses(c.loop, c.lane) - 1  -- its declarator
  local stmts = L.statements(fn:body())
  if lane_uses == 0 and stmts[#stmts - 1] and stmts[#stmts - 1].id == c.lane_stmt.id then from = L.span(c.lane_stmt) end
  local body
  if c.S.kind == "compound" and #L.statements(c.S) > 0 then
    local list = L.statements(c.S)
    local bb = L.span(list[1])
    local _, be = L.span(list[#list])
    body = L.shift(text:sub(bb, be), #ind - #L.indent_at(text, bb))
  else
    local sb, se = L.span(c.S)
    body = text:sub(sb, se)
  end
  local new = string.format("%s %s = blockIdx.x * %s + threadIdx.x;\n%sif (%s >= %s) return;\n%s%s",
    c.type, c.r, site.launch.block.text, ind, c.r, c.bound, ind, body)
  if #L.uses(fn:body(), c.counter) == #L.uses(c.loop, c.counter) then new = new .. "\n" .. ind .. "(void)" .. c.counter .. ";" end
  local edits = { { begin = from, ["end"] = fe, text = new },
                  { begin = site.launch.grid.begin, ["end"] = site.launch.grid["end"], text = c.grid } }
  local old = L.norm(site.launch.grid.text)
  local drop = unit:define(old) and L.drop_define(unit, old, site.launch.grid.begin, site.launch.grid["end"])
  if drop then edits[#edits + 1] = drop end
  local dm = unit:define(c.mask) and L.drop_define(unit, c.mask, from, fe)
  if dm then edits[#edits + 1] = dm end
  table.sort(edits, function(a, b) return a.begin < b.begin end)
  return support.edit(site, edits)
end

return M
