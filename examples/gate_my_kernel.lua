-- Run your own kernel through the gate, against a workload's baseline.
--
--   klineage run examples/gate_my_kernel.lua sgemm path/to/my_sgemm.cu
--
-- The kernel must have the workload's entry name and argument list, and its
-- own `// @kl launch ...` line (see gpu/workloads/sgemm/*.cu). This script
-- is the gate's Lua API in twenty lines: copy it and change what you need
-- (the seeds, the backend, the metrics, what gets printed).
local workload = require "klineage.workload"
local gate = require "klineage.gate"
local backends = require "klineage.backends"

local name, file = arg[1], arg[2]
if not name or not file then
  io.stderr:write("usage: klineage run examples/gate_my_kernel.lua WORKLOAD KERNEL.cu\n")
  return 2
end
local w = assert(workload.load(name))
local pool, backend = assert(backends.pool())          -- cuda where a GPU answers, else emu
local record = gate.evaluate({ file = file }, w, {
  pool = pool,
  seeds = { 11, 22, 33 },
  metrics = backend == "cuda",                          -- CUPTI metrics need a GPU
  sizes = backend == "emu" and "test" or nil,           -- emu: small sizes, no timing
})
pool:close()

print(string.format("%s: %s (%s backend)", file, record.verdict, backend))
for _, stage in ipairs({ "compile", "correct", "profile", "metrics" }) do
  local s = record.stages[stage]
  if s then print(string.format("  %-8s %s %s", stage, s.verdict, s.message or "")) end
end
local p = record.stages.profile
if p and p.median_ms then
  print(string.format("  %.4f ms, %.1f GFLOP/s, %.1f GB/s", p.median_ms, p.gflops, p.gbps))
end
return record.verdict == "ok" and 0 or 1
