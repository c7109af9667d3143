-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 2,
    level = "low",
    lineages = 1,
    supporting = 1,
    why = "helped 1 of 3 labelled observations from 1 lineage; one success cannot say what made it pay, so no precondition was learned",
  },
  effect = {
    resources = {
      occupancy = 0,
      registers = 0,
      smem_per_block = 0,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.84357968432628, 1.2115695607615 },
      max = 1.2106701789301,
      median = 0.95337091404358,
      min = 0.84463982271745,
      n = 3,
    },
  },
  evidence = { 1, 2, 3 },
  guards = {
    { "role.outputs_per_thread_slot", "<", 620.6060606060606,
      blocks = false,
      evidence = { 1, 2, 3 },
      source = "walk",
      support = {
        helped = 1,
        not_helped = 2,
      },
      why = "slowed softmax v2_shuffle_reduce.cu -> v3_online.cu (at bench 2 (cols=1024)) by 0.95x at outputs per thread the device holds = 31.03; slowed softmax v2_shuffle_reduce.cu -> v3_online.cu by 0.84x at outputs per thread the device holds = 248.242: outputs per thread the device holds < 620.606 (outputs per thread the device holds < 620.606 after the change, elements reduced into one output < 20480, elements reduced into one output < 20480 after the change alike), while it paid where outputs per thread the device holds ≥ 992.97 (1.21x); it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  id = "template-softmax-v3_online",
  intent = "the change of softmax v2_shuffle_reduce.cu -> v3_online.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n\n// Adds v to a running (max m, sum d of exp(. - m)): one exp per element.\n__device__ __forceinline__ void online_add(float &m, float &d, float v) {\n  if (v > m) {\n    d = d * expf(m - v) + 1.0f;\n    m = v;\n  } else {\n    d += expf(v - m);\n  }\n}\n/* ... */\n\n  float m = NEG_BIG, d = 0.0f;\n/* ... */\n online_add(m, d, xr[c]);\n/* ... */\n\n  // Rescale each thread's sum to the row maximum; an empty thread has d = 0.\n  float row_max = block_max(m, buf);\n/* ... */\n\n  float s = block_sum(d * expf(m - row_max), buf);\n/* ... */\n\n/* ... */\n\n/* ... */\n yr[c] = expf(xr[c] - row_max) / s;",
      before = "\n/* ... */\n\n  float m = NEG_BIG;\n/* ... */\n m = fmaxf(m, xr[c]);\n/* ... */\n\n  m = block_max(m, buf);\n/* ... */\n\n  float s = 0.0f;\n/* ... */\n\n  for (int c = threadIdx.x; c < cols; c += BLOCK) s += expf(xr[c] - m);\n/* ... */\n\n  s = block_sum(s, buf);\n/* ... */\n yr[c] = expf(xr[c] - m) / s;",
    },
  },
  observations = {
    file = "template-softmax-v3_online.observations.jsonl",
    n = 3,
    sha256 = "f2753611f0e5c0ca95a964db33108c4efe76dea2242b681231d9022ec1889f17",
  },
  pattern = {
    source = "\n/* ... */\n\n  float m = NEG_BIG;\n/* ... */\n m = fmaxf(m, xr[c]);\n/* ... */\n\n  m = block_max(m, buf);\n/* ... */\n\n  float s = 0.0f;\n/* ... */\n\n  for (int c = threadIdx.x; c < cols; c += BLOCK) s += expf(xr[c] - m);\n/* ... */\n\n  s = block_sum(s, buf);\n/* ... */\n yr[c] = expf(xr[c] - m) / s;",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
