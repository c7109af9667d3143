local args = require "klineage.base.args"
local exit_codes = require "klineage.base.exit_codes"

local llm_mod = require "klineage.llm"

local FLAGS = llm_mod.add_flags({ workload = "string", skills = "string", budget = "number", policy = "string",
                backend = "string", out = "string", journal = "string", run = "string", max_steps = "number",
                json = "boolean", quiet = "boolean" })

-- Every file the run reads or appends to: --out may overwrite none of
-- them (the kernel, the spec and its reference and lineage, the policy,
-- the skills, the transcripts, the run's own journal).
local function inputs_of(a, w, kernel_file, skills_dir, records, llm_client, run_dir)
  local list = {}
  local function add(p) if p then list[#list + 1] = p end end
  add(kernel_file)
  add(w.path)
  add(w.reference and w.reference.path)
  add(a.policy)
  for _, f in ipairs(w.lineage or {}) do add(w.dir .. "/" .. f) end
  for _, r in ipairs(records) do add(skills_dir .. "/" .. r.id .. ".lua") end
  local cfg = llm_client and llm_client.cfg or {}
  add(cfg.replay)
  add(cfg.record)
  if run_dir then add(run_dir .. "/journal.jsonl") end
  return list
end

local function fmt_effect(e, predicted)
  if not e then return "-" end
  if not e.measured and predicted then return string.format("not measured (kept on a predicted %.2fx)", predicted.speedup) end
  if not e.measured then return "not measured" end
  return string.format("%.3fx [%.3f, %.3f]", e.speedup, e.ci[1], e.ci[2])
end

-- The progress line (klineage.cli.progress): the skill being judged, the
-- steps kept so far with the last effect, cycles of the budget, elapsed.
local function progress_printer(ctx)
  local line = require("klineage.cli.progress").line(io.stderr, ctx)
  local kept, last = 0, nil
  local function best()
    if kept == 0 then return "nothing kept yet" end
    return string.format("%d kept, last %s", kept, last and fmt_effect(last) or "-")
  end
  return function(e)
    if e.kind == "baseline" then
      line:show("optimize: gating the input " .. tostring(e.label), best())
    elseif e.kind == "judging" then
      line:show(string.format("optimize step %d: judging %s (%s)", e.step, e.skill, tostring(e.by)), best())
    elseif e.kind == "decision" then
      line:show(string.format("optimize step %d: %s %s", e.step, e.skill, e.status), best())
    elseif e.kind == "step" then
      kept, last = kept + 1, e.effect
      line:say(string.format("step %d  applied %s  %s", e.step, e.skill, fmt_effect(e.effect)))
    elseif e.kind == "end" then
      line:done()
    end
  end
end

return {
  flags = FLAGS,
  summary = "optimize a kernel with the skills, under the gate and a counted budget",
  usage = "usage: klineage optimize [KERNEL.cu] --workload SPEC [--skills DIR] [--budget N] " .. llm_mod.USAGE .. " "
    .. "[--policy klineage|klineage_explore|FILE.lua] [--backend cuda|emu] [--out FILE] [--journal DIR] [--run NAME] [--max-steps N] "
    .. "[--json] [--quiet]",
  help = [[
Optimizes KERNEL.cu, one kernel of the workload SPEC (a workload.lua, its
folder, or a name under gpu/workloads; it describes the buffers, sizes and
tolerance), with the skill repository. KERNEL.cu is the correctness
reference: every candidate is checked against it, never against itself.
Without KERNEL.cu, --llm writes the baseline from the workload's spec and
its C reference (which must exist: it judges the LLM's kernel in the first
gate cycle), and the run goes on from there.

Each step forms the candidates (the skills whose pattern matches a site,
whose preconditions hold and whose guards do not fire), ranks them by
expected gain times confidence, materializes the best by its transform,
else its template, else the LLM, and gates it. A candidate is kept only
when it is correct and, on cuda, faster than the current kernel beyond
noise (the interleaved compare); otherwise the next one is tried. On emu
nothing is timed: a correct candidate is kept on its skill's measured
evidence, and the journal and report say that no effect was measured.
It stops at the budget, at the step limit, or when no candidate is left.

Every decision (applied, rejected, skipped and why, not materialized) is
journaled; the run folder gets the optimized kernel (optimized.cu, or
--out), and its report (klineage report RUN). A killed run resumes with
--run NAME again: every judgement in the journal is reused.

Exit code: 0 when the run ended (whatever it found), 1 when the input did
not pass the gate or the engine failed, 2 for bad input.

options:
  --workload SPEC   the workload (required)
  --skills DIR      the skill repository (default skills/<arch> of the home,
                    the arch the run compiles for)
  --budget N        gate cycles at most (default 30)
]] .. llm_mod.HELP .. "\n" .. [[
  --policy NAME     klineage (default; then, where timed, the skills held
                    back by conditions learned from slowdowns),
                    klineage_explore (the same candidates with no
                    patience), a baseline (forward, random, memory,
                    llm-only), or a policy file (examples/policies/; the
                    contract: lua/klineage/search/init.lua)
  --backend NAME    cuda (default where a GPU answers) or emu
  --out FILE        where the optimized kernel is written (default RUN/optimized.cu):
                    through a temporary beside it and a rename, a failed write
                    said (exit 1); never over a file the run reads (exit 2)
  --journal DIR     the runs folder (default $KLINEAGE_RUNS, ...)
  --run NAME        the run folder's name: created, or resumed when it exists;
                    locked while the run writes it (a second command exits 2)
  --max-steps N     accepted steps at most (default 20)
  --json            print the summary as JSON
  --quiet           no progress line (shown on a terminal only;
                    KLINEAGE_PROGRESS=1 or 0 forces it on or off)]],
  run = function(argv)
    local a = args.parse(argv, { flags = FLAGS, min = 0, max = 1 })
    local files = require "klineage.base.files"
    if not a.workload then args.usage_error("klineage optimize needs --workload SPEC (the kernel's buffers, sizes and tolerance)") end
    local budget = a.budget or 30
    local bok, bf = require("klineage.device.context").check_budget(budget, 1)
    if not bok then args.usage_error("--budget: %s", bf.message) end
    if a.max_steps and (math.type(a.max_steps) ~= "integer" or a.max_steps < 1) then args.usage_error("--max-steps needs a whole number >= 1") end
    if a.run and not (a.run:match("^[%w_.%-]+$") and require("klineage.store.runs").check_name(a.run)) then
      args.usage_error("--run takes a plain name ([A-Za-z0-9_.-], not . or ..)")
    end
    local kernel_file = a.positional[1]
    if not kernel_file and not a.llm then
      args.usage_error("give KERNEL.cu, or --llm PROVIDER to have the baseline written from the workload's description")
    end
    local text
    if kernel_file then
      local rerr
      text, rerr = files.read_text(kernel_file)
      if not text then args.usage_error("%s", rerr.message) end
    end
    local w = require("klineage.cli").load_workload(a.workload)
    if not kernel_file and not w.reference then
      args.usage_error("%s has no C reference: an LLM's baseline would be judged against itself; give KERNEL.cu", w.name)
    end
    local search = require "klineage.search"
    local policy, pf = search.load_policy(a.policy or "klineage", "forward")
    if not policy then args.usage_error("%s", pf.message) end
    -- An LLM for the skills no transform or template can apply; an unusable answer is a counted cycle.
    local llm_client, lf = llm_mod.client_from_args(a)
    if a.llm and not llm_client then args.usage_error("--llm: %s", lf.message) end
    local llm = llm_client and llm_mod.seam(llm_client)
    -- The skill repository: --skills, read before any folder is made; else
    -- the run context's arch chooses it (skills/<arch>), once it is known.
    local function skills_of(dir)
      local records, sf = require("klineage.skills.store").load(dir)
      if not records then return nil, sf.message end
      if #sf > 0 then return nil, string.format("%s: %s", files.display(sf[1].path), sf[1].message) end
      return records
    end
    local dir, records = a.skills, nil
    if dir then
      local why
      records, why = skills_of(dir)
      if not records then args.usage_error("%s", why) end
    end
    local function check_out(ctx)
      if not a.out then return end
      -- refused before a cycle is spent: a folder, a device, or a file this run reads
      local ok, of = files.check_out(a.out, inputs_of(a, w, kernel_file, dir, records, llm_client))
      if not ok then
        if ctx then ctx:close() end
        args.usage_error("--out: %s", of.message)
      end
    end
    if records then check_out() end
    local runs = require "klineage.store.runs"
    local resume = a.run and runs.find(a.run, a.journal) and a.run or nil
    local ctx, code = require("klineage.cli").open_context("optimize", { backend = a.backend, journal = a.journal,
      budget = budget, resume = resume, run_id = not resume and a.run or nil, workloads = { w }, skills = a.skills,
      command = { "klineage", "optimize", table.unpack(argv) } })
    if not ctx then return code end
    if not records then
      local sf
      records, sf = require("klineage.skills.store").of_context(ctx)
      if not records then
        ctx:close()
        args.usage_error("%s", sf.message)
      end
      dir = ctx.skills_dir
      check_out(ctx)
    end
    local label = kernel_file and kernel_file:match("[^/]+$") or "baseline-llm.cu"
    if not kernel_file then
      -- The LLM writes the input from the spec and its C reference (one
      -- charged cycle, as every LLM call); the gate's next cycle judges it.
      local paid, pf2 = ctx:charge()
      if not paid then
        ctx:close()
        io.stderr:write("klineage optimize: ", require("klineage.base.term").text(pf2.message), "\n")
        return exit_codes.of(pf2)
      end
      local source, call = llm_mod.baseline(llm_client, w)
      local record = llm_mod.journal_fields("llm_baseline", source, call)
      record.charged = true
      record.source = source and ctx:store_source(source) or nil
      ctx:record(record)
      if not source then
        ctx:close()
        io.stderr:write("klineage optimize: the LLM wrote no usable baseline: ",
          require("klineage.base.term").text(type(call) == "table" and call.message or call), "\n")
        -- a call that came back without its failure is still the LLM's: 1
        return exit_codes.of(require("klineage.base.verdicts").is_failure(call) and call or "llm_bad_answer")
      end
      text = source
    end
    if not a.quiet then
      io.stderr:write(string.format("klineage optimize: %s with %d skills from %s, policy %s, %s backend, budget %d%s\n", label,
        #records, files.display(dir), policy.name, ctx.backend, budget, ctx.run and (", journal in " .. files.display(ctx.run.dir)) or ""))
    end
    local summary, f = require("klineage.base.verdicts").catch(search.run, ctx, w, { input = { source = text, label = label, file = kernel_file },
      skills = records, policy = policy, direction = "forward", llm = llm, max_steps = a.max_steps,
        progress = not a.quiet and progress_printer(ctx) or nil })
    local run_dir = ctx.run and ctx.run.dir
    ctx:close()
    if summary then
      local out = a.out or (run_dir and run_dir .. "/optimized.cu")
      if out then
        -- Atomic and checked: a full disk is an error, never an empty file
        -- and exit 0; and never over a file this run read.
        local ok, wf = files.write_out(out, summary.final.source, inputs_of(a, w, kernel_file, dir, records, llm_client, run_dir))
        if not ok then
          io.stderr:write("klineage optimize: cannot write the optimized kernel: ", wf.message, "\n")
          return exit_codes.of(wf)
        end
        summary.out = out
      end
    end
    require("klineage.report").after_run("optimize", run_dir, a.quiet)
    if not summary then
      io.stderr:write("klineage optimize: ", require("klineage.base.term").text(f), "\n")
      return exit_codes.of(f)
    end
    summary.run = run_dir
    if a.json then
      summary.final.source = nil
      print((require("klineage.base.stable_json").encode(summary):gsub("\\/", "/"):gsub('"steps":{}', '"steps":[]')))
      return exit_codes.of("ok")
    end
    io.stdout:write(string.format("%s, policy %s, %s backend: %d steps, %d decisions, %d gate cycles, %.1f s; stopped: %s\n",
      require("klineage.base.term").text(label), summary.policy, summary.backend, #summary.steps, summary.decisions, summary.cycles, summary.seconds,
      require("klineage.base.term").text(summary.stopped)))
    for _, s in ipairs(summary.steps) do
      io.stdout:write(string.format("  %d. %-30s %-28s %s\n", s.step, require("klineage.base.term").text(s.skill), require("klineage.base.term").text(s.site), fmt_effect(s.effect, s.predicted)))
    end
    if not summary.measured then io.stdout:write("  (no effect was measured: the " .. summary.backend .. " backend times nothing)\n") end
    if summary.out then io.stdout:write("optimized kernel: " .. files.display(summary.out) .. "\n") end
    return exit_codes.of("ok") -- whatever it found, and wherever it stopped (the budget included)
  end,
}
