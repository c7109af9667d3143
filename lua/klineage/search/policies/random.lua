-- The random baseline: one applicable transform at a time, chosen at
-- random (the next one when the gate refuses it), from the run's seed
-- (state.seed, journaled with the run: the same seed makes the same
-- choices, so a resumed run reuses its journal; eval runs it per seed).
return {
  name = "random",
  about = "one applicable transform at a time, chosen at random with a recorded seed",
  direction = "forward",
  seeded = true,
  propose = function(state)
    local rows = state:in_order(state:transforms()) -- a fixed order first, so that the shuffle depends on the seed alone
    for i = #rows, 2, -1 do
      local j = state:random(i)
      rows[i], rows[j] = rows[j], rows[i]
    end
    for i, row in ipairs(rows) do
      row.because = { string.format("drawn %d of %d at random (seed %d)", i, #rows, state.seed or 1) }
    end
    return rows
  end,
  choose = function(_, judged) return judged:first() end,
}
