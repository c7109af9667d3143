-- A token bucket: at most `rpm` requests a minute, with bursts of `burst`.
--
--   ratelimit.new{ rpm = n, burst = 1, clock = kl.host.clock, sleep = kl.proc.sleep }
--       -> bucket; rpm = nil means no limit
--   bucket:take() -> seconds waited (0 when a token was there)
--
-- burst defaults to 1: requests are spread evenly, 60/rpm seconds apart,
-- which no server-side window (fixed or sliding) can count as a burst.
local M = {}

local Bucket = {}
Bucket.__index = Bucket

function M.new(opts)
  opts = opts or {}
  local rpm = opts.rpm
  if rpm ~= nil and (type(rpm) ~= "number" or rpm <= 0) then error("ratelimit.new: rpm must be a positive number", 2) end
  local burst = opts.burst or 1
  if type(burst) ~= "number" or burst < 1 then error("ratelimit.new: burst must be >= 1", 2) end
  local clock = opts.clock or require("kl.host").clock
  return setmetatable({
    rate = rpm and rpm / 60 or nil, capacity = burst, tokens = burst,
    clock = clock, sleep = opts.sleep or require("kl.proc").sleep, last = clock(),
  }, Bucket)
end

function Bucket:refill()
  local now = self.clock()
  self.tokens = math.min(self.capacity, self.tokens + (now - self.last) * self.rate)
  self.last = now
end

function Bucket:take()
  if not self.rate then return 0 end
  self:refill()
  local waited = 0
  if self.tokens < 1 then
    waited = (1 - self.tokens) / self.rate
    self.sleep(waited)
    self:refill()
    -- a sleep that returned early (or a fake clock) still pays for the token
    if self.tokens < 1 then self.tokens = 1 end
  end
  self.tokens = self.tokens - 1
  return waited
end

return M
