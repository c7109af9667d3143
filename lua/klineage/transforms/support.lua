-- What transforms share: the unit's kernels, uses of a name, sites, and
-- edits spliced into new text. Nothing here knows an optimization.
--
--   support.unit(x) -> unit           (a unit, or source text parsed)
--   support.functions(unit [, opts]) -> { fn... } the device functions
--       with bodies (lib/device_code.lua: transforms edit device code only);
--       opts.global: __global__ ones only; opts.host: host functions too
--       (for names a unit defines, never for sites)
--   support.uses(fn, name) -> { ident... } the identifiers `name` in fn's
--       body, member names (`.x` of threadIdx.x) left out
--   support.site(t, unit, fn, fields) -> a site (transforms/init.lua):
--       fields.direction, fields.key and fields.check are required
--   support.edit(site, edits) -> text | nil, failure   (match.splice)
--   support.refuse(site, why) -> nil, not_applicable failure
--   support.same_unit(site, t) -> true | nil, failure: the site was found by
--       transform t, in the direction asked
--   support.int_of(span) -> the span's integer, or nil
local match = require "klineage.pattern.match"
local device_code = require "klineage.transforms.lib.device_code"
local verdicts = require "klineage.base.verdicts"

local M = {}

function M.unit(x)
  if type(x) == "string" then return (require("kl.source").parse(x)) end
  return x
end

function M.functions(unit, opts)
  opts = opts or {}
  local out = {}
  local rule = not opts.host and device_code.rule(unit)
  for _, fn in ipairs(unit:functions()) do
    local info = fn:info()
    if fn:body() and not info.prototype and (not opts.global or info.global) and (not rule or rule.is_device(fn)) then
      out[#out + 1] = fn
    end
  end
  return out
end

function M.uses(fn, name)
  local out = {}
  local body = fn:body()
  if not body then return out end
  for id in body:walk({ "ident" }) do
    if id:text() == name then
      local p = id:parent()
      local member = p and p.kind == "member" and p:field("member")
      if not (member and member.id == id.id) then out[#out + 1] = id end
    end
  end
  return out
end

function M.site(t, unit, fn, fields)
  assert(fields.direction == "apply" or fields.direction == "undo", "a site's direction is apply or undo")
  assert(type(fields.key) == "string", "a site needs a key")
  assert(type(fields.check) == "string", "a site needs its check")
  local s = { transform = t.name, unit = unit, fn = fn and fn:name() or nil, line = fields.line or (fn and fn.line) }
  for k, v in pairs(fields) do s[k] = v end
  return s
end

function M.refuse(site, why)
  return nil, verdicts.failure("not_applicable", string.format("%s (%s at %s): %s", site.transform or "?",
    site.direction or "?", tostring(site.key), why))
end

function M.same_unit(site, t, direction)
  if type(site) ~= "table" or site.transform ~= t.name or not site.unit then
    return nil, verdicts.failure("not_applicable", t.name .. ": the site was not found by this transform")
  end
  if site.direction ~= direction then
    return M.refuse(site, "this site is for " .. tostring(site.direction) .. ", not " .. direction)
  end
  return true
end

function M.edit(site, edits)
  local text, f = match.splice(site.unit, edits)
  if not text then return nil, verdicts.failure("not_applicable", tostring(f.message or f)) end
  return text
end

function M.int_of(span) return span and math.type(span.int) == "integer" and span.int or nil end

return M
