-- Golden cases of every transform: tests/transforms/<transform>/<case>/
-- holds in.cu, expected.cu and case.lua = { direction = "apply" | "undo",
-- key = the site's key (default: the only site in that direction),
-- params = apply's params, roundtrip = false when the inverse does not give
-- in.cu back byte for byte (the reason in `why`), alias = the workload's
-- aliasing declaration as pairs of argument positions ({}: never in place;
-- absent: unknown) }. The case runs the site
-- on in.cu and must give expected.cu; then the counterpart site of
-- expected.cu, run, must give in.cu. Every transform has at least one
-- case in each direction.
local transforms = require "klineage.transforms"
local fs = require "kl.fs"
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local dir = here .. "/../transforms"

local function case_names(path)
  local names = {}
  for _, n in ipairs(fs.list(path) or {}) do
    local st = fs.stat(path .. "/" .. n)
    if st and st.type == "directory" then names[#names + 1] = n end
  end
  table.sort(names)
  return names
end

describe("transform registry", function()
  it("has at least 16 transforms, each with an intent sentence", function()
    local all = transforms.all()
    expect(#all):at_least(16)
    for _, t in ipairs(all) do
      if #t.intent < 20 then fail("%s: the intent '%s' is no sentence", t.name, t.intent) end
    end
  end)
  it("refuses unknown and odd names with bad_input", function()
    for _, name in ipairs({ "nope", "../gate", "init", "support", "" }) do
      local t, f = transforms.get(name)
      expect(t):equals(nil)
      expect(f.verdict):equals("bad_input")
    end
  end)
end)

for _, name in ipairs(transforms.names()) do
  describe(name, function()
    local cases = case_names(dir .. "/" .. name)
    local seen = {}
    for _, case in ipairs(cases) do
      local cdir = dir .. "/" .. name .. "/" .. case
      it(case, function()
        local spec = dofile(cdir .. "/case.lua")
        seen[spec.direction] = true
        local input, want = read_file(cdir .. "/in.cu"), read_file(cdir .. "/expected.cu")
        -- alias: the workload's declaration by argument position ({}: never
        -- in place); absent, unknown (transforms/lib/aliasing.lua)
        local facts = spec.alias ~= nil and { alias = { pairs = spec.alias } } or nil
        local sites = transforms.sites(input, { names = { name }, direction = spec.direction, facts = facts })
        local site
        for _, s in ipairs(sites) do
          if spec.key == nil or s.key == spec.key then
            if site and spec.key == nil then fail("%d %s sites; name one with key", #sites, spec.direction) end
            site = s
          end
        end
        if not site then fail("no %s site%s", spec.direction, spec.key and (" with key " .. spec.key) or "") end
        expect(type(site.check)):equals("string")
        local out, f = transforms.run(site, spec.params)
        if not out then fail("%s", tostring(f)) end
        if os.getenv("KL_WRITE_GOLDEN") == "1" then write_file(cdir .. "/expected.cu", out) end
        expect(out):equals(want)
        local back_site = transforms.counterpart(site, out)
        if not back_site then fail("expected.cu has no %s site with key %s", site.direction == "apply" and "undo" or "apply", site.key) end
        local back, bf = transforms.run(back_site, back_site.params)
        if not back then fail("the inverse failed: %s", tostring(bf)) end
        if spec.roundtrip ~= false then expect(back):equals(input) end
      end)
    end
    it("has golden cases in both directions", function()
      if not (seen.apply and seen.undo) then
        fail("tests/transforms/%s needs a case of each direction (apply: %s, undo: %s)", name, tostring(seen.apply), tostring(seen.undo))
      end
      expect(#cases):at_least(2)
    end)
  end)
end

describe("klineage transforms", function()
  it("lists every transform, and the sites in a kernel", function()
    local out, code = klineage("transforms")
    expect(code):equals(0)
    for _, name in ipairs(transforms.names()) do expect(out):matches("\n?" .. name .. " ") end
    local json
    out, code = klineage("transforms", "--json", "--direction", "undo", here .. "/../../gpu/workloads/sgemm/v7_double_buffer.cu")
    expect(code):equals(0)
    json = require("cjson").decode(out)
    local names = {}
    for _, s in ipairs(json.sites) do names[s.transform] = s.direction end
    expect(names.double_buffer):equals("undo")
    expect(names.schedule):is_nil() -- schedule sites only apply
  end)
  it("refuses a bad direction and a missing file with exit 2", function()
    local _, code = klineage("transforms", "--direction", "sideways")
    expect(code):equals(2)
    _, code = klineage("transforms", "/no/such/kernel.cu")
    expect(code):equals(2)
  end)
end)

-- Kernels that write through a pointer in ways a subscript read check could
-- miss: no transform that assumes a read-only pointer may offer it.
describe("hostile kernels", function()
  local cases = {
    member_store = [[
struct pair { float x, y; };
extern "C" __global__ void k(int n, pair *p, const float *q) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) p[i].x = q[i];
}]],
    paren_member_update = [[
struct pair { float x, y; };
extern "C" __global__ void k(int n, pair *p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) (p[i]).y += 1.0f;
}]],
    address_taken = [[
extern "C" __global__ void k(int n, float *p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&p[i], 1.0f);
}]],
    pointer_passed_on = [[
__device__ void put(float *d, int i) { d[i] = 0.0f; }
extern "C" __global__ void k(int n, float *p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) { float v = p[i]; put(p, i); (void)v; }
}]],
  }
  local names = {}
  for name in pairs(cases) do names[#names + 1] = name end
  table.sort(names)
  for _, name in ipairs(names) do
    it(name .. ": neither restrict nor ldg offers p", function()
      for _, s in ipairs(transforms.sites(cases[name], { names = { "restrict", "ldg" } })) do
        if s.key == "k:p" then fail("%s offers %s at k:p", s.transform, s.direction) end
      end
      expect(true):equals(true)
    end)
  end
end)
