-- Observations from walk journals: a real emu walk of transpose, inverted.
-- Each recorded step becomes the optimization from the simpler version to
-- the expert's, with the simpler kernel's facts as `facts`, and is named
-- by the transforms that explain it (or a template when none does).
local extract = require "klineage.skills.extract"

local runs = scratch_dir()
do
  local out, code = klineage("walk", "transpose", "--backend", "emu", "--quiet", "--json", "--policy", "recorded",
    "--journal", runs, "--run", "r")
  if code ~= 0 then fail("klineage walk exited %s: %s", tostring(code), out) end
end
local obs, problems = extract.folders({ runs .. "/r" })

local function find(skill, to)
  for _, o in ipairs(obs) do
    if o.skill == skill and (not to or o.to == to) then return o end
  end
end

describe("extract", function()
  it("turns every recorded step into observations, with no problem", function()
    expect(#problems):equals(0)
    local steps = {}
    for _, o in ipairs(obs) do steps[o.evidence.key] = true end
    local n = 0
    for _ in pairs(steps) do n = n + 1 end
    expect(n):equals(6) -- transpose v6 -> v0
  end)

  it("inverts the step: the optimization starts at the simpler kernel and gives the expert's", function()
    local o = find("smem_padding", "v2_padded.cu")
    if not o then fail("no smem_padding observation for v1 -> v2") end
    expect(o.from):equals("v1_smem_tile.cu")
    expect(o.transform):equals("smem_padding")
    expect(o.facts["shared.tile.dims"]):equals("32x32")
    expect(o.facts_after["shared.tile.dims"]):equals("32x33")
    expect(o.lineage):equals("transpose")
    expect(o.evidence.kind):equals("walk_step")
  end)

  it("on emu carries no effect: not measured, no outcome", function()
    for _, o in ipairs(obs) do
      expect(o.measured):equals(false)
      expect(o.outcome):is_nil()
      expect(o.speedup):is_nil()
    end
  end)

  it("names an unexplained step a template, with the step's hunks as its text", function()
    local t = find("template-transpose-v1_smem_tile")
    if not t then fail("no template observation for v0 -> v1") end
    expect(t.transform):is_nil()
    expect(t.template.after):contains("__shared__")
    expect(t.template.before:find("__shared__", 1, true)):is_nil()
  end)

  it("takes resources from NVRTC or the gate's compile: registers are facts of both kernels", function()
    local o = find("smem_padding", "v2_padded.cu")
    expect(math.type(o.facts.registers)):equals("integer")
    expect(math.type(o.facts_after.registers)):equals("integer")
  end)

  it("is deterministic and deduplicated: the same folder twice gives the same observations once", function()
    local again = extract.folders({ runs .. "/r", runs .. "/r" })
    expect(#again):equals(#obs)
    for i, o in ipairs(again) do expect(o.evidence.key):equals(obs[i].evidence.key) end
  end)

  it("takes a kernel's resources from the compile another folder recorded, never from a fresh compile, in any order", function()
    -- ptxas is not reproducible at a register limit (conv2d's v8 under
    -- __launch_bounds__(256, 2) spilled 4 bytes in one compile and none in
    -- the next), so a kernel a run judged without evaluating it takes the
    -- resources some journal recorded. A run with no evaluation records:
    local bare = runs .. "/bare"
    assert(os.execute(string.format("mkdir -p '%s' && cp -r '%s/r/src' '%s/' && grep -v '\"kind\": *\"evaluation\"' '%s/r/journal.jsonl' | sed 's/\"run\": *\"r\"/\"run\":\"bare\"/g' > '%s/journal.jsonl'",
      bare, runs, bare, runs, bare)))
    local recorded = 0
    for _, r in ipairs(assert(require("klineage.store.journal").read(runs .. "/r/journal.jsonl"))) do
      if r.kind == "evaluation" and r.stages and r.stages.compile and r.stages.compile.functions then recorded = recorded + 1 end
    end
    expect(recorded):at_least(1)
    -- NVRTC answers with resources no recorded compile has
    local real = package.loaded["kl.nvrtc"]
    local odd = { registers = 255, smem = 0, stack = 0, spill_stores = 99, spill_loads = 99 }
    package.loaded["kl.nvrtc"] = setmetatable({ compile = function(_, o)
      return { arch = o and o.arch or "sm_90", functions = setmetatable({}, { __index = function() return odd end }) }
    end }, { __index = real })
    local ok, a = pcall(extract.folders, { bare, runs .. "/r" })
    local ok2, b = pcall(extract.folders, { runs .. "/r", bare })
    package.loaded["kl.nvrtc"] = real
    if not ok then error(a, 0) end
    if not ok2 then error(b, 0) end
    local checked, fresh = 0, 0
    for _, list in ipairs({ a, b }) do
      for _, o in ipairs(list) do
        if o.evidence.run == "bare" then
          local mine
          for _, x in ipairs(obs) do if x.evidence.key == o.evidence.key and x.skill == o.skill then mine = x end end
          if not mine then fail("no observation of r for %s %s", o.skill, o.evidence.key) end
          for _, side in ipairs({ { o.facts, mine.facts, o.evidence.from }, { o.facts_after, mine.facts_after, o.evidence.candidate } }) do
            if side[1].registers == 255 then
              -- the walk's first kernel: no journal evaluated it, so it alone compiles here
              fresh = fresh + 1
            else
              expect(side[1].registers):equals(side[2].registers)
              expect(side[1].spill_loads):equals(side[2].spill_loads)
              checked = checked + 1
            end
          end
        end
      end
    end
    expect(checked):at_least(2 * 6)
    expect(fresh):at_most(checked)
  end)

  it("says what it could not read", function()
    local _, p = extract.folders({ runs .. "/none" })
    expect(#p):equals(1)
    expect(p[1].path):contains("none")
  end)
end)
