-- Transforms: one optimization each, in both directions. The walk undoes
-- them to simplify an expert kernel; the orchestrator applies them. Every
-- file of this folder except init.lua and support.lua is one transform,
-- loaded by name (transforms.get) or all at once (transforms.all), and
-- each returns a table with this contract:
--
--   name    = the file's name ("restrict")
--   intent  = one sentence: what the optimization buys and why
--   family  = "decoration" when the edit leaves the kernel's structure as it
--             is (a qualifier, a hint, an intrinsic, a constant's value);
--             nil: "structural" (it changes loops, indexing or memory use)
--   params  = { NAME = { value... } } the parameter space of apply, or nil
--   find(unit, facts) -> { site... } in source order, in device code only
--             (support.functions gives the device functions); facts
--             (klineage.facts of the site's function, or nil) may be used,
--             never required; facts.alias is the workload's aliasing
--             declaration (transforms/lib/aliasing.lua; absent: unknown)
--   apply(site [, params]) -> text | nil, failure   (direction "apply")
--   undo(site) -> text | nil, failure              (direction "undo")
--   changes_results = true where the edit moves results within
--             floating-point error (fast_math): the gate's tolerance decides
--   changes_resources = true where the edit's point is ptxas's register
--             budget (launch_bounds): without it a block may not fit on a
--             multiprocessor at all, the gate's launch_error, as on the device
--   round_trip = nil (the counterpart's edit gives the text back byte
--             for byte) or "tokens" (the same tokens, spacing aside);
--             undo_keeps = { token... } a "tokens" transform's undo leaves
--             in place (restrict keeps the const its apply added),
--             left out of the comparison
--
-- A site is where the transform can act on the unit it was found in:
--   transform  the transform's name
--   direction  "apply" (the optimization is absent: apply adds it) or
--              "undo" (present: undo removes it)
--   key        a name that survives the edit: find on apply(site)'s text
--              gives a site with the same key and direction "undo", and
--              find on undo(site)'s text one with direction "apply"
--   family     the transform's family ("decoration" or "structural")
--   fn         the function's name;  line: where the site begins
--   check      the static check that allowed it, in words (reports say it)
--   params     (undo sites) the values apply would take to rebuild it
--   unit       the parsed unit (apply and undo edit its text)
-- plus the transform's own fields. A site one transform can both apply
-- and undo (an unroll factor to retune) is two sites.
--
-- The text returned is the whole new unit. A failure is a klineage.base.verdicts
-- failure: not_applicable when the site's check no longer holds (a site of
-- another unit, params outside the space), bad_input for malformed params.
--
--   transforms.names() -> sorted names;  transforms.get(name) -> t | nil, failure
--   transforms.all() -> { t... } sorted by name
--   transforms.sites(source_or_unit [, opts]) -> { site... } of every transform,
--     in device code only (a site in a host function is never offered)
--     opts = { names = { ... } (default all), direction = "apply" | "undo",
--              facts = f, fn = name (only sites in this function) }
--   transforms.run(site [, params]) -> text | nil, failure: apply or undo by
--     the site's direction, errors in the transform caught as `internal`
--   transforms.counterpart(site, text) -> the site of `text` with the same
--     transform and key and the other direction, or nil; found under the
--     facts the site was found with (site.facts)
local verdicts = require "klineage.base.verdicts"
local device_code = require "klineage.transforms.lib.device_code"

local M = {}

local SKIP = { init = true, support = true }

local function folder()
  local path = assert(package.searchpath("klineage.transforms.init", package.path))
  return (path:gsub("/init%.lua$", ""))
end

local cache = {}

function M.names()
  local names = {}
  for _, file in ipairs(assert(require("kl.fs").list(folder()))) do
    local name = file:match("^([%w_]+)%.lua$")
    if name and not SKIP[name] then names[#names + 1] = name end
  end
  table.sort(names)
  return names
end

local REQUIRED = { name = "string", intent = "string", find = "function", apply = "function", undo = "function" }

function M.get(name)
  if cache[name] then return cache[name] end
  if type(name) ~= "string" or not name:match("^[%w_]+$") or SKIP[name] then
    return nil, verdicts.failure("bad_input", "no transform named '" .. tostring(name) .. "'")
  end
  local ok, t = pcall(require, "klineage.transforms." .. name)
  if not ok then
    if tostring(t):find("module 'klineage.transforms." .. name .. "' not found", 1, true) then
      return nil, verdicts.failure("bad_input", "no transform named '" .. name .. "' (klineage transforms lists them)")
    end
    error(t, 0)
  end
  for field, ty in pairs(REQUIRED) do
    if type(t[field]) ~= ty then error(string.format("transform %s: field %s must be a %s", name, field, ty), 0) end
  end
  if t.name ~= name then error(string.format("transform %s: its name field says '%s'", name, t.name), 0) end
  cache[name] = t
  return t
end

function M.all()
  local out = {}
  for _, name in ipairs(M.names()) do out[#out + 1] = assert(M.get(name)) end
  return out
end

local function unit_of(x)
  if type(x) == "string" then return (require("kl.source").parse(x)) end
  return x
end

function M.sites(x, opts)
  opts = opts or {}
  local unit = unit_of(x)
  local out = {}
  local list = opts.names and {} or M.all()
  for _, name in ipairs(opts.names or {}) do list[#list + 1] = assert(M.get(name)) end
  -- support.functions keeps finds in device code; this catches a find that
  -- walks the whole unit, so no caller ever sees a host site.
  local device = device_code.rule(unit)
  for _, t in ipairs(list) do
    for _, site in ipairs(t.find(unit, opts.facts) or {}) do
      if (not opts.direction or site.direction == opts.direction) and (not opts.fn or site.fn == opts.fn)
          and not device.in_host(site) then
        site.facts = opts.facts -- counterpart finds the other direction under the same facts
        site.family = t.family or "structural"
        out[#out + 1] = site
      end
    end
  end
  return out
end

function M.run(site, params)
  local t, f = M.get(site.transform)
  if not t then return nil, f end
  local ok, text, failure = pcall(site.direction == "apply" and t.apply or t.undo, site, params)
  if not ok then
    if verdicts.is_failure(text) then return nil, text end
    return nil, verdicts.failure("internal", string.format("transform %s (%s at %s): %s", site.transform,
      site.direction, tostring(site.key), tostring(text)))
  end
  if text == nil then return nil, failure end
  if type(text) ~= "string" then
    return nil, verdicts.failure("internal", "transform " .. site.transform .. " returned a " .. type(text))
  end
  return text
end

function M.counterpart(site, text)
  local want = site.direction == "apply" and "undo" or "apply"
  for _, s in ipairs(M.sites(text, { names = { site.transform }, facts = site.facts })) do
    if s.key == site.key and s.direction == want then return s end
  end
  return nil
end

return M
