-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 24,
    level = "low",
    lineages = 5,
    supporting = 0,
    why = "helped 0 of 24 labelled observations from 5 lineages; it never helped, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.99864633322321, 1.0014461826112 },
      max = 1.0018214126755,
      median = 1.00000339292035,
      min = 0.99449055971488,
      n = 24,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24 },
  guards = {},
  id = "restrict",
  intent = "mark a read-only pointer parameter const __restrict__ so its loads can be cached and reordered past stores",
  materialize = {
    transform = "restrict",
  },
  observations = {
    file = "restrict.observations.jsonl",
    n = 24,
    sha256 = "ac4b92d9fcca037ff988db525a2172e6f6b19b9a9511670f8a0beef5355f8dcb",
  },
  pattern = {
    transform = "restrict",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
