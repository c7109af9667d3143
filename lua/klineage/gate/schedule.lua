-- Evaluations spread over every worker of the pool at once (one per
-- visible GPU): each worker takes the next candidate when it finishes one.
-- An evaluation is a coroutine; it yields its request ticket, and the
-- scheduler resumes it with the reply while the other workers run.
--
--   schedule.evaluate_all(evaluate, ctx, candidates, w [, opts]) -> records
--     records are in the candidates' order. opts as for gate.evaluate, plus
--     before(i) (called as candidate i starts: compile ahead, progress) and
--     after(i, record). With one worker it is evaluate in a loop.
local M = {}

function M.evaluate_all(evaluate, ctx, candidates, w, opts)
  require("klineage.gate").check_context(ctx, "gate.evaluate_all")
  opts = opts or {}
  local pool, records = ctx.pool, {}
  local function hook(name, ...) if opts[name] then opts[name](...) end end
  if pool:size() <= 1 then
    for i, c in ipairs(candidates) do
      hook("before", i)
      records[i] = evaluate(ctx, c, w, opts)
      hook("after", i, records[i])
    end
    return records
  end
  local next_i, running = 1, {}
  -- Worker k takes the next candidate, if any is left.
  local function launch(k)
    if next_i > #candidates then return false end
    local i = next_i
    next_i = i + 1
    hook("before", i)
    local o = setmetatable({ worker = k, async = true }, { __index = opts })
    running[k] = { index = i, co = coroutine.create(function() return evaluate(ctx, candidates[i], w, o) end) }
    return true
  end
  -- Resumes worker k's evaluation with a reply, up to its next request.
  local function step(k, ...)
    local r = running[k]
    local ok, out = coroutine.resume(r.co, ...)
    if not ok then error(out, 0) end
    if coroutine.status(r.co) ~= "dead" then
      r.ticket = out
      return
    end
    records[r.index] = out
    running[k] = nil
    hook("after", r.index, out)
    if launch(k) then return step(k) end
  end
  for k = 1, pool:size() do
    if launch(k) then step(k) end
  end
  while next(running) do
    local ks, tickets = {}, {}
    for k, r in pairs(running) do ks[#ks + 1], tickets[#tickets + 1] = k, r.ticket end
    local j = pool:wait_any(tickets)
    step(ks[j], pool:collect(tickets[j]))
  end
  return records
end

return M
