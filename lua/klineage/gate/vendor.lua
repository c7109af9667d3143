-- The vendor's bar: the workload's library routine (w.vendor: cuBLAS SGEMM,
-- cuDNN's convolution) at every bench size, its result first checked
-- against the baseline like a candidate's, then timed exactly like one.
--
--   vendor.vendor(ctx, w [, opts]) -> rows | nil, failure
--     opts = { max_seconds, worker = i }
--     rows = { { label, params, verdict, message, median_ms, ci_ms, gflops,
--                gbps, detail (the routine's choice: cuDNN's algorithm) } }
--   Not a gate cycle (nothing is judged), but journaled as a "vendor"
--   record and reused on resume.
local kernel = require "klineage.gate.kernel"
local protocol = require "klineage.device.worker.protocol"
local runs = require "klineage.store.runs"
local session = require "klineage.gate.session"
local verdicts = require "klineage.base.verdicts"
local workload = require "klineage.workload"

local M = {}

local function measure(s, base, w, p, opts)
  local r = {}
  s:load(base)
  s:alloc(w, p)
  s:reference(base, w, p, 1)
  local args = {}
  for i, a in ipairs(w.vendor.args) do
    if w.buffer_by_name[a] then args[i] = { "buf", a }
    else args[i] = { math.type(p[a]) == "integer" and "i32" or "f32", p[a] } end
  end
  local step = { op = "vendor", library = w.vendor.library, routine = w.vendor.routine, args = args }
  -- JSON has one number type: the routine's choice (an algorithm number) is an integer.
  r.detail = protocol.integer(s:call(step).detail)
  for _, c in ipairs(s:compare_outputs(w)) do
    if not c.pass then verdicts.raise("wrong", string.format("%s differs from v0 in %d elements", c.buffer, c.bad_count)) end
  end
  local t = s:call({ op = "time", sequence = { step }, max_seconds = opts.max_seconds or 2 })
  r.median_ms, r.ci_ms = t.median_ms, t.ci_ms
  r.gflops = workload.flops(w, p) / (t.median_ms / 1e3) / 1e9
  r.gbps = workload.bytes(w, p) / (t.median_ms / 1e3) / 1e9
  r.verdict = "ok"
  return r
end

function M.vendor(ctx, w, opts)
  require("klineage.gate").check_context(ctx, "gate.vendor")
  opts = opts or {}
  if not w.vendor then return nil, verdicts.failure("bad_input", "the workload names no vendor routine") end
  if not ctx.timed then return nil, verdicts.failure("unsupported", "vendor libraries run on the cuda backend only") end
  local key = runs.key { vendor = w.vendor.routine, spec = w.sha256, arch = ctx.arch, max_seconds = opts.max_seconds }
  local earlier = ctx:judged(key)
  if earlier and earlier.rows then return earlier.rows end
  local base, bstage = kernel.prepare(kernel.baseline_of(w), w, ctx.arch)
  if not base then return nil, verdicts.failure("baseline_broken", "baseline: " .. tostring(bstage.message)) end
  local s = session.new { pool = ctx.pool, worker = opts.worker or 1, timeout = ctx.timeout }
  local rows = {}
  for _, size in ipairs(workload.sizes(w)) do
    if size.bench then
      local r, f = verdicts.catch(measure, s, base, w, size.params, opts)
      r = r or { verdict = f.verdict, message = f.message }
      r.label, r.params = size.label, size.params
      rows[#rows + 1] = r
    end
  end
  ctx:record({ kind = "vendor", key = key, workload = { name = w.name, sha256 = w.sha256 }, routine = w.vendor.routine,
               library = w.vendor.library, rows = rows })
  return rows
end

return M
