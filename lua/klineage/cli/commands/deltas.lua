-- klineage deltas DIR|WORKLOAD|lineages: each step of a lineage explained
-- as a schedule delta (klineage.search.schedule_delta), statically: no
-- GPU, no gate.
local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"
local files = require "klineage.base.files"
local term = require "klineage.base.term"

local FLAGS = { kernel = "string", json = "boolean", verbose = "boolean", no_kir = "boolean" }

local function value(x) return x == nil and "-" or tostring(x) end

local function status(d)
  if not d.explained then return "unexplained" end
  if d.how == "kir" then return "explained, reproduced by kir" end
  return "explained by signature"
end

local function print_lineage(out, r, verbose)
  out:write(string.format("%s: %d versions%s\n", term.text(r.name), r.total + 1, r.kernel and (", kernel " .. term.text(r.kernel)) or ""))
  for i, s in ipairs(r.steps) do
    local d = s.delta
    out:write(string.format("  %-3d %-44s %-30s %s\n", i, term.text(s.from .. " -> " .. s.to), status(d), term.text(d.text ~= "" and d.text or "-")))
    for _, u in ipairs(d.unexplained or {}) do out:write("        ! ", term.text(u), "\n") end
    local k = d.kir
    if d.explained and k then
      if k.reproduced then
        out:write("        kir: ", term.text(k.sequence), "\n")
      elseif k.lifted then
        local diffs = {}
        for _, x in ipairs(k.differs or {}) do
          diffs[#diffs + 1] = string.format("%s kir %s, expert %s", x.feature, value(x.kir), value(x.expert))
        end
        out:write("        kir: ", term.text(k.sequence or "-"), ": ",
          term.text(#diffs > 0 and ("differs: " .. table.concat(diffs, "; ")) or (k.why or "not reproduced")), "\n")
      end
    end
    if verbose then
      for _, c in ipairs(d.changed or {}) do
        out:write(string.format("        %-28s %-16s -> %-16s %s\n", term.text(c.feature), term.text(value(c.before)),
          term.text(value(c.after)), term.text(c.by or ("no: " .. tostring(c.why)))))
      end
    end
  end
  out:write(string.format("  %s: %d/%d steps explained, %d reproduced by kir (%d explained steps whose older version lifts)\n",
    term.text(r.name), r.explained, r.total, r.reproduced, r.lifted_explained))
end

local function json_of(r)
  local steps = {}
  for i, s in ipairs(r.steps) do
    steps[i] = { from = s.from, to = s.to, delta = require("klineage.search.schedule_delta").summary(s.delta) }
  end
  return { name = r.name, kernel = r.kernel, steps = steps, explained = r.explained, total = r.total,
           reproduced = r.reproduced, lifted_explained = r.lifted_explained }
end

-- What the argument names: { { name, versions, kernel, params }... }.
local function lineages_of(ref, a)
  local delta = require "klineage.search.schedule_delta"
  local function of_workload(w)
    local versions, f = delta.workload_versions(w)
    if not versions then args.usage_error("%s", f.message) end
    return { name = w.name, versions = versions, kernel = a.kernel or w.kernel, params = w.params }
  end
  if ref == "lineages" then
    local out = {}
    for _, name in ipairs(require("klineage.eval").LINEAGES) do out[#out + 1] = of_workload(require("klineage.cli").load_workload(name)) end
    return out
  end
  local st = require("kl.fs").stat(ref)
  if st and st.type == "directory" and not require("kl.fs").stat(ref .. "/workload.lua") then
    local versions, f = delta.folder_versions(ref)
    if not versions then args.usage_error("%s", f.message) end
    return { { name = ref, versions = versions, kernel = a.kernel } }
  end
  return { of_workload(require("klineage.cli").load_workload(ref)) }
end

return {
  flags = FLAGS,
  summary = "explain each step of a lineage as a schedule delta (kernel-IR primitives)",
  usage = "usage: klineage deltas DIR|WORKLOAD|lineages [--kernel NAME] [--verbose] [--no-kir] [--json]",
  help = [[
Reads each version of a lineage as a schedule signature (how threadIdx
indexes the global accesses, operands staged in shared memory, register
tiles, vector widths, how threads split and combine a reduction, scans,
atomics, warp votes, persistent grids, double buffering, unrolled loops;
read from the source, whatever its names) and explains each step k-1 -> k
as the kernel-IR primitives that account for every feature that changed:
map, unflatten, stage, register_tile, coarsen, vectorize, split_reduce,
scan, privatize, unroll (see "Kernel IR and schedules" in the README). A
step is explained when every changed feature is accounted for; otherwise
each feature no primitive makes is said with its reason ("double
buffering: no primitive"). Where version k-1 lifts into the kernel IR, the
delta's primitives are applied with kir and the emitted kernel's signature
is compared with version k's on the changed features: "reproduced by kir",
or what differs. Nothing is compiled or run.

DIR is a folder of versions v0.cu, v1.cu, ... (or v0_name.cu, ...; .cuh
too), in the order of their numbers, each with its one __global__ function
(--kernel names it otherwise) and, for the block shape, a `// @kl launch`
line. WORKLOAD is a workload name or spec (its lineage, kernel and sizes);
"lineages" is the seven lineages of gpu/workloads.

Prints a table per lineage, then
  schedule-deltas-explained: N/M steps
  schedule-deltas-reproduced-by-kir: R/L steps   (L: explained steps whose older version lifts)
Exit code: 0 when the steps were read (whatever was explained), 2 for bad
input (a folder with fewer than two versions, a file that cannot be read,
a version without the kernel).

options:
  --kernel NAME  the __global__ function of every version (default: the
                 workload's, or a file's only one)
  --verbose      every changed feature, before and after, and what accounts for it
  --no-kir       do not try the reproduction by kir
  --json         the lineages and their steps as JSON]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1, max = 1 })
    local delta = require "klineage.search.schedule_delta"
    local schedule = require "klineage.facts.schedule"
    local list = lineages_of(a.positional[1], a)
    -- every version must hold the kernel: bad input, before any step is read
    for _, l in ipairs(list) do
      for _, v in ipairs(l.versions) do
        local kernels = schedule.kernels(v.text)
        local ok = not l.kernel and #kernels == 1
        for _, k in ipairs(kernels) do if k == l.kernel then ok = true end end
        if not ok then
          args.usage_error("%s: %s", files.display(v.label), l.kernel and ("no __global__ function '" .. l.kernel .. "'")
            or (#kernels == 0 and "no __global__ function" or (#kernels .. " __global__ functions (" .. table.concat(kernels, ", ")
            .. "): name one with --kernel")))
        end
      end
    end
    local results, explained, total, reproduced, lifted = {}, 0, 0, 0, 0
    for _, l in ipairs(list) do
      local r = delta.lineage(l.versions, { kernel = l.kernel, params = l.params, kir = not a.no_kir })
      r.name, r.kernel = l.name, l.kernel
      results[#results + 1] = r
      explained, total = explained + r.explained, total + r.total
      reproduced, lifted = reproduced + r.reproduced, lifted + r.lifted_explained
    end
    if a.json then
      local out = { lineages = {}, explained = explained, total = total, reproduced = reproduced, lifted_explained = lifted }
      for i, r in ipairs(results) do out.lineages[i] = json_of(r) end
      print((require("klineage.base.stable_json").encode(out):gsub("\\/", "/")))
      return exit_codes.of("ok")
    end
    for _, r in ipairs(results) do print_lineage(io.stdout, r, a.verbose) end
    io.stdout:write(string.format("schedule-deltas-explained: %d/%d steps\n", explained, total))
    io.stdout:write(string.format("schedule-deltas-reproduced-by-kir: %d/%d steps\n", reproduced, lifted))
    return exit_codes.of("ok")
  end,
}
