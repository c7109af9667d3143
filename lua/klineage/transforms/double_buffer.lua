-- Double buffering of a tiled reduction (sgemm v6 -> v7, conv2d v6 -> v7):
-- two shared-memory stages; the next tile's global loads go to registers
-- before the current tile's math and to the other stage after it, so the
-- load latency overlaps the FMAs and one barrier per tile suffices.
--
-- The static check is the lineage's own kernels (lib/db_forms.lua): the
-- unit's one kernel has the single-buffered (apply) or double-buffered
-- (undo) body of one of them token for token, with the kernel's parameters
-- (in their order) as the only names that may differ, and that form's
-- launch bounds line; the double-buffered form also has the helpers it
-- calls, verbatim, right before the kernel's line. The constants, launch
-- and requires lines are the same in both forms and are left alone. apply
-- needs the names the helpers and the new body introduce to be free; undo
-- leaves them unused (checked on the result).
local support = require "klineage.transforms.support"
local tiling = require "klineage.transforms.lib.tiling"
local forms = require "klineage.transforms.lib.sgemm_forms"
local db = require "klineage.transforms.lib.db_forms"

local T = {
  name = "double_buffer",
  intent = "stage the next tile in registers and a second shared-memory buffer so global loads overlap the math, one barrier per tile",
}

-- The byte where the kernel's first line begins, and the text of its
-- launch bounds to the end of that line.
local function layout(unit, fn)
  local text = tostring(unit)
  local start = select(5, fn:range())
  while start > 1 and text:sub(start - 1, start - 1) ~= "\n" do start = start - 1 end
  local lb = fn:launch_bounds()
  if not (lb.present and lb.count == 1) then return nil end
  local eol = (text:find("\n", lb.whole.begin, true) or #text + 1) - 1
  return { line_start = start, bounds = { lb.whole.begin, eol, text = text:sub(lb.whole.begin, eol) } }
end

local function params_match(fn, f, c)
  local ps = fn:params()
  if #ps ~= #f.params then return false end
  local seen = {}
  for k, p in ipairs(ps) do
    if c[f.params[k]] ~= p.name or seen[p.name] then return false end
    seen[p.name] = true
  end
  return true
end

function T.find(unit)
  local sites = {}
  local fn = tiling.kernel(unit)
  local at = fn and layout(unit, fn)
  if not at then return sites end
  local text = tostring(unit)
  for _, f in ipairs(db.list) do
    for _, dir in ipairs({ "apply", "undo" }) do
      local form = dir == "apply" and f.single or f.double
      local c = at.bounds.text == form.bounds and forms.match(form, fn:body())
      if c and params_match(fn, f, c) then
        local ok = true
        if dir == "undo" then
          ok = at.line_start > #f.extra and text:sub(at.line_start - #f.extra, at.line_start - 1) == f.extra
        else
          for _, n in ipairs(f.introduces) do if tiling.taken(unit, n) then ok = false end end
        end
        if ok then
          sites[#sites + 1] = support.site(T, unit, fn, {
            direction = dir, key = fn:name() .. ":stages", line = fn:body().line, form = f, caps = c, at = at,
            check = string.format("the kernel is the %s lineage's %s-buffered tiled reduction, its helpers and launch bounds as written",
              f.name, dir == "apply" and "single" or "double"),
          })
        end
      end
    end
  end
  return sites
end

local function rewrite(site, direction)
  local ok, fail = support.same_unit(site, T, direction)
  if not ok then return nil, fail end
  local f, at = site.form, site.at
  local to = direction == "apply" and f.double or f.single
  local edits = {
    { begin = at.bounds[1], ["end"] = at.bounds[2], text = to.bounds },
    { node = tiling.kernel(site.unit):body(), text = forms.text(to, site.caps) },
  }
  if direction == "apply" then
    edits[#edits + 1] = { begin = at.line_start, ["end"] = at.line_start - 1, text = f.extra }
  else
    edits[#edits + 1] = { begin = at.line_start - #f.extra, ["end"] = at.line_start - 1, text = "" }
  end
  local text, err = support.edit(site, edits)
  if not text then return nil, err end
  if direction == "undo" then
    local u = require("kl.source").parse(text)
    for _, n in ipairs(f.introduces) do
      if tiling.taken(u, n) then return support.refuse(site, n .. " is still used after the edit") end
    end
  end
  return text
end

function T.apply(site) return rewrite(site, "apply") end
function T.undo(site) return rewrite(site, "undo") end

return T
