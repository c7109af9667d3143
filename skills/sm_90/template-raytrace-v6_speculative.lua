-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 0,
    level = "low",
    supporting = 2,
    why = "helped 2 of 2 labelled observations; it never failed to help, so no precondition could be learned",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 1.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      max = 1.2622476155187,
      median = 1.1811697417037998,
      min = 1.1000918678889,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-raytrace-v6_speculative",
  intent = "the change of raytrace v5_persistent.cu -> v6_speculative.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n    // Speculative: a lane that reaches a leaf parks it and keeps descending\n    // until every active lane of the warp holds a leaf, so the warp then\n    // tests leaves together; the cost is node steps past a parked leaf\n    // whose hit would have clipped them.\n    bool parked = false;\n/* ... */\n\n    int parked_e = 0;\n/* ... */\n\n      if (e < 0 && !parked) {\n        parked = true;\n        parked_e = e;\n        e = stack[--sp];\n      }\n/* ... */\n\n      // The vote only decides when to stop descending: any outcome is correct.\n      if (__all_sync(__activemask(), parked)) break;\n/* ... */\n\n    if (parked) leaf(tris, parked_e, o, d, tbest, ibest);",
      before = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n",
    },
  },
  observations = {
    file = "template-raytrace-v6_speculative.observations.jsonl",
    n = 2,
    sha256 = "523106cdb037edf4bf39ab6a58122e186af557d8f2ce2194dbdb62e9b75acf53",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
