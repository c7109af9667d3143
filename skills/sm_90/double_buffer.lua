-- klineage skill record; written by klineage.skills.serialize (schema 1); edit by re-learning, not by hand
return {
  arch = "sm_90",
  confidence = {
    contradicting = 2,
    level = "medium",
    lineages = 2,
    supporting = 5,
    why = "helped 5 of 7 labelled observations from 2 lineages",
  },
  effect = {
    resources = {
      occupancy = 0.0,
      registers = 11,
      smem_per_block = 8192,
      spill_stores = 0,
    },
    speedup = {
      ci = { 0.9842356309174, 1.3011931325541 },
      max = 1.2967478882518,
      median = 1.1045801143206,
      min = 0.98477343099867,
      n = 7,
    },
  },
  evidence = { 1, 2, 3, 4, 5, 6, 7 },
  guards = {
    { "role.reduction.length", ">=", 544,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5, 6, 7 },
      source = "walk",
      support = {
        helped = 5,
        not_helped = 2,
      },
      why = "slowed conv2d v6_implicit_gemm.cu -> v6_implicit_gemm.cu + double_buffer conv2d:stages by 0.99x at elements reduced into one output = 576; slowed conv2d v6_implicit_gemm.cu -> v7_double_buffer.cu by 0.98x at elements reduced into one output = 576: elements reduced into one output ≥ 544 (elements reduced into one output ≥ 544 after the change alike), while it paid where elements reduced into one output ≤ 512 (1.11x); it only ranks: seen in 1 lineage, with no wrong result",
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
    sha256 = "75a56ad9ad3d7faab728c91be84586b07bac80eee4f42ce655e66281a08aff97",
  },
  pattern = {
    transform = "double_buffer",
  },
  preconditions = {
    { "role.reduction.length", "<", 544,
      blocks = false,
      evidence = { 1, 2, 3, 4, 5, 6, 7 },
      support = {
        helped = 5,
        not_helped = 2,
      },
      why = "held wherever it helped (5 of 5), and fails where it did not: elements reduced into one output ≥ 544; it only ranks: seen in 1 lineage, with no wrong result",
    },
  },
  schema = 1,
  status = "learned",
}
