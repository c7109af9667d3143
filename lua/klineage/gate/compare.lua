-- The interleaved compare: two kernels timed in one worker in alternating
-- blocks (ABAB: `block` samples each, `rounds` times) at the bench size, so
-- that clock and thermal drift fall on both alike.
--
--   compare.compare(ctx, a, b, w [, opts]) -> result | nil, failure
--     opts = { block = 5, rounds = 8, worker = i, provenance, prepaid (gate.judge:
--              its evaluation paid this candidate's one cycle),
--              params = the sizes to time at, merged over w.params (default:
--              the bench size); a size either kernel's @kl requires rules
--              out is not_allowed, charged nothing }
--     result = { outcome = "faster" | "slower" | "no_difference", speedup
--       (b over a), ci = { lo, hi }, samples = { a, b }, key, reused }:
--       "no_difference" when the two medians' intervals overlap.
--   Both kernels should already pass the gate. One compare is one gate
--   cycle; it is journaled as a "comparison" record and reused on resume.
local annotations = require "klineage.workload.annotations"
local kernel = require "klineage.gate.kernel"
local runs = require "klineage.store.runs"
local session = require "klineage.gate.session"
local stats = require "klineage.device.measure.stats"
local verdicts = require "klineage.base.verdicts"
local hash = require "kl.hash"

local M = {}

local function timed(ctx, ka, kb, w, opts)
  local s = session.new { pool = ctx.pool, worker = opts.worker or 1, timeout = ctx.timeout }
  s:load(ka)
  s:load(kb)
  local p = opts.params or w.params
  -- Each sample starts from inputs of its own and freshly poisoned outputs
  -- (Session:sample_setup), the same way for both kernels.
  local steps_a, setup_a = s:launches_at(ka, w, p)
  local steps_b, setup_b = s:launches_at(kb, w, p)
  local xa, xb = {}, {}
  local block = opts.block or 5
  for _ = 1, opts.rounds or 8 do
    for _, pair in ipairs({ { steps_a, xa, setup_a }, { steps_b, xb, setup_b } }) do
      local t = s:call({ op = "time", sequence = pair[1], before_sample = pair[3], warmup = 1, min_samples = block,
                         max_samples = block, max_seconds = 10 })
      for _, ms in ipairs(t.samples_ms) do pair[2][#pair[2] + 1] = ms end
    end
  end
  local c = stats.compare(xa, xb)
  c.samples = { a = xa, b = xb }
  return c
end

function M.compare(ctx, a, b, w, opts)
  require("klineage.gate").check_context(ctx, "gate.compare")
  opts = opts or {}
  local ta, fa = kernel.read(a)
  if not ta then return nil, fa end
  local tb, fb = kernel.read(b)
  if not tb then return nil, fb end
  local params
  if opts.params then
    params = {}
    for k, v in pairs(w.params) do params[k] = v end
    for k, v in pairs(opts.params) do params[k] = v end
    for _, kt in ipairs({ { a, ta }, { b, tb } }) do
      local g = annotations.resolve(kt[2], params, { file = kt[1].file })
      if not (g and g.allowed) then
        return nil, verdicts.failure("not_allowed", string.format("%s cannot run at these sizes: %s", tostring(kt[1].label),
          g and tostring(g.why) or "its launch annotations do not resolve"))
      end
    end
  end
  local key = runs.key { compare = { hash.sha256(ta), hash.sha256(tb) }, spec = w.sha256, backend = ctx.backend,
                         arch = ctx.arch, block = opts.block or 5, rounds = opts.rounds or 8, params = params }
  local earlier = ctx:judged(key)
  if earlier and earlier.result then
    earlier.result.reused = true
    ctx:replayed(earlier)
    return earlier.result
  end
  local prepaid = opts.prepaid == true
  if not prepaid then
    local paid, bf = ctx:charge()
    if not paid then return nil, bf end
  end
  local record = { kind = "comparison", key = key, charged = not prepaid, prepaid = prepaid or nil, workload = { name = w.name, sha256 = w.sha256 }, params = params,
                   a = { label = a.label, sha256 = hash.sha256(ta), source = ctx:store_source(ta) },
                   b = { label = b.label, sha256 = hash.sha256(tb), source = ctx:store_source(tb) },
                   provenance = opts.provenance }
  local ka, sa = kernel.prepare(a, w, ctx.arch, ctx.compile_limit)
  local kb, sb = ka and kernel.prepare(b, w, ctx.arch, ctx.compile_limit)
  local result, f
  if not ka then
    f = verdicts.failure(sa.verdict, "a: " .. tostring(sa.message))
  elseif not kb then
    f = verdicts.failure(sb.verdict, "b: " .. tostring(sb.message))
  else
    result, f = verdicts.catch(timed, ctx, ka, kb, w, { block = opts.block, rounds = opts.rounds, worker = opts.worker,
                                                         params = params })
  end
  if result then
    result.key = key
    record.verdict, record.result = "ok", result
  else
    record.verdict, record.message = f.verdict, f.message
  end
  ctx:record(record)
  if not result then return nil, f end
  return result
end

return M
