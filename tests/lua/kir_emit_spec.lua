-- lift -> emit with the identity schedule -> the gate on emu against the
-- task's C reference at every test size. KL_KIR=sample (make test) gates
-- the first task of each family (by name), KL_KIR=rest (label long)
-- the others; all (the default, by hand) every task.
package.path = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") .. "/?.lua;" .. package.path
local support = require "kir_support"
local sample = dofile(support.root .. "/tests/lua/site_sample.lua")
local kir = require "klineage.kir"

local mode = sample.mode("KL_KIR")
local tasks = support.tasks()
local picked = {}
do
  local by_family = {}
  for _, t in ipairs(tasks) do
    by_family[t.family] = by_family[t.family] or {}
    table.insert(by_family[t.family], t.name)
  end
  for _, list in pairs(by_family) do
    for i in pairs(sample.pick(#list, 1)) do picked[list[i]] = true end
  end
end

-- matmul and the lineages' first versions, each lifted as the kernel its
-- workload launches: the sample takes those the suite has no kernel like
-- (a file of several kernels, device functions called opaquely), the rest
-- the others.
describe("identity schedule of matmul and the lineages' first versions", function()
  for _, t in ipairs(support.extra()) do
    local k = kir.lift(t.text, { kernel = support.workload(t).kernel })
    local unlike = #kir.lift_all(t.text) > 1 or t.text:find("__device__", 1, true) ~= nil
    if k and sample.keep(mode, unlike) then
      it(t.name .. ": the emitted kernel passes against its workload's baseline", function()
        local ok, r = support.gate(t, assert(kir.emit(k)), "identity")
        if not ok then fail("%s", r) end
        expect(ok):is_true()
      end)
    end
  end
end)

describe("identity schedule through the gate on emu", function()
  for _, t in ipairs(tasks) do
    if sample.keep(mode, picked[t.name] == true) then
      it(t.name .. ": the emitted kernel passes against the reference", function()
        local k, why = kir.lift(t.text)
        if not k then fail("does not lift: %s", why) end
        local ok, r = support.gate(t, assert(kir.emit(k)), "identity")
        if not ok then fail("%s", r) end
        expect(r.stages.reference.verdict):equals("ok")
      end)
    end
  end
end)
