-- Which skills of a repository could apply to a kernel, and what blocks
-- the others, for `klineage skills match` and the orchestrator.
--
--   match.kernel(records, text, opts) -> rows | nil, failure (bad_input)
--     opts = { workload = w (klineage.workload.load, optional), params = p
--              (over w.params), arch = "sm_90" (default), record = the
--              kernel's gate record (its profile facts; optional) }
--     row = { skill = id, site = key, line = n, transform = T | nil,
--             status = "candidate" | "blocked",
--             blocked_by = { condition = c | nil, kind = "precondition" |
--                            "guard" | "pattern" | "evidence" (it never
--                            helped where measured), text = English } | nil,
--             unknown = { condition... } (conditions whose fact is absent),
--             blockers = { { condition, kind }... } (every condition that
--             blocks, blocked_by's first; empty for a candidate and for
--             a pattern that cannot be used),
--             ranks = { { condition, kind, text }... } (conditions that
--             speak against the skill here but only rank, blocks = false:
--             learned from fewer than three lineages and no wrong result;
--             a candidate may have them) }
--     rows go in the order of line, then skill id, then site.
--
-- A skill with pattern { transform = T } gives a row per apply site of T
-- in the kernel (transforms.sites); one with pattern { schedule = FAMILY }
-- none (it weighs kir's schedule rows of that family: search/schedules.lua). A skill with pattern { source = P }
-- (a template) gives a row per match of P (klineage.pattern.match); its template
-- is not applied here, so its "_after" facts are absent.
--
-- Conditions are read over the kernel's facts (facts.of, the entry named
-- by the workload's `kernel`, else the unit's only __global__ function).
-- A fact "X_after" is X of the kernel once the skill is applied at the
-- site: the transform is run there (with materialize.params when the
-- skill materializes through that transform) and facts.of read on the
-- result, once per site.
--   * a precondition that does not hold blocks; one whose fact is absent
--     does not hold either, and its text says the fact could not be
--     computed (absent is not false: the kernel is not known to qualify);
--   * a guard that holds blocks; one whose fact is absent cannot fire and
--     is listed in `unknown`, as absent preconditions are.
local aliasing = require "klineage.transforms.lib.aliasing"
local describe = require "klineage.skills.describe"
local facts = require "klineage.facts"
local transforms = require "klineage.transforms"
local verdicts = require "klineage.base.verdicts"

local M = {}

local function bad(fmt, ...) return nil, verdicts.failure("bad_input", "skills match: " .. string.format(fmt, ...)) end

-- The entry function's name: the workload's kernel, else the only kernel.
local function entry_of(unit, w)
  if w and type(w.kernel) == "string" then return w.kernel end
  local kernels = require("klineage.transforms.support").functions(unit, { global = true })
  if #kernels == 1 then return kernels[1]:name() end
  if #kernels == 0 then return bad("the file has no __global__ function with a body") end
  local names = {}
  for i, fn in ipairs(kernels) do names[i] = fn:name() end
  return bad("the file has %d kernels (%s): give --workload to name the entry", #kernels, table.concat(names, ", "))
end

-- One flat table: the kernel's facts, and those after the change as "X_after".
local function merged(before, after)
  local v = {}
  for k, x in pairs(before.values) do v[k] = x end
  for k, x in pairs(after and after.values or {}) do v[k .. "_after"] = x end
  return v
end

local function needs_after(r)
  for _, list in ipairs({ r.preconditions, r.guards }) do
    for _, c in ipairs(list) do
      if c[1]:match("_after$") then return true end
    end
  end
  return false
end

local function absent_text(c, after_why)
  local text = string.format("fact %s could not be computed", c[1])
  if c[1]:match("_after$") and after_why then text = text .. " (" .. after_why .. ")" end
  return text
end

-- Reads the record's conditions over values; fills row.status, blocked_by, unknown.
local function judge(row, r, values, after_why)
  local function block(b)
    -- learned from too little to block (learn.BLOCK_LINEAGES): it ranks
    if b.condition and b.condition.blocks == false then
      row.ranks[#row.ranks + 1] = { condition = b.condition, kind = b.kind, text = b.text }
      return
    end
    row.blocked_by = row.blocked_by or b
    row.blockers[#row.blockers + 1] = { condition = b.condition, kind = b.kind }
  end
  if require("klineage.skills.record").never_helped(r) then
    block { kind = "evidence", text = "never seen to help: " .. tostring(r.confidence.why) }
  end
  for _, c in ipairs(r.preconditions) do
    local holds = describe.holds(c, values)
    if holds == nil then
      row.unknown[#row.unknown + 1] = c
      block { condition = c, kind = "precondition",
        text = string.format("precondition %s: %s, so it does not hold", describe.condition(c), absent_text(c, after_why)) }
    elseif holds == false then
      block { condition = c, kind = "precondition",
        text = string.format("precondition %s does not hold: %s", describe.condition(c), describe.negation(c)) }
    end
  end
  for _, g in ipairs(r.guards) do
    local holds = describe.holds(g, values)
    if holds == nil then
      row.unknown[#row.unknown + 1] = g
    elseif holds then
      local text = "guard: " .. describe.condition(g)
      if g.why and g.why ~= "" then text = text .. ": " .. g.why end
      block { condition = g, kind = "guard", text = text }
    end
  end
  row.status = row.blocked_by and "blocked" or "candidate"
  return row
end

local function new_row(r, site, line, transform)
  return { skill = r.id, site = site, line = line, transform = transform, unknown = {}, blockers = {}, ranks = {} }
end

local function transform_rows(out, r, ctx)
  local name = r.pattern.transform
  local t = transforms.get(name)
  if not t then
    local row = new_row(r, nil, nil, name)
    row.status, row.blocked_by = "blocked", { kind = "pattern", text = "no transform named " .. name .. " in this build" }
    out[#out + 1] = row
    return
  end
  local params = r.materialize.transform == name and r.materialize.params or nil
  for _, site in ipairs(ctx.sites) do
    if site.transform == name then
      local after, after_why
      if needs_after(r) then after, after_why = ctx.after(site, params) end
      out[#out + 1] = judge(new_row(r, site.key, site.line, name), r, merged(ctx.before, after), after_why)
    end
  end
end

local function template_rows(out, r, ctx)
  local kmatch = require "klineage.pattern.match"
  local pat, pf = kmatch.compile(r.pattern.source)
  if not pat then
    local row = new_row(r, nil, nil, nil)
    row.status = "blocked"
    row.blocked_by = { kind = "pattern", text = "the skill's pattern does not compile: " .. (tostring(pf.message):gsub("\n.*", "")) }
    out[#out + 1] = row
    return
  end
  local matches = pat:find(ctx.unit)
  for _, m in ipairs(matches) do
    local row = new_row(r, string.format("pattern@%d:%d", m.line, m.col), m.line, nil)
    out[#out + 1] = judge(row, r, merged(ctx.before, nil), "a template skill is not applied by match")
  end
end

local function order(a, b)
  local la, lb = a.line or math.maxinteger, b.line or math.maxinteger
  if la ~= lb then return la < lb end
  if a.skill ~= b.skill then return a.skill < b.skill end
  return tostring(a.site) < tostring(b.site)
end

function M.kernel(records, text, opts)
  if type(records) ~= "table" then error("skills.match.kernel: a list of records expected", 2) end
  if type(text) ~= "string" then error("skills.match.kernel: the kernel's text expected", 2) end
  opts = opts or {}
  local unit = require("kl.source").parse(text)
  local entry, ef = entry_of(unit, opts.workload)
  if not entry then return nil, ef end
  local fopts = { workload = opts.workload, params = opts.params, arch = opts.arch }
  -- the kernel's own gate record, when it has one, adds its profile facts
  local before, ff = facts.of(text, entry, { workload = opts.workload, params = opts.params, arch = opts.arch, record = opts.record })
  if not before then return nil, ff end
  local cache = {}
  local ctx = {
    unit = unit, before = before, sites = transforms.sites(unit, { direction = "apply", facts = aliasing.facts(opts.workload) }),
    -- facts of the kernel after the site's transform, once per site and params
    after = function(site, params)
      local key = site.transform .. "\0" .. site.key .. "\0" .. require("klineage.skills.serialize").value(params or {})
      if cache[key] == nil then
        local new, tf = transforms.run(site, params)
        if not new then
          cache[key] = { why = "the transform failed there: " .. (tostring(tf.message):gsub("\n.*", "")) }
        else
          local g, gf = facts.of(new, entry, fopts)
          cache[key] = g and { facts = g } or { why = "no facts of the changed kernel: " .. (tostring(gf.message):gsub("\n.*", "")) }
        end
      end
      return cache[key].facts, cache[key].why
    end,
  }
  local rows = {}
  for _, r in ipairs(records) do
    -- a schedule skill gives no row: it is a prior over kir's schedule rows (search/schedules.lua)
    if r.pattern.transform then transform_rows(rows, r, ctx)
    elseif not r.pattern.schedule then template_rows(rows, r, ctx) end
  end
  table.sort(rows, order)
  return rows
end

return M
