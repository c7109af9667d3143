-- An expert step explained as a schedule delta: which kernel-IR primitives
-- with which parameters turn version k-1 into version k. The explanation
-- by signature is klineage.facts.schedule_delta's (every feature that
-- changed accounted for by a primitive, whatever the spelling). Where version k-1 lifts
-- into the kernel IR (klineage.kir), the delta is also tried: its
-- primitives applied with kir, and the emitted kernel's signature compared
-- with version k's on every changed feature.
--
--   delta.step(older, newer [, opts]) -> d
--     opts = { kernel = NAME, params = { NAME = int }, kir = false (skip the
--              reproduction) }
--     d = { explained, how = "kir" | "signature" | nil, text (the primitives),
--           primitives = { { name, params, text, removed, because = { feature... } } },
--           changed = { { feature, before, after, by (a primitive's text) | why } },
--           unexplained = { why... }, kir = { lifted, why, sequence, reproduced,
--           differs = { { feature, kir, expert } }, tried } }
--   delta.lineage(versions [, opts]) -> { steps = { { from, to, delta } },
--           explained, total, reproduced, lifted }
--     versions = { { label, text }... } oldest first; opts as for step
--   delta.summary(d) -> a compact copy for journals and JSON (no kernels)
--
-- The rules, feature by feature, are facts/schedule_delta.lua's.
local explain = require "klineage.facts.schedule_delta"
local schedule = require "klineage.facts.schedule"

local M = {}

M.MAX_KIR_TRIES = 48
M.explain = explain.explain
local v, threads_of = explain.value_text, explain.threads_of

-- ---- reproduction by kir ----------------------------------------------------------

local function dims_of(text)
  local out = {}
  for n in tostring(text or ""):gmatch("%d+") do out[#out + 1] = math.tointeger(tonumber(n)) end
  return out
end

local function kir_params(p, k, kir, d)
  -- the delta's own parameters in kir's form first, then kir's candidates
  local out = {}
  local prim = kir.primitive(p.name)
  local cands = prim and prim.candidates(k) or {}
  if p.name == "map" and p.params.block then
    -- the new block, and the old one's shape where the new is the same
    -- threads in one dimension (32 x 32 written as 1024)
    local shapes = { dims_of(p.params.block) }
    local old = dims_of(d.old.features.block)
    if #old > 1 and threads_of(d.old.features.block) == threads_of(p.params.block) then shapes[#shapes + 1] = old end
    for _, block in ipairs(shapes) do
      for _, c in ipairs(cands) do
        local q = {}
        for key, val in pairs(c) do q[key] = val end
        q.block = block
        out[#out + 1] = q
      end
    end
  elseif p.name == "stage" and p.params.tile then
    out[#out + 1] = { tile = p.params.tile }
  elseif p.name == "register_tile" and p.params[1] then
    out[#out + 1] = { p.params[1], p.params[2] }
    out[#out + 1] = { p.params[2], p.params[1] }
  elseif p.name == "coarsen" and p.params[1] then
    out[#out + 1] = { factor = p.params[1] }
    for _, c in ipairs(cands) do if c.axis then out[#out + 1] = { factor = p.params[1], axis = c.axis } end end
  elseif p.name == "vectorize" and p.params[1] then
    out[#out + 1] = { p.params[1] }
  elseif p.name == "split_reduce" then
    if p.params.block then out[#out + 1] = { block = p.params.block }
    elseif p.params.wpb then out[#out + 1] = { "warp", wpb = p.params.wpb }
    else out[#out + 1] = { "warp" } end
  elseif p.name == "unflatten" and p.params.block then
    out[#out + 1] = { block = dims_of(p.params.block) }
  end
  for _, c in ipairs(cands) do out[#out + 1] = c end
  return out
end

-- Loop counts say how the code is written, not how it is scheduled: kir
-- writes a tile's loads as loops of their own where an expert unrolls them.
M.NOT_COMPARED = { loops = true, unroll = true }

local function compare(d, sig)
  local differs = {}
  for _, c in ipairs(d.changed) do
    if M.NOT_COMPARED[c.feature] then goto next end
    local got = sig.features[c.feature]
    if tostring(got) ~= tostring(c.after) then
      differs[#differs + 1] = { feature = c.feature, kir = got, expert = c.after }
    end
    ::next::
  end
  return differs
end

function M.reproduce(d, older, opts)
  local kir = require "klineage.kir"
  local k, why = kir.lift(older, { kernel = opts.kernel })
  if not k then return { lifted = false, why = why } end
  local order = {}
  for i, n in ipairs(kir.PRIMITIVES) do order[n] = i end
  local plan = {}
  for _, p in ipairs(d.primitives) do
    if p.removed then return { lifted = true, why = "the delta removes " .. p.name .. ": kir only adds primitives" } end
    if not order[p.name] then return { lifted = true, why = "kir has no primitive " .. p.name } end
    plan[#plan + 1] = p
  end
  if #plan == 0 then return { lifted = true, why = "no primitive to apply" } end
  table.sort(plan, function(a, b) return order[a.name] < order[b.name] end)
  local sched = require "klineage.kir.schedule"
  local tried, best = 0, nil
  local function walk(i, kernel, texts)
    if tried >= M.MAX_KIR_TRIES then return nil end
    if i > #plan then
      tried = tried + 1
      local text = kir.emit(kernel)
      if not text then return nil end
      local sig = schedule.signature(text, opts.kernel, { params = opts.params })
      if not sig then return nil end
      local differs = compare(d, sig)
      local seq = table.concat(texts, " ")
      if not best or #differs < #best.differs then best = { sequence = seq, differs = differs } end
      if #differs == 0 then return seq end
      return nil
    end
    local p = plan[i]
    local prim = kir.primitive(p.name)
    local seen = {}
    for _, params in ipairs(kir_params(p, kernel, kir, d)) do
      local t = sched.text(p.name, params)
      if not seen[t] then
        seen[t] = true
        local ok, nk = pcall(prim.apply, kernel, params)
        if ok and nk then
          texts[i] = t
          local found = walk(i + 1, nk, texts)
          if found then return found end
        end
      end
      if tried >= M.MAX_KIR_TRIES then break end
    end
    return nil
  end
  local seq = walk(1, k, {})
  if seq then return { lifted = true, reproduced = true, sequence = seq, tried = tried } end
  return { lifted = true, reproduced = false, tried = tried, sequence = best and best.sequence,
           differs = best and best.differs or {}, why = best and nil or "no sequence of the delta's primitives applies" }
end

-- ---- entry points -----------------------------------------------------------------

function M.step(older, newer, opts)
  opts = opts or {}
  local d = explain.pair(older, newer, opts)
  local a = d.older_signature
  if not a then return d end
  d.older_signature = nil
  if opts.kir ~= false then
    local ok, r
    if d.explained then
      ok, r = pcall(M.reproduce, d, older, { kernel = opts.kernel or a.kernel, params = opts.params })
    else
      -- only whether it lifts: an unexplained delta has nothing to apply
      local lifted, why
      ok, lifted, why = pcall(require("klineage.kir").lift, older, { kernel = opts.kernel or a.kernel })
      r = ok and { lifted = lifted ~= nil, why = why } or lifted
    end
    d.kir = ok and r or { lifted = false, why = "kir failed: " .. (tostring(r):gsub("\n.*", "")) }
    if d.kir.reproduced then d.how = "kir" end
  end
  return d
end

function M.summary(d)
  local changed = {}
  for _, c in ipairs(d.changed or {}) do
    changed[#changed + 1] = { feature = c.feature, before = c.before, after = c.after, by = c.by, why = c.why }
  end
  local out = { explained = d.explained, how = d.how, text = d.text, changed = changed, unexplained = d.unexplained }
  if d.kir then
    out.kir = { lifted = d.kir.lifted, reproduced = d.kir.reproduced, sequence = d.kir.sequence, why = d.kir.why,
                differs = d.kir.differs, tried = d.kir.tried }
  end
  return out
end

function M.lineage(versions, opts)
  local out = { steps = {}, explained = 0, total = 0, reproduced = 0, lifted = 0, lifted_explained = 0 }
  for i = 2, #versions do
    local d = M.step(versions[i - 1].text, versions[i].text, opts)
    out.steps[#out.steps + 1] = { from = versions[i - 1].label, to = versions[i].label, delta = d }
    out.total = out.total + 1
    if d.explained then out.explained = out.explained + 1 end
    if d.kir and d.kir.lifted then
      out.lifted = out.lifted + 1
      if d.explained then out.lifted_explained = out.lifted_explained + 1 end
    end
    if d.how == "kir" then out.reproduced = out.reproduced + 1 end
  end
  return out
end

-- ---- where versions come from ------------------------------------------------------

local files = require "klineage.base.files"
local verdicts = require "klineage.base.verdicts"

-- A workload's lineage, oldest first: { { label, text }... } | nil, failure.
function M.workload_versions(w)
  local out = {}
  for i, file in ipairs(w.lineage or {}) do
    local text, f = files.read_text(w.dir .. "/" .. file)
    if not text then return nil, f end
    out[i] = { label = file, text = text }
  end
  if #out < 2 then
    return nil, verdicts.failure("bad_input", string.format("the workload %s has %d lineage versions: a step needs two", tostring(w.name), #out))
  end
  return out
end

-- A folder's versions: the files vN.cu or vN_anything.cu (.cuh too) in
-- the order of N | nil, failure.
function M.folder_versions(dir)
  local names, err = require("kl.fs").list(dir)
  if not names then
    return nil, verdicts.failure("bad_input", string.format("cannot list '%s': %s", files.display(dir), tostring(err)))
  end
  local found, by = {}, {}
  for _, name in ipairs(names) do
    local n = name:match("^v(%d+)%.cuh?$") or name:match("^v(%d+)_.*%.cuh?$")
    if n then
      n = tonumber(n)
      if by[n] then
        return nil, verdicts.failure("bad_input", string.format("'%s' and '%s' are both version %d", by[n], name, n))
      end
      by[n] = name
      found[#found + 1] = n
    end
  end
  table.sort(found)
  local out = {}
  for _, n in ipairs(found) do
    local text, f = files.read_text(dir .. "/" .. by[n])
    if not text then return nil, f end
    out[#out + 1] = { label = by[n], text = text }
  end
  if #out < 2 then
    return nil, verdicts.failure("bad_input", string.format("'%s' holds %d versions (v0.cu, v1.cu, ... or v0_name.cu, ...): a step needs two",
      files.display(dir), #out))
  end
  return out
end

return M
