-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 2,
    level = "medium",
    supporting = 5,
    why = "helped 5 of 7 labelled observations",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 11,
      smem_per_block = 8192,
      spill_stores = 0,
    },
    speedup = {
      max = 1.2967478882518,
      median = 1.1045801143206,
      min = 0.98477343099867,
      n = 7,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7 },
  guards = {
    { "size.C", ">=", 65.5,
      evidence = { 1, 2, 5 },
      source = "walk",
      support = {
        helped = 1,
        not_helped = 2,
      },
      why = "slowed conv2d v6_implicit_gemm.cu -> v6_implicit_gemm.cu + double_buffer conv2d:stages by 0.99x at C = 128; slowed conv2d v6_implicit_gemm.cu -> v7_double_buffer.cu by 0.98x at C = 128: C ≥ 65.5, while it paid where C ≤ 3 (1.02x)",
    },
  },
  id = "double_buffer",
  intent = "stage the next tile in registers and a second shared-memory buffer so global loads overlap the math, one barrier per tile",
  materialize = {
    transform = "double_buffer",
  },
  observations = {
    file = "double_buffer.observations.jsonl",
    n = 7,
    sha256 = "6fcdd60ce0a18fa9c8d98e60a67fa3f4ce4faa5c51734847766d65e1e5dc8c05",
  },
  pattern = {
    transform = "double_buffer",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
