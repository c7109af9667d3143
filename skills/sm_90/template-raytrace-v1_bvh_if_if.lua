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
      occupancy = -0.25,
      registers = 6.0,
      smem_per_block = 0.0,
      spill_stores = 0.0,
    },
    speedup = {
      max = 214.70940506462,
      median = 120.1686427685555,
      min = 25.627880472491,
      n = 2,
    },
  },
  evidence = { 1, 2 },
  guards = {},
  id = "template-raytrace-v1_bvh_if_if",
  intent = "the change of raytrace v0_brute_force.cu -> v1_bvh_if_if.cu, as the walk saw it",
  materialize = {
    template = {
      after = "\n\n#define STACK 64  // the tree is about log2(T / 2) deep: 20 at a million triangles\n/* ... */\n\n\n// A traversal entry: an inner node n >= 0, or a leaf of `count` (1..4)\n// triangles from `first`, coded as -1 - (first * 4 + count - 1).\n__device__ __forceinline__ int entry(int child, int count) {\n  return count == 0 ? child : -1 - (child * 4 + count - 1);\n}\n/* ... */\n\n\n// Slab test of the box [lo, hi] against the ray (inv = 1 / d), clipped to\n// [0, tmax]: tmax inclusive, so a triangle at exactly the best t (a tie)\n// is still reached. Returns the entry distance, or TBIG on a miss.\n__device__ __forceinline__ float box_hit(float3 o, float3 inv, float lox, float hix, float loy,\n                                         float hiy, float loz, float hiz, float tmax) {\n  float tx0 = (lox - o.x) * inv.x, tx1 = (hix - o.x) * inv.x;\n  float ty0 = (loy - o.y) * inv.y, ty1 = (hiy - o.y) * inv.y;\n  float tz0 = (loz - o.z) * inv.z, tz1 = (hiz - o.z) * inv.z;\n  float tnear = fmaxf(fmaxf(fminf(tx0, tx1), fminf(ty0, ty1)), fmaxf(fminf(tz0, tz1), 0.0f));\n  float tfar = fminf(fminf(fmaxf(tx0, tx1), fmaxf(ty0, ty1)), fminf(fmaxf(tz0, tz1), tmax));\n  return tnear <= tfar ? tnear : TBIG;\n}\n/* ... */\n\n\n// Tests the triangles of leaf entry e (scalar loads).\n__device__ __forceinline__ void leaf(const float *tris, int e, float3 o, float3 d, float &tbest, int &ibest) {\n  int code = -1 - e, first = code >> 2, count = (code & 3) + 1;\n  for (int t = first; t < first + count; ++t) {\n    const float *tri = tris + 12L * t;\n    intersect(o, d, make_float3(tri[0], tri[1], tri[2]), make_float3(tri[4], tri[5], tri[6]),\n              make_float3(tri[8], tri[9], tri[10]), t, tbest, ibest);\n  }\n}\n/* ... */\n\n\n// Both children of inner node n (scalar loads): their entries and entry\n// distances (TBIG when the ray misses the box).\n__device__ __forceinline__ void children(const float *nodes, int n, float3 o, float3 inv, float tmax,\n                                         int &e0, int &e1, float &t0, float &t1) {\n  const float *nd = nodes + 16L * n;\n  t0 = box_hit(o, inv, nd[0], nd[1], nd[2], nd[3], nd[8], nd[9], tmax);\n  t1 = box_hit(o, inv, nd[4], nd[5], nd[6], nd[7], nd[10], nd[11], tmax);\n  e0 = entry(__float_as_int(nd[12]), __float_as_int(nd[14]));\n  e1 = entry(__float_as_int(nd[13]), __float_as_int(nd[15]));\n}\n/* ... */\n\n\nextern \"C\" __global__ void __launch_bounds__(BLOCK)\nraytrace(int W, int H, int G, int B, const float *scene, int *hit, int *work) {\n  int r = blockIdx.x * BLOCK + threadIdx.x;\n  if (r >= W * H) return;\n  int T = 2 * G * G + B;\n  const float *nodes = scene, *tris = scene + 16L * ((T + 1) / 2);\n  float3 o, d;\n  camera_ray(r, W, H, o, d);\n  float3 inv = make_float3(1.0f / d.x, 1.0f / d.y, 1.0f / d.z);\n  float tbest = TBIG;\n  int ibest = -1;\n  int stack[STACK];\n  int sp = 0;\n  stack[sp++] = 0;  // the root\n  // if-if: each trip handles one entry, an inner node or a leaf, whichever\n  // this lane popped; lanes of a warp alternate between the two branches.\n  while (sp > 0) {\n    int e = stack[--sp];\n    if (e >= 0) {\n      int e0, e1;\n      float t0, t1;\n      children(nodes, e, o, inv, tbest, e0, e1, t0, t1);\n      if (t1 < TBIG) stack[sp++] = e1;\n      if (t0 < TBIG) stack[sp++] = e0;\n    }\n    if (e < 0) leaf(tris, e, o, d, tbest, ibest);\n  }\n  hit[r] = ibest;\n  (void)work;\n}",
      before = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n\nextern \"C\" __global__ void raytrace(int W, int H, int G, int B, const float *scene, int *hit, int *work) {\n  int r = blockIdx.x * BLOCK + threadIdx.x;\n  if (r >= W * H) return;\n  int T = 2 * G * G + B;\n  const float *tris = scene + 16L * ((T + 1) / 2);\n  float3 o, d;\n  camera_ray(r, W, H, o, d);\n  float tbest = TBIG;\n  int ibest = -1;\n  for (int t = 0; t < T; ++t) {\n    const float *tri = tris + 12L * t;\n    intersect(o, d, make_float3(tri[0], tri[1], tri[2]), make_float3(tri[4], tri[5], tri[6]),\n              make_float3(tri[8], tri[9], tri[10]), t, tbest, ibest);\n  }\n  hit[r] = ibest;\n  (void)work;\n}",
    },
  },
  observations = {
    file = "template-raytrace-v1_bvh_if_if.observations.jsonl",
    n = 2,
    sha256 = "e4b35a6d22762488e38b45db512ff6de9627a1383f2617a2a0ccca981df23c41",
  },
  pattern = {
    source = "\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n/* ... */\n\n\nextern \"C\" __global__ void raytrace(int W, int H, int G, int B, const float *scene, int *hit, int *work) {\n  int r = blockIdx.x * BLOCK + threadIdx.x;\n  if (r >= W * H) return;\n  int T = 2 * G * G + B;\n  const float *tris = scene + 16L * ((T + 1) / 2);\n  float3 o, d;\n  camera_ray(r, W, H, o, d);\n  float tbest = TBIG;\n  int ibest = -1;\n  for (int t = 0; t < T; ++t) {\n    const float *tri = tris + 12L * t;\n    intersect(o, d, make_float3(tri[0], tri[1], tri[2]), make_float3(tri[4], tri[5], tri[6]),\n              make_float3(tri[8], tri[9], tri[10]), t, tbest, ibest);\n  }\n  hit[r] = ibest;\n  (void)work;\n}",
  },
  preconditions = {},
  schema = 1,
  status = "learned",
}
