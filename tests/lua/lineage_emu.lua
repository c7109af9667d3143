-- Every version of one lineage (KL_WORKLOAD, set by ctest) passes the
-- gate's correctness stage on the emu backend at the workload's test sizes,
-- against v0, over three seeds. Versions the emulator cannot run (inline
-- PTX, tensor cores, ...) must say so with the verdict "unsupported".
local name = assert(os.getenv("KL_WORKLOAD"), "set KL_WORKLOAD to a workload under gpu/workloads")
local gate = require "klineage.gate"
local w = assert(require("klineage.workload").load(name))
local ctx = assert(require("klineage.context").new { backend = "emu", timeout = 600, journal = false })

describe(name .. " on emu", function()
  for _, file in ipairs(w.lineage) do
    it(file, function()
      local r = gate.evaluate(ctx, { file = w.dir .. "/" .. file }, w)
      if r.verdict == "unsupported" then
        it.skip(file, "unsupported on emu: " .. tostring((r.stages.correct or {}).message))
      elseif r.verdict ~= "ok" then
        local s = r.stages.correct or r.stages.compile or {}
        fail("%s: %s", r.verdict, tostring(s.message))
      else
        expect(r.stages.correct.sizes):at_least(2)
      end
    end)
  end
end)
ctx:close()
