-- A schedule is a list of primitive applications, written as text:
--   "map(x=j, block=32x8) coarsen(4) split_reduce(warp) unroll(4)"
--
--   schedule.parse(text) -> { { name, params } } | nil, reason
--   schedule.apply(k, text_or_list) -> k', log | nil, reason, log
--     log = { { name, params, legal, reason } } one entry per application
--   schedule.candidates(k) -> { { name, params, text, reason } } the legal ones
--   schedule.sequences(k [, depth [, limit]]) -> { { text, kernel, reasons } } legal sequences
local M = {}

M.ORDER = { "unflatten", "map", "register_tile", "stage", "split_reduce", "unroll", "coarsen", "vectorize", "privatize", "scan", "segscan",
  "bound", "persist" }

function M.primitive(name)
  for _, n in ipairs(M.ORDER) do
    if n == name then return require("klineage.kir.primitives." .. name) end
  end
end

local function value(v)
  v = v:match("^%s*(.-)%s*$")
  if v:match("^%d+$") then return math.tointeger(tonumber(v)) end
  if v:match("^%d+x%d+") then
    local l = {}
    for n in v:gmatch("%d+") do l[#l + 1] = math.tointeger(tonumber(n)) end
    return l
  end
  return v
end

function M.parse(text)
  if type(text) ~= "string" then return nil, "a schedule is text" end
  local out, pos = {}, 1
  while true do
    local s, e, name, args = text:find("^%s*([%a_][%w_]*)%s*(%b())", pos)
    if not s then break end
    if not M.primitive(name) then return nil, "no primitive named " .. name .. " (" .. table.concat(M.ORDER, ", ") .. ")" end
    local params = {}
    for part in args:sub(2, -2):gmatch("[^,]+") do
      local key, v = part:match("^%s*([%a_][%w_]*)%s*=%s*(.-)%s*$")
      if key then
        params[key] = value(v)
        if key == "block" and type(params[key]) == "number" then params[key] = { params[key] } end
      elseif part:match("%S") then
        params[#params + 1] = value(part)
      end
    end
    out[#out + 1] = { name = name, params = params }
    pos = e + 1
  end
  if text:sub(pos):match("%S") then return nil, "cannot read the schedule from: " .. text:sub(pos) end
  return out
end

-- Params back to text, the way parse reads them.
function M.text(name, params)
  local parts = {}
  for i, v in ipairs(params) do parts[i] = tostring(v) end
  local keys = {}
  for key in pairs(params) do if type(key) == "string" then keys[#keys + 1] = key end end
  table.sort(keys)
  for _, key in ipairs(keys) do
    local v = params[key]
    if type(v) == "table" then
      local t = {}
      for i, n in ipairs(v) do t[i] = tostring(n) end
      v = table.concat(t, "x")
    end
    parts[#parts + 1] = key .. "=" .. tostring(v)
  end
  return name .. "(" .. table.concat(parts, ",") .. ")"
end

function M.apply(k, steps)
  if type(steps) == "string" then
    local parsed, why = M.parse(steps)
    if not parsed then return nil, why, {} end
    steps = parsed
  end
  local log = {}
  for _, st in ipairs(steps) do
    local p = M.primitive(st.name)
    if k.schedule.persist then
      -- the fold renamed the block index everywhere: nothing builds on it
      log[#log + 1] = { name = st.name, params = st.params, legal = false, reason = "persist goes last" }
      return nil, M.text(st.name, st.params) .. ": persist goes last", log
    end
    local ok, nk, reason = pcall(p.apply, k, st.params)
    if not ok then nk, reason = nil, st.name .. " failed: " .. tostring(nk):gsub("\n.*", "") end
    log[#log + 1] = { name = st.name, params = st.params, legal = nk ~= nil, reason = reason }
    if not nk then return nil, M.text(st.name, st.params) .. ": " .. tostring(reason), log end
    k = nk
  end
  return k, log
end

-- Every sequence of legal applications, breadth first, each primitive at
-- most once a sequence, up to `depth` steps and `limit` sequences:
-- { { text = "a(...) b(...)", kernel, reasons = { ... } } }.
function M.sequences(k, depth, limit)
  depth, limit = depth or 2, limit or 200
  local out, frontier = {}, { { text = "", kernel = k, reasons = {}, used = {} } }
  for _ = 1, depth do
    local next_frontier = {}
    for _, node in ipairs(frontier) do
      for _, c in ipairs(M.candidates(node.kernel)) do
        if not node.used[c.name] and #out < limit then
          local nk = M.primitive(c.name).apply(node.kernel, c.params)
          if nk then
            local used = { [c.name] = true }
            for n in pairs(node.used) do used[n] = true end
            local reasons = { table.unpack(node.reasons) }
            reasons[#reasons + 1] = c.reason
            local item = { text = (node.text == "" and "" or node.text .. " ") .. c.text, kernel = nk, reasons = reasons, used = used }
            out[#out + 1] = item
            next_frontier[#next_frontier + 1] = item
          end
        end
      end
    end
    frontier = next_frontier
  end
  for _, item in ipairs(out) do item.used = nil end
  return out
end

function M.candidates(k)
  local out = {}
  if k.schedule.persist then return out end -- it goes last
  for _, name in ipairs(M.ORDER) do
    local p = M.primitive(name)
    for _, params in ipairs(p.candidates(k)) do
      local ok, nk, reason = pcall(p.apply, k, params)
      if ok and nk then out[#out + 1] = { name = name, params = params, text = M.text(name, params), reason = reason } end
    end
  end
  return out
end

return M
