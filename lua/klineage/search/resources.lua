-- The compiler's word on candidate kernels before the gate judges them:
-- ptxas's registers, spills and static shared memory through NVRTC (no
-- GPU, no gate cycle: nothing runs), and the occupancy they allow at the
-- launch's block. The compiles run in child processes at once, through the
-- cubin cache, so the gate's own compile of a candidate judged later is a
-- hit.
--
--   resources.of(kernels, opts) -> { report... } one a kernel, in order
--     kernels = { { source, launch = the name of its own `@kl launch(NAME)`
--                   line, nil for the file's default } }
--     opts = { arch, workload (the launch resolved at its bench size),
--              kernel (the entry's name), compile (tests: a function(source)
--              -> kl.nvrtc result | nil, failure, run here) }
--     report = { ok = true, registers, spill_stores, smem, threads,
--                occupancy, active_blocks, limited_by }
--            | { ok = false, why } (a compile error, or no launch to read)
--   resources.factor(occupancy) -> the model's factor for it (<= 1)
--   resources.block(kernel, workload) -> threads, dynamic smem | nil, why:
--     the kernel's launch ({ source, launch }) at the workload's bench size
local annotations = require "klineage.workload.annotations"

local M = {}

-- Below the knee, a kernel's warps cannot hide its latency and the model
-- scales its gain by (occupancy / KNEE) ^ EXPONENT; at or above it, no
-- claim. Set from the development suite's tune part on the H100
-- (2026-12-07 evals): attention_scores' register tile went from 0.125 to
-- 0.5 under __launch_bounds__ and ran 1.85x faster ((0.5 / 0.125) ^ 0.45
-- = 1.87); batched_gemm's went from 1 to 0.44 and ran 0.88x (0.94 here).
M.KNEE, M.EXPONENT = 0.5, 0.45

function M.factor(occupancy)
  if type(occupancy) ~= "number" or occupancy >= M.KNEE then return 1 end
  if occupancy <= 0 then return 0 end
  return (occupancy / M.KNEE) ^ M.EXPONENT
end

local function first_failure(f)
  local msg = type(f) == "table" and (f.message or f.verdict) or tostring(f)
  return (tostring(msg):gsub("\n.*", ""))
end

function M.block(item, w)
  if type(w) ~= "table" or w.run then return nil, "the spec launches by its own run()" end
  local ok, res, f = pcall(annotations.resolve, item.source, w.params or {}, { file = "schedule.cu", kernel = item.launch })
  if not ok then return nil, tostring(res) end
  if not res or not res.geometry then return nil, first_failure(f or (res and res.why)) end
  return res.geometry.threads, res.geometry.smem
end

local function report(result, item, opts)
  local fn = type(result.functions) == "table" and result.functions[opts.kernel]
  if not fn then return { ok = false, why = "the compiler reports no function " .. tostring(opts.kernel) } end
  local threads, dynamic = M.block(item, opts.workload)
  if not threads then return { ok = false, why = dynamic } end
  local o = require("kl.occupancy").compute({ arch = opts.arch or "sm_90", registers = fn.registers, smem = fn.smem,
                                             barriers = fn.barriers, threads = threads, dynamic_smem = dynamic or 0 })
  if not o then return { ok = false, why = "no occupancy rules for " .. tostring(opts.arch) } end
  return { ok = true, registers = fn.registers, spill_stores = fn.spill_stores, smem = fn.smem, threads = threads,
           occupancy = o.occupancy, active_blocks = o.active_blocks, limited_by = o.limited_by }
end

function M.of(kernels, opts)
  opts = opts or {}
  local cache = require "klineage.device.cache"
  local jobs, out = {}, {}
  if not opts.compile then
    for i, k in ipairs(kernels) do jobs[i] = cache.spawn_compile(k.source, { arch = opts.arch or "sm_90", name = "schedule.cu" }) end
  end
  for i, k in ipairs(kernels) do
    local res, f
    if opts.compile then res, f = opts.compile(k.source) else res, f = cache.finish(jobs[i]) end
    out[i] = res and report(res, k, opts) or { ok = false, why = "does not compile: " .. first_failure(f) }
  end
  return out
end

return M
