-- Every version of one lineage (KL_WORKLOAD, set by ctest) passes the
-- gate's correctness stage on the GPU at every size its `@kl requires`
-- allows: the test sizes (with their non-powers of two) and the bench
-- sizes, three seeds each, against v0. No timing here: `klineage bench`
-- measures.
local name = assert(os.getenv("KL_WORKLOAD"), "set KL_WORKLOAD to a workload under gpu/workloads")
local gate = require "klineage.gate"
local w = assert(require("klineage.workload").load(name))
local ctx = assert(require("klineage.device.context").new { backend = "cuda", timeout = 600, journal = false })

describe(name .. " on the GPU", function()
  for _, file in ipairs(w.lineage) do
    it(file, function()
      local r = gate.evaluate(ctx, { file = w.dir .. "/" .. file }, w, { profile = false })
      local ref = r.stages.reference
      local s = (ref and ref.verdict ~= "ok" and ref.verdict ~= "skipped" and ref) or r.stages.correct or r.stages.compile or {}
      check(r.verdict == "ok", "%s: %s", r.verdict, tostring(s.message))
      -- v0 was checked against reference.c, on this GPU, before anything else
      check(ref and ref.verdict == "ok", "the C reference check: %s", ref and tostring(ref.verdict) or "absent")
      local bench = false
      for _, t in ipairs(r.stages.correct.trials) do
        if t.size:match("^bench") then bench = true end
      end
      -- a version whose own requires keeps off every bench size says so here
      check(bench, "no bench size was allowed (skipped: %d sizes)", #r.stages.correct.skipped)
    end)
  end
end)
ctx:close()
