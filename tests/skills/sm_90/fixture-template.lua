-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  changes = { "FIXTURE: nothing changed; the record exists for tests" },
  confidence = {
    contradicting = 0,
    level = "seen once",
    supporting = 1,
  },
  effect = {
    speedup = {
      max = 2.5,
      median = 2.5,
      min = 2.5,
      n = 1,
    },
  },
  evidence = {
    {
      key = "fixture-key-3",
      lineage = "sgemm",
      outcome = "helped",
      run = "fixture-run",
      speedup = 2.5,
      step = "v0_naive.cu -> v1_coalesced.cu",
    },
  },
  guards = {},
  id = "fixture-template",
  intent = "FIXTURE (hand-written for tests, not learned): a template over the k loop",
  materialize = {
    template = {
      after = "#pragma unroll 4\nfor (int $k = 0; $k < $K; ++$k) $S",
      before = "for (int $k = 0; $k < $K; ++$k) $S",
    },
  },
  pattern = {
    source = "for (int $k = 0; $k < $K; ++$k) $S",
  },
  preconditions = {
    { "profile.time_ms", "<", 5.0 },
  },
  schema = 1,
  status = "transferred",
  transferred_from = "sm_80",
}
