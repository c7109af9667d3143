-- Which pointer parameters of a kernel may share memory when it is
-- launched: what restrict and ldg must know before they promise the
-- compiler that a read-only pointer sees no store.
--
-- The workload spec declares it (klineage.workload.alias); transforms get the
-- declaration as facts.alias, from transforms.sites(x, { facts = ... }):
--   no facts, or facts.alias nil   unknown: any two pointer parameters of
--                                  one element type (or one of them void
--                                  or char, which may alias anything) may
--                                  be one buffer
--   facts.alias = { pairs = {} }   never in place: none may
--   facts.alias = { pairs = { { i, j } ... } }   parameters i and j (by
--                                  position, the spec's args) are launched
--                                  as one buffer; no others are
-- The positions hold for every kernel of the unit: the gate launches each
-- of them with the spec's args (gate/session.lua).
--
--   aliasing.facts(w [, f]) -> f (or a new table) with .alias set from the
--       workload w (nil w: unknown), to pass as transforms.sites' facts
--   aliasing.conflict(unit, fn, index, facts) -> nil | why: parameter
--       `index` of fn may alias another that the kernel writes
local alias = require "klineage.workload.alias"
local reads = require "klineage.transforms.lib.reads"

local M = {}

function M.facts(w, f)
  f = f or {}
  f.alias = w and alias.declaration(w) or nil
  return f
end

local ANY = { void = true, char = true, ["signed char"] = true, ["unsigned char"] = true }

local function element(p)
  local base = p.base_span and p.base_span.text or ""
  return (base:gsub("%s+", " "))
end

-- The parameters that may be the same buffer as params[index], and how
-- the site's check says it.
local function partners(fn, index, facts)
  local params = fn:params()
  local me, out = params[index], {}
  local decl = facts and facts.alias
  if decl then
    for _, pair in ipairs(decl.pairs or {}) do
      local other = (pair[1] == index and pair[2]) or (pair[2] == index and pair[1]) or nil
      if other and params[other] then out[#out + 1] = params[other] end
    end
    return out, "declared"
  end
  for i, p in ipairs(params) do
    if i ~= index and p.pointer_depth >= 1 and p.name and p.name ~= "" then
      local a, b = element(me), element(p)
      if a == b or ANY[a] or ANY[b] then out[#out + 1] = p end
    end
  end
  return out, "unknown"
end

function M.conflict(unit, fn, index, facts)
  local list, how = partners(fn, index, facts)
  local me = fn:params()[index]
  for _, p in ipairs(list) do
    if reads.written(unit, fn, p.name) then
      if how == "declared" then
        return string.format("%s and %s are launched as one buffer (the workload's alias declares it) and the kernel writes %s",
          me.name, p.name, p.name)
      end
      return string.format("%s may be the same buffer as %s, which the kernel writes: whether it is launched in place is unknown "
        .. "(a workload spec with alias = {} says it never is)", me.name, p.name)
    end
  end
  return nil
end

return M
