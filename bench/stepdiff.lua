-- The step diff on every adjacent step of the seven lineages: hunks per
-- step (all, structural, trivia-only), whether reverting all of them gives
-- the old version byte for byte, how many single-hunk reverts needed a
-- newline or space at a seam, and the ops match.diff (the GumTree-style
-- diff) gives for the same step, with its moves.
--
--   klineage run bench/stepdiff.lua [WORKLOADS_DIR]
local stepdiff = require "klineage.pattern.stepdiff"
local match = require "klineage.pattern.match"
local workload = require "klineage.workload"
local source = require "kl.source"
local host = require "kl.host"

local dir = arg and arg[1] or ((host.home or ".") .. "/gpu/workloads")
local NAMES = { "bfs", "conv2d", "raytrace", "reduction", "sgemm", "softmax", "transpose" }

local function read(path)
  local h = assert(io.open(path, "rb"))
  local s = h:read("a")
  h:close()
  return s
end

print(string.format("%-10s %-8s %6s %6s %6s %8s %8s %6s", "workload", "step", "hunks", "code", "trivia", "reverts", "gumtree", "moves"))
local steps, hunks, code, gum, moves, exact = 0, 0, 0, 0, 0, 0
local singles, seamed = 0, 0
local clock = os.clock
local t_diff = 0
for _, name in ipairs(NAMES) do
  local w = assert(workload.load(dir .. "/" .. name))
  for i = 2, #w.lineage do
    local a, b = read(dir .. "/" .. name .. "/" .. w.lineage[i - 1]), read(dir .. "/" .. name .. "/" .. w.lineage[i])
    local ua, ub = source.parse(a), source.parse(b)
    local t0 = clock()
    local hs = stepdiff.diff(ua, ub)
    t_diff = t_diff + clock() - t0
    local nc = 0
    for _, h in ipairs(hs) do
      if not h.trivia then nc = nc + 1 end
    end
    local ok = stepdiff.revert(ub, hs) == a
    for k, h in ipairs(hs) do -- each hunk alone: did a seam need a newline or a space?
      local one = assert(stepdiff.revert(ub, hs, { k }))
      singles = singles + 1
      if #one ~= #b - #h.new.text + #h.old.text then seamed = seamed + 1 end
    end
    local ops = match.diff(ua, ub)
    local nm = 0
    for _, op in ipairs(ops) do
      if op.kind == "move" then nm = nm + 1 end
    end
    print(string.format("%-10s v%d->v%-4d %6d %6d %6d %8s %8d %6d", name, i - 2, i - 1, #hs, nc, #hs - nc,
      ok and "exact" or "DIFFERS", #ops, nm))
    steps, hunks, code, gum, moves = steps + 1, hunks + #hs, code + nc, gum + #ops, moves + nm
    if ok then exact = exact + 1 end
  end
end
print(string.format("stepdiff-steps: %d steps", steps))
print(string.format("stepdiff-steps-reverted-exactly: %d steps", exact))
print(string.format("stepdiff-hunks-per-step: %.2f hunks", hunks / steps))
print(string.format("stepdiff-code-hunks-per-step: %.2f hunks", code / steps))
print(string.format("gumtree-ops-per-step: %.2f ops", gum / steps))
print(string.format("gumtree-moves-per-step: %.2f ops", moves / steps))
print(string.format("stepdiff-single-hunk-reverts: %d reverts", singles))
print(string.format("stepdiff-single-hunk-reverts-with-a-seam: %d reverts", seamed))
print(string.format("stepdiff-cpu-per-step: %.2f ms", 1000 * t_diff / steps))
