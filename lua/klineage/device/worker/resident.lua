-- The modules a worker keeps loaded. A walk or an orchestrator judges
-- thousands of candidates in one worker; each loaded module holds device
-- memory (cuda) or a mapped shared object (emu), so at most `limit` stay,
-- and the least recently used one is closed first. The engine loads a
-- candidate and its baseline again in every evaluation, so one evaluation
-- never finds its own modules gone.
--
--   resident.new(limit, close) -> set       close(value) frees a module
--   set:get(id) -> value | nil               (marks it used)
--   set:put(id, value)                       (closes what falls out)
--   set:count() -> n
local M = {}

local Set = {}
Set.__index = Set

function M.new(limit, close)
  return setmetatable({ limit = limit, close = close, values = {}, order = {} }, Set)
end

local function touch(self, id)
  for i, k in ipairs(self.order) do
    if k == id then table.remove(self.order, i) break end
  end
  self.order[#self.order + 1] = id
end

function Set:get(id)
  local v = self.values[id]
  if v ~= nil then touch(self, id) end
  return v
end

function Set:put(id, value)
  local old = self.values[id]
  if old ~= nil and old ~= value then self.close(old) end
  self.values[id] = value
  touch(self, id)
  while #self.order > self.limit do
    local out = table.remove(self.order, 1)
    self.close(self.values[out])
    self.values[out] = nil
  end
end

function Set:count() return #self.order end

return M
