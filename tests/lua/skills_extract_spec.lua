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

  it("says what it could not read", function()
    local _, p = extract.folders({ runs .. "/none" })
    expect(#p):equals(1)
    expect(p[1].path):contains("none")
  end)
end)
