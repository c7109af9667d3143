-- Successive halving over candidate points with cheaper fidelities first:
-- each round scores the survivors with its fidelity (the static model
-- costs nothing; the gate costs a cycle a point) and keeps the better
-- half, until one is left or the fidelities run out.
--   halving.run(points, fidelities) -> best point | nil, rounds
--     fidelities = { function(point) -> score | nil (dropped) ... }
--     rounds = { { scored = n, kept = m } ... }
local M = {}

function M.run(points, fidelities)
  local survivors, rounds = { table.unpack(points) }, {}
  for _, score_of in ipairs(fidelities) do
    local scored = {}
    for i, p in ipairs(survivors) do
      local s = score_of(p)
      if s then scored[#scored + 1] = { point = p, score = s, order = i } end
    end
    table.sort(scored, function(a, b)
      if a.score ~= b.score then return a.score > b.score end
      return a.order < b.order
    end)
    local keep = math.max(1, math.ceil(#scored / 2))
    survivors = {}
    for i = 1, math.min(keep, #scored) do survivors[i] = scored[i].point end
    rounds[#rounds + 1] = { scored = #scored, kept = #survivors }
    if #survivors <= 1 then break end
  end
  return survivors[1], rounds
end

return M
