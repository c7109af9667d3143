-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "seen once",
    lineages = 1,
    supporting = 1,
    why = "one observation: nothing to generalize from; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 1.1155669217242, 1.1186776943006 },
      max = 1.1168214315765,
      median = 1.1168214315765,
      min = 1.1168214315765,
      n = 1,
    },
  },
  evidence = { 1 },
  guards = {},
  id = "template-raytrace-v6_speculative-hunk7",
  intent = "the change of raytrace v5_persistent.cu, hunk 7 at line 141 reverted -> v6_speculative.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n      // The vote only decides when to stop descending: any outcome is correct.\n      if (__all_sync(__activemask(), parked)) break;",
      before = "",
    },
  },
  observations = {
    file = "template-raytrace-v6_speculative-hunk7.observations.jsonl",
    n = 1,
    sha256 = "6893897ca0f5acac39978a85f7ad7adb03af55c9e96b39a02f648cbb13860ef2",
  },
  pattern = {
    source = "\n      // The vote only decides when to stop descending: any outcome is correct.\n      if (__all_sync(__activemask(), parked)) break;",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
