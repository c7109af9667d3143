-- The schedule sites of a file, for `klineage transforms`: each __global__
-- function lifted on its own, and every legal single primitive application
-- of those that lift, as sites of the family "schedule".
--
--   sites.of(text) -> sites, kernels
--     site = { family = "schedule", transform = "schedule", direction = "apply",
--              fn, line (where the function begins), key = "fn:text",
--              primitive, params, text (the application, as kir.apply reads it),
--              check = reason (its legality, in words) }
--     kernels = { { fn, lifted = true | false, why (when it did not lift, or
--              no application could be listed) } } in the file's order
local lift = require "klineage.kir.lift"
local schedule = require "klineage.kir.schedule"

local M = {}

local function line_of(k)
  return select(2, k.prefix:gsub("\n", "")) + 1
end

function M.of(text)
  local sites, kernels = {}, {}
  for _, one in ipairs(lift.lift_all(text)) do
    local k = one.kernel
    if not k then
      kernels[#kernels + 1] = { fn = one.name, lifted = false, why = one.why }
    else
      local ok, cands = pcall(schedule.candidates, k)
      if not ok then
        kernels[#kernels + 1] = { fn = one.name, lifted = true, why = "listing its schedules failed: " ..
          tostring(cands):gsub("\n.*", "") }
      else
        kernels[#kernels + 1] = { fn = one.name, lifted = true }
        for _, c in ipairs(cands) do
          sites[#sites + 1] = { family = "schedule", transform = "schedule", direction = "apply", fn = one.name,
            line = line_of(k), key = one.name .. ":" .. c.text, primitive = c.name, params = c.params,
            text = c.text, check = c.reason }
        end
      end
    end
  end
  return sites, kernels
end

return M
