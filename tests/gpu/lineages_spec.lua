-- Every version of every lineage passes the gate's correctness stage on the
-- GPU at every size its `@kl requires` allows: the test sizes (with their
-- non-powers of two) and the bench sizes, three seeds each, against v0.
-- No timing here: `klineage bench` measures.
local gate = require "klineage.gate"
local workload = require "klineage.workload"

local root = require("kl.host").home .. "/gpu/workloads"
local names = {}
for dir in io.popen("ls '" .. root .. "'"):lines() do
  local h = io.open(root .. "/" .. dir .. "/workload.lua")
  if h then h:close() names[#names + 1] = dir end
end
table.sort(names)

local pool = assert(require("klineage.worker.pool").new { backend = "cuda", timeout = 600 })
for _, name in ipairs(names) do
  describe(name .. " on the GPU", function()
    local w = assert(workload.load(name))
    for _, file in ipairs(w.lineage) do
      it(file, function()
        local r = gate.evaluate({ file = w.dir .. "/" .. file }, w, { pool = pool, profile = false })
        if r.verdict ~= "ok" then
          local s = r.stages.correct or r.stages.compile or {}
          fail("%s: %s", r.verdict, tostring(s.message))
        end
        local bench = false
        for _, t in ipairs(r.stages.correct.trials) do
          if t.size:match("^bench") then bench = true end
        end
        -- a version its own requires keeps off every bench size says so here
        if not bench then fail("no bench size was allowed (skipped: %d sizes)", #r.stages.correct.skipped) end
      end)
    end
  end)
end
pool:close()
