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
      registers = 3.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      ci = { 0.90150864657078, 1.0031393982797 },
      max = 1.0012988952354,
      median = 0.954305798702695,
      min = 0.90731270216999,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-raytrace-v5_persistent",
  intent = "the change of raytrace v4_ordered.cu -> v5_persistent.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n#define PERSISTENT_BLOCKS 1584  // 12 blocks of 128 threads (all that fit at <= 40 registers) on each of the H200's 132 SMs\n/* ... */\n\n#define FULL 0xffffffffu\n/* ... */\n\n\n// Traces ray r and writes its closest hit.\n__device__ __forceinline__ void trace(int r, int W, int H, int G, int B, const float *scene, int *hit) {\n  int T = 2 * G * G + B;\n  const float *nodes = scene, *tris = scene + 16L * ((T + 1) / 2);\n  float3 o, d;\n  camera_ray(r, W, H, o, d);\n  float3 inv = make_float3(1.0f / d.x, 1.0f / d.y, 1.0f / d.z);\n  float tbest = TBIG;\n  int ibest = -1;\n  int stack[STACK];\n  int sp = 0;\n  stack[sp++] = DONE;\n  int e = 0;  // the root\n  // while-while: descend through inner nodes until this lane holds a leaf,\n  // then test leaves until it holds an inner node again.\n  while (e != DONE) {\n    while (e >= 0 && e != DONE) {\n      int e0, e1;\n      float t0, t1;\n      children(nodes, e, o, inv, tbest, e0, e1, t0, t1);\n      if (t0 < TBIG && t1 < TBIG) {\n        if (t1 < t0) {  // nearer child first: its hits shrink tbest before the far one is tested\n          int te = e0;\n          e0 = e1;\n          e1 = te;\n        }\n        stack[sp++] = e1;\n        e = e0;\n      } else if (t0 < TBIG) {\n        e = e0;\n      } else if (t1 < TBIG) {\n        e = e1;\n      } else {\n        e = stack[--sp];\n      }\n    }\n    while (e < 0) {\n      leaf(tris, e, o, d, tbest, ibest);\n      e = stack[--sp];\n    }\n  }\n  hit[r] = ibest;\n}\n/* ... */\n\n  int lane = threadIdx.x % 32;\n  // Persistent threads: each warp fetches 32 rays at a time from the global\n  // counter until none are left (the warp stays converged at the fetch).\n  for (;;) {\n    int base = 0;\n    if (lane == 0) base = atomicAdd(&work[0], 32);\n    base = __shfl_sync(FULL, base, 0);\n    if (base >= W * H) break;\n    int r = base + lane;\n    if (r < W * H) {\n      trace(r, W, H, G, B, scene, hit);\n    }\n  }",
      before = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  int r = blockIdx.x * BLOCK + threadIdx.x;\n  if (r >= W * H) return;\n  int T = 2 * G * G + B;\n  const float *nodes = scene, *tris = scene + 16L * ((T + 1) / 2);\n  float3 o, d;\n  camera_ray(r, W, H, o, d);\n  float3 inv = make_float3(1.0f / d.x, 1.0f / d.y, 1.0f / d.z);\n  float tbest = TBIG;\n  int ibest = -1;\n  int stack[STACK];\n  int sp = 0;\n  stack[sp++] = DONE;\n  int e = 0;  // the root\n  // while-while: descend through inner nodes until this lane holds a leaf,\n  // then test leaves until it holds an inner node again.\n  while (e != DONE) {\n    while (e >= 0 && e != DONE) {\n      int e0, e1;\n      float t0, t1;\n      children(nodes, e, o, inv, tbest, e0, e1, t0, t1);\n      if (t0 < TBIG && t1 < TBIG) {\n        if (t1 < t0) {  // nearer child first: its hits shrink tbest before the far one is tested\n          int te = e0;\n          e0 = e1;\n          e1 = te;\n        }\n        stack[sp++] = e1;\n        e = e0;\n      } else if (t0 < TBIG) {\n        e = e0;\n      } else if (t1 < TBIG) {\n        e = e1;\n      } else {\n        e = stack[--sp];\n      }\n    }\n    while (e < 0) {\n      leaf(tris, e, o, d, tbest, ibest);\n      e = stack[--sp];\n    }\n  }\n  hit[r] = ibest;\n  (void)work;",
    },
  },
  observations = {
    file = "template-raytrace-v5_persistent.observations.jsonl",
    n = 2,
    sha256 = "83340bd4f3431716a6ff26c471aeacbbebdf75bc099ff3a531929e132225747d",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n  int r = blockIdx.x * BLOCK + threadIdx.x;\n  if (r >= W * H) return;\n  int T = 2 * G * G + B;\n  const float *nodes = scene, *tris = scene + 16L * ((T + 1) / 2);\n  float3 o, d;\n  camera_ray(r, W, H, o, d);\n  float3 inv = make_float3(1.0f / d.x, 1.0f / d.y, 1.0f / d.z);\n  float tbest = TBIG;\n  int ibest = -1;\n  int stack[STACK];\n  int sp = 0;\n  stack[sp++] = DONE;\n  int e = 0;  // the root\n  // while-while: descend through inner nodes until this lane holds a leaf,\n  // then test leaves until it holds an inner node again.\n  while (e != DONE) {\n    while (e >= 0 && e != DONE) {\n      int e0, e1;\n      float t0, t1;\n      children(nodes, e, o, inv, tbest, e0, e1, t0, t1);\n      if (t0 < TBIG && t1 < TBIG) {\n        if (t1 < t0) {  // nearer child first: its hits shrink tbest before the far one is tested\n          int te = e0;\n          e0 = e1;\n          e1 = te;\n        }\n        stack[sp++] = e1;\n        e = e0;\n      } else if (t0 < TBIG) {\n        e = e0;\n      } else if (t1 < TBIG) {\n        e = e1;\n      } else {\n        e = stack[--sp];\n      }\n    }\n    while (e < 0) {\n      leaf(tris, e, o, d, tbest, ibest);\n      e = stack[--sp];\n    }\n  }\n  hit[r] = ibest;\n  (void)work;",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
  unexplained = {
    {
      evidence = { 1 },
      why = "slowed raytrace v4_ordered.cu -> v5_persistent.cu (at bench 2 (B=4096, G=64)) by 0.91x: no helped case to contrast it with",
    },
  },
}
