-- The correctness stage: the candidate against the baseline, run in the
-- same worker on identical inputs, at every size both kernels' `@kl
-- requires` allow and every seed.
--
--   correct.stage(session, base, cand, w, seeds, which [, drawn]) -> stage, bench_size
--       which = "test" skips the bench sizes (emu); drawn seeds (drawn at
--       random per evaluation) are tried at the test sizes. stage = { verdict,
--       message, trials, sizes, skipped, at, retried }, each trial saying
--       how it got the baseline's outputs (baseline = "ran" | "kept" |
--       "stored": gate/session.lua); bench_size is the
--       first bench size both kernels allow, for the profile stage.
--       A spec that declares in-place launches (alias = { { out, in } },
--       klineage.workload.alias) has every test size and seed tried twice: out of
--       place, then in place (both kernels on alias.in_place(w)); such a
--       trial and its failure's `at` carry in_place = "in place (out = in)".
--
-- A trial whose worker died (fault, worker_lost) is run once more on a
-- fresh worker: a kernel that faults faults again, while a worker killed
-- from outside should not cost a correct kernel its verdict.
local alias = require "klineage.workload.alias"
local session_mod = require "klineage.gate.session"
local verdicts = require "klineage.base.verdicts"
local workload = require "klineage.workload"

local M = {}

local RETRIED = { fault = true, worker_lost = true }

-- The buffers a kernel must leave untouched: everything neither an output
-- nor scratch.
local function inputs_of(w)
  local out = {}
  for _, b in ipairs(w.buffer_list) do
    if not b.output and not b.scratch then out[#out + 1] = b.name end
  end
  return out
end

-- Baseline then candidate on identical inputs; compares every output.
local function trial(s, base, cand, w, size, seed, drawn)
  local p = size.params
  s:load(base)
  s:load(cand)
  s:alloc(w, p)
  -- a drawn seed never comes again: its outputs are not worth the disk
  local sums, how = s:reference(base, w, p, seed, { store = not drawn })
  s:run(cand, w, p)
  s:check_canaries()
  local t = { size = size.label, params = p, seed = seed, outputs = {}, baseline = how }
  local inputs = inputs_of(w)
  if #inputs > 0 then
    local after = s:call({ op = "checksum", buffers = inputs }).checksums
    for _, name in ipairs(inputs) do
      if sums[name] and after[name] ~= sums[name] then
        t.pass, t.verdict = false, "mutated_input"
        t.message = string.format("input '%s' was changed by the kernel", name)
        return t
      end
    end
  end
  t.pass = true
  for _, c in ipairs(s:compare_outputs(w)) do
    t.outputs[#t.outputs + 1] = c
    if not c.pass then
      t.pass, t.verdict, t.message = false, "wrong", session_mod.mismatch(c)
    end
  end
  return t
end

-- One trial, once more on a fresh worker when the first died.
local function trial_with_retry(s, base, cand, w, size, seed, drawn, stage)
  local t, f = verdicts.catch(trial, s, base, cand, w, size, seed, drawn)
  if t or not RETRIED[f.verdict] then return t, f end
  stage.retried = stage.retried or {}
  stage.retried[#stage.retried + 1] = { size = size.label, seed = seed, verdict = f.verdict, message = f.message }
  return verdicts.catch(trial, s, base, cand, w, size, seed, drawn)
end

function M.stage(s, base, cand, w, fixed_seeds, which, drawn)
  local with_drawn, drawn_set = { table.unpack(fixed_seeds) }, {}
  for _, seed in ipairs(drawn or {}) do with_drawn[#with_drawn + 1], drawn_set[seed] = seed, true end
  local stage = { trials = {}, sizes = 0, skipped = {} }
  local bench_size
  local in_place = alias.in_place(w)
  for _, size in ipairs(workload.sizes(w)) do
    if which == "test" and size.bench then goto continue end
    local g = session_mod.geometry(cand, size.params)
    local gb = session_mod.geometry(base, size.params)
    if not g.allowed then
      stage.skipped[#stage.skipped + 1] = { size = size.label, why = g.why }
    elseif not gb.allowed then
      stage.skipped[#stage.skipped + 1] = { size = size.label, why = "baseline: " .. gb.why }
    else
      stage.sizes = stage.sizes + 1
      -- a test size is also run in place when the spec declares it
      local forms = { w, not size.bench and in_place or nil }
      for _, seed in ipairs(size.bench and fixed_seeds or with_drawn) do
        for _, form in ipairs(forms) do
          local t, f = trial_with_retry(s, base, cand, form, size, seed, drawn_set[seed], stage)
          local where = form.in_place and (form.in_place .. ": ") or ""
          if not t then
            stage.verdict, stage.message = f.verdict, where .. f.message
            stage.signal, stage.code, stage.stderr = f.signal, f.code, f.stderr
            stage.at = { size = size.label, seed = seed, in_place = form.in_place }
            return stage
          end
          t.in_place = form.in_place
          stage.trials[#stage.trials + 1] = t
          if not t.pass then
            stage.verdict, stage.message = t.verdict, where .. t.message
            stage.at = { size = size.label, seed = seed, in_place = form.in_place }
            return stage
          end
        end
        if size.bench and not bench_size then bench_size = size end
      end
    end
    ::continue::
  end
  if stage.sizes < 2 then
    stage.verdict = "too_few_sizes"
    stage.message = string.format("only %d size(s) allowed by the kernel's requires: the gate needs 2", stage.sizes)
    return stage
  end
  stage.verdict = "ok"
  return stage, bench_size
end

return M
