-- The property test of one transform (KL_TRANSFORM, set by ctest) over
-- every lineage file of every workload: at each site it finds, the
-- transform's edit gives a kernel that passes the gate's correctness stage
-- on emu (against the workload's v0, several seeds, every test size), and
-- the inverse edit at the counterpart site gives one that passes too.
-- Equivalence is the gate's judgement, not the text's; the text round trip
-- is counted and printed. A site whose edit fails, or whose result has no
-- counterpart, fails the test: find must offer only what apply/undo can do.
-- A transform that changes results within floating-point error
-- (t.changes_results: fast_math) may be `wrong` at a workload's tolerance,
-- as fast_math is on raytrace's hit indices on the H200 too: that is the
-- gate's verdict on the candidate, not a fault of the transform, so it is
-- counted and the inverse must still give a kernel that passes. Likewise
-- a transform whose point is the register budget (t.changes_resources:
-- launch_bounds) may leave a block that fits on no multiprocessor
-- (launch_error, the device's verdict too: softmax v8 without its bound).
-- KL_SITES picks the sites (tests/lua/site_sample.lua): "sample" for
-- `make test`, "rest" for `make test-long` (label long), "all" by default.
local name = assert(os.getenv("KL_TRANSFORM"), "set KL_TRANSFORM to a transform under lua/klineage/transforms")
local transforms = require "klineage.transforms"
local gate = require "klineage.gate"
local workload = require "klineage.workload"
local t = assert(transforms.get(name))
local ctx = assert(require("klineage.device.context").new { backend = "emu", timeout = 600, journal = false })
local here = debug.getinfo(1, "S").source:sub(2):match("^(.*)/[^/]*$")
local only = os.getenv("KL_WORKLOAD")
local sample = dofile(here .. "/site_sample.lua")
local mode = sample.mode()

local function judge(w, text, label, tolerated)
  local r = gate.evaluate(ctx, { file = label, source = text, kernel = w.kernel, label = label }, w, { profile = false })
  if r.verdict == "ok" or r.verdict == "unsupported" or (tolerated and tolerated[r.verdict]) then return r.verdict end
  local s = r.stages.correct or r.stages.compile or {}
  return nil, string.format("%s: %s", r.verdict, tostring(s.message))
end

local names = {}
for _, n in ipairs(require("kl.fs").list(here .. "/../../gpu/workloads")) do
  if not only or n == only then names[#names + 1] = n end
end
table.sort(names)
-- Every site of the transform over the lineages, in order (workload name,
-- lineage, source), each with its workload and marked whether the sample
-- takes it (per direction: tests/lua/site_sample.lua).
local function all_sites()
  local list, by_dir = {}, {}
  for _, wname in ipairs(names) do
    local w = workload.load(wname)
    for _, file in ipairs(w and w.lineage or {}) do
      local path = w.dir .. "/" .. file
      local src = read_file(path)
      local facts = require("klineage.transforms.lib.aliasing").facts(w)
      for _, site in ipairs(transforms.sites(src, { names = { name }, facts = facts })) do
        local e = { w = w, wname = wname, site = site, file = file, path = path, src = src }
        list[#list + 1] = e
        by_dir[site.direction] = by_dir[site.direction] or {}
        table.insert(by_dir[site.direction], e)
      end
    end
  end
  for _, entries in pairs(by_dir) do
    for i in pairs(sample.pick(#entries)) do entries[i].picked = true end
  end
  return list
end

local found, total, roundtrips, outside, unlaunchable = 0, 0, 0, 0, 0
describe(name .. " over the lineages on emu (" .. mode .. ")", function()
  for _, e in ipairs(all_sites()) do
    found = found + 1
    local w, site, src, path = e.w, e.site, e.src, e.path
    if sample.keep(mode, e.picked == true) then
      it(string.format("%s/%s %s %s", e.wname, e.file, site.direction, site.key), function()
        local out, f = transforms.run(site, site.params)
        if not out then fail("%s", tostring(f)) end
        local v, why = judge(w, out, path .. " (" .. site.direction .. " " .. site.key .. ")",
                             { wrong = t.changes_results, launch_error = t.changes_resources })
        if not v then fail("after %s: %s", site.direction, why) end
        if v == "wrong" then outside = outside + 1 end
        if v == "launch_error" then unlaunchable = unlaunchable + 1 end
        if v == "unsupported" then it.skip("", "the emulator cannot run it") end
        local back_site = transforms.counterpart(site, out)
        if not back_site then fail("the result has no counterpart site with key %s", site.key) end
        local back, bf = transforms.run(back_site, back_site.params)
        if not back then fail("the inverse failed: %s", tostring(bf)) end
        total = total + 1
        if back == src then roundtrips = roundtrips + 1 else
          local v2, why2 = judge(w, back, path .. " (inverse of " .. site.direction .. " " .. site.key .. ")")
          if not v2 then fail("after the inverse: %s", why2) end
        end
        expect(back_site.key):equals(site.key)
      end)
    end
  end
  if only then
    it.skip("finds at least one site in the lineages", "KL_WORKLOAD limits the test to " .. only)
  else
    -- over every lineage, whichever part of the sites this run checks
    it("finds at least one site in the lineages", function() expect(found):at_least(1) end)
  end
end)
io.stdout:write(string.format("# %s (%s): %d of the %d sites checked, %d whose inverse gave the file back byte for byte, %d outside the workload's tolerance, %d that no block of could launch\n",
  name, mode, total, found, roundtrips, outside, unlaunchable))
ctx:close()
