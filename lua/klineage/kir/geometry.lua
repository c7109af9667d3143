-- The launch geometry as the axes say it: each axis on a grid dimension
-- covers `per_block` points per block with `threads` threads along it;
-- relaunch writes the `@kl launch` line back from them.
--
--   geometry.init(k)            per-axis threads/per_block/grid from the launch line
--   geometry.relaunch(k) -> true | nil, reason
local M = {}

local INDEX = { x = 1, y = 2, z = 3 }
M.INDEX = INDEX

local function simple(t)
  if t:match("^[%w_]+$") or t:match("^[%w_]+%b()$") then return t end
  return "(" .. t .. ")"
end

function M.init(k)
  for _, a in ipairs(k.axes) do
    local i = INDEX[a.dim]
    a.grid_ann = k.launch.grid[i] or "1"
    a.threads_ann = a.block and (k.launch.block[i] or "1") or "1"
    a.per_block_ann = a.threads_ann
    -- a guard bound the launch language cannot spell ((H + 1) / 2): the
    -- original launch covered every point, so its grid times its block does
    if a.block and a.extent and not a.extent_ann then
      a.extent_ann = simple(a.grid_ann) .. " * " .. simple(a.threads_ann)
    end
  end
end


-- An annotation expression's value from the kernel's own constants, or nil
-- (it needs a workload parameter).
function M.value(k, text)
  local ok, v = pcall(require("klineage.base.expr").eval, text, k.constants or {})
  if ok and math.type(v) == "integer" then return v end
end

function M.relaunch(k)
  local threads = 1
  for _, a in ipairs(k.axes) do
    local n = M.value(k, a.threads_ann)
    if not n then return nil, "the block size along " .. a.dim .. " (" .. a.threads_ann .. ") is not a constant of the kernel" end
    threads = threads * n
  end
  if threads > 1024 then return nil, "a block of " .. threads .. " threads: CUDA allows 1024" end
  local grid, block = { "1", "1", "1" }, { "1", "1", "1" }
  for _, a in ipairs(k.axes) do
    local i = INDEX[a.dim]
    if a.block then
      if not a.extent_ann then
        return nil, "the guard gives no bound for " .. a.name .. ": the new grid would not be known to cover it"
      end
      grid[i] = "cdiv(" .. a.extent_ann .. ", " .. a.per_block_ann .. ")"
      block[i] = a.threads_ann
    else
      grid[i] = a.grid_ann
    end
  end
  local n = 3
  while n > 1 and grid[n] == "1" and block[n] == "1" do n = n - 1 end
  local g, b = {}, {}
  for i = 1, n do g[i], b[i] = grid[i], block[i] end
  local nb = 1
  while nb < n and block[nb + 1] ~= "1" do nb = nb + 1 end
  for i = nb + 1, n do if block[i] ~= "1" then nb = i end end
  local bl = {}
  for i = 1, nb do bl[i] = block[i] end
  k.launch.grid, k.launch.block, k.launch.changed = g, bl, true
  return true
end

M.simple = simple

return M
