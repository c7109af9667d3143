-- bench/gate.lua: what one gate cycle costs, and how close the gate's
-- timer gets a bandwidth-bound kernel to the measured copy ceiling.
--   klineage run bench/gate.lua [--backend cuda|fake]
-- Prints a table, then "figure-name: value unit" lines.
local host = require "kl.host"
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local context = require "klineage.device.context"

local backend = arg[1] == "--backend" and arg[2] or nil
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local w = assert(workload.load(here .. "/gate/saxpy64"))
local ctx = assert(context.new { backend = backend, journal = false })
local pool, name = ctx.pool, ctx.backend
local ceilings = ctx:ceilings()

local cold_dir = os.tmpname()
os.remove(cold_dir)
local function cycle(cache_dir)
  -- A fresh source each cold cycle (a comment with the time) defeats the
  -- cache on purpose; the warm cycle repeats the same source.
  local src = assert(io.open(here .. "/gate/saxpy64/saxpy.cu")):read("a")
  if cache_dir == "cold" then src = src .. string.format("\n// cold %.9f\n", host.clock()) end
  local t0 = host.clock()
  local r = gate.evaluate(ctx, { source = src, file = "saxpy.cu" }, w, { max_seconds = 0.5, seeds = { 1, 2, 3 } })
  return host.clock() - t0, r
end

cycle("warm") -- the first call also starts the worker and compiles the generator
local cold, rc = cycle("cold")
local warm, rw = cycle("warm")
local p = rw.stages.profile or {}
print(string.format("gate bench on %s (%s)", (pool:device(1) or {}).name or "?", name))
print(string.format("%-34s %12s", "what", "value"))
print(string.format("%-34s %10.3f s   (%s)", "cycle, cold compile", cold, rc.verdict))
print(string.format("%-34s %10.3f s   (%s)", "cycle, cached compile", warm, rw.verdict))
print(string.format("%-34s %10.3f ms", "compile stage, cold", rc.stages.compile.ms))
print(string.format("%-34s %10.3f ms", "compile stage, cached", rw.stages.compile.ms))
print(string.format("%-34s %10.3f ms", "correct stage (9 trials), cached", rw.stages.correct.ms or 0))
print(string.format("%-34s %10.3f ms", "profile stage, cached", rw.stages.profile and rw.stages.profile.ms or 0))
if p.median_ms then
  local ci = p.ci_ms and string.format("  [%.2f, %.2f]", p.ci_ms[1] * 1e3, p.ci_ms[2] * 1e3) or ""
  print(string.format("%-34s %10.2f us%s n=%d", "saxpy 64 MiB, L2 flushed", p.median_ms * 1e3, ci, #p.samples_ms))
  print(string.format("%-34s %10.1f GB/s", "saxpy 64 MiB bandwidth", p.gbps))
end
if ceilings then
  print(string.format("%-34s %10.1f GB/s", "measured copy ceiling", ceilings.copy_gbps))
  print(string.format("%-34s %10.1f %%", "saxpy / copy ceiling", p.gbps / ceilings.copy_gbps * 100))
end
print(string.format("gate-cycle-cold: %.3f s", cold))
print(string.format("gate-cycle-cached: %.3f s", warm))
if p.median_ms then print(string.format("saxpy-64mib-time: %.2f us", p.median_ms * 1e3)) end
if p.gbps then print(string.format("saxpy-64mib-bandwidth: %.1f GB/s", p.gbps)) end
if ceilings then print(string.format("copy-ceiling: %.1f GB/s", ceilings.copy_gbps)) end
ctx:close()
