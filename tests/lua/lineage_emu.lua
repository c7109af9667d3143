-- Every version of one lineage (KL_WORKLOAD, set by ctest) passes the
-- gate's correctness stage on the emu backend at the workload's test sizes,
-- against v0, over three seeds. Versions the emulator cannot run (inline
-- PTX, tensor cores, ...) must say so with the verdict "unsupported".
-- First, v0 itself agrees with the workload's reference.c at the test
-- sizes (gate/reference.lua); the versions' evaluations reuse that check.
-- KL_VERSIONS picks the versions (tests/lua/site_sample.lua): "sample" (v0,
-- the last, and the reference check) for `make test`, "rest" for `make
-- test-long` (label long), "all" by default.
local name = assert(os.getenv("KL_WORKLOAD"), "set KL_WORKLOAD to a workload under gpu/workloads")
local gate = require "klineage.gate"
local kernel = require "klineage.gate.kernel"
local reference = require "klineage.gate.reference"
local w = assert(require("klineage.workload").load(name))
local ctx = assert(require("klineage.device.context").new { backend = "emu", timeout = 600, journal = false })
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local sample = dofile(here .. "/site_sample.lua")
local mode = sample.mode("KL_VERSIONS")
local picked = sample.pick(#w.lineage, sample.VERSIONS)

describe(name .. " on emu", function()
  if sample.keep(mode, true) then it(w.lineage[1] .. " agrees with reference.c", function()
    if not w.reference then fail("the spec declares no C reference (reference = \"reference.c\")") end
    local base, bstage = kernel.prepare(kernel.baseline_of(w), w, ctx.arch)
    if not base then fail("v0 does not compile: %s", tostring(bstage.message)) end
    local s = reference.stage(ctx, base, w)
    if s.verdict ~= "ok" then fail("%s: %s", s.verdict, tostring(s.message)) end
    expect(s.sizes):at_least(2)
  end) end
  for i, file in ipairs(w.lineage) do
    if sample.keep(mode, picked[i] == true) then it(file, function()
      local r = gate.evaluate(ctx, { file = w.dir .. "/" .. file }, w)
      if r.verdict == "unsupported" then
        it.skip(file, "unsupported on emu: " .. tostring((r.stages.correct or {}).message))
      elseif r.verdict ~= "ok" then
        local ref = r.stages.reference
        local s = (ref and ref.verdict ~= "ok" and ref.verdict ~= "skipped" and ref) or r.stages.correct or r.stages.compile or {}
        fail("%s: %s", r.verdict, tostring(s.message))
      else
        expect(r.stages.reference.verdict):equals("ok")
        expect(r.stages.correct.sizes):at_least(2)
      end
    end) end
  end
end)
ctx:close()
