-- A static model of a schedule's gain, read from kir.analyze of the kernel
-- before and after it: global loads weighed by how a warp touches them
-- (thread-x stride 0 or 1 coalesced, anything else a sector a thread), the
-- reuse a stage or register_tile captures divided out. It does not yet
-- weigh parallelism against the device's SMs nor occupancy (issue 31). It ranks rows; it
-- never keeps a kernel alone where the backend times kernels (the gate does).
--   schedule_rank.predict(before, after, text) -> { speedup, why }
--   schedule_rank.rank(rows) -> rows, best predicted first (prior x speedup)
--   schedule_rank.prior(row) -> 1: the hook for schedule skills' evidence (issue 33)
--   schedule_rank.CONFIDENCE: how a prediction weighs beside skills' evidence
local kir = require "klineage.kir"

local M = {}

-- Beside skills (skill_rows.rank), a prediction weighs as a skill of this
-- confidence: the model counts loads, not latency or occupancy, and errs
-- by tens of percent.
M.CONFIDENCE = "low"
M.STRIDED_COST = 4 -- a strided warp load moves about 4x the bytes it uses (32 B sectors, 8 B of them used)
M.DEFAULT_TILE = 4 -- the reuse a stage or register_tile gives when its text names no size

local function coalesced(stride)
  return stride == nil or stride == "0" or stride == "1"
end

-- The arrays of the unscheduled kernel: the global ones (a stage adds shared ones).
local function global_arrays(a)
  local g = {}
  for _, acc in ipairs(a.accesses or {}) do
    if acc.array and acc.array ~= "?" then g[acc.array] = true end
  end
  return g
end

local function analyzed(kernel)
  local ok, a = pcall(kir.analyze, kernel)
  if ok and type(a) == "table" then return a end
end

-- The weighted global accesses of one kernel: a strided one costs
-- STRIDED_COST, one a tile stages is shared by `tile` threads.
local function access_cost(a, globals, tile)
  local cost, strided, reused = 0, 0, 0
  for _, acc in ipairs(a.accesses or {}) do
    if globals[acc.array] and (acc.kind == "load" or acc.kind == "store") then
      local c = coalesced(acc.stride_x) and 1 or M.STRIDED_COST
      if c > 1 then strided = strided + 1 end
      if tile and acc.kind == "load" and acc.reuse and #acc.reuse > 0 then c, reused = c / tile, reused + 1 end
      cost = cost + c
    end
  end
  return math.max(cost, 0.25), strided, reused
end

-- before, after: kir kernels; text: the sequence; reasons: its legality reasons (they name the tile).
function M.predict(before, after, text, reasons)
  local ab, aa = analyzed(before), analyzed(after)
  if not ab or not aa then return { speedup = 1, why = "no prediction: the analysis failed" } end
  local tile
  if text:find("stage") or text:find("register_tile") then
    for _, r in ipairs(reasons or {}) do tile = tile or tonumber(tostring(r):match("tiles? of (%d+)")) end
    tile = tile or M.DEFAULT_TILE
  end
  local globals = global_arrays(ab)
  local b, bs = access_cost(ab, globals)
  local a, as, ar = access_cost(aa, globals, tile)
  local s = b / a
  if text:find("vectorize") then s = s * 1.1 end -- fewer, wider load instructions
  local why = string.format("global accesses weigh %.2f before and %.2f after: strided %d -> %d%s",
    b, a, bs, as, ar > 0 and string.format(", %d loads shared by a tile of %d", ar, tile) or "")
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
