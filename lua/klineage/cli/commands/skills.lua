-- klineage skills: the skill repository from the command line (list, show,
-- explain, match, learn, merge, transfer). Bad input exits 2 with one line.
local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

local FLAGS = { dir = "string", json = "boolean", workload = "string", out = "string", to = "string", arch = "string",
                walks = "list", journal = "string", backend = "string", budget = "number", seconds = "number", kinds = "string" }

local DEFAULT_ARCH = "sm_90"

local function fail(fmt, ...) args.usage_error(fmt, ...) end

local function default_dir(arch)
  return (require("kl.host").home or ".") .. "/skills/" .. (arch or DEFAULT_ARCH)
end

local function json(v)
  -- lua-cjson writes an empty table as {}: every list here is a list.
  return (require("klineage.base.stable_json").encode(v):gsub("\\/", "/"):gsub("^{}$", "[]"))
end

-- The repository's records; a folder that is not one, or a bad file in
-- it, is bad input: a skill that cannot be read is never silently left out.
local function load_repo(dir)
  local store = require "klineage.skills.store"
  local records, f = store.load(dir)
  if not records then fail("%s", f.message) end
  if #f > 0 then
    local p = f[1]
    fail("%d bad skill file%s in %s; the first: %s: %s", #f, #f == 1 and "" or "s", require("klineage.base.files").display(dir),
      require("klineage.base.files").display(p.path), p.message)
  end
  return records
end

