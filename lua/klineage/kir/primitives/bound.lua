-- bound(blocks=K): `__launch_bounds__(THREADS, K)` on the kernel, THREADS
-- its block's threads as the schedule leaves them: ptxas then keeps a
-- thread's registers within what K resident blocks a multiprocessor leave
-- it (65,536 / (THREADS x K) on sm_90), where a register tile can
-- otherwise take 200 and run one block an SM. It changes no result (a
-- hint to the register allocator, which may spill instead); whether it
-- pays is the compiler's report (registers, spills) and the gate's
-- measure. kir does not enumerate it: the search offers it where the
-- compiler says registers hold occupancy down (search/resources.lua).
local geometry = require "klineage.kir.geometry"
local ir = require "klineage.kir.ir"

local M = { name = "bound" }

M.MAX_THREADS_PER_SM = 2048 -- sm_90: K blocks of THREADS must fit together

-- The block's threads from the axes' constants, where K of them fit on a
-- multiprocessor | nil, why.
function M.threads(k, blocks)
  local n = 1
  for _, a in ipairs(k.axes) do
    local t = geometry.value(k, a.threads_ann or "1")
    if not t then return nil, "the block size along " .. a.dim .. " (" .. tostring(a.threads_ann) .. ") is not a constant of the kernel" end
    n = n * t
  end
  if n * blocks > M.MAX_THREADS_PER_SM then
    return nil, string.format("%d blocks of %d threads exceed the %d threads a multiprocessor holds", blocks, n, M.MAX_THREADS_PER_SM)
  end
  return n
end

-- Where the bound goes: after `__global__ void` (and any extern "C").
local HEADER = "^(.-__global__%s+void%s+)(.*)$"

function M.apply(k, p)
  local blocks = p.blocks or p[1]
  if math.type(blocks) ~= "integer" or blocks < 1 or blocks > 32 then return nil, "bound(blocks=K): K from 1 to 32" end
  if k.schedule.bound then return nil, "already bounded" end
  if k.header:find("__launch_bounds__", 1, true) then return nil, "the kernel has its own __launch_bounds__" end
  if not k.header:match(HEADER) then return nil, "the header does not read `__global__ void NAME(...)`" end
  local threads, why = M.threads(k, blocks)
  if not threads then return nil, why end
  local out = ir.clone(k)
  out.schedule.bound = blocks
  return out, string.format("legal: __launch_bounds__(%d, %d) asks ptxas for at most %d registers a thread so that %d blocks fit on a "
    .. "multiprocessor; results do not change (the compiler may spill instead, which its report shows)",
    threads, blocks, 65536 // (threads * blocks), blocks)
end

-- The header with the bound, at emit time (a primitive after this one may
-- have changed the block) | nil, why.
function M.header(k)
  if not k.schedule.bound then return k.header end
  local threads, why = M.threads(k, k.schedule.bound)
  if not threads then return nil, "bound(blocks=" .. k.schedule.bound .. "): " .. why end
  local head, rest = k.header:match(HEADER)
  return string.format("%s__launch_bounds__(%d, %d) %s", head, threads, k.schedule.bound, rest)
end

function M.candidates() return {} end

return M
