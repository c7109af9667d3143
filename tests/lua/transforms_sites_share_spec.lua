-- What `klineage transforms KERNEL.cu` offers beyond decoration (issue
-- 31): the share of kernels with a structural site (a transform of the
-- family "structural", or a kernel IR schedule) and with a schedule site,
-- over the held-out suite and the seven lineages' first versions. Lifting
-- and legality only: nothing here is judged, timed or tuned.
package.path = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$") .. "/?.lua;" .. package.path
local support = require "kir_support"
local listing = require("klineage.cli.commands.transforms").listing

-- { name = { schedule = n, structural = n, decoration = n, kernels } }
local function families(list)
  local out = {}
  for _, t in ipairs(list) do
    local l = listing(t.text)
    local f = { schedule = 0, structural = 0, decoration = 0, kernels = l.kernels }
    for _, s in ipairs(l.sites) do
      if f[s.family] == nil then fail("%s: a site of no known family: %s (%s)", t.name, tostring(s.family), s.transform) end
      f[s.family] = f[s.family] + 1
    end
    out[t.name] = f
  end
  return out
end

local function share(fams, pred)
  local n, hit = 0, 0
  for _, f in pairs(fams) do
    n = n + 1
    if pred(f) then hit = hit + 1 end
  end
  return hit / n, hit, n
end

local function structural(f) return f.structural + f.schedule > 0 end
local function scheduled(f) return f.schedule > 0 end

local function first_versions()
  local out = {}
  for _, t in ipairs(support.extra()) do
    if t.name:match("/v0") then out[#out + 1] = t end
  end
  return out
end

describe("structural sites", function()
  it("on at least 80% of the held-out suite's kernels, schedule sites alone included", function()
    local fams = families(support.tasks())
    local s, hit, n = share(fams, structural)
    expect(n):equals(35)
    check(s >= 0.8, "a structural site on %d of %d suite kernels", hit, n)
    s, hit, n = share(fams, scheduled)
    check(s >= 0.8, "a schedule site on %d of %d suite kernels", hit, n)
  end)

  it("on every lineage's first version; a schedule site on each whose kernels lift", function()
    local fams = families(first_versions())
    local s, hit, n = share(fams, structural)
    expect(n):equals(7)
    check(s == 1, "a structural site on %d of %d first versions", hit, n)
    local _, sched = share(fams, scheduled)
    -- reduction's v0 is a shared-memory tree already: the IR refuses both its kernels
    expect(sched):at_least(6)
    for name, f in pairs(fams) do
      if f.schedule == 0 then
        expect(#f.kernels):at_least(1)
        for _, k in ipairs(f.kernels) do
          check(not k.lifted and k.why:find("already scheduled", 1, true), "%s: %s lifts (or says %s) yet has no schedule site",
            name, k.fn, tostring(k.why))
        end
      end
    end
  end)

  it("a decoration site alone does not count: launch_bounds is decoration, coalesce structural", function()
    local f = families({ { name = "matmul", text = "// @kl launch grid(cdiv(n, 256)) block(256)\n"
      .. "extern \"C\" __global__ void k(int n, float *y) { __shared__ float s[256]; s[threadIdx.x] = 0; __syncthreads(); y[0] = s[0]; }\n" } })
    expect(f.matmul.schedule):equals(0)
    expect(f.matmul.structural):equals(0)
    expect(f.matmul.decoration):at_least(1)
    expect(structural(f.matmul)):is_false()
  end)
end)

describe("klineage transforms KERNEL.cu", function()
  it("lists schedule sites with the primitive, its parameters and its reason; a kernel that does not lift says why in one line", function()
    local root = support.root
    local out, code = klineage("transforms", root .. "/gpu/workloads/bfs/v0_naive.cu", "--json")
    expect(code):equals(0)
    local json = require("cjson").decode(out)
    expect(#json.kernels):equals(2)
    local map
    for _, s in ipairs(json.sites) do
      if s.family == "schedule" and s.key == "bfs:map(block=256,x=v)" then map = s end
    end
    expect(map):exists()
    expect(map.primitive):equals("map")
    expect(map.params.x):equals("v")
    expect(map.params.block[1]):equals(256)
    expect(map.check):matches("^legal: every point keeps one thread")
    out, code = klineage("transforms", root .. "/gpu/workloads/reduction/v0_interleaved.cu")
    expect(code):equals(0)
    expect(out):contains("\nreduce: no schedule sites: uses __shared__ memory: already scheduled\n")
    check(not out:find("\n%d+%s+schedule%s"), "a schedule site listed for reduction: %s", out)
  end)
end)
