-- The forward rollout baseline: at each step every applicable transform,
-- at every site, with its default parameters, is judged, and the fastest
-- accepted one is kept. No skills, no preconditions, no guards: what the
-- transforms alone buy under the same gate and budget.
return {
  name = "forward",
  about = "every applicable transform judged at each step, the fastest kept; no preconditions, no guards",
  direction = "forward",
  propose = function(state) return state:in_order(state:transforms()) end,
  choose = function(_, judged) return judged:fastest() end,
}
