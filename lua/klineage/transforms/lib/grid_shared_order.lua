-- Whether a block-uniform region may run again for the next item without a
-- race on shared memory: its last shared-memory access, followed through
-- the calls that receive a __shared__ array, is followed by a
-- __syncthreads, or its first is preceded by one. Conservative: an access the scan cannot place (a shared
-- name used other than as `buf[...]` or as a call argument, two calls in
-- one statement, a barrier inside a branch) answers no.
local L = require "klineage.transforms.lib.grid_loops"

local M = {}

local function shared_names(unit)
  local out = {}
  for d in unit:walk({ "decl" }) do
    local ok, info = pcall(function() return d:declaration() end)
    if ok and info and info.shared then
      for _, x in ipairs(info.declarators) do out[x.name.text] = true end
    end
  end
  return out
end

local function functions(unit)
  local out = {}
  for _, g in ipairs(unit:functions()) do
    if g:body() and not g:info().prototype then
      out[g:name()] = out[g:name()] or {}
      table.insert(out[g:name()], g)
    end
  end
  return out
end

-- Every use of a shared name in node is `name[...]` or a call argument.
local function no_alias(node, shared)
  for id in node:walk({ "ident" }) do
    if shared[id:text()] then
      local p = id:parent()
      local sub = p.kind == "index" and p:field("object") and p:field("object").id == id.id
      local arg = p.kind == "call" and p:field("callee") and p:field("callee").id ~= id.id
      if not sub and not arg then return false end
    end
  end
  return true
end

local tail

-- "none" (no shared access), true (ends with a barrier after it) or false.
local function statement(ctx, st, shared, depth)
  if L.norm(st:text()) == "__syncthreads();" then return true end
  local touches, calls, barrier = {}, {}, false
  for id in st:walk({ "ident" }) do if shared[id:text()] then touches[#touches + 1] = id end end
  for c in st:walk({ "call" }) do
    local callee = c:field("callee")
    local name = callee and callee.kind == "ident" and callee:text()
    if name and name:match("^__syncthreads") then barrier = true
    elseif name and ctx.fns[name] then calls[#calls + 1] = { node = c, name = name } end
  end
  if #touches == 0 and #calls == 0 and not barrier then return "none" end
  if barrier or #calls ~= 1 or depth > 8 or #ctx.fns[calls[1].name] ~= 1 then return false end
  local c, g = calls[1].node, ctx.fns[calls[1].name][1]
  local args = { table.unpack(c:children(), 2) }
  local direct = {}
  for k, a in ipairs(args) do if a.kind == "ident" and shared[a:text()] then direct[a.id] = k end end
  for _, id in ipairs(touches) do if not direct[id.id] then return false end end
  local inner, ps = {}, g:params()
  for k0, v in pairs(ctx.global) do inner[k0] = v end
  for _, k in pairs(direct) do
    if not ps[k] or not ps[k].name then return false end
    inner[ps[k].name] = true
  end
  if not no_alias(g:body(), inner) then return false end
  return tail(ctx, L.statements(g:body()), inner, depth + 1)
end

function tail(ctx, list, shared, depth)
  local a, b, step = #list, 1, -1
  if ctx.forward then a, b, step = 1, #list, 1 end
  for j = a, b, step do
    local v = statement(ctx, list[j], shared, depth)
    if v ~= "none" then return v end
  end
  return "none"
end

-- Whether the statements `list` end with a barrier after their last shared
-- access, or begin with one before their first: either way one separates
-- an item's last access from the next item's first.
function M.separated(unit, list)
  local ctx = { fns = functions(unit), global = shared_names(unit) }
  for _, st in ipairs(list) do if not no_alias(st, ctx.global) then return false end end
  if tail(ctx, list, ctx.global, 0) ~= false then return true end
  ctx.forward = true
  return tail(ctx, list, ctx.global, 0) ~= false
end

return M
