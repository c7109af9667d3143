-- The klineage policy, then the skills its conditions held back. A
-- precondition or guard learned from slowdowns predicts that a skill will
-- not pay here; where kernels are timed the compare can check that
-- prediction for one gate cycle. So once every admitted skill of a step
-- has been tried, the held-back ones are tried too, after them and in the
-- same order, while budget remains (on the H200's held-out suite, guards
-- learned from two conv2d slowdowns held grid_stride back from kernels
-- where it paid 2.29x). A condition that ever separated a wrong or
-- rejected result still blocks, and where nothing is timed (emu) nothing
-- is held back: no compare could overrule a condition there.
return {
  name = "klineage_explore",
  about = "the klineage policy, then, with budget left, the skills held back by conditions learned from slowdowns",
  direction = "forward",
  propose = function(state) return state:rank(state:skills({ held_back = state.timed })) end,
  choose = function(_, judged) return judged:first() end,
}
