-- Persistent grid: a fixed grid of 132 * k blocks (k per SM of the H200)
-- loops over the work items instead of launching one block (or thread) per
-- item, so the blocks' setup and the launch's tail are paid once per wave.
--
-- Three idioms, each site one kernel (key: its name):
-- * block per item (softmax v5 -> v6). Apply: the launch grid is an item
--   count N (C-expressible) and every blockIdx.x of the kernel is the item
--   of a statement `{ T r = blockIdx.x; ... }` or an expression statement
--   outside any loop; each becomes `for (T r = blockIdx.x; r < N; r +=
--   gridDim.x)`, `(void)N;` goes, grid(GRID_BLOCKS) with #define GRID_BLOCKS
--   (132 * k). The check: the loop bodies read no gridDim, write no outer
--   variable, leave by no jump, and each ends with a __syncthreads after its
--   last shared-memory access (followed through calls), so the next item's
--   writes cannot race the last one's reads. Undo: the reverse on loops of
--   exactly that form (the only blockIdx/gridDim of the kernel, one bound).
-- * thread per item: grid_stride's apply site, with the grid fixed as
--   above; undo: grid_stride's undo where the grid is a constant multiple of 132.
-- * a work counter (raytrace v4 -> v5), undo only: `for (;;)` whose warps
--   take 32 items per atomicAdd on a counter, broadcast by __shfl_sync,
--   then `if (r < N) S`; undo gives one thread per item with
--   `if (r >= N) return;` and grid cdiv(N, B). Apply never builds it: that
--   the counter is zeroed before each launch is no fact of the kernel.
local support = require "klineage.transforms.support"
local L = require "klineage.transforms.lib.grid_loops"
local GS = require "klineage.transforms.grid_stride"
local BI = require "klineage.transforms.lib.grid_block_items"
local lib_counter = require "klineage.transforms.lib.grid_counter"

local T = {
  name = "persistent_grid",
  intent = "launch a fixed grid of a few waves of blocks that loops over the work items, instead of one block or thread per item",
  params = { blocks_per_sm = { 1, 2, 4, 8, 12, 16 } },
}
local SMS = 132  -- the H200's SM count, as the lineages write their grids
local NAME = "GRID_BLOCKS"

local function minb(fn)
  local lb = fn:launch_bounds()
  local m = lb and lb.present and lb.min_blocks
  return m and math.type(m.int) == "integer" and m or nil
end

local function in_space(k)
  for _, v in ipairs(T.params.blocks_per_sm) do if v == k then return true end end
end

local function default_k(fn)
  local m = minb(fn)
  return m and in_space(m.int) and m.int or 4
end

-- The edits that set the grid to GRID_BLOCKS = 132 * k.
local function fixed_grid(unit, fn, launch, k)
  local m = minb(fn)
  local line
  if m and m.int == k and m.text:match("^[%a_][%w_]*$") then
    line = string.format("#define %s (%d * %s) // one full wave on the H200's %d SMs", NAME, SMS, m.text, SMS)
  else
    line = string.format("#define %s (%d * %d) // %d blocks on each of the H200's %d SMs", NAME, SMS, k, k, SMS)
  end
  local add = L.add_define(unit, line, m and m.text)
  if not add then return nil end
  return { { begin = launch.grid.begin, ["end"] = launch.grid["end"], text = NAME }, add }
end

function T.find(unit)
  local sites = {}
  local gs = GS.find(unit)
  for _, fn in ipairs(support.functions(unit, { global = true })) do
    local launch = L.launch(unit, fn)
    if launch then
      local s
      local u = BI.find_undo(unit, fn, launch)
      local a = not u and not unit:define(NAME) and BI.find_apply(unit, fn, launch)
      if u then
        u.direction, u.key, u.form, u.launch = "undo", fn:name(), "block", launch
        u.params = { blocks_per_sm = u.per_sm and in_space(u.per_sm) and u.per_sm or default_k(fn) }
        s = support.site(T, unit, fn, u)
      elseif a then
        a.direction, a.key, a.form, a.launch = "apply", fn:name(), "block", launch
        s = support.site(T, unit, fn, a)
      end
      if not s then
        local c = lib_counter.find(unit, fn, launch)
        if c then
          s = support.site(T, unit, fn, { direction = "undo", key = fn:name(), line = c.loop.line, form = "counter",
            check = c.check, counter = c, launch = launch, params = { blocks_per_sm = c.k and in_space(c.k) and c.k or default_k(fn) } })
        end
      end
      if not s then
        for _, g in ipairs(gs) do
          if g.fn == fn:name() then
            local v = L.const_value(unit, launch.grid.text)
            if g.direction == "apply" and not unit:define(NAME) then
              s = support.site(T, unit, fn, { direction = "apply", key = fn:name(), line = g.line, form = "thread", inner = g,
                check = g.check .. "; the grid becomes " .. NAME, launch = launch })
            elseif g.direction == "undo" and unit:define(L.norm(launch.grid.text)) and v and v % SMS == 0 then
              s = support.site(T, unit, fn, { direction = "undo", key = fn:name(), line = g.line, form = "thread", inner = g,
                check = g.check, launch = launch, params = { blocks_per_sm = in_space(v // SMS) and v // SMS or default_k(fn) } })
            end
            if s then break end
          end
        end
      end
      if s then sites[#sites + 1] = s end
    end
  end
  return sites
end

function T.apply(site, params)
  local ok, f = support.same_unit(site, T, "apply")
  if not ok then return nil, f end
  local fn
  for _, g in ipairs(support.functions(site.unit, { global = true })) do if g:name() == site.fn then fn = g end end
  local k = params and params.blocks_per_sm or default_k(fn)
  if not in_space(k) then return support.refuse(site, "blocks_per_sm must be one of the parameter space's values") end
  if site.form == "block" then
    local fg = fixed_grid(site.unit, fn, site.launch, k)
    if not fg then return support.refuse(site, "no #define or @kl line to put GRID_BLOCKS after") end
    return BI.apply_edit(site, fg)
  end
  local text, why = GS.apply(site.inner, { max_blocks = 0 })
  if not text then return nil, why end
  local unit = support.unit(text)
  for _, g in ipairs(support.functions(unit, { global = true })) do
    if g:name() == site.fn then
      local launch = L.launch(unit, g)
      local edits = launch and fixed_grid(unit, g, launch, k)
      if not edits then return support.refuse(site, "no launch line or no place for GRID_BLOCKS") end
      table.sort(edits, function(a, b) return a.begin < b.begin end)
      return support.edit({ unit = unit, transform = T.name }, edits)
    end
  end
  return support.refuse(site, "the kernel is gone")
end

function T.undo(site)
  local ok, f = support.same_unit(site, T, "undo")
  if not ok then return nil, f end
  if site.form == "block" then return BI.undo_edit(site) end
  if site.form == "counter" then return lib_counter.undo(site) end
  return GS.undo(site.inner)
end

return T