-- Edit distance, for "did you mean".
local function distance(a, b)
  local prev = {}
  for j = 0, #b do prev[j] = j end
  for i = 1, #a do
    local cur = { [0] = i }
    for j = 1, #b do
      cur[j] = math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a:byte(i) == b:byte(j) and 0 or 1))
    end
    prev = cur
  end
  return prev[#b]
end

local function find(records, id, dir)
  for _, r in ipairs(records) do
    if r.id == id then return r end
  end
  local near = {}
  for _, r in ipairs(records) do near[#near + 1] = { id = r.id, d = distance(id, r.id) } end
  table.sort(near, function(a, b) if a.d ~= b.d then return a.d < b.d end return a.id < b.id end)
  local names = {}
  for i = 1, math.min(3, #near) do names[i] = near[i].id end
  local shown = require("klineage.base.files").display(id)
  if #names == 0 then fail("no skill '%s' in %s (it holds none)", shown, require("klineage.base.files").display(dir)) end
  fail("no skill '%s' in %s; the nearest: %s", shown, require("klineage.base.files").display(dir), table.concat(names, ", "))
end

local function median_text(r)
  local s = r.effect and r.effect.speedup
  return s and string.format("%.2fx", s.median) or "-"
end

local function list(a, dir)
  local records = load_repo(dir)
  if a.json then
    local out = {}
    for i, r in ipairs(records) do
      local s = r.effect and r.effect.speedup
      out[i] = { id = r.id, status = r.status, confidence = r.confidence.level, preconditions = #r.preconditions,
                 guards = #r.guards, median_speedup = s and s.median or nil, intent = r.intent }
    end
    io.stdout:write(json(out), "\n")
    return exit_codes.of("ok")
  end
  for _, r in ipairs(records) do
    local t = require("klineage.base.term").text
    io.stdout:write(string.format("%-28s %-11s %-9s %2d pre %2d guards %7s  %s\n", t(r.id), t(r.status), t(r.confidence.level),
      #r.preconditions, #r.guards, median_text(r), t(r.intent)))
  end
  io.stderr:write(string.format("%d skill%s in %s\n", #records, #records == 1 and "" or "s", require("klineage.base.files").display(dir)))
  return exit_codes.of("ok")
end

local function show(a, dir)
  if not a.positional[2] then fail("klineage skills show needs a skill ID") end
  local r = find(load_repo(dir), a.positional[2], dir)
  io.stdout:write(require("klineage.base.term").text(assert(require("klineage.skills.store").text(r)), true))
  return exit_codes.of("ok")
end

local function explain(a, dir)
  if not a.positional[2] then fail("klineage skills explain needs a skill ID") end
  local r = find(load_repo(dir), a.positional[2], dir)
  io.stdout:write(require("klineage.base.term").text(require("klineage.skills.explain").skill(r), true), "\n")
  return exit_codes.of("ok")
end

local function match(a, dir)
  local path = a.positional[2]
  if not path then fail("klineage skills match needs a KERNEL.cu") end
  local records = load_repo(dir)
  local text, rerr = require("klineage.base.files").read_text(path)
  if not text then fail("%s", rerr.message) end
  local w = a.workload and require("klineage.cli").load_workload(a.workload) or nil
  local rows, f = require("klineage.skills.match").kernel(records, text, { workload = w, arch = a.arch })
  if not rows then
    -- by its verdict: a kernel without the entry or launch line it needs is bad input
    io.stderr:write("klineage skills: ", require("klineage.base.term").text((tostring(f.message):gsub("\n.*", ""))), "\n")
    return exit_codes.of(f)
  end
  local describe = require "klineage.skills.describe"
  if a.json then
    local out = {}
    for i, row in ipairs(rows) do
      local unknown = {}
      for j, c in ipairs(row.unknown) do unknown[j] = { fact = c[1], op = c[2], value = c[3], text = describe.condition(c) } end
      local b = row.blocked_by
      out[i] = { skill = row.skill, site = row.site, line = row.line, transform = row.transform, status = row.status,
                 blocked_by = b and { kind = b.kind, text = b.text, fact = b.condition and b.condition[1] } or nil,
                 unknown = unknown }
    end
    io.stdout:write((json(out):gsub('"unknown":{}', '"unknown":[]')), "\n")
    return exit_codes.of("ok")
  end
  local candidates = 0
  for _, row in ipairs(rows) do
    if row.status == "candidate" then candidates = candidates + 1 end
    local line = string.format("%-5s %-28s %-20s %-9s", tostring(row.line or "-"), row.skill, tostring(row.site or "-"), row.status)
    if row.blocked_by then line = line .. " " .. row.blocked_by.text end
    io.stdout:write(require("klineage.base.term").text(line), "\n")
    for _, c in ipairs(row.unknown) do
      if c ~= (row.blocked_by and row.blocked_by.condition) then
        io.stdout:write(string.format("      unknown: %s (fact %s could not be computed)\n", describe.condition(c), c[1]))
      end
    end
  end
  io.stderr:write(string.format("%d rows, %d candidates, from %d skills\n", #rows, candidates, #records))
  return exit_codes.of("ok")
end

local function write_out(out, records, what)
  local store = require "klineage.skills.store"
  local done, f = store.write_all(out, records)
  if not done then
    io.stderr:write("klineage skills ", what, ": ", tostring(f), "\n")
    return exit_codes.of(f)
  end
  io.stderr:write(string.format("%d skills written to %s, %d stale files removed\n", #done.written,
    require("klineage.base.files").display(out), #done.removed))
  for _, p in ipairs(done.kept) do
    io.stderr:write("kept ", require("klineage.base.files").display(p), ": not a skill record file\n")
  end
  return exit_codes.of("ok")
end

local function merge(a)
  local dirs = table.move(a.positional, 2, #a.positional, 1, {})
  if #dirs == 0 then fail("klineage skills merge needs at least one DIR") end
  if not a.out then fail("klineage skills merge needs --out DIR") end
  for _, d in ipairs(dirs) do load_repo(d) end -- a bad folder is said here, with its file
  local records, f = require("klineage.skills.merge").repositories(dirs)
  if not records then fail("%s", tostring(f.message)) end
  return write_out(a.out, records, "merge")
end

local function transfer(a, dir)
  if not a.to then fail("klineage skills transfer needs --to ARCH (sm_80, ...)") end
  if not (a.to:match("^sm_%d%d$") or a.to:match("^sm_%d%d%d$")) then fail("--to needs an architecture like sm_80, got '%s'", a.to) end
  local records = load_repo(dir)
  local out_records, changes = require("klineage.skills.transfer").repository(records, a.to)
  if not out_records then fail("%s", tostring(changes.message)) end
  return write_out(a.out or default_dir(a.to), out_records, "transfer")
end

-- Every version of every shipped lineage, for the learner's check that a
-- template matches some kernel beside its own lineage's.
local function lineage_kernels()
  local files, workload = require "klineage.base.files", require "klineage.workload"
  local dir = (require("kl.host").home or ".") .. "/gpu/workloads"
  local names = require("kl.fs").list(dir) or {}
  table.sort(names)
  local out = {}
  for _, name in ipairs(names) do
    local w = files.regular(dir .. "/" .. name .. "/workload.lua") and workload.load(dir .. "/" .. name .. "/workload.lua")
    for _, file in ipairs(w and w.lineage or {}) do
      local text = files.read_text(w.dir .. "/" .. file)
      if text then out[#out + 1] = { lineage = name, text = text } end
    end
  end
  return out
end

-- The repository learned from walk journals (run folders), written whole.
local function learn(a)
  local dirs = table.move(a.positional, 2, #a.positional, 1, {})
  if #dirs == 0 then fail("klineage skills learn needs at least one walk run folder") end
  if not a.out then fail("klineage skills learn needs --out DIR (the repository it writes, e.g. skills/sm_90)") end
  local files = require "klineage.base.files"
  for _, d in ipairs(dirs) do
    if not files.regular(d .. "/journal.jsonl") then fail("%s is not a run folder (no journal.jsonl file)", files.display(d)) end
  end
  local arch = a.arch or DEFAULT_ARCH
  local observations, problems = require("klineage.skills.extract").folders(dirs, { arch = arch })
  for _, p in ipairs(problems) do
    io.stderr:write(string.format("skipped: %s: %s\n", files.display(p.path), require("klineage.base.term").text(p.message)))
  end
  local records, dropped = require("klineage.skills.learn").repository(observations, { arch = arch,
                                                                                     elsewhere = lineage_kernels() })
  for _, d in ipairs(dropped) do io.stderr:write(string.format("not shipped: %s: %s\n", d.id, d.why)) end
  io.stderr:write(string.format("%d observations from %d run folders: %d skills\n", #observations, #dirs, #records))
  return write_out(a.out, records, "learn")
end

-- One probe run folder per workload, probe-<name>-<backend>: created, or
-- resumed when it is there, so that a killed or timed-out probe goes on.
local function probe(a)
  local names = table.move(a.positional, 2, #a.positional, 1, {})
  if #names == 0 then fail("klineage skills probe needs at least one workload (e.g. sgemm)") end
  local kinds = {}
  for k in (a.kinds or "forward,size"):gmatch("[^,]+") do
    if k ~= "forward" and k ~= "size" then fail("--kinds takes forward and/or size, got '%s'", k) end
    kinds[k] = true
  end
  if a.budget then
    local ok, bf = require("klineage.device.context").check_budget(a.budget)
    if not ok then fail("--budget: %s", bf.message) end
  end
  local files, probes, runs = require "klineage.base.files", require "klineage.skills.probe", require "klineage.store.runs"
  local host = require "kl.host"
  local walks = {}
  for _, d in ipairs(a.walks or {}) do
    if not files.regular(d .. "/journal.jsonl") then fail("--walks %s is not a run folder (no journal.jsonl file)", files.display(d)) end
    walks[#walks + 1] = d
  end
  if kinds.size and #walks == 0 then fail("size probes time the recorded walks' steps: give their run folders with --walks DIR") end
  local deadline = a.seconds and host.clock() + a.seconds
  local tty = host.isatty(2)
  local ws = {}
  for i, name in ipairs(names) do
    local w, wf = require("klineage.workload").load(name)
    if not w then fail("%s", wf.message) end
    ws[i] = w
  end
  local pool, backend = require("klineage.device.backends").pool(a.backend)
  if not pool then
    -- an unknown backend is input (2); no worker, no device, is the engine's (1)
    io.stderr:write("klineage skills: ", require("klineage.base.term").text(backend.message), "\n")
    return exit_codes.of(backend)
  end
  if kinds.size and not require("klineage.device.backends").traits(backend).timed then
    kinds.size = nil -- a size probe is a compare, and nothing else is timed
    io.stderr:write(string.format("size probes skipped: the %s backend times nothing\n", backend))
  end
  local status = exit_codes.of("ok")
  for _, w in ipairs(ws) do
    local units = probes.plan(w, { kinds = kinds, steps = probes.recorded_steps(walks, w.name) })
    local id = string.format("probe-%s-%s", w.name, backend)
    local exists = runs.find(id, a.journal)
    local ctx, cf = require("klineage.device.context").new { pool = pool, journal = a.journal, budget = a.budget, workloads = { w },
      resume = exists and id or nil, run_id = not exists and id or nil, command = { "klineage", "skills", "probe", w.name } }
    if not ctx then
      pool:close()
      io.stderr:write("klineage skills: ", require("klineage.base.term").text(cf.message), "\n")
      return exit_codes.of(cf, "open_run")
    end
    local t0 = host.clock()
    local s = probes.run(ctx, w, units, { deadline = deadline, progress = tty and function(u, i, of)
      io.stderr:write(string.format("\r\27[K%s: probe %d/%d  %s %s  (cycles %d, %.0f s)", w.name, i, of, u.probe,
        u.probe == "forward" and (u.label .. " + " .. u.site.transform) or w.lineage[u.from], (ctx:spent()), host.clock() - t0))
    end or nil })
    local dir = ctx.run and ctx.run.dir
    ctx:close()
    if tty then io.stderr:write("\r\27[K") end
    io.stdout:write(string.format("%-10s %4d units  %4d judged  %4d from the journal  %3d not run  %s  %s\n", w.name, #units,
      s.judged, s.reused, #s.not_run, s.stopped, dir and files.display(dir) or "not journaled"))
    for _, u in ipairs(s.not_run) do
      io.stderr:write(string.format("  not run: %s %s: %s\n", u.probe, u.label or w.lineage[u.from], tostring(u.why)))
    end
    if s.stopped ~= "done" then status = exit_codes.of("incomplete") end
    if s.stopped == "deadline" then break end
  end
  pool:close()
  return status
end

local VERBS = { list = list, show = show, explain = explain, match = match, merge = merge, transfer = transfer, learn = learn,
                probe = probe }
local VERB_NAMES = "list, show, explain, match, learn, probe, merge, transfer"

return {
  flags = FLAGS,
  summary = "the skill repository: list, show, explain, match a kernel, learn, probe, merge, transfer",
  usage = "usage: klineage skills list|show ID|explain ID|match KERNEL.cu|learn RUN... --out DIR|probe WORKLOAD...|merge DIR... --out DIR|transfer --to ARCH "
    .. "[--dir DIR] [--workload SPEC] [--arch ARCH] [--json] [--walks RUN] [--kinds K,K] [--seconds S] [--budget N] "
    .. "[--backend NAME] [--journal DIR]",
  help = [[
The skill repository is a folder of skill records, skills/<arch>/<id>.lua
(default: skills/sm_90 of the klineage home), each a plain Lua table
written by a deterministic serializer, with the observations it was
learned from beside it in <id>.observations.jsonl, one a line. Files are
read as data: a file that is not a valid record makes the command fail
and names it.

verbs:
  list                  one line per skill: id, status, confidence, the
                        numbers of preconditions and guards, the median
                        speedup and the intent
  show ID               the record as the serializer writes its file
                        (observations cited by index; they are in
                        <id>.observations.jsonl beside it)
  explain ID            the record in plain English, with its evidence
  match KERNEL.cu       every skill whose pattern (a transform's apply site,
                        or a template pattern) is in the kernel: candidate,
                        or blocked with the precondition or guard that
                        blocks it in words; conditions over facts that
                        could not be computed are listed as unknown
  learn RUN... --out D  the repository learned from walk and probe run
                        folders (their journals: every judged
                        simplification, inverted, and every probe, its
                        facts computed again), written whole to D; a
                        template whose pattern does not compile, or
                        matches no kernel of another lineage, is left
                        out, and said
  probe WORKLOAD...     the skills applied forward where the walks did not
                        judge them, into run folders probe-<name>-<backend>
                        (resumed when there; learn takes them): each
                        transform at its first apply site in every lineage
                        version, gated and timed against that version
                        (forward), and every recorded step of --walks timed
                        at the workload's other bench sizes (size). Exit 3
                        when it stopped before the end (--seconds, --budget):
                        run it again to go on
  merge DIR... --out D  one repository from several
  transfer --to ARCH    the repository's skills carried to another arch
                        (written to --out, default skills/ARCH)

options:
  --dir DIR        the repository folder (default skills/ARCH of the home)
  --workload SPEC  (match) the workload, for sizes, launch and the entry name
  --arch ARCH      the repository's architecture (default sm_90), and for
                   match the architecture the kernel's facts are computed at
  --out DIR        (learn, merge, transfer) the folder written: it ends up holding
                   exactly the records written
  --to ARCH        (transfer) the target architecture
  --walks DIR      (probe) a walk run folder whose recorded steps the size
                   probes time; give it once per folder
  --kinds K,K      (probe) forward, size (default both)
  --seconds S      (probe) no probe starts after S seconds
  --budget N       (probe) gate cycles per workload at most
  --backend NAME   (probe) cuda (default where a GPU answers) or emu
  --journal DIR    (probe) the runs folder (default $KLINEAGE_RUNS, ...)
  --json           (list, match) JSON]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 1 })
    local verb = a.positional[1]
    if a.arch and not (a.arch:match("^sm_%d%d$") or a.arch:match("^sm_%d%d%d$")) then
      fail("--arch needs an architecture like sm_90, got '%s'", a.arch)
    end
    local fn = VERBS[verb]
    if not fn then fail("unknown verb '%s' (one of %s)", require("klineage.base.files").display(verb), VERB_NAMES) end
    local max = ({ list = 1, show = 2, explain = 2, match = 2, transfer = 1 })[verb]
    if max and #a.positional > max then fail("unexpected argument '%s'", a.positional[max + 1]) end
    return fn(a, a.dir or default_dir(a.arch))
  end,
}
