-- Schedule rows for the forward search: the node's kernel lifted by kir,
-- its legal primitive sequences (depth 2, capped, and a third primitive
-- on the model's best sequence of each order), each emitted and predicted
-- by the static model (search/schedule_rank.lua), best first.
-- The emitted text is never trusted: the gate judges it as any source row.
-- A node a schedule made carries its IR (node.kir, with the sequence so far
-- and the unscheduled kernel), since emitted code with shared memory does
-- not lift again. Its rows are of two kinds, both judged against the node
-- and predicted as the model's gain of the whole sequence over the node's:
--   - extensions: its sequence and one primitive it has not used;
--   - alternatives (row.instead = the node's sequence): the unscheduled
--     kernel's other sequences, other parameters or other primitives, so
--     that a search that took a schedule can still measure its neighbours.
-- The compiler then reports on the rows the search would judge first
-- (M.with_resources; NVRTC, no GPU): a row that does not compile or
-- cannot launch is dropped, and where timed low occupancy is predicted
-- down and a register-bound row gains bound(blocks=K) variants.
--   schedules.rows(state, node, { depth = 2, limit = 100, compile, resources }) -> rows
--     compile: a function(source) -> kl.nvrtc result | nil, failure, run
--     in place of NVRTC (tests); resources = "full" | "launch" (the
--     default: full where timed, launch on emu) | false (the model alone)
--   row.kir = { kernel (the IR after the row's sequence), root, text (the whole sequence),
--               origin (the sha256 of the node root was lifted from) }
--   row.prior = schedules.prior(...): the schedule skills' weight of the row
--       (a family a blocking condition speaks against is not offered: a
--       skipped decision says which condition)
--   schedules.judged(state, row): forward.lua marks a row judged (or skipped
--       unjudged), and no later step of the run offers its sequence again
local kir = require "klineage.kir"
local kir_schedule = require "klineage.kir.schedule"
local describe = require "klineage.skills.describe"
local learn = require "klineage.skills.learn"
local record = require "klineage.skills.record"
local rank = require "klineage.search.schedule_rank"
local workload = require "klineage.workload"
local annotations = require "klineage.workload.annotations"
local resources = require "klineage.search.resources"
local skill_rows = require "klineage.search.skill_rows"
local tried_key = skill_rows.tried_key

local M = {}

M.DEPTH, M.LIMIT = 2, 100

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

-- The schedule skills of the repository (records with pattern.schedule,
-- learned from the walks' steps read as schedule deltas), by family.
local function schedule_skills(state)
  if state.schedule_skills == nil then
    state.schedule_skills = {}
    local ok, records = pcall(state.skill_records, state)
    for _, r in ipairs(ok and records or {}) do
      if r.pattern and r.pattern.schedule then state.schedule_skills[r.pattern.schedule] = r end
    end
  end
  return state.schedule_skills
end

M.PRIOR_RANKED_DOWN = 0.8 -- a factor for each condition that speaks against a family here but only ranks
M.PRIOR_PARAMS = 1.1      -- a row whose parameters are those the family's evidence saw pay
-- Whether a family's median speedup and its parameters weigh too. Both
-- off: measured on the development suite's tune part (bench/schedule_rank.lua
-- on the H200 schedules journal, --skills skills/sm_90), the model alone
-- puts the 90 %-best schedule first or second on 17 of 18 tasks (mean
-- position 1.11); weighed by the median, 14 of 18 (1.50); by its square
-- root, 17 (1.33); by the parameters, 17 (1.17); by the conditions
-- alone, 17 (1.11). The lineages' medians come from other contexts
-- (coarsen's 1.9x on transpose and reduction put it above vectorize on
-- element-wise kernels).
M.PRIOR_WEIGHS_MEDIAN, M.PRIOR_WEIGHS_PARAMS = false, false

-- The prior of a row: for each primitive family its sequence adds
-- (`added`, the text of what is new against the node), the family's skill,
-- its conditions read on the node's facts (a condition on a fact of the
-- changed kernel, "_after", or on a fact the node lacks is not known here
-- and says nothing): a blocking one that speaks against it blocks the row
-- (nil, why); else the factor is its expected gain, 1 + (median - 1) x
-- confidence weight, down for each condition that only ranks and speaks
-- against it, up where the row's parameters are those the evidence saw
-- pay (the last two only where M.PRIOR_WEIGHS_* say so). A family that never helped where measured is blocked only on
-- evidence from learn.BLOCK_LINEAGES lineages, else ranked by its median.
-- No skill for a family: no prior (1).
--   -> { factor, why, skills = { id... } } | nil, why (blocked)
function M.prior(state, node, added)
  local by = schedule_skills(state)
  if next(by) == nil then return { factor = 1, why = "no schedule skill", skills = {} } end
  local weight = skill_rows.CONFIDENCE_WEIGHT
  state.prior_values = state.prior_values or {}
  local values = state.prior_values[node.sha256] or learn.values({ facts = state:facts(node), facts_after = {} })
  state.prior_values[node.sha256] = values
  local function known(c) return not tostring(c[1]):match("_after$") and values[c[1]] ~= nil end
  local factor, whys, ids = 1, {}, {}
  for _, step in ipairs(kir_schedule.parse(added) or {}) do
    local r = by[step.name]
    if r then
      local against, never = 0, record.never_helped(r)
      if never and (r.confidence.lineages or 0) >= learn.BLOCK_LINEAGES then
        return nil, string.format("the skill %s is blocked: it never helped where measured, in %d lineages", r.id,
          r.confidence.lineages)
      end
      for _, list in ipairs({ { r.preconditions, false }, { r.guards, true } }) do
        for _, c in ipairs(list[1]) do
          if known(c) and describe.holds(c, values) == list[2] then
            if c.blocks ~= false then
              return nil, string.format("the skill %s is blocked here: %s %s", r.id, list[2] and "guard" or "precondition",
                describe.condition(c))
            end
            against = against + 1
          end
        end
      end
      local median = r.effect and r.effect.speedup and r.effect.speedup.median or 1
      local f = M.PRIOR_RANKED_DOWN ^ against
      if M.PRIOR_WEIGHS_MEDIAN then f = f * (1 + (median - 1) * (weight[r.confidence.level] or 0.25)) end
      local same
      for k, v in pairs(r.materialize.params or {}) do
        local have = step.params[k]
        if type(have) == "table" then have = table.concat(have, "x") end
        if have ~= nil then same = (same ~= false) and tostring(have) == tostring(v) end
      end
      if same and M.PRIOR_WEIGHS_PARAMS then f = f * M.PRIOR_PARAMS end
      factor = factor * f
      ids[#ids + 1] = r.id
      whys[#whys + 1] = string.format("%s %.2fx: %s; its evidence %.2fx median, %s confidence%s", r.id, f,
        against > 0 and string.format("%d condition%s against it here", against, against == 1 and "" or "s")
          or "no condition against it here", median, r.confidence.level, same and ", the parameters that paid" or "")
    end
  end
  return { factor = factor, why = #whys > 0 and table.concat(whys, "; ") or "no schedule skill for these families", skills = ids }
end

local function used_in(text)
  local used = {}
  for name in (text or ""):gmatch("([%w_]+)%b()") do used[name] = true end
  return used
end

-- A sequence that cannot launch for its grid along y or z (one block an
-- output past 65,535 of them), folded by persist so that it can: the
-- sequence with the fold, its kernel's text; nil where no fold helps.
M.FOLD_BLOCKS = 65535
local function fold(seq, text, w)
  local persist = kir.primitive("persist")
  for _, dim in ipairs({ "y", "z" }) do
    local params = { dim = dim, blocks = M.FOLD_BLOCKS }
    local nk, why = persist.apply(seq.kernel, params)
    local ok, t = false, nil
    if nk then ok, t = pcall(kir.emit, nk) end
    if ok and type(t) == "string" and t ~= text and not M.unlaunchable(t, w) then
      local reasons = { table.unpack(seq.reasons) }
      reasons[#reasons + 1] = why
      return { seq = { text = seq.text .. " " .. kir_schedule.text("persist", params), kernel = nk, reasons = reasons }, text = t }
    end
  end
end

-- One row per usable sequence: emitted, checked to launch, predicted over
-- the node's own prediction (base). `prefix` is the node's sequence the
-- row extends ("" where it starts from the unscheduled kernel again).
local function add_rows(state, node, rows, seen, seqs, ctx)
  for _, seq in ipairs(seqs) do
    local whole = ctx.prefix == "" and seq.text or ctx.prefix .. " " .. seq.text
    local first = whole:match("^([%w_]+)")
    local key = tried_key(node, "schedule:" .. tostring(first), whole, "{}")
    if not seen[whole] and whole ~= ctx.before and not state.tried[key] and not M.judged_before(state, ctx.origin, whole) then
      seen[whole] = true
      local eok, text = pcall(kir.emit, seq.kernel)
      -- (two sequences can emit one kernel: stage's exchange replaces the
      -- geometry a map before it chose; the kernel is offered once)
      local usable = eok and type(text) == "string" and text ~= node.source and not ctx.emitted[text]
      if usable then ctx.emitted[text] = true end
      local stop = usable and M.unlaunchable(text, state.workload)
      if stop then
        local folded = fold(seq, text, state.workload)
        if folded then
          seq, text, stop = folded.seq, folded.text, nil
          whole = ctx.prefix == "" and seq.text or ctx.prefix .. " " .. seq.text
        end
      end
      local prior, blocked
      if usable and not stop then prior, blocked = M.prior(state, node, ctx.prefix == "" and whole or seq.text) end
      if stop or blocked then
        state.tried[key] = true
        state:decide({ skill = "schedule:" .. first, site = whole, schedule = whole }, node,
                     { status = "skipped", why = stop and ("the schedule cannot launch: " .. stop) or blocked })
      elseif usable then
        local reasons = { table.unpack(ctx.prefix_reasons) }
        for _, r in ipairs(seq.reasons) do reasons[#reasons + 1] = r end
        local p = rank.predict(ctx.root, seq.kernel, whole, reasons, ctx.model)
        if ctx.base ~= 1 then
          local how = ctx.prefix == "" and "instead of " or "after "
          p = { speedup = p.speedup / ctx.base, why = string.format("%s%s: %s", how, ctx.before, p.why) }
        end
        if ctx.room and p.speedup > ctx.room then
          p = { speedup = ctx.room, why = string.format("%s; capped at %.2fx, the room the node's measured share of its roofline leaves",
            p.why, ctx.room) }
        end
        rows[#rows + 1] = { skill = "schedule:" .. first, site = whole, schedule = whole, params_key = "{}",
                            source = text, by = "schedule", because = seq.reasons, node = node, predicted = p,
                            instead = ctx.prefix == "" and ctx.before ~= "" and ctx.before or nil, prior = prior,
                            kir = { kernel = seq.kernel, root = ctx.root, text = whole, reasons = reasons, origin = ctx.origin } }
      end
    end
  end
end

-- One primitive more on the model's best few full-depth sequences of the
-- unscheduled kernel, the best of each order of primitives (a beam, not
-- the whole next level, whose size is the product of the candidates): a
-- contraction's map, register tile and staging come out together, where
-- depth 2 alone offers two of the three.
M.DEEPER = 6
local function deeper(ranked, depth, ctx)
  local out, taken, families = {}, 0, {}
  for _, r in ipairs(ranked) do
    if taken >= M.DEEPER then break end
    local text = r.kir.text
    local names = {}
    for name in text:gmatch("([%w_]+)%b()") do names[#names + 1] = name end
    local family = table.concat(names, " ")
    if not r.instead and r.kir.root == ctx.root and #names == depth and not families[family] then
      families[family], taken = true, taken + 1
      local used = used_in(text)
      local cok, cands = pcall(kir_schedule.candidates, r.kir.kernel)
      for _, c in ipairs(cok and cands or {}) do
        if not used[c.name] then
          local nk = kir.primitive(c.name).apply(r.kir.kernel, c.params)
          if nk then
            local reasons = { table.unpack(r.kir.reasons) }
            reasons[#reasons + 1] = c.reason
            out[#out + 1] = { text = text .. " " .. c.text, kernel = nk, reasons = reasons }
          end
        end
      end
    end
  end
  return out
end

-- The compiler's report on the rows the search would judge first:
--   - a row that does not compile, or no block of which fits on a
--     multiprocessor, is dropped, a skipped decision saying why (a cycle
--     the gate would have spent on a compile or launch error);
--   - a row whose occupancy is under resources.KNEE is predicted down by
--     resources.factor, relative to the node's own measured occupancy;
--   - where registers alone hold it there, bound(blocks=K) variants (K
--     blocks of the row's threads making 512 or 1024 a multiprocessor, or
--     one where none fits) are compiled too and offered where ptxas fits
--     them with no spill and a higher occupancy, predicted at the
--     occupancy they reach.
-- On emu only whether a row launches is read (below), so that what emu
-- keeps is what a GPU would launch.
M.RESOURCE_ROWS = 8
M.BOUND_THREADS = { 512, 1024 }
M.LAUNCH_THREADS = 512
M.LAUNCH_ROWS = 4 -- on emu: the first four, in one round

local function node_factor(node)
  local c = type(node.record) == "table" and type(node.record.stages) == "table" and node.record.stages.compile
  return resources.factor(type(c) == "table" and tonumber(c.occupancy) or nil)
end

local function scaled(p, factor, why)
  return { speedup = p.speedup * factor, why = string.format("%s; x%.2f: %s", p.why, factor, why) }
end

local function occupancy_text(rep)
  return string.format("occupancy %.3g (%d registers a thread, %d blocks a multiprocessor, bound by %s)", rep.occupancy,
    rep.registers, rep.active_blocks, tostring(rep.limited_by))
end

local function bound_rows(state, r, rep, full)
  local out, bound, tried = {}, kir.primitive("bound"), {}
  -- one block where none fits yet (a block of 1024 whose registers the
  -- register file cannot hold), else (full) 512 or 1024 threads a multiprocessor
  local totals = rep.active_blocks == 0 and { rep.threads } or {}
  for _, t in ipairs(full and M.BOUND_THREADS or {}) do totals[#totals + 1] = t end
  for _, total in ipairs(totals) do
    local blocks = total // rep.threads
    if total % rep.threads == 0 and blocks >= 1 and blocks > rep.active_blocks and not tried[blocks] then
      tried[blocks] = true
      local nk, why = bound.apply(r.kir.kernel, { blocks = blocks })
      local eok, text = false, nil
      if nk then eok, text = pcall(kir.emit, nk) end
      local whole = r.schedule .. " " .. kir_schedule.text("bound", { blocks = blocks })
      -- not the node's own sequence (a row instead of it, bounded as it
      -- was), nor one judged or ruled out before
      local fresh = whole ~= (r.node.kir and r.node.kir.text) and not M.judged_before(state, r.kir.origin, whole)
        and not state.tried[tried_key(r.node, r.skill, whole, "{}")]
      if fresh and eok and type(text) == "string" then
        local reasons = { table.unpack(r.kir.reasons) }
        reasons[#reasons + 1] = why
        local because = { table.unpack(r.because) }
        because[#because + 1] = why
        out[#out + 1] = { skill = r.skill, site = whole, schedule = whole, params_key = "{}", source = text, by = "schedule",
                          because = because, node = r.node, instead = r.instead, prior = r.prior,
                          kir = { kernel = nk, root = r.kir.root, text = whole, reasons = reasons, origin = r.kir.origin } }
      end
    end
  end
  return out
end

M.RESOURCE_ROUNDS = 3 -- a row predicted down lets others up: those are read too

-- The rows worth a compile: those holding a tile in registers or a block's
-- operands in shared memory, the two primitives that move a kernel's
-- registers or shared memory enough to change its occupancy.
local function heavy(text) return text:find("register_tile(", 1, true) or text:find("stage(", 1, true) end

-- What resources reads of a row: its kernel and its own launch line's name.
local function launch_item(r) return { source = r.source, launch = r.kir.kernel.launch.named } end

local function sources(list)
  local s = {}
  for i, r in ipairs(list) do s[i] = launch_item(r) end
  return s
end

-- A row not offered, said in a skipped decision; no later step offers it.
local function skip(state, node, r, why)
  state.tried[tried_key(r.node, r.skill, r.site, "{}")] = true
  state:decide({ skill = r.skill, site = r.site, schedule = r.schedule }, node, { status = "skipped", why = why })
end

-- One round: the compiler's report on `top`, bound variants included;
-- returns the rows to drop and the bound rows to add.
local function read_round(state, node, top, ropts, base, full)
  -- bounded[i]: a bound row; parents[i]: its row's report and prediction before the occupancy factor
  local reps, dropped, bounded, parents, added = resources.of(sources(top), ropts), {}, {}, {}, {}
  for i, r in ipairs(top) do
    local rep = reps[i]
    r.resources = rep
    if not rep.ok and rep.why:match("^does not compile") then
      dropped[r] = true
      skip(state, node, r, "the schedule " .. rep.why)
    elseif rep.ok then
      local unbounded, f = r.predicted, full and resources.factor(rep.occupancy) / base or 1
      if rep.limited_by == "registers" and rep.occupancy < resources.KNEE and rep.spill_stores == 0
         and not r.kir.kernel.schedule.persist then -- (nothing follows persist)
        for _, b in ipairs(bound_rows(state, r, rep, full)) do
          bounded[#bounded + 1], parents[#bounded + 1] = b, { rep = rep, predicted = unbounded }
        end
      end
      if rep.active_blocks == 0 then
        -- the device would refuse every launch (the gate's launch_error)
        dropped[r] = true
        skip(state, node, r, "the schedule cannot launch: " .. occupancy_text(rep))
      elseif f < 0.99 or f > 1.01 then
        r.predicted = scaled(r.predicted, f, occupancy_text(rep))
      end
    end
  end
  for i, rep in ipairs(#bounded > 0 and resources.of(sources(bounded), ropts) or {}) do
    local b = bounded[i]
    if rep.ok and rep.spill_stores == 0 and rep.occupancy > parents[i].rep.occupancy then
      b.resources = rep
      b.predicted = scaled(parents[i].predicted, full and resources.factor(rep.occupancy) / base or 1,
        "under __launch_bounds__, " .. occupancy_text(rep))
      added[#added + 1] = b
    end
  end
  return dropped, added
end

-- mode "full" (where timed): all of the above. "launch" (emu, where no
-- time is measured and a compile costs the CPU a second): only the rows
-- of 512 threads or more, the only ones whose registers can keep a block
-- off a multiprocessor (256 threads of 255 registers fit), read for
-- whether they launch, with bound(blocks=1) where none fits; the first
-- LAUNCH_ROWS rows, one round.
function M.with_resources(state, node, rows, opts)
  local mode = opts.resources or (state.timed and "full" or "launch")
  local full = mode == "full"
  local ropts = { arch = state.ctx and state.ctx.arch or "sm_90", workload = state.workload, kernel = state.workload.kernel,
                  compile = opts.compile }
  local base = full and node_factor(node) or 1
  local first = full and M.RESOURCE_ROWS or M.LAUNCH_ROWS
  for _ = 1, full and M.RESOURCE_ROUNDS or 1 do
    -- the first rows the search would judge, those not read yet
    local top, seen = {}, 0
    for _, r in ipairs(rows) do
      if seen >= first then break end
      if not (r.predicted and r.predicted.speedup < 1) then
        seen = seen + 1
        if r.by == "schedule" and not r.resources and heavy(r.schedule)
           and (full or (resources.block(launch_item(r), state.workload) or 0) >= M.LAUNCH_THREADS) then
          top[#top + 1] = r
        end
      end
    end
    if #top == 0 then break end
    local dropped, added = read_round(state, node, top, ropts, base, full)
    local out = {}
    for _, r in ipairs(rows) do if not dropped[r] then out[#out + 1] = r end end
    for _, b in ipairs(added) do out[#out + 1] = b end
    rows = rank.spread(rank.rank(out))
  end
  return rows
end

-- The room a node's measured share of its roofline leaves (100 % / share:
-- no kernel with the spec's bytes and flops is faster than that over it),
-- or nil where the node was not timed.
local function room_of(node)
  local p = type(node.record) == "table" and type(node.record.stages) == "table" and node.record.stages.profile
  local share = type(p) == "table" and tonumber(p.pct_of_roofline)
  if share and share > 0 then return math.max(1, 100 / share) end
end

function M.rows(state, node, opts)
  opts = opts or {}
  local ok, kernel, why = true, node.kir and node.kir.kernel, nil
  if not kernel then
    ok, kernel, why = pcall(kir.lift, node.source, { kernel = state.workload.kernel, workload = state.workload })
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
                room = room_of(node),
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
  if sok then
    add_rows(state, node, rows, seen, seqs, ctx)
    add_rows(state, node, rows, seen, deeper(rank.rank(rows), depth, ctx), ctx)
  end
  rows = rank.spread(rank.rank(rows))
  if opts.resources ~= false then rows = M.with_resources(state, node, rows, opts) end
  return rows
end

return M
