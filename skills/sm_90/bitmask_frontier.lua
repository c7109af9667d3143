-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 2,
    level = "low",
    lineages = 1,
    supporting = 0,
    why = "helped 0 of 2 labelled observations from 1 lineage; it never helped, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 2.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.88778843242314, 0.99307031536994 },
      max = 0.98473025097589,
      median = 0.936601509515705,
      min = 0.88847276805552,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "bitmask_frontier",
  intent = "claim BFS neighbours with a test-and-set on a visited bitmask after a plain cached read, instead of an atomicCAS on each neighbour's level",
  materialize = {
    transform = "bitmask_frontier",
  },
  observations = {
    file = "bitmask_frontier.observations.jsonl",
    n = 2,
    sha256 = "cd1fd5f4d7ed8329c282f9c40cc596540204343e6a7257e524c9a27275439041",
  },
  pattern = {
    transform = "bitmask_frontier",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
  unexplained = {
    {
      evidence = { 1 },
      why = "slowed bfs v4_hybrid.cu -> v5_bitmask.cu (at bench 2 (E=4190208, V=1048576, kind=1)) by 0.89x: no helped case to contrast it with",
    },
    {
      evidence = { 2 },
      why = "slowed bfs v4_hybrid.cu -> v5_bitmask.cu by 0.98x: no helped case to contrast it with",
    },
  },
}
