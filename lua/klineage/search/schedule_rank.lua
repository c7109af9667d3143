-- A static model of a schedule's gain, read from kir.analyze of the kernel
-- before and after it: global loads weighed by how a warp touches them
-- (thread-x stride 0 or 1 coalesced, anything else a sector a thread), the
-- reuse a stage or register_tile captures divided out. It ranks rows; it
-- never keeps a kernel alone where the backend times kernels (the gate does).
--   schedule_rank.predict(before, after, text) -> { speedup, why }
--   schedule_rank.rank(rows) -> rows, best predicted first (prior x speedup)
--   schedule_rank.prior(row) -> 1: the hook for schedule skills' evidence (issue 33)
local kir = require "klineage.kir"

local M = {}

M.STRIDED_COST = 4 -- a strided warp load moves about 4x the bytes it uses (32 B sectors, 8 B of them used)
M.DEFAULT_TILE = 4 -- the reuse a stage or register_tile gives when its text names no size

local function coalesced(stride)
  return stride == nil or stride == "0" or stride == "1"
end

-- The weighted global loads of one kernel, with the words that explain them.
local function load_cost(kernel, text)
  local ok, a = pcall(kir.analyze, kernel)
  if not ok or type(a) ~= "table" then return nil end
  local tile = tonumber((text or ""):match("tile=(%d+)") or (text or ""):match("stage%((%d+)")) or M.DEFAULT_TILE
  local reuses = (text or ""):find("stage") or (text or ""):find("register_tile")
  local cost, strided, reused = 0, 0, 0
  for _, acc in ipairs(a.accesses or {}) do
    if acc.kind == "load" then
      local c = coalesced(acc.stride_x) and 1 or M.STRIDED_COST
      if c > 1 then strided = strided + 1 end
      if reuses and acc.reuse and #acc.reuse > 0 then c, reused = c / tile, reused + 1 end
      cost = cost + c
    end
  end
  return math.max(cost, 0.25), strided, reused
end

function M.predict(before, after, text)
  local b, bs = load_cost(before)
  local a, as, ar = load_cost(after, text)
  if not b or not a then return { speedup = 1, why = "no prediction: the analysis failed" } end
  local s = b / a
  if text:find("vectorize") then s = s * 1.1 end -- fewer, wider load instructions
  local why = string.format("global loads weigh %.2f before and %.2f after (strided loads %d -> %d%s)",
    b, a, bs, as, ar > 0 and string.format(", %d reused through a tile", ar) or "")
  return { speedup = s, why = why }
end

function M.prior(_row) return 1 end

function M.rank(rows)
  for i, r in ipairs(rows) do r.rank_index = i end
  table.sort(rows, function(x, y)
    local px, py = M.prior(x) * x.predicted.speedup, M.prior(y) * y.predicted.speedup
    if px ~= py then return px > py end
    return x.rank_index < y.rank_index
  end)
  return rows
end

return M
