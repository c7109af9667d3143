-- Role facts: what a kernel's parts do, whatever they are called. A
-- condition over access.A.coalesced or size.cols holds only on a kernel
-- whose buffer is A or whose parameter is cols; one over the role of the
-- kernel's heaviest access holds on any kernel. Every key here is a
-- literal of the vocabulary (role.*), and every value a word or a number.
--
--   roles.add(f, ctx) adds the role.* facts to f (klineage.facts)
--     ctx = { text, fn_name, workload = w | nil, params = p (merged),
--             arch, sm_count = n | nil (the device's, when one answered) }
--   roles.compute(sig, ctx, values) -> { name = value } the same facts as a
--     table, from a schedule signature and the facts' values so far
--   roles.names(unit, fn [, w]) -> { [name] = what } every name the kernel
--     and its spec chose: parameters, buffers, workload parameters,
--     integer constants, the function's own declarations, the function
--   roles.name_in(key, names) -> name, why | nil: the name a fact's key
--     embeds (facts.<param>, size.<P>, define.<NAME>, buffer.<B>,
--     shared.<array> by their definition; any other part of the key that
--     is one of names as well)
--   roles.PATTERNS, roles.STRIDES: the words of role.pattern and
--     role.dominant.stride
--
-- The facts (facts/vocabulary.lua has them too):
--   role.pattern          scan | scatter | gather | contraction | row_reduce |
--                         col_reduce | stencil | elementwise | other
--   role.dominant.stride  the class of the global access moving the most
--                         bytes: coalesced | broadcast | strided | indirect
--   role.dominant.store   true when that access is a store
--   role.operands         read-only operands the kernel loads
--   role.operands.reused  of them, those read more than once an element
--                         over the launch (each thread's loads at the bench
--                         size, times the threads, over the buffer's elements)
--   role.reduction.length elements combined into one output: the growing
--                         loop's trips at the bench size times the threads
--                         that share it (warp, block or grid)
--   role.outputs_per_thread_slot  output elements / (SMs x threads an SM holds)
--   role.intensity        the spec's flops / bytes at the bench size
--   role.bound            memory | other, where DRAM throughput was measured
--
-- Where they come from: the schedule signature (klineage.facts.schedule:
-- the lanes of the first warp, its loops and the classes of its global
-- accesses), the launch facts already in f, and the workload spec. The
-- kernel IR (klineage.kir) is a second reader of the pattern; it is on
-- this layer too, so klineage.skills.roles joins it (a kernel that lifts).
local schedule = require "klineage.facts.schedule"

local M = {}

M.PATTERNS = { "scan", "scatter", "gather", "contraction", "row_reduce", "col_reduce", "stencil", "elementwise", "other" }
M.STRIDES = { "coalesced", "broadcast", "strided", "indirect", "unknown" }

-- SMs of the part an arch's skills are learned on, when no device says.
M.SM_COUNT = { sm_80 = 108, sm_90 = 132 }
-- DRAM throughput at or past this share of peak: the kernel is memory bound.
M.MEMORY_BOUND_PCT = 60
-- An operand is reused when the launch reads it this many times an element.
M.REUSE = 1.5

-- ---- names ------------------------------------------------------------------------

-- Vocabulary slots whose values are names a kernel or spec chose.
local NAME_SLOTS = { param = "a pointer parameter", P = "a workload parameter", B = "a workload buffer",
                     NAME = "an integer constant", array = "a __shared__ array" }

function M.names(unit, fn, w)
  local out = {}
  local function add(n, what) if type(n) == "string" and n ~= "" and not out[n] then out[n] = what end end
  if fn then
    add(fn:name(), "the kernel")
    for _, p in ipairs(fn:params()) do add(p.name, "a kernel parameter") end
    local body = fn:body()
    if body then
      for d in body:walk({ "declarator" }) do
        local n = d:field("name")
        if n then add(n:text(), "a kernel-local name") end
      end
    end
  end
  for _, c in ipairs(unit and unit:constants() or {}) do add(c.name, "an integer constant") end
  if w then
    for _, b in ipairs(w.buffer_list or {}) do add(b.name, "a workload buffer") end
    for k in pairs(w.params or {}) do add(k, "a workload parameter") end
    for _, a in ipairs(w.args or {}) do add(a, "a kernel argument") end
  end
  return out
end

-- The vocabulary's templates with their slots, compiled once.
local templates
local function compiled()
  if templates then return templates end
  templates = {}
  for _, e in ipairs(require "klineage.facts.vocabulary") do
    if e.name:find("<", 1, true) then
      local slots = {}
      local pat = e.name:gsub("[%.%-%+%*%?%[%]%^%$%%()]", "%%%0"):gsub("<([%w_]+)>", function(s)
        slots[#slots + 1] = s
        return s == "d" and "(%d+)" or "([%w_]+)"
      end)
      templates[#templates + 1] = { pattern = "^" .. pat .. "$", slots = slots }
    end
  end
  return templates
end

function M.name_in(key, names)
  if type(key) ~= "string" then return nil end
  names = names or {}
  local base = key:match("^(.*)_after$") or key
  local literal = require("klineage.facts").describe(base)
  if literal and not literal.name:find("<", 1, true) then
    -- a literal name of the vocabulary: nothing in it was chosen by a kernel
    return nil
  end
  for _, t in ipairs(compiled()) do
    local caps = { base:match(t.pattern) }
    if caps[1] then
      for i, slot in ipairs(t.slots) do
        local v = caps[i]
        if names[v] then return v, string.format("%s is %s", v, names[v]) end
        if NAME_SLOTS[slot] then return v, string.format("%s is %s", v, NAME_SLOTS[slot]) end
      end
      return nil
    end
  end
  -- outside the vocabulary: any part of the key that a kernel chose
  for part in base:gmatch("[^%.]+") do
    if names[part] then return part, string.format("%s is %s", part, names[part]) end
  end
  return nil
end

-- ---- the facts ----------------------------------------------------------------------

local SPLIT_OF = { warp = true, block = true, grid = true }

local function shifted(a, b)
  -- b reads what a reads, every lane moved by the same nonzero offset
  if not (a.offsets and b.offsets) or #a.offsets ~= #b.offsets or #a.offsets < 2 then return false end
  local d = b.offsets[1] - a.offsets[1]
  if d == 0 then return false end
  for i = 2, #a.offsets do
    if b.offsets[i] - a.offsets[i] ~= d then return false end
  end
  return true
end

-- The most neighbours of one load among the loads of its operand.
local function neighbours(loads)
  local most = 0
  for i, a in ipairs(loads) do
    local n = 0
    for j, b in ipairs(loads) do
      if i ~= j and not b.grows and shifted(a, b) then n = n + 1 end
    end
    if n > most then most = n end
  end
  return most
end

local function bytes_of(x)
  -- a warp's bytes through the access over its loops at the bench size
  return (x.sectors or 1) * 32 * (x.trips_at or (x.grows and 64 or 1))
end

local RANK = { coalesced = 1, broadcast = 2, strided = 3, indirect = 4, unknown = 0 }

-- Whether a loop holds an access (the loop record is one of the access's).
local function within(x, lp)
  for _, l in ipairs(x.loops) do if l == lp then return true end end
  return false
end

local function classify(sig, values)
  local F, traffic = sig.features, sig.traffic
  local loads, stores, by_base = {}, {}, {}
  for _, x in ipairs(traffic) do
    if x.write or x.atomic then stores[#stores + 1] = x end
    if x.read and not x.written then
      loads[#loads + 1] = x
      by_base[x.base] = by_base[x.base] or {}
      table.insert(by_base[x.base], x)
    end
  end
  if F.scan then return "scan" end
  for _, x in ipairs(stores) do if x.class == "indirect" then return "scatter" end end
  -- a reduction: a loop that grows with the problem reads and stores nothing
  -- global inside it, or partial values meet across threads
  local reducing
  for _, lp in ipairs(sig.loops) do
    if lp.trips == "n" and not lp.grid_step then
      local reads, writes = false, false
      for _, x in ipairs(traffic) do
        if within(x, lp) then
          if x.read and not x.written then reads = true end
          if x.write or x.atomic then writes = true end
        end
      end
      if reads and not writes and (not reducing or (lp.trips_at or 0) > (reducing.trips_at or 0)) then reducing = lp end
    end
  end
  local combine = F["reduce.combine"]
  if reducing or combine then
    local in_loop, class = {}, {}
    for _, x in ipairs(loads) do
      if not reducing or within(x, reducing) then
        in_loop[x.base] = true
        class[x.class] = true
      end
    end
    local n = 0
    for _ in pairs(in_loop) do n = n + 1 end
    local reused = values["role.operands.reused"] or 0
    if class.indirect then return "gather" end
    -- every output combines the elements of a shared operand: two reused
    -- operands (a matrix product, a convolution), or one the warp's lanes
    -- all read at once (all pairs)
    if (n >= 2 and reused >= 2) or (reducing and class.broadcast and reused >= 1) then return "contraction" end
    if combine or class.strided then return "row_reduce" end
    return "col_reduce"
  end
  for _, x in ipairs(loads) do if x.class == "indirect" then return "gather" end end
  for _, list in pairs(by_base) do
    if neighbours(list) >= 2 then return "stencil" end
  end
  if #stores > 0 then return "elementwise" end
  return "other"
end

local function eval(w, which, p)
  local ok, v = pcall(require("klineage.workload")[which], w, p)
  if ok and type(v) == "number" and v == v then return v end
end

-- The role facts as one plain table.
function M.compute(sig, ctx, values)
  local out = {}
  local w, p = ctx.workload, ctx.params or {}
  local traffic = sig.traffic or {}
  -- the heaviest access
  local best, bbytes
  for _, x in ipairs(traffic) do
    local b = bytes_of(x)
    if x.class ~= "unknown" and (not best or b > bbytes or (b == bbytes and RANK[x.class] > RANK[best.class])) then
      best, bbytes = x, b
    end
  end
  if best then
    out["role.dominant.stride"] = best.class
    out["role.dominant.store"] = (best.write or best.atomic) and true or false
  end
  -- operands and their reuse: a thread's loads at the bench size times the threads
  local threads = (values["launch.threads"] and values["launch.blocks"]) and values["launch.threads"] * values["launch.blocks"]
  local per_thread, ops = {}, {}
  for _, x in ipairs(traffic) do
    if x.read and not x.written then
      if not ops[x.base] then ops[x.base] = true end
      if per_thread[x.base] ~= false then
        per_thread[x.base] = x.trips_at and (per_thread[x.base] or 0) + x.trips_at * x.elements * x.active / 32 or false
      end
    end
  end
  local nops = 0
  for _ in pairs(ops) do nops = nops + 1 end
  out["role.operands"] = nops
  local counts = w and threads and require("klineage.workload").counts(w, p)
  if counts then
    -- a pointer parameter is the buffer its position in args names
    local fn_params = ctx.fn_params or {}
    local buffer_of = {}
    for i, name in ipairs(fn_params) do
      local a = w.args and w.args[i]
      if type(a) == "string" and counts[a] then buffer_of[name] = a end
    end
    local reused, known = 0, true
    for base in pairs(ops) do
      local elems = buffer_of[base] and counts[buffer_of[base]]
      local reads = per_thread[base]
      if not (elems and reads) then known = false
      elseif elems > 0 and reads * threads > M.REUSE * elems then reused = reused + 1 end
    end
    if known then out["role.operands.reused"] = reused end
  end
  out["role.pattern"] = classify(sig, out)
  -- outputs against the threads the device holds at once
  local outputs
  if w and counts then
    for _, b in ipairs(w.buffer_list or {}) do
      if b.output and counts[b.name] then outputs = (outputs or 0) + counts[b.name] end
    end
  end
  -- the reduction's length: the growing loop's trips times the threads
  -- sharing it (the grid's only where there are fewer outputs than blocks:
  -- a grid-stride loop over rows shares nothing)
  local pat = out["role.pattern"]
  if pat == "row_reduce" or pat == "col_reduce" or pat == "contraction" or pat == "gather" then
    local trips
    for _, x in ipairs(traffic) do
      if x.read and not x.written and x.grows and x.trips_at and (not trips or x.trips_at > trips) then trips = x.trips_at end
    end
    local share = 1
    local split = sig.features.split or ""
    for part in split:gmatch("[^+]+") do
      if SPLIT_OF[part] then
        if part == "warp" then share = math.max(share, 32)
        elseif part == "block" then share = math.max(share, values["launch.threads"] or 1)
        elseif part == "grid" and threads and outputs and outputs < values["launch.blocks"] then
          share = math.max(share, threads)
        end
      end
    end
    if trips then out["role.reduction.length"] = trips * share
    elseif split ~= "" then out["role.reduction.length"] = share end
  end
  local sms = ctx.sm_count or M.SM_COUNT[ctx.arch or "sm_90"]
  local warps = values["arch.max_warps_per_sm"]
  if outputs and sms and warps then out["role.outputs_per_thread_slot"] = outputs / (sms * warps * 32) end
  -- arithmetic intensity
  if w then
    local fl, by = eval(w, "flops", p), eval(w, "bytes", p)
    if fl and by and by > 0 then out["role.intensity"] = fl / by end
  end
  local dram = values["profile.dram_throughput_pct"]
  if type(dram) == "number" then out["role.bound"] = dram >= M.MEMORY_BOUND_PCT and "memory" or "other" end
  return out
end

local function fn_params(text, fn_name)
  local unit = require("kl.source").parse(text)
  for _, fn in ipairs(unit:functions()) do
    if fn:name() == fn_name and fn:body() then
      local out = {}
      for i, q in ipairs(fn:params()) do out[i] = q.name or "" end
      return out
    end
  end
  return {}
end

-- f: klineage.facts with the launch, arch and profile facts already set.
function M.add(f, ctx)
  local sig = schedule.signature(ctx.text, ctx.fn_name, { params = ctx.params })
  if not sig then return end
  local c = {}
  for k, v in pairs(ctx) do c[k] = v end
  c.fn_params = c.fn_params or fn_params(ctx.text, ctx.fn_name)
  local from = {}
  for _, e in ipairs(require "klineage.facts.vocabulary") do from[e.name] = e.from end
  for k, v in pairs(M.compute(sig, c, f.values)) do f:set(k, v, from[k]) end
end

return M
