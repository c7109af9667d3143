-- The steps a lineage claims pay at its bench size (workload.lua's
-- `monotone`, measured and explained in its README) do: the gate's
-- interleaved compare (ABAB in one worker) finds each version faster than
-- the one before it, with intervals that do not overlap.
local name = assert(os.getenv("KL_WORKLOAD"), "set KL_WORKLOAD to a workload under gpu/workloads")
local gate = require "klineage.gate"
local w = assert(require("klineage.workload").load(name))
local ctx = assert(require("klineage.device.context").new { backend = "cuda", timeout = 600, journal = false })
local index = {}
for i, f in ipairs(w.lineage) do index[f] = i end

describe(name .. " is monotone where its README says so", function()
  if not w.monotone or #w.monotone == 0 then
    return it.skip(name, "workload.lua claims no monotone step")
  end
  for _, file in ipairs(w.monotone) do
    local before = w.lineage[index[file] - 1]
    it(before .. " -> " .. file, function()
      local c, err = gate.compare(ctx, { file = w.dir .. "/" .. before }, { file = w.dir .. "/" .. file }, w,
        { rounds = 4, block = 3 })
      check(c, "compare: %s", tostring(err))
      io.write(string.format("      %s: %.3fx [%.3f, %.3f], %s\n", file, c.speedup, c.ci[1], c.ci[2], c.outcome))
      check(c.outcome == "faster", "%s: %s against %s (%.3fx)", file, c.outcome, before, c.speedup)
    end)
  end
end)
ctx:close()
