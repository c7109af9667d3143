-- Learning *when* a skill pays: preconditions, guards, effect and
-- confidence from the observations of its applications (the record's
-- format is at the top of klineage.skills.record; conditions are said in
-- English by klineage.skills.describe).
--
--   learn.skill(id, observations, opts) -> record
--   learn.repository(observations, opts) -> { record... } sorted by id,
--       one per distinct observation.skill, { { id, why }... } the records
--       left out because learn.unusable says why
--   learn.unusable(record [, opts]) -> why | nil: a template whose pattern
--       does not compile, or (opts.elsewhere) matches no kernel of another
--       lineage, is not shipped
--     opts = { arch = "sm_90" (default: the observations' arch, else sm_90),
--              intents = { [transform] = sentence } (default: the
--              transform's own intent, klineage.transforms),
--              elsewhere = { { lineage, text }... } (the kernels a template
--              must match one of beside its own lineage's) }
--   learn.canonical(v) -> a text that is equal for equal plain values
--       (keys sorted): merge dedupes by it, tests compare records with it
--   learn.learnable(name) -> true when the fact may be a condition
--   learn.names(observations) -> { [name] = what } the names they chose
--   learn.name_keyed(fact, names) -> name, why | nil: the name a fact's
--       key embeds (then it is never a condition)
--   learn.keep_facts(flat) -> the flat facts a record keeps (learnable +
--       what transfer needs to recompute occupancy)
--   learn.copy(plain) -> a deep copy of plain data
--   learn.transform_params(transform, params) -> params | nil: params as
--       the transform takes them (an integral float an integer; a text
--       that names something, a #define of the training kernel, left out
--       for the transform's default); nil when none is left
--   learn.values(observation) -> the flat values conditions are tested on
--   learn.admits(record, values) -> true | false, blocking condition, kind
--       (a condition that only ranks, blocks = false, never blocks)
--       (kind "evidence", with no condition, for a skill that never helped:
--       klineage.skills.record.never_helped)
--   Misuse (no observation, an observation without evidence.run/key or
--   outcome) raises: observations come from our own extraction.
--
-- An observation (one judged application of the skill; klineage.skills.extract
-- makes them):
--   { skill, transform | nil, params | nil, lineage, from, to, site,
--     outcome = helped | no_difference | hurt | wrong | rejected | nil
--       (nil: judged but not timed), verdict, speedup, ci, measured,
--     facts, facts_after (flat, the vocabulary's names), evidence = { run,
--     key [, candidate, kind = "walk_step" | "walk_evidence" | "probe"] },
--     backend, arch, [template = { before, after }], [example = { before,
--     after }], [pattern = "<pattern text>"], [intent = sentence],
--     [names = { name... } every name the kernels and their spec chose] }
--   learn uses skill, outcome, measured, speedup, facts, facts_after,
--   evidence, lineage/from/to/verdict (in the English), transform/params/
--   template/pattern/example/intent (materialize, pattern, example); it
--   keeps the rest as it was given.
--
-- The record has every field of klineage.skills.record, among them:
--   observations = { observation... }   the inputs, sorted by evidence run,
--       key, candidate, with facts and facts_after cut to learn.keep_facts;
--       merge and transfer learn again from them
--   unexplained = { { evidence = { ref... }, why = text }... }   failures
--       (hurt, wrong, rejected) that no single fact separates from the
--       helped observations; present only when there is one
-- and confidence.why: one line saying what the counts mean (for instance
-- that nothing was seen to fail, so no precondition could be learned).
--
-- Labels. helped: outcome "helped" and measured. not helped: a measured
-- "no_difference" or "hurt", or a "wrong" / "rejected" anywhere (a wrong
-- result on emu is a failure all the same). An observation with no
-- outcome (judged correct, never timed), or unmeasured with another
-- outcome (emu), has no speed label: it is kept as evidence
-- and for its facts, and counts for nothing else.
--
-- Learnable facts: the families that mean the same thing across kernels
-- (LEARNABLE below), read from facts and, with the suffix "_after", from
-- facts_after (workload facts, size.* and buffer.*, do not change with the
-- kernel: they have no "_after"). Never loop.<n>.* (positional), arch.*
-- (constant on one arch: transfer deals with them) or text facts; of the
-- profile facts only the relative ones (% of roofline or peak, achieved
-- occupancy, sectors per request, bank conflicts): time, GB/s and GFLOP/s
-- are the workload's size as much as the kernel's, and on the H200
-- journals they made conditions that split lineages, not contexts.
--
-- Names are refused. A fact whose key embeds a name that a kernel or its
-- spec chose (access.A.coalesced, size.cols, define.ALPHA, shared.As.*)
-- holds only where that name is used: it is never a precondition or a
-- guard (learn.name_keyed). The names are the observations' own (their
-- `names`: parameters, buffers, sizes, constants, the kernel's locals)
-- and, for observations extracted before they carried them, the names
-- their facts' keys hold in a name's place (facts/vocabulary.lua's
-- <param>, <P>, <B>, <NAME>, <array>). The role facts (role.*, facts/
-- roles.lua) say the same of any kernel. Where a refused fact would have
-- been a condition, confidence.why names it.
--
-- Preconditions: decision stumps. Candidates are, per fact, "fact >= t"
-- and "fact < t" at the midpoints t between its sorted distinct values,
-- and "fact == v" (booleans, words) and "fact ~= v" (words). A candidate
-- is valid when it is known and holds in every helped observation (a fact
-- one of them lacks, such as another kernel's access.A.*, cannot be what
-- made that one pay), and there are at least MIN_HELPED of them; it is
-- scored by the not-helped observations it excludes (the fact known there
-- and the condition false). At most MAX_PRECONDITIONS are kept, greedily:
-- each must exclude a not-helped observation that the ones before it did
-- not, and be on a fact not yet used. Ties: family priority (size divisibility, sizes,
-- resources after the change, occupancy, the rest), then the name in
-- natural order (div4 before div16), then op and value.
--   support = { helped = helped observations it admits,
--               not_helped = not-helped observations it excludes }
--   evidence = the refs of both
-- With no not-helped observation there is nothing to separate: no
-- precondition is learned, and confidence.why says so.
--
-- Blocking: a precondition or guard has blocks = true only when the
-- observations it keeps the skill away from (the not-helped ones a
-- precondition excludes, the failures a guard explains) come from at
-- least M.BLOCK_LINEAGES lineages, or one of them is a wrong result;
-- otherwise blocks = false: it ranks the skill down where it speaks
-- against it (klineage.skills.match, search/skill_rows.lua). Its why
-- ends by saying which.
--
-- Guards: each failure (hurt, wrong, rejected) is explained by the single
-- condition that holds for it and for the fewest helped observations
-- (there must be more helped observations where it does not hold than
-- where it does); ties go to the condition that explains more failures,
-- is known in more helped observations, has the higher family priority,
-- and for a threshold sits nearer the helped values. Failures explained by
-- the same condition share one guard. Conditions of the same family that
-- split the observations exactly alike are named in the why ("K < 2560
-- (M < 2560, N < 2560 alike)"): the data cannot tell them apart.
--   support = { helped = helped observations it lets through (it does not
--               hold there), not_helped = failures it blocks }
--   evidence = the refs of both;  source = "probe" when every failure it
--   explains came from a probe (evidence.kind == "probe"), else "walk"
--
-- Confidence, how much evidence stands behind the skill: supporting =
-- helped, contradicting = not helped, lineages = the lineages of both.
-- level: "seen once" with one observation; else "high" with at least
-- HIGH.n helped, a helped share of at least HIGH.share and HIGH.lineages
-- lineages, "medium" with MEDIUM.n, MEDIUM.share and MEDIUM.lineages, else
-- "low". With no not-helped observation
-- the level is at most "medium": nothing says where it stops paying.
--
-- Effect: speedup median/min/max/n over the measured observations with a
-- speedup, and ci = { lo, hi }: the median's noise interval (M.NOISE_LEVEL,
-- order statistics over each measurement's own compare interval; min and
-- max of them under six measurements). An untimed backend keeps a skill's
-- candidate only where lo > 1 (search/forward.lua); resources: the median of facts_after - facts of registers,
-- smem_per_block, occupancy and spill_stores, where both are known.
local describe = require "klineage.skills.describe"
local facts = require "klineage.facts"
local roles = require "klineage.facts.roles"
local cite = require "klineage.skills.refs"

local M = {}

M.MAX_PRECONDITIONS = 3
-- A precondition says what held every time the skill paid: one success
-- cannot tell which of its fifty facts mattered (on the H200 journals each
-- such stump, launch.blocks < 16.5 from one bfs step, blocked the skill
-- on every held-out kernel where the gate later saw it pay).
M.MIN_HELPED = 2
-- How much evidence stands behind a level: one lineage's steps are one
-- kernel family seen several times, not several contexts.
M.HIGH = { n = 5, share = 0.8, lineages = 3 }
M.MEDIUM = { n = 3, share = 0.6, lineages = 2 }
-- A condition blocks a skill only on evidence from this many lineages, or
-- on a wrong result; otherwise it ranks the skill down. One lineage's
-- slowdowns are that kernel's (on emu a coin toss at noise level decided
-- as much as a fact did).
M.BLOCK_LINEAGES = 3

-- Whether a condition whose evidence against the skill is `against`
-- (rows) blocks, and the words that say so.
local function blocking(against)
  local lineages, n, wrong = {}, 0, false
  for _, r in ipairs(against) do
    local l = r.obs.lineage or ""
    if not lineages[l] then lineages[l] = true n = n + 1 end
    if r.obs.outcome == "wrong" then wrong = true end
  end
  if wrong then return true, "it blocks: a wrong result" end
  if n >= M.BLOCK_LINEAGES then return true, string.format("it blocks: seen in %d lineages", n) end
  return false, string.format("it only ranks: seen in %d lineage%s, with no wrong result", n, n == 1 and "" or "s")
end

-- ---- canonical text of plain values ------------------------------------------------

local function sorted_keys(t)
  local keys = {}
  for k in pairs(t) do keys[#keys + 1] = k end
  table.sort(keys, function(a, b)
    local ta, tb = type(a), type(b)
    if ta ~= tb then return ta < tb end
    return a < b
  end)
  return keys
end

local function canonical(v, out)
  local t = type(v)
  if t == "table" then
    out[#out + 1] = "{"
    for _, k in ipairs(sorted_keys(v)) do
      canonical(k, out)
      out[#out + 1] = "="
      canonical(v[k], out)
      out[#out + 1] = ","
    end
    out[#out + 1] = "}"
  elseif t == "string" then
    out[#out + 1] = string.format("%q", v)
  elseif t == "number" then
    out[#out + 1] = math.type(v) == "integer" and tostring(v) or string.format("%.17g", v)
  else
    out[#out + 1] = tostring(v)
  end
end

function M.canonical(v)
  local out = {}
  canonical(v, out)
  return table.concat(out)
end

local copy = cite.copy
M.copy = copy -- transfer copies observations with it

-- ---- which facts are learnable --------------------------------------------------

local LEARNABLE = {
  "^size%.[%w_]+$", "^size%.[%w_]+%.div%d+$", "^size%.[%w_]+%.div%.[%w_]+$",
  "^buffer%.[%w_]+%.align16$",
  "^occupancy$", "^occupancy%.limited_by$",
  "^registers$", "^spill_stores$", "^spill_loads$", "^spills$", "^smem_per_block$",
  "^launch%.threads$", "^launch%.blocks$",
  "^access%.[%w_]+%.coalesced$", "^access%.[%w_]+%.vector_width$", "^access%.[%w_]+%.loop_reuse$",
  "^access%.[%w_]+%.restrict$", "^access%.[%w_]+%.const$",
  "^shared%.[%w_]+%.bank_ways$",
  "^define%.[%w_]+$",
  "^profile%.pct_of_roofline$", "^profile%.dram_throughput_pct$", "^profile%.achieved_occupancy$",
  "^profile%.smem_bank_conflicts$", "^profile%.global_ld_bytes_per_sector_pct$", "^profile%.sectors_per_request$",
  "^role%.[%w_%.]+$",
}

-- Kept in a record's observations though never a condition: what
-- facts.for_arch needs to recompute occupancy on another arch.
local CARRIED = { smem_static = true, ["launch.smem_dynamic"] = true, registers_arch = true }

-- Workload facts: the same before and after a change, so no "_after".
local function is_workload(name) return name:match("^size%.") or name:match("^buffer%.") end

local function learnable_base(name, value)
  local entry = facts.describe(name)
  if not entry then return false end
  local matched = false
  for _, p in ipairs(LEARNABLE) do
    if name:match(p) then matched = true break end
  end
  if not matched then return false end
  local t = type(value)
  if entry.unit == "text" or entry.unit == "name" then return false end
  if name:match("^define%.") or name:match("^profile%.") then return t == "number" end
  return t == "number" or t == "boolean" or t == "string"
end

function M.learnable(name)
  local base, after = name:match("^(.*)_after$"), true
  if not base then base, after = name, false end
  if after and is_workload(base) then return false end
  local entry = facts.describe(base)
  if not entry then return false end
  for _, p in ipairs(LEARNABLE) do
    if base:match(p) then return entry.unit ~= "text" and entry.unit ~= "name" end
  end
  return false
end

function M.keep_facts(flat)
  local out = {}
  for k, v in pairs(flat or {}) do
    if type(k) == "string" and (learnable_base(k, v) or (CARRIED[k] and facts.describe(k))) then out[k] = v end
  end
  return out
end

-- ---- observations -----------------------------------------------------------------

local FAILURES = { hurt = true, wrong = true, rejected = true }
local OUTCOMES = { helped = true, no_difference = true, hurt = true, wrong = true, rejected = true }

-- "helped" | "not_helped" | nil (no speed label: unmeasured and correct)
local function label(o)
  if o.outcome == nil then return nil end
  if o.outcome == "wrong" or o.outcome == "rejected" then return "not_helped" end
  if o.measured == false then return nil end
  if o.outcome == "helped" then return "helped" end
  return "not_helped"
end

local function ev_key(o)
  local e = o.evidence
  return table.concat({ e.run, e.key, e.candidate or "" }, "\0")
end

local function check_observation(o, i)
  if type(o) ~= "table" then error("learn: observation " .. i .. " is not a table", 3) end
  if type(o.evidence) ~= "table" or type(o.evidence.run) ~= "string" or type(o.evidence.key) ~= "string" then
    error("learn: observation " .. i .. " has no evidence { run, key }", 3)
  end
  if o.outcome ~= nil and not OUTCOMES[o.outcome] then
    error("learn: observation " .. i .. " has an unknown outcome '" .. tostring(o.outcome) .. "'", 3)
  end
end

-- The observations as the record keeps them: facts cut, sorted by
-- evidence (then by their whole text, so equal keys still sort one way).
local function prepared(observations)
  local list = {}
  for i, o in ipairs(observations) do
    check_observation(o, i)
    local p = copy(o)
    p.facts = M.keep_facts(o.facts)
    p.facts_after = M.keep_facts(o.facts_after)
    list[#list + 1] = { obs = p, key = ev_key(p), text = M.canonical(p) }
  end
  table.sort(list, function(a, b)
    if a.key ~= b.key then return a.key < b.key end
    return a.text < b.text
  end)
  local out = {}
  for i, x in ipairs(list) do out[i] = x.obs end
  return out
end

-- The flat values a condition is tested on: facts, and facts_after with "_after".
local function values_of(o)
  local v = {}
  for k, x in pairs(o.facts) do if learnable_base(k, x) then v[k] = x end end
  for k, x in pairs(o.facts_after) do
    if learnable_base(k, x) and not is_workload(k) then v[k .. "_after"] = x end
  end
  return v
end

M.values = values_of

-- The names the observations' kernels and specs chose: their `names`, and
-- what their facts' keys hold in a name's place.
function M.names(observations)
  local out = {}
  for _, o in ipairs(observations) do
    for _, n in ipairs(type(o.names) == "table" and o.names or {}) do
      if type(n) == "string" then out[n] = out[n] or "a name of the kernel or its spec" end
    end
    for _, list in ipairs({ o.facts or {}, o.facts_after or {} }) do
      for k in pairs(list) do
        local n, why = roles.name_in(k, {})
        if n and not out[n] then out[n] = why:match("^[%w_]+ is (.*)$") or "a name of the kernel" end
      end
    end
  end
  return out
end

function M.name_keyed(fact, names) return roles.name_in(fact, names) end

-- A skill measured only where it did not pay (the bfs queue lost on both
-- graphs) has nothing to separate and so no condition: it is blocked by
-- its evidence instead, everywhere, until an observation shows it paying.
-- Whether a record admits a context (flat values as values_of gives):
-- every precondition holds (an absent fact does not) and no guard does.
-- Returns true, or false and the condition that blocks, and its kind.
-- A condition with blocks = false only ranks (M.BLOCK_LINEAGES): it never
-- blocks here.
function M.admits(record, values)
  if require("klineage.skills.record").never_helped(record) then return false, nil, "evidence" end
  for _, c in ipairs(record.preconditions) do
    if c.blocks ~= false and describe.holds(c, values) ~= true then return false, c, "precondition" end
  end
  for _, c in ipairs(record.guards) do
    if c.blocks ~= false and describe.holds(c, values) == true then return false, c, "guard" end
  end
  return true
end

local step_of, ref_of = cite.step, cite.short

-- ---- ordering -----------------------------------------------------------------------

-- Family priority: lower first.
local RESOURCE_ORDER = { spill_stores = 1, spill_loads = 2, spills = 3, registers = 4, smem_per_block = 5 }

-- correctness: separating wrong or rejected results, where divisibility
-- (alignment, ragged tiles) comes before magnitude; speed the other way.
local function priority(name, correctness)
  local base = name:match("^(.*)_after$")
  local after = base ~= nil
  base = base or name
  if base:match("^size%.[%w_]+%.div") then return correctness and 10 or 20 end
  if base:match("^size%.") then return correctness and 20 or 10 end
  if after and RESOURCE_ORDER[base] then return 30 + RESOURCE_ORDER[base] end
  if base == "occupancy" or base == "occupancy.limited_by" then return after and 41 or 40 end
  return 50
end

-- Natural order: the numbers in a name compare as numbers.
local function natural(name)
  return (name:gsub("%d+", function(d) return string.format("%012d", tonumber(d)) end))
end

local OP_RANK = { ["=="] = 1, ["~="] = 2, ["<"] = 3, ["<="] = 4, [">"] = 5, [">="] = 6 }

local function value_less(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return ta < tb end
  if ta == "boolean" then return (not a) and b end
  return a < b
end

-- The fixed tie-break of two candidate conditions.
local function tie_less(a, b, ca, cb)
  local pa, pb = priority(a[1], ca), priority(b[1], cb)
  if pa ~= pb then return pa < pb end
  local na, nb = natural(a[1]), natural(b[1])
  if na ~= nb then return na < nb end
  if a[2] ~= b[2] then return OP_RANK[a[2]] < OP_RANK[b[2]] end
  return value_less(a[3], b[3])
end

local function condition_less(a, b)
  if a[1] ~= b[1] then return natural(a[1]) < natural(b[1]) end
  if a[2] ~= b[2] then return OP_RANK[a[2]] < OP_RANK[b[2]] end
  return value_less(a[3], b[3])
end

-- ---- candidates -------------------------------------------------------------------------

-- Every candidate condition over the facts of `rows` ({ values }...);
-- with names, those over a name-keyed fact go to the second list instead.
local function candidates(rows, names)
  local by_fact = {}
  for _, r in ipairs(rows) do
    for k, v in pairs(r.values) do
      by_fact[k] = by_fact[k] or {}
      by_fact[k][v] = true
    end
  end
  local out, refused = {}, {}
  for _, name in ipairs(sorted_keys(by_fact)) do
    local list = out
    if names and roles.name_in(name, names) then list = refused end
    local out = list
    local seen = by_fact[name]
    local numbers, others = {}, {}
    for v in pairs(seen) do
      if type(v) == "number" then numbers[#numbers + 1] = v else others[#others + 1] = v end
    end
    table.sort(numbers)
    table.sort(others, value_less)
    for i = 1, #numbers - 1 do
      local t = (numbers[i] + numbers[i + 1]) / 2
      if math.type(numbers[i]) == "integer" and math.type(numbers[i + 1]) == "integer" and t == math.floor(t) then
        t = math.tointeger(t)
      end
      out[#out + 1] = { name, ">=", t }
      out[#out + 1] = { name, "<", t }
    end
    for _, v in ipairs(others) do
      out[#out + 1] = { name, "==", v }
      if type(v) == "string" then out[#out + 1] = { name, "~=", v } end
    end
  end
  return out, refused
end

-- Of rows, those where c is known and holds / known and fails.
local function split(c, rows)
  local yes, no = {}, {}
  for _, r in ipairs(rows) do
    local h = describe.holds(c, r.values)
    if h == true then yes[#yes + 1] = r elseif h == false then no[#no + 1] = r end
  end
  return yes, no
end

-- Whether some lineage has rows on both sides. A workload fact means what
-- its lineage means by it (sgemm's K is the reduction, conv2d's K the
-- output channels): a size separates contexts only within one lineage.
local function same_lineage(a, b)
  local seen = {}
  for _, r in ipairs(a) do seen[r.obs.lineage or ""] = true end
  for _, r in ipairs(b) do
    if seen[r.obs.lineage or ""] then return true end
  end
  return false
end

local function refs(...)
  local list = {}
  for _, rows in ipairs({ ... }) do
    for _, r in ipairs(rows) do list[#list + 1] = r end
  end
  table.sort(list, function(a, b) return a.index < b.index end)
  local out, seen = {}, {}
  for _, r in ipairs(list) do
    if not seen[r.index] then seen[r.index] = true out[#out + 1] = ref_of(r.obs) end
  end
  return out
end

-- ---- preconditions ----------------------------------------------------------------------

-- The candidates that hold wherever it helped and exclude some
-- not-helped observation.
local function valid_preconditions(list, helped, not_helped)
  local valid = {}
  for _, c in ipairs(list) do
    local hy = split(c, helped)
    if #hy == #helped then
      local _, excluded = split(c, not_helped)
      if #excluded > 0 and (not is_workload(c[1]) or same_lineage(hy, excluded)) then
        local correctness = true
        for _, r in ipairs(excluded) do
          if r.obs.outcome ~= "wrong" and r.obs.outcome ~= "rejected" then correctness = false end
        end
        valid[#valid + 1] = { c = c, admits = hy, excludes = excluded, correctness = correctness }
      end
    end
  end
  return valid
end

-- refused: a set the name-keyed facts that would have been valid go to.
local function learn_preconditions(helped, not_helped, all, names, refused)
  if #helped < M.MIN_HELPED or #not_helped == 0 then return {} end
  local allowed, named = candidates(all, names)
  local valid = valid_preconditions(allowed, helped, not_helped)
  for _, v in ipairs(valid_preconditions(named, helped, not_helped)) do refused[v.c[1]] = true end
  local chosen, covered, used = {}, {}, {}
  while #chosen < M.MAX_PRECONDITIONS do
    local best, best_gain
    for _, v in ipairs(valid) do
      if not used[v.c[1]] then
        local gain = 0
        for _, r in ipairs(v.excludes) do if not covered[r.index] then gain = gain + 1 end end
        if gain > 0 and (not best or gain > best_gain or (gain == best_gain and tie_less(v.c, best.c, v.correctness, best.correctness))) then
          best, best_gain = v, gain
        end
      end
    end
    if not best then break end
    used[best.c[1]] = true
    for _, r in ipairs(best.excludes) do covered[r.index] = true end
    local c = best.c
    local blocks, said = blocking(best.excludes)
    chosen[#chosen + 1] = {
      c[1], c[2], c[3],
      why = string.format("held wherever it helped (%d of %d), and fails where it did not: %s; %s",
        #best.admits, #helped, describe.negation(c), said),
      blocks = blocks,
      support = { helped = #best.admits, not_helped = #best.excludes },
      evidence = refs(best.admits, best.excludes),
    }
  end
  table.sort(chosen, condition_less)
  return chosen
end

-- ---- guards ---------------------------------------------------------------------------

-- 0.81x; a slowdown that rounds to 1.00x keeps a third digit (0.998x).
local function fmt_x(x)
  local s = string.format("%.2f", x)
  if s == "1.00" and x ~= 1 then s = string.format("%.3f", x) end
  return s .. "x"
end

M.SAID_FAILURES = 3 -- a guard's why names this many failures, then counts the rest

local function median(xs)
  local s = {}
  for i, x in ipairs(xs) do s[i] = x end
  table.sort(s)
  local n = #s
  if n == 0 then return nil end
  if n % 2 == 1 then return s[(n + 1) // 2] end
  return (s[n // 2] + s[n // 2 + 1]) / 2
end

-- "slowed sgemm a -> b by 0.81x at M = 1024"
local function what_happened(o, fact)
  local where = ""
  local base = fact:match("^(.*)_after$") or fact
  local v = (fact ~= base) and o.facts_after[base] or o.facts[base]
  if v ~= nil then
    local at = describe.condition({ fact, "==", v })
    where = (type(v) == "number" and " at " or " where ") .. at
  end
  local step = (o.lineage and (o.lineage .. " ") or "") .. (step_of(o) or "")
  if o.outcome == "hurt" then
    return string.format("slowed %s by %s%s", step, o.speedup and fmt_x(o.speedup) or "a measured slowdown", where)
  elseif o.outcome == "wrong" then
    return string.format("gave wrong results on %s%s", step, where)
  end
  return string.format("was rejected (%s) on %s%s", tostring(o.verdict or "a gate stage"), step, where)
end

-- Where the helped observations that the guard lets through lie, in words.
local function where_it_paid(c, passed)
  local vals, speeds = {}, {}
  for _, r in ipairs(passed) do
    vals[#vals + 1] = r.values[c[1]]
    if r.obs.speedup then speeds[#speeds + 1] = r.obs.speedup end
  end
  local said
  if c[2] == "<" or c[2] == "<=" then
    table.sort(vals)
    said = describe.condition({ c[1], ">=", vals[1] })
  elseif c[2] == ">" or c[2] == ">=" then
    table.sort(vals)
    said = describe.condition({ c[1], "<=", vals[#vals] })
  else
    said = describe.negation(c)
  end
  local m = median(speeds)
  return "while it paid where " .. said .. (m and (" (" .. fmt_x(m) .. ")") or "")
end

local function best_guard(f, failures, helped, all_candidates)
  local best
  local correctness = f.obs.outcome ~= "hurt"
  for _, c in ipairs(all_candidates) do
    if describe.holds(c, f.values) == true then
      local violations, passed = split(c, helped)
      if #passed > #violations and (not is_workload(c[1]) or same_lineage({ f }, passed)) then
        local blocked = split(c, failures)
        local margin = 0
        if type(c[3]) == "number" then margin = math.abs(c[3] - f.values[c[1]]) end
        local s = { c = c, violations = violations, passed = passed, blocked = blocked, margin = margin }
        local better
        if not best then better = true
        elseif #s.violations ~= #best.violations then better = #s.violations < #best.violations
        elseif #s.blocked ~= #best.blocked then better = #s.blocked > #best.blocked
        elseif #s.passed ~= #best.passed then better = #s.passed > #best.passed
        elseif priority(c[1], correctness) ~= priority(best.c[1], correctness) then
          better = priority(c[1], correctness) < priority(best.c[1], correctness)
        elseif c[1] == best.c[1] and c[2] == best.c[2] and s.margin ~= best.margin then better = s.margin > best.margin
        else better = tie_less(c, best.c, correctness, correctness) end
        if better then best = s end
      end
    end
  end
  return best
end

-- Conditions of c's family on other facts that hold and fail on exactly
-- the same observations (sgemm's M, N and K at square sizes): the why
-- names them, since the data cannot tell them apart.
local function alike(c, cands, rows, correctness)
  local function pattern(x)
    local t = {}
    for i, r in ipairs(rows) do
      local h = describe.holds(x, r.values)
      t[i] = h == nil and "?" or (h and "1" or "0")
    end
    return table.concat(t)
  end
  local want, family = pattern(c), priority(c[1], correctness)
  local out, seen = {}, { [c[1]] = true }
  for _, x in ipairs(cands) do
    if not seen[x[1]] and priority(x[1], correctness) == family and x[2] == c[2] and pattern(x) == want then
      seen[x[1]] = true
      out[#out + 1] = x
    end
  end
  table.sort(out, tie_less)
  return out
end

local function learn_guards(helped, failures, all, names, refused)
  local guards, unexplained = {}, {}
  if #failures == 0 then return guards, unexplained end
  local cands, named = candidates(all, names)
  local by_key, order = {}, {}
  for _, f in ipairs(failures) do
    local g = #helped > 0 and best_guard(f, failures, helped, cands) or nil
    local n = #helped > 0 and #named > 0 and best_guard(f, failures, helped, named) or nil
    if n and (not g or #n.violations < #g.violations) then refused[n.c[1]] = true end
    if not g then
      unexplained[#unexplained + 1] = {
        evidence = { ref_of(f.obs) },
        why = what_happened(f.obs, "") .. ": " .. (#helped == 0 and "no helped case to contrast it with"
          or "no fact separates it from the helped cases"),
      }
    else
      local key = M.canonical({ g.c[1], g.c[2], g.c[3] })
      if not by_key[key] then
        by_key[key] = { best = g, explained = {} }
        order[#order + 1] = key
      end
      local e = by_key[key].explained
      e[#e + 1] = f
    end
  end
  for _, key in ipairs(order) do
    local entry = by_key[key]
    local g = entry.best
    local c = g.c
    local happened, probe = {}, true
    table.sort(entry.explained, function(a, b) return a.index < b.index end)
    for i, f in ipairs(entry.explained) do
      if i <= M.SAID_FAILURES then happened[#happened + 1] = what_happened(f.obs, c[1]) end
      if f.obs.evidence.kind ~= "probe" then probe = false end
    end
    local more = #entry.explained - M.SAID_FAILURES
    if more > 0 then happened[#happened + 1] = string.format("and %d more like %s", more, more == 1 and "it" or "them") end
    local same = alike(c, cands, all, entry.explained[1].obs.outcome ~= "hurt")
    local said = {}
    for i = 1, math.min(#same, 3) do said[i] = describe.condition(same[i]) end
    local also = #said > 0 and (" (" .. table.concat(said, ", ") .. " alike)") or ""
    local why = table.concat(happened, "; ") .. ": " .. describe.condition(c) .. also .. ", " .. where_it_paid(c, g.passed)
    if #g.violations > 0 then
      why = why .. string.format(" (though it also holds where it helped %d time%s)", #g.violations,
        #g.violations == 1 and "" or "s")
    end
    local blocks, said = blocking(entry.explained)
    guards[#guards + 1] = {
      c[1], c[2], c[3], why = why .. "; " .. said, source = probe and "probe" or "walk", blocks = blocks,
      support = { helped = #g.passed, not_helped = #entry.explained },
      evidence = refs(entry.explained, g.passed),
    }
  end
  table.sort(guards, condition_less)
  return guards, unexplained
end

-- ---- effect, confidence, materialize -------------------------------------------------

local RESOURCES = { "registers", "smem_per_block", "occupancy", "spill_stores" }

M.NOISE_LEVEL = 0.95 -- the median's interval: this share of the time it holds the true median

-- The order statistic k (1-based) whose pair x(k), x(n-k+1) brackets the
-- median at M.NOISE_LEVEL whatever the distribution: the largest k with
-- P(Binomial(n, 1/2) < k) <= (1 - level) / 2; 1 (min, max) for n < 6.
local function median_rank(n)
  local tail, k, below, c = (1 - M.NOISE_LEVEL) / 2, 1, 0, 1 -- c: n choose i
  for i = 0, (n - 1) // 2 do
    below = below + c / 2 ^ n -- P(X <= i)
    if below > tail then break end
    k = i + 1
    c = c * (n - i) / (i + 1)
  end
  return k
end

-- The noise interval of the median speedup: the order-statistic interval
-- over each measurement's own compare interval (its low ends for the
-- lower bound, its high ends for the upper), so that both the noise of
-- each compare and the spread across kernels widen it. A measurement
-- without an interval counts as its speedup.
local function median_interval(obs)
  local lows, highs = {}, {}
  for _, o in ipairs(obs) do
    if o.measured ~= false and type(o.speedup) == "number" then
      local ci = type(o.ci) == "table" and type(o.ci[1]) == "number" and type(o.ci[2]) == "number" and o.ci
      lows[#lows + 1] = ci and math.min(ci[1], o.speedup) or o.speedup
      highs[#highs + 1] = ci and math.max(ci[2], o.speedup) or o.speedup
    end
  end
  local n = #lows
  if n == 0 then return nil end
  table.sort(lows)
  table.sort(highs)
  local k = median_rank(n)
  return { lows[k], highs[n - k + 1] }
end
M.median_interval = median_interval

local function learn_effect(obs)
  local speeds = {}
  for _, o in ipairs(obs) do
    if o.measured ~= false and type(o.speedup) == "number" then speeds[#speeds + 1] = o.speedup end
  end
  local effect = {}
  if #speeds > 0 then
    table.sort(speeds)
    effect.speedup = { median = median(speeds), min = speeds[1], max = speeds[#speeds], n = #speeds,
                       ci = median_interval(obs) }
  end
  local resources
  for _, name in ipairs(RESOURCES) do
    local deltas = {}
    for _, o in ipairs(obs) do
      local a, b = o.facts[name], o.facts_after[name]
      if type(a) == "number" and type(b) == "number" then deltas[#deltas + 1] = b - a end
    end
    if #deltas > 0 then
      resources = resources or {}
      resources[name] = median(deltas)
    end
  end
  effect.resources = resources
  if next(effect) == nil then return nil end
  return effect
end

local function learn_confidence(n_obs, helped, not_helped)
  local s, c = #helped, #not_helped
  local seen, lineages = {}, 0
  for _, list in ipairs({ helped, not_helped }) do
    for _, r in ipairs(list) do
      local l = r.obs.lineage or ""
      if not seen[l] then seen[l] = true lineages = lineages + 1 end
    end
  end
  local level, why
  if n_obs == 1 then
    level = "seen once"
    why = "one observation: nothing to generalize from"
  else
    local share = (s + c) > 0 and s / (s + c) or 0
    if s >= M.HIGH.n and share >= M.HIGH.share and lineages >= M.HIGH.lineages then level = "high"
    elseif s >= M.MEDIUM.n and share >= M.MEDIUM.share and lineages >= M.MEDIUM.lineages then level = "medium"
    else level = "low" end
    if c == 0 and level == "high" then level = "medium" end
    why = string.format("helped %d of %d labelled observations from %d lineage%s", s, s + c, lineages,
      lineages == 1 and "" or "s")
  end
  if c == 0 then why = why .. "; it never failed to help, so no precondition could be learned"
  elseif s == 0 then why = why .. "; it never helped, so no precondition could be learned"
  elseif s < M.MIN_HELPED then why = why .. "; one success cannot say what made it pay, so no precondition was learned" end
  return { supporting = s, contradicting = c, lineages = lineages, level = level, why = why }
end

-- The helped observation with the best speedup (first in order on ties), else nil.
local function best_helped(obs)
  local best
  for _, o in ipairs(obs) do
    if label(o) == "helped" and (not best or (o.speedup or 0) > (best.speedup or 0)) then best = o end
  end
  return best
end

-- A parameter as the transform takes it. The walk journals are JSON read
-- by lua-cjson, which gives every number as a float (64.0), and an undo
-- site's params are the training kernel's own texts (max_threads =
-- "THREADS"): a transform takes integers where its space lists integers,
-- and a text that names something names it in the kernel it came from
-- only, so it is dropped and the transform's default applies there.
local function taken(space, v)
  if type(v) == "number" then
    if math.type(v) == "float" then
      local i = math.tointeger(v)
      if i then return i end
      if type(space) == "table" and math.type(space[1]) == "integer" then return nil end
    end
    return v
  elseif type(v) == "string" then
    if v:find("%f[%w_][%a_]") then return nil end
    return v
  end
  return v
end

function M.transform_params(transform, params)
  if type(params) ~= "table" then return nil end
  local t = transform and require("klineage.transforms").get(transform)
  local spaces = type(t) == "table" and type(t.params) == "table" and t.params or {}
  local out
  for k, v in pairs(params) do
    local x = taken(spaces[k], v)
    if x ~= nil then
      out = out or {}
      out[k] = x
    end
  end
  return out
end

local function most_common_params(obs)
  local count, first, order = {}, {}, {}
  for _, o in ipairs(obs) do
    if o.params then
      local k = M.canonical(o.params)
      if not count[k] then count[k], first[k] = 0, o.params order[#order + 1] = k end
      count[k] = count[k] + 1
    end
  end
  local best
  for _, k in ipairs(order) do
    if not best or count[k] > count[best] then best = k end
  end
  return best and copy(first[best]) or nil
end

-- A schedule skill's parameter prior: each parameter's most common value
-- among the helped observations (all of them where none helped), ties to
-- the smaller; nil when no observation has one.
local function schedule_params(obs, helped)
  local from = {}
  for _, r in ipairs(helped) do from[#from + 1] = r.obs end
  if #from == 0 then from = obs end
  local counts = {}
  for _, o in ipairs(from) do
    for k, v in pairs(o.schedule and o.schedule.params or {}) do
      counts[k] = counts[k] or {}
      counts[k][v] = (counts[k][v] or 0) + 1
    end
  end
  local out
  for k, by in pairs(counts) do
    local best, n
    for v, c in pairs(by) do
      if not best or c > n or (c == n and tostring(v) < tostring(best)) then best, n = v, c end
    end
    out = out or {}
    out[k] = best
  end
  return out
end

-- What a schedule family does, for records learned from schedule deltas.
M.SCHEDULE_INTENTS = {
  map = "map the output dimension with unit stride to threadIdx.x and choose the block shape, so a warp's global accesses coalesce",
  coarsen = "compute several outputs a thread, so more independent loads are in flight",
  vectorize = "access global memory as float2/float4: fewer, wider instructions",
  split_reduce = "split a long reduction over a warp or a block an output, combined by shuffles and shared memory",
  stage = "stage what the threads of a block share in shared memory: a contraction's tiles, a stencil's halo, a transpose's square",
  register_tile = "compute a tile of outputs a thread in registers, each loaded operand reused across the tile",
  unroll = "unroll a loop by a factor",
  unflatten = "launch a multi-dimensional grid instead of dividing a flat index",
  privatize = "accumulate a scatter in shared memory, one global atomic a bin and block",
  scan = "replace a quadratic prefix loop by a block scan",
}

local function first_with(obs, field, prefer)
  if prefer and prefer[field] ~= nil then return prefer[field] end
  for _, o in ipairs(obs) do if o[field] ~= nil then return o[field] end end
end

local function intent_of(transform, obs, opts)
  if transform then
    if opts.intents and opts.intents[transform] then return opts.intents[transform] end
    local ok, t = pcall(function() return require("klineage.transforms").get(transform) end)
    if ok and type(t) == "table" and type(t.intent) == "string" then return t.intent end
  end
  local intent = first_with(obs, "intent")
  if intent then return intent end
  if transform then return "apply the " .. transform .. " transform" end
  local o = obs[1] -- the step itself, not a size probe of it
  for _, x in ipairs(obs) do if not x.size then o = x break end end
  return string.format("the change%s%s, as the walk saw it", o.lineage and (" of " .. o.lineage) or "",
    o.from and o.to and (" " .. o.from .. " -> " .. o.to) or "")
end

-- ---- the entry points ---------------------------------------------------------------------

function M.skill(id, observations, opts)
  if type(id) ~= "string" or id == "" then error("learn.skill: an id expected", 2) end
  if type(observations) ~= "table" or #observations == 0 then error("learn.skill: observations expected", 2) end
  opts = opts or {}
  local obs = prepared(observations)
  local rows, helped, not_helped, failures = {}, {}, {}, {}
  for i, o in ipairs(obs) do
    local r = { index = i, obs = o, values = values_of(o) }
    rows[i] = r
    local l = label(o)
    if l == "helped" then helped[#helped + 1] = r elseif l == "not_helped" then not_helped[#not_helped + 1] = r end
    if FAILURES[o.outcome] and (o.outcome ~= "hurt" or o.measured ~= false) then failures[#failures + 1] = r end
  end

  local best = best_helped(obs)
  local transform = first_with(obs, "transform", best)
  local template = first_with(obs, "template", best)
  local sched = first_with(obs, "schedule", best)
  local materialize
  if sched then
    -- a prior over kir's schedule rows of the family, not a row of its own
    materialize = { schedule = sched.family, params = schedule_params(obs, helped) }
  elseif transform then
    materialize = { transform = transform,
                    params = M.transform_params(transform, best and copy(best.params) or most_common_params(obs)) }
  elseif template then
    materialize = { template = copy(template) }
  else
    materialize = { llm = true, example = copy(first_with(obs, "example", best)) }
  end
  local pattern
  local source = first_with(obs, "pattern", best)
  if sched then pattern = { schedule = sched.family }
  elseif type(source) == "string" then pattern = { source = source }
  elseif transform then pattern = { transform = transform }
  elseif template then
    -- An insertion hunk has no before text; until extraction gives it an
    -- anchor, its after text is what a pattern can name.
    pattern = { source = template.before ~= "" and template.before or template.after }
  else error("learn.skill: '" .. id .. "' has no transform, template or pattern to match by", 2) end

  local names, refused = M.names(obs), {}
  local guards, unexplained = learn_guards(helped, failures, rows, names, refused)
  local preconditions = learn_preconditions(helped, not_helped, rows, names, refused)
  local confidence = learn_confidence(#obs, helped, not_helped)
  local said = {}
  for fact in pairs(refused) do said[#said + 1] = fact end
  if #said > 0 then
    table.sort(said, function(a, b) return natural(a) < natural(b) end)
    local shown = {}
    for i = 1, math.min(#said, 3) do
      local _, why = roles.name_in(said[i], names)
      shown[i] = said[i] .. " (" .. why .. ")"
    end
    confidence.why = confidence.why .. string.format("; %d fact%s keyed by a name refused as a condition: %s%s", #said,
      #said == 1 and "" or "s", table.concat(shown, ", "), #said > 3 and string.format(" and %d more", #said - 3) or "")
  end
  local evidence = {}
  for i, o in ipairs(obs) do evidence[i] = cite.full(o) end
  local arch = opts.arch or first_with(obs, "arch") or "sm_90"
  return {
    schema = 1,
    id = (id:gsub(":", "-")),
    arch = arch,
    status = "learned",
    intent = sched and M.SCHEDULE_INTENTS[sched.family] or intent_of(transform, obs, opts),
    materialize = materialize,
    pattern = pattern,
    preconditions = preconditions,
    guards = guards,
    unexplained = #unexplained > 0 and unexplained or nil,
    effect = learn_effect(obs),
    confidence = confidence,
    evidence = evidence,
    example = copy(first_with(obs, "example", best)),
    observations = obs,
  }
end

-- Why a learned record cannot be shipped, or nil: a pattern that does
-- not compile matches no kernel (klineage.skills.match would block it on
-- every kernel, with the parse error as its reason).
-- With opts.elsewhere (kernels of other lineages: { { lineage, text } }),
-- a template whose pattern matches none of them outside its own
-- lineages is not shipped either: it is its lineage's spelling, a test
-- fixture, and could only ever fire on the kernel it came from.
function M.unusable(record, opts)
  local source = record.pattern and record.pattern.source
  if not source then return nil end
  local pmatch = require "klineage.pattern.match"
  local pat, f = pmatch.compile(source)
  if not pat then return "its pattern does not compile: " .. (tostring(f and f.message):gsub("\n.*", "")) end
  local elsewhere = opts and opts.elsewhere
  if not elsewhere then return nil end
  local own, read = {}, 0
  for _, o in ipairs(record.observations or {}) do if o.lineage then own[o.lineage] = true end end
  for _, k in ipairs(elsewhere) do
    if not own[k.lineage] then
      read = read + 1
      k.unit = k.unit or pmatch.as_unit(k.text, k.lineage)
      local ok, found = pcall(pmatch.find_all, { pat }, k.unit)
      if ok and found and found[1] and #found[1] > 0 then return nil end
    end
  end
  return string.format("its pattern matches none of the %d kernels of the other lineages: its own lineage's spelling, "
    .. "a fixture there, not a transform elsewhere", read)
end

function M.repository(observations, opts)
  if type(observations) ~= "table" then error("learn.repository: observations expected", 2) end
  local groups, ids = {}, {}
  for i, o in ipairs(observations) do
    if type(o) ~= "table" or type(o.skill) ~= "string" or o.skill == "" then
      error("learn.repository: observation " .. i .. " has no skill", 2)
    end
    if not groups[o.skill] then groups[o.skill] = {} ids[#ids + 1] = o.skill end
    local g = groups[o.skill]
    g[#g + 1] = o
  end
  table.sort(ids, function(a, b) return (a:gsub(":", "-")) < (b:gsub(":", "-")) end)
  local records, dropped = {}, {}
  for _, id in ipairs(ids) do
    local r = M.skill(id, groups[id], opts)
    local why = M.unusable(r, opts)
    if why then dropped[#dropped + 1] = { id = r.id, why = why } else records[#records + 1] = r end
  end
  return records, dropped
end

return M
