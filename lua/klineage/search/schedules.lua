-- Schedule rows for the forward search: the node's kernel lifted by kir,
-- its legal primitive sequences (depth 2, capped), each emitted and
-- predicted by the static model (search/schedule_rank.lua), best first.
-- The emitted text is never trusted: the gate judges it as any source row.
-- A node a schedule made carries its IR (node.kir, with the sequence so far
-- and the unscheduled kernel), since emitted code with shared memory does
-- not lift again. Its rows are of two kinds, both judged against the node
-- and predicted as the model's gain of the whole sequence over the node's:
--   - extensions: its sequence and one primitive it has not used;
--   - alternatives (row.instead = the node's sequence): the unscheduled
--     kernel's other sequences, other parameters or other primitives, so
--     that a search that took a schedule can still measure its neighbours.
--   schedules.rows(state, node, { depth = 2, limit = 40 }) -> rows
--   row.kir = { kernel (the IR after the row's sequence), root, text (the whole sequence),
--               origin (the sha256 of the node root was lifted from) }
--   schedules.judged(state, row): forward.lua marks a row judged (or skipped
--       unjudged), and no later step of the run offers its sequence again
local kir = require "klineage.kir"
local rank = require "klineage.search.schedule_rank"
local workload = require "klineage.workload"
local annotations = require "klineage.workload.annotations"

local M = {}

M.DEPTH, M.LIMIT = 2, 40

-- The timed device's SM count (the model's parallelism); the arch's
-- reference device where nothing is timed.
function M.sm_count(state)
  if not state.timed then return nil end
  if state.sm_count == nil then
    local ok, dev = pcall(function() return state.ctx.pool:device(1) end)
    state.sm_count = ok and type(dev) == "table" and dev.sm_count or false
  end
  return state.sm_count or nil
end

-- Why an emitted schedule cannot launch at a size the spec runs (a grid
-- dimension past the device's limit, a block too large), or nil. The gate
-- would refuse it as the kernel's bad_input, a cycle spent for nothing.
function M.unlaunchable(source, w)
  if w.run then return nil end -- a spec that launches by its own run(): the gate resolves each launch
  for _, size in ipairs(workload.sizes(w)) do
    local ok, res, f = pcall(annotations.resolve, source, size.params, { file = "schedule.cu" })
    if not ok then return tostring(res) end
    if not res then return string.format("at the %s size: %s", size.label, tostring(f and f.message or f)) end
  end
end

-- A sequence of one unscheduled kernel (origin: the sha256 of the node it
-- was lifted from) is judged once a run: a neighbour judged at an earlier
-- step, against the kernel the search was at then, is not offered again.
function M.judged(state, row)
  if row.kir and row.kir.origin then
    state.schedules_judged = state.schedules_judged or {}
    state.schedules_judged[row.kir.origin .. "|" .. row.kir.text] = true
  end
end

function M.judged_before(state, origin, whole)
  return state.schedules_judged ~= nil and state.schedules_judged[origin .. "|" .. whole] == true
end

local function used_in(text)
  local used = {}
  for name in (text or ""):gmatch("([%w_]+)%b()") do used[name] = true end
  return used
end

-- One row per usable sequence: emitted, checked to launch, predicted over
-- the node's own prediction (base). `prefix` is the node's sequence the
-- row extends ("" where it starts from the unscheduled kernel again).
local function add_rows(state, node, rows, seen, seqs, ctx)
  for _, seq in ipairs(seqs) do
    local whole = ctx.prefix == "" and seq.text or ctx.prefix .. " " .. seq.text
    local first = whole:match("^([%w_]+)")
    local key = node.sha256 .. "|schedule:" .. tostring(first) .. "|" .. whole .. "|{}"
    if not seen[whole] and whole ~= ctx.before and not state.tried[key] and not M.judged_before(state, ctx.origin, whole) then
      seen[whole] = true
      local eok, text = pcall(kir.emit, seq.kernel)
      -- (two sequences can emit one kernel: stage's exchange replaces the
      -- geometry a map before it chose; the kernel is offered once)
      local usable = eok and type(text) == "string" and text ~= node.source and not ctx.emitted[text]
      if usable then ctx.emitted[text] = true end
      local stop = usable and M.unlaunchable(text, state.workload)
      if stop then
        state.tried[key] = true
        state:decide({ skill = "schedule:" .. first, site = whole, schedule = whole }, node,
                     { status = "skipped", why = "the schedule cannot launch: " .. stop })
      elseif usable then
        local reasons = { table.unpack(ctx.prefix_reasons) }
        for _, r in ipairs(seq.reasons) do reasons[#reasons + 1] = r end
        local p = rank.predict(ctx.root, seq.kernel, whole, reasons, ctx.model)
        if ctx.base ~= 1 then
          local how = ctx.prefix == "" and "instead of " or "after "
          p = { speedup = p.speedup / ctx.base, why = string.format("%s%s: %s", how, ctx.before, p.why) }
        end
        rows[#rows + 1] = { skill = "schedule:" .. first, site = whole, schedule = whole, params_key = "{}",
                            source = text, by = "schedule", because = seq.reasons, node = node, predicted = p,
                            instead = ctx.prefix == "" and ctx.before ~= "" and ctx.before or nil,
                            kir = { kernel = seq.kernel, root = ctx.root, text = whole, reasons = reasons, origin = ctx.origin } }
      end
    end
  end
end

function M.rows(state, node, opts)
  opts = opts or {}
  local ok, kernel, why = true, node.kir and node.kir.kernel, nil
  if not kernel then
    ok, kernel, why = pcall(kir.lift, node.source, { kernel = state.workload.kernel })
    if not ok then kernel, why = nil, tostring(kernel):gsub("\n.*", "") end
  end
  if not kernel then
    state.unlifted = state.unlifted or {}
    if not state.unlifted[node.sha256] then
      state.unlifted[node.sha256] = true
      state:decide({ skill = "schedule", site = "lift" }, node,
                   { status = "skipped", why = "the kernel does not lift to the IR: " .. tostring(why) })
    end
    return {}
  end
  local root, before = node.kir and node.kir.root or kernel, node.kir and node.kir.text or ""
  local origin = node.kir and node.kir.origin or node.sha256
  local model = { workload = state.workload, sm_count = M.sm_count(state) }
  local ctx = { root = root, origin = origin, before = before, model = model, emitted = {}, prefix = before, prefix_reasons = node.kir and node.kir.reasons or {},
                base = before ~= "" and rank.predict(root, kernel, before, node.kir.reasons, model).speedup or 1 }
  local rows, seen = {}, {}
  local depth, limit = opts.depth or M.DEPTH, opts.limit or M.LIMIT
  if before ~= "" then
    -- extensions: the node's sequence and one primitive it has not used
    local used, fresh = used_in(before), {}
    local sok, seqs = pcall(kir.sequences, kernel, 1, limit)
    for _, seq in ipairs(sok and seqs or {}) do
      if not used[seq.text:match("^([%w_]+)")] then fresh[#fresh + 1] = seq end
    end
    add_rows(state, node, rows, seen, fresh, ctx)
    -- alternatives: the unscheduled kernel's other sequences (other parameters,
    -- other primitives), judged against the node, so the search can move sideways
    ctx.prefix, ctx.prefix_reasons = "", {}
  end
  local sok, seqs = pcall(kir.sequences, root, depth, limit)
  if sok then add_rows(state, node, rows, seen, seqs, ctx) end
  return rank.rank(rows)
end

return M
