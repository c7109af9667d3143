-- An expert step read as a schedule delta, by signature: which kernel-IR
-- primitives with which parameters account for every feature of the
-- schedule signature (klineage.facts.schedule) that changed between two
-- versions of a kernel, whatever their spelling; a feature no primitive
-- makes is said with its reason ("double buffering: no primitive"). A fact
-- about a pair of kernels, so that the learner (skills/extract.lua) can
-- name the schedule family a walk step or a probe moved along; the
-- reproduction of a delta by kir, and the lineage entry points, are
-- search/schedule_delta.lua's.
--
--   schedule_delta.explain(old_signature, new_signature) -> d
--     d = { explained, how = "signature" | nil, text (the primitives),
--           primitives = { { name, params, text, removed, because = { feature... } } },
--           changed = { { feature, before, after, by (a primitive's text) | why } },
--           unexplained = { why... } }
--   schedule_delta.pair(older, newer [, { kernel, params }]) -> d: both
--       texts read as signatures first (d.older_signature; a version that
--       cannot be read is an unexplained delta that says why)
--   schedule_delta.threads_of(block) -> the threads of "32x8" | nil
--   schedule_delta.value_text(x) -> x as text, "-" for nil
--
-- The rules, feature by feature, are the tables DRIVERS, DEPENDENTS and
-- REFUSED below: data a reader can check against kir's primitives
-- (kir/primitives/*.lua).
local schedule = require "klineage.facts.schedule"

local M = {}

-- Which primitives account for a change of a kind, the likeliest first
-- (the one named as its cause).
-- Moving which thread touches which element changes how a warp's accesses fall on memory.
local REMAPS = { "stage", "register_tile", "coarsen", "vectorize", "split_reduce", "scan", "privatize", "unflatten", "map" }
-- How much a thread loads or stores.
local WORK = { "register_tile", "coarsen", "vectorize", "split_reduce", "scan", "privatize", "stage", "persist" }
-- Code that brings (or takes) loops of its own.
local LOOPS = { "register_tile", "coarsen", "stage", "split_reduce", "scan", "vectorize", "privatize", "unroll", "persist" }
-- The layout of shared memory or of the threads' reads of it.
local SHARED = { "stage", "vectorize", "register_tile", "split_reduce", "coarsen", "scan", "privatize" }

local function v(x) return x == nil and "-" or tostring(x) end

local function threads_of(block)
  local n = 1
  for d in tostring(block or ""):gmatch("%d+") do n = n * tonumber(d) end
  return math.tointeger(n)
end

local function parse_count(s)
  if s == nil then return { n = 0, c = 0 } end
  local n, c = tostring(s):match("^n%*(%d+)%+?(%d*)$")
  if n then return { n = tonumber(n), c = tonumber(c) or 0 } end
  return { n = 0, c = tonumber(s) or 0 }
end

-- The integer F with new = F * old in both parts, or nil.
local function ratio(old, new)
  local a, b = parse_count(old), parse_count(new)
  local f
  for _, part in ipairs({ "n", "c" }) do
    if a[part] == 0 and b[part] ~= 0 then return nil end
    if a[part] ~= 0 then
      if b[part] % a[part] ~= 0 then return nil end
      local g = b[part] // a[part]
      if f and g ~= f then return nil end
      f = g
    end
  end
  return f
end

local function set_of(text)
  local out = {}
  for w in tostring(text or ""):gmatch("[^+]+") do out[w] = true end
  return out
end

local function added(old, new)
  local a, b, out = set_of(old), set_of(new), {}
  for k in pairs(b) do if not a[k] then out[#out + 1] = k end end
  table.sort(out)
  return out
end

local function removed(old, new) return added(new, old) end

-- ---- the delta ------------------------------------------------------------------

local Delta = {}
Delta.__index = Delta

local function params_text(name, p)
  local parts = {}
  for _, x in ipairs(p) do parts[#parts + 1] = tostring(x) end
  local keys = {}
  for k in pairs(p) do if type(k) == "string" then keys[#keys + 1] = k end end
  table.sort(keys)
  for _, k in ipairs(keys) do parts[#parts + 1] = k .. "=" .. tostring(p[k]) end
  return name .. "(" .. table.concat(parts, ",") .. ")"
end

-- Adds (or finds) a primitive; returns its text.
function Delta:use(name, params, feature, removed_)
  for _, p in ipairs(self.primitives) do
    if p.name == name and (p.removed or false) == (removed_ or false) then
      p.because[#p.because + 1] = feature
      return p.text
    end
  end
  local text = (removed_ and "-" or "") .. params_text(name, params or {})
  self.primitives[#self.primitives + 1] = { name = name, params = params or {}, text = text, removed = removed_ or false,
                                            because = { feature } }
  return text
end

-- Adds (or finds) a primitive with `set` among its parameters (merged
-- into the one the delta has already); returns its text.
function Delta:use_with(name, params, set, feature, removed_)
  local removed = removed_ or false
  for _, p in ipairs(self.primitives) do
    if p.name == name and (p.removed or false) == removed then
      for k, v in pairs(set) do p.params[k] = v end
      p.text = (removed and "-" or "") .. params_text(name, p.params)
      p.because[#p.because + 1] = feature
      return p.text
    end
  end
  local all = {}
  for k, v in pairs(params) do all[k] = v end
  for k, v in pairs(set) do all[k] = v end
  return self:use(name, all, feature, removed)
end

-- The text of the delta's first primitive named in `names` (in their
-- order), or nil.
function Delta:has(names)
  for _, name in ipairs(names) do
    for _, p in ipairs(self.primitives) do if p.name == name then return p.text end end
  end
end

function Delta:account(c, by) c.by = by end

function Delta:refuse(c, why)
  c.why = why
  self.unexplained[#self.unexplained + 1] = c.feature .. ": " .. why
end

local function tile_of(dims)
  local t
  for d in tostring(dims):gmatch("%d+") do
    local n = tonumber(d)
    if not t or n < t then t = n end
  end
  return math.tointeger(t)
end

-- stage(buffers=2) for a change, merged into the delta's stage if it has one.
local function double_buffered(d, c, gone)
  d:account(c, d:use_with("stage", {}, { buffers = 2 }, c.feature, gone))
end

-- persist: blocks that take the unfolded grid's blocks in turn, each turn
-- its own outputs, so a thread's outputs grow with the loop. A fixed grid
-- whose threads only read more (a sum over the grid, fewer partials) is a
-- reduction split over several blocks: split_reduce(block=B, blocks=K)
-- (kir merges the blocks' partials in the last block to finish, where an
-- expert may use a second launch: the same split, another merge).
-- Whether a per-thread count (outputs.per_thread, inputs.per_thread)
-- changed to one that grows with the problem (n*...).
local function grows(d, feature, gone)
  local a, b = d.old.features[feature], d.new.features[feature]
  if gone then a, b = b, a end
  return a ~= nil and b ~= nil and tostring(a) ~= tostring(b) and tostring(b):find("n", 1, true) ~= nil
end

local function outputs_grow(d, gone) return grows(d, "outputs.per_thread", gone) end

local function across_blocks(d, c, gone, what)
  -- a sum over the grid: each thread reads more with the problem (fewer
  -- partials), and the partials meet in each block first (a shared tree,
  -- shuffles); a grid loop that only hands out work is something else
  local levels = set_of((gone and d.old or d.new).features.split)
  local reads_more = grows(d, "inputs.per_thread", gone)
  if not reads_more or not (levels.block or levels.warp) then
    return d:refuse(c, (what or "threads loop over the whole grid") .. ", " .. (reads_more and
      "their partials never meeting in a block" or "a thread's reads not growing with the problem") ..
      ": neither persist nor a reduction split over several blocks")
  end
  local block = threads_of((gone and d.old or d.new).features.block)
  return d:use_with("split_reduce", { block = block ~= 1 and block or nil }, { blocks = "K" }, c.feature, gone)
end

-- A loop over the whole grid, added (or gone): persist where a thread's
-- outputs grow with it, else a reduction split over several blocks; the
-- primitive's text, or nil where the change was refused.
local function grid_loop(d, c, gone, what)
  -- (use finds the delta's persist when another change named it already)
  if outputs_grow(d, gone) then return d:use("persist", { dim = "x" }, c.feature, gone) end
  return across_blocks(d, c, gone, what)
end

local function persistent(d, c, what)
  local prim = grid_loop(d, c, c.after == nil, what)
  if prim then d:account(c, prim) end
end

-- Feature rules, in three passes: primitives the changes name directly,
-- then changes any of the delta's primitives account for, then what is left.
local DRIVERS = {
  { "^block$", function(d, c)
    if c.after then return d:account(c, d:use("map", { block = c.after, x = d.new.map_x }, c.feature)) end
    d:refuse(c, "the launch line lost its block shape")
  end },
  { "^grid%.dims$", function(d, c)
    if c.before and c.after and c.after > c.before then
      return d:account(c, d:use("unflatten", { block = d.new.features.block }, c.feature))
    end
    if c.before and c.after then return d:account(c, d:use("map", { block = d.new.features.block, x = d.new.map_x }, c.feature)) end
    d:refuse(c, "the launch line changed its grid")
  end },
  { "^grid%.fixed$", function(d, c) persistent(d, c, "a persistent grid (a fixed number of blocks looping over the work)") end },
  { "^loops%.grid_stride$", function(d, c) persistent(d, c, "a loop over the whole grid (persistent threads)") end },
  { "^global%.[^.]+%.width$", function(d, c)
    if c.after and c.after >= 2 then return d:account(c, d:use("vectorize", { c.after }, c.feature)) end
    d:account(c, d:use("vectorize", {}, c.feature, true))
  end },
  { "^stage%.[^.]+$", function(d, c)
    local p = c.feature:match("^stage%.(.+)$")
    if c.after then
      local prim = d:use("stage", {}, c.feature)
      for _, x in ipairs(d.primitives) do
        if x.name == "stage" and not x.removed then
          x.params[#x.params + 1] = p
          local t = tile_of(c.after)
          if t and (not x.params.tile or t < x.params.tile) then x.params.tile = t end
          x.text = params_text("stage", x.params)
          prim = x.text
        end
      end
      return d:account(c, prim)
    end
    d:account(c, d:use("stage", { p }, c.feature, true))
  end },
  { "^stage%.[^.]+%.padded$", function(d, c)
    -- kir's stage pads a tile whose rows are read across threadIdx.x
    local p = c.feature:match("^stage%.(.-)%.padded$")
    for _, x in ipairs(d.primitives) do
      if x.name == "stage" and not x.removed then x.because[#x.because + 1] = c.feature; return d:account(c, x.text) end
    end
    d:account(c, d:use("stage", { p, tile = tile_of(d.new.features["stage." .. p]) }, c.feature, not c.after))
  end },
  -- kir's stage(buffers=2) keeps two stages of each tile and issues the
  -- next tile's loads into registers a trip ahead: double buffering and
  -- register prefetch both
  { "^stage%.[^.]+%.buffers$", function(d, c) double_buffered(d, c, c.after == nil) end },
  { "^pipeline$", function(d, c) double_buffered(d, c, #added(c.before, c.after) == 0) end },
  { "^registers%.acc$", function(d, c)
    if c.after then
      local tm, tn = tostring(c.after):match("^(%d+)x(%d+)$")
      tm, tn = math.tointeger(tonumber(tm or c.after)), math.tointeger(tonumber(tn or 1))
      return d:account(c, d:use("register_tile", { tm, tn }, c.feature))
    end
    d:account(c, d:use("register_tile", {}, c.feature, true))
  end },
  { "^split$", function(d, c)
    local add, rem = added(c.before, c.after), removed(c.before, c.after)
    local has = set_of(c.after)
    local prim
    for _, lvl in ipairs(add) do
      if lvl == "grid" then
        prim = grid_loop(d, c, false)
        if not prim then return end
      elseif lvl == "block" or (lvl == "warp" and has.block) then
        prim = d:use("split_reduce", { block = threads_of(d.new.features.block) }, c.feature)
      elseif lvl == "warp" then
        local wpb = (threads_of(d.new.features.block) or 32) // 32
        prim = d:use("split_reduce", wpb > 1 and { "warp", wpb = wpb } or { "warp" }, c.feature)
      end
    end
    for _, lvl in ipairs(rem) do
      if lvl == "grid" then
        prim = grid_loop(d, c, true)
        if not prim then return end
      elseif not prim then prim = d:use("split_reduce", {}, c.feature, true) end
    end
    d:account(c, prim)
  end },
  { "^scan$", function(d, c)
    if c.after then return d:account(c, d:use("scan", { block = threads_of(d.new.features.block) }, c.feature)) end
    d:account(c, d:use("scan", {}, c.feature, true))
  end },
  { "^atomics%.shared$", function(d, c)
    if c.after then return d:account(c, d:use("privatize", {}, c.feature)) end
    d:account(c, d:use("privatize", {}, c.feature, true))
  end },
  { "^unroll$", function(d, c)
    -- existing loops unrolled: more #pragma unroll, the same loops
    if (c.after or 0) > (c.before or 0) and d.old.features.loops == d.new.features.loops then
      return d:account(c, d:use("unroll", {}, c.feature))
    end
  end },
}

local DEPENDENTS = {
  { "^global%.[^.]+%.load$", "access" },
  { "^global%.[^.]+%.store$", "access" },
  { "^outputs%.per_thread$", "work" },
  { "^inputs%.per_thread$", "work" },
  { "=access", function(d, c)
    local what = c.feature:match("%.(%a+)$")
    local param = c.feature:match("^global%.(.-)%.%a+$")
    if c.before == "indirect" and c.after and c.after ~= "unknown" and d:has({ "split_reduce", "privatize" }) then
      -- lanes that each followed their own item now walk one item together,
      -- or a scatter now lands in a block's private copy, merged in order
      return d:account(c, d:has({ "split_reduce", "privatize" }))
    end
    for _, x in ipairs({ c.before, c.after }) do
      if x == "indirect" then
        return d:refuse(c, string.format("%s's %ss %s an address read from memory: no primitive", param, what,
          c.after == "indirect" and "follow" or "no longer follow"))
      end
      if x == "unknown" then return d:refuse(c, "the addresses of " .. param .. "'s " .. what .. "s cannot be read") end
    end
    local by = d:has(REMAPS)
    if by then return d:account(c, by) end
    if c.before and c.after then
      return d:account(c, d:use("map", { block = d.new.features.block, x = d.new.map_x }, c.feature))
    end
    d:refuse(c, string.format("%s %s %ss: no primitive", c.after and "begins" or "stops", param, what))
  end },
  { "%.bank_ways$", function(d, c)
    local by = d:has(SHARED)
    if by then return d:account(c, by) end
    local what = c.feature:gsub("%.bank_ways$", ""):gsub("^shared%.", "")
    d:refuse(c, string.format("the bank conflicts of %s go from %s to %s: no primitive lays out the threads' reads of shared memory",
      what, v(c.before), v(c.after)))
  end },
  { "^shared%.width$", function(d, c)
    local by = d:has({ "vectorize", "register_tile", "stage" })
    if by then return d:account(c, by) end
    if c.after then return d:account(c, d:use("vectorize", { c.after }, c.feature)) end
    d:account(c, d:use("vectorize", {}, c.feature, true))
  end },
  { "=work", function(d, c)
    local by = d:has(WORK)
    if by then return d:account(c, by) end
    -- a growing loop doing F times the work a trip, the rest as it was: unrolled by F
    local a, b = parse_count(c.before), parse_count(c.after)
    if a.n > 0 and b.n % a.n == 0 and b.n // a.n >= 2 and a.c == b.c then
      -- the factor: what the busiest growing loop moves a trip, before and after
      local t0 = d.old.per_trip and d.old.per_trip[c.feature]
      local t1 = d.new.per_trip and d.new.per_trip[c.feature]
      local f = (t0 and t1 and t0 > 0 and t1 % t0 == 0) and math.tointeger(t1 // t0) or nil
      return d:account(c, d:use("unroll", f and f >= 2 and { f } or {}, c.feature))
    end
    local f = ratio(c.before, c.after)
    if f and f >= 2 then return d:account(c, d:use("coarsen", { f }, c.feature)) end
    local g = ratio(c.after, c.before)
    if g and g >= 2 then return d:account(c, d:use("coarsen", { g }, c.feature, true)) end
    d:refuse(c, string.format("a thread's %s go from %s to %s: no primitive", c.feature:match("^(%a+)"), v(c.before), v(c.after)))
  end },
  { "^reduce%.combine$", function(d, c)
    local by = d:has({ "split_reduce" })
    if by then return d:account(c, by) end
    local new = added(c.before, c.after)
    local kir_form = true
    for _, x in ipairs(new) do if x ~= "shuffle" and x ~= "slots" then kir_form = false end end
    if kir_form and c.after then
      return d:account(c, d:use("split_reduce", { block = threads_of(d.new.features.block) }, c.feature))
    end
    d:refuse(c, string.format("the partial values now meet by %s: split_reduce combines them by shuffles and one shared slot a warp",
      table.concat(new, "+") ~= "" and table.concat(new, "+") or v(c.after)))
  end },
  { "^atomics%.global$", function(d, c)
    local by = d:has({ "privatize" })
    if by then return d:account(c, by) end
    d:refuse(c, string.format("atomic operations on global memory %s -> %s: no primitive", v(c.before), v(c.after)))
  end },
  { "^loops$", function(d, c)
    local by = d:has(LOOPS)
    if by then return d:account(c, by) end
    d:refuse(c, string.format("the kernel's loops go from %s to %s: no primitive adds or removes them", v(c.before), v(c.after)))
  end },
  { "^unroll$", function(d, c)
    -- loops with #pragma unroll that came or went with other code
    local by = d:has(LOOPS)
    if by then return d:account(c, by) end
    if (c.after or 0) < (c.before or 0) and d.old.features.loops == d.new.features.loops then
      return d:account(c, d:use("unroll", {}, c.feature, true))
    end
    d:refuse(c, string.format("loops with #pragma unroll go from %s to %s along with new code: no primitive", v(c.before), v(c.after)))
  end },
}

local REFUSED = {
  { "^shared%.exchange$", function(c)
    return "threads exchange computed values through shared memory: no primitive"
  end },
  { "^warp%.vote$", function(c) return "warp votes (" .. v(c.after or c.before) .. "): no primitive" end },
}

local function changes(old, new)
  local names, seen = {}, {}
  for k in pairs(old.features) do if not seen[k] then seen[k] = true; names[#names + 1] = k end end
  for k in pairs(new.features) do if not seen[k] then seen[k] = true; names[#names + 1] = k end end
  table.sort(names)
  local out = {}
  for _, k in ipairs(names) do
    local a, b = old.features[k], new.features[k]
    if tostring(a) ~= tostring(b) then out[#out + 1] = { feature = k, before = a, after = b } end
  end
  return out
end

local function matches(rules, feature)
  for _, r in ipairs(rules) do if feature:match(r[1]) then return r[2] end end
end

-- Runs each rule, in the table's order, on the changes it matches that
-- no rule has settled yet. An entry { pattern, "name" } runs the body of
-- the entry { "=name", body }.
local function run(d, rules)
  for _, r in ipairs(rules) do
    if r[1]:sub(1, 1) ~= "=" then
      local fn = r[2]
      if type(fn) == "string" then
        for _, q in ipairs(rules) do if q[1] == "=" .. r[2] then fn = q[2] end end
      end
      for _, c in ipairs(d.changed) do
        if not c.why and not c.by and c.feature:match(r[1]) then fn(d, c) end
      end
    end
  end
end

function M.explain(old, new)
  local d = setmetatable({ old = old, new = new, primitives = {}, unexplained = {}, changed = changes(old, new) }, Delta)
  for _, c in ipairs(d.changed) do
    local refused = matches(REFUSED, c.feature)
    if refused then d:refuse(c, refused(c)) end
  end
  run(d, DRIVERS)
  run(d, DEPENDENTS)
  for _, c in ipairs(d.changed) do
    if not c.why and not c.by then d:refuse(c, "no primitive") end
  end
  if #d.changed == 0 then
    d.unexplained[#d.unexplained + 1] = "no feature of the schedule signature changed: what the step changes lies outside "
      .. "it (the algorithm, control flow, or a mapping the signature does not read)"
  end
  local texts = {}
  for _, p in ipairs(d.primitives) do texts[#texts + 1] = p.text end
  d.text = table.concat(texts, " ")
  d.explained = #d.changed > 0 and #d.unexplained == 0
  d.how = d.explained and "signature" or nil
  return d
end


M.threads_of, M.value_text = threads_of, v

function M.pair(older, newer, opts)
  opts = opts or {}
  local a, why_a = schedule.signature(older, opts.kernel, { params = opts.params })
  if not a then return { explained = false, unexplained = { "the older version: " .. why_a }, changed = {}, primitives = {}, text = "" } end
  local b, why_b = schedule.signature(newer, opts.kernel, { params = opts.params })
  if not b then return { explained = false, unexplained = { "the newer version: " .. why_b }, changed = {}, primitives = {}, text = "" } end
  local d = M.explain(a, b)
  d.older_signature = a
  return d
end

return M
