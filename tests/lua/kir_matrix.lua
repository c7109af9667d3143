-- The exhaustive matrix (ctest lua/kir_matrix_rest, label long): every
-- legal application kir.candidates lists for every held-out kernel (and
-- matmul and the lineages' first versions), and
-- the pairs of them in the primitives' order, and the first application
-- of each primitive folded by persist (two blocks along each dimension it
-- may take, so every block runs several turns), through the gate on emu
-- against the task's C reference at every test size. A primitive that
-- says "legal" must never give a kernel the gate refuses. Each kernel is
-- lifted with its workload, so the candidates are those the search offers
-- at the bench size (unflatten's block, stage's tile, the 8 x 8 register
-- tile shaped to it). KL_KIR_TASKS=a,b (by hand) runs those tasks alone.
package.path = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") .. "/?.lua;" .. package.path
local support = require "kir_support"
local kir = require "klineage.kir"

local PAIRS = os.getenv("KL_KIR_PAIRS") ~= "0"

-- the suite's tasks, then matmul and the lineages' first versions that lift,
-- each as the kernel its workload launches (judged against their own
-- workloads: the lineage's v0 is the baseline)
local kernels = support.tasks()
for _, t in ipairs(support.extra()) do kernels[#kernels + 1] = t end

local only
for n in (os.getenv("KL_KIR_TASKS") or ""):gmatch("[^,%s]+") do only = only or {}; only[n] = true end

for _, t in ipairs(kernels) do
  if only and not only[t.name] then goto next_task end
  describe(t.name, function()
    local w = support.workload(t)
    local name = w.kernel
    local k = kir.lift(t.text, { kernel = name, workload = w })
    if not k then return end
    local singles = kir.candidates(k)
    local schedules = {}
    for _, c in ipairs(singles) do schedules[#schedules + 1] = c.text end
    if PAIRS then
      -- the first application of each primitive, then the first legal one
      -- of each primitive after it in kir.PRIMITIVES' order
      local rank = {}
      for i, n in ipairs(kir.PRIMITIVES) do rank[n] = i end
      local firsts = {}
      for _, c in ipairs(singles) do if not firsts[c.name] then firsts[c.name] = c end end
      for _, c in pairs(firsts) do
        local k1 = kir.apply(k, c.text)
        local seen = {}
        for _, c2 in ipairs(kir.candidates(k1)) do
          if rank[c2.name] > rank[c.name] and not seen[c2.name] then
            seen[c2.name] = true
            schedules[#schedules + 1] = c.text .. " " .. c2.text
          end
        end
      end
    end
    -- persist after the unscheduled kernel and after each primitive's first form
    local firsts = { { text = "", kernel = k } }
    local got = {}
    for _, c in ipairs(singles) do
      if not got[c.name] then got[c.name] = true; firsts[#firsts + 1] = { text = c.text .. " ", kernel = kir.apply(k, c.text) } end
    end
    for _, f in ipairs(firsts) do
      for _, dim in ipairs({ "x", "y", "z" }) do
        local params = { dim = dim, blocks = 2 }
        if f.kernel and kir.primitive("persist").apply(f.kernel, params) then
          schedules[#schedules + 1] = f.text .. require("klineage.kir.schedule").text("persist", params)
        end
      end
    end
    table.sort(schedules)
    for _, s in ipairs(schedules) do
      it(s .. " passes the gate", function()
        local text, log = kir.schedule(t.text, s, { kernel = name })
        if not text then fail("refused on replay: %s", tostring(log)) end
        local ok, r = support.gate(t, text, s)
        if not ok then fail("%s\n%s", r, text) end
        expect(ok):is_true()
      end)
    end
  end)
  ::next_task::
end
