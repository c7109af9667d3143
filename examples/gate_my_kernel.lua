-- Run your own kernel through the gate, against a workload's baseline.
--
--   klineage run examples/gate_my_kernel.lua sgemm path/to/my_sgemm.cu
--
-- The kernel must have the workload's entry name and argument list, and its
-- own `// @kl launch ...` line (see gpu/workloads/sgemm/*.cu). This script
-- is the gate's Lua API in a few lines: copy it and change what you need
-- (the seeds, the metrics, what gets printed).
local workload = require "klineage.workload"
local gate = require "klineage.gate"

local name, file = arg[1], arg[2]
if not name or not file then
  io.stderr:write("usage: klineage run examples/gate_my_kernel.lua WORKLOAD KERNEL.cu\n")
  return 2
end
local w = assert(workload.load(name))
-- The run context: cuda where a GPU answers, else emu (test sizes, no
-- timing); the record goes into a run folder under $KLINEAGE_RUNS.
local ctx = assert(require("klineage.device.context").new { workloads = { w } })
local record = gate.evaluate(ctx, { file = file }, w, { seeds = { 11, 22, 33 }, metrics = ctx.backend == "cuda" })
ctx:close()

print(string.format("%s: %s (%s backend)", file, record.verdict, ctx.backend))
for _, stage in ipairs({ "compile", "correct", "profile", "metrics" }) do
  local s = record.stages[stage]
  if s then print(string.format("  %-8s %s %s", stage, s.verdict, s.message or "")) end
end
local p = record.stages.profile
if p and p.median_ms then
  print(string.format("  %.4f ms, %.1f GFLOP/s, %.1f GB/s", p.median_ms, p.gflops, p.gbps))
end
return record.verdict == "ok" and 0 or 1
