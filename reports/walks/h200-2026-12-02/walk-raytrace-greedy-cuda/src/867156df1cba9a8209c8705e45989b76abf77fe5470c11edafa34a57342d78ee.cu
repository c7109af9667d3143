// v6: speculative traversal: a lane that finds a leaf postpones it and keeps traversing inner nodes until all active lanes of its warp have a leaf, then the warp tests leaves together, trading extra node visits for fewer idle lanes.
// Closest hit of one camera ray per pixel against the triangles of `scene`
// (layout in workload.lua); hit[r] = triangle index or -1, ties to the
// smallest t, then the smallest index. Ray r is pixel (r % W, r / W).
// @kl launch grid(PERSISTENT_BLOCKS) block(BLOCK)
#define BLOCK 64
#define DONE 0x7fffffff  // stack sentinel: no inner node has this index
#define PERSISTENT_BLOCKS 1584  // 12 blocks of 128 threads (all that fit at <= 40 registers) on each of the H200's 132 SMs
#define FULL 0xffffffffu
#define TBIG 1e30f  // "no hit yet"

// The camera ray of ray r (pixel r % W, r / W): origin o, direction d (not
// normalized; no component exactly 0, so the slab test never sees 0 * inf).
__device__ __forceinline__ void camera_ray(int r, int W, int H, float3 &o, float3 &d) {
  int px = r % W, py = r / W;
  float sx = (2.0f * ((float)px + 0.5f)) / (float)W - 1.0f;
  float sy = 1.0f - (2.0f * ((float)py + 0.5f)) / (float)H;
  float aspect = (float)W / (float)H;
  float b = sy * 0.6f;
  o = make_float3(0.5f, 0.55f, -0.35f);
  d = make_float3((sx * aspect) * 0.6f, fmaf(b, 0.8533f, -0.5214f), fmaf(b, 0.5214f, 0.8533f));
  if (fabsf(d.x) < 1e-9f) d.x = 1e-9f;
  if (fabsf(d.y) < 1e-9f) d.y = 1e-9f;
  if (fabsf(d.z) < 1e-9f) d.z = 1e-9f;
}

// Moller-Trumbore against the triangle (v0, e1, e2) with index `index`;
// keeps the smallest t, then the smallest index. Every multiply-add is
// spelled out (fmaf, __fmul_rn) so that all versions, the emulator and
// reference.c round identically.
__device__ __forceinline__ void intersect(float3 o, float3 d, float3 v0, float3 e1, float3 e2,
                                          int index, float &tbest, int &ibest) {
  float px = fmaf(d.y, e2.z, -__fmul_rn(d.z, e2.y));
  float py = fmaf(d.z, e2.x, -__fmul_rn(d.x, e2.z));
  float pz = fmaf(d.x, e2.y, -__fmul_rn(d.y, e2.x));
  float det = fmaf(e1.x, px, fmaf(e1.y, py, __fmul_rn(e1.z, pz)));
  if (det == 0.0f) return;
  float inv = 1.0f / det;
  float sx = o.x - v0.x, sy = o.y - v0.y, sz = o.z - v0.z;
  float u = __fmul_rn(fmaf(sx, px, fmaf(sy, py, __fmul_rn(sz, pz))), inv);
  if (u < 0.0f || u > 1.0f) return;
  float qx = fmaf(sy, e1.z, -__fmul_rn(sz, e1.y));
  float qy = fmaf(sz, e1.x, -__fmul_rn(sx, e1.z));
  float qz = fmaf(sx, e1.y, -__fmul_rn(sy, e1.x));
  float v = __fmul_rn(fmaf(d.x, qx, fmaf(d.y, qy, __fmul_rn(d.z, qz))), inv);
  if (v < 0.0f || u + v > 1.0f) return;
  float t = __fmul_rn(fmaf(e2.x, qx, fmaf(e2.y, qy, __fmul_rn(e2.z, qz))), inv);
  if (t > 0.0f && (t < tbest || (t == tbest && index < ibest))) {
    tbest = t;
    ibest = index;
  }
}

#define STACK 64  // the tree is about log2(T / 2) deep: 20 at a million triangles

// A traversal entry: an inner node n >= 0, or a leaf of `count` (1..4)
// triangles from `first`, coded as -1 - (first * 4 + count - 1).
__device__ __forceinline__ int entry(int child, int count) {
  return count == 0 ? child : -1 - (child * 4 + count - 1);
}

// Slab test of the box [lo, hi] against the ray (inv = 1 / d), clipped to
// [0, tmax]: tmax inclusive, so a triangle at exactly the best t (a tie)
// is still reached. Returns the entry distance, or TBIG on a miss.
__device__ __forceinline__ float box_hit(float3 o, float3 inv, float lox, float hix, float loy,
                                         float hiy, float loz, float hiz, float tmax) {
  float tx0 = (lox - o.x) * inv.x, tx1 = (hix - o.x) * inv.x;
  float ty0 = (loy - o.y) * inv.y, ty1 = (hiy - o.y) * inv.y;
  float tz0 = (loz - o.z) * inv.z, tz1 = (hiz - o.z) * inv.z;
  float tnear = fmaxf(fmaxf(fminf(tx0, tx1), fminf(ty0, ty1)), fmaxf(fminf(tz0, tz1), 0.0f));
  float tfar = fminf(fminf(fmaxf(tx0, tx1), fmaxf(ty0, ty1)), fminf(fmaxf(tz0, tz1), tmax));
  return tnear <= tfar ? tnear : TBIG;
}

// Tests the triangles of leaf entry e (three float4 loads per triangle).
__device__ __forceinline__ void leaf(const float *tris, int e, float3 o, float3 d, float &tbest, int &ibest) {
  int code = -1 - e, first = code >> 2, count = (code & 3) + 1;
  const float4 *t4 = reinterpret_cast<const float4 *>(tris);
  for (int t = first; t < first + count; ++t) {
    float4 a = t4[3L * t], b = t4[3L * t + 1], c = t4[3L * t + 2];
    intersect(o, d, make_float3(a.x, a.y, a.z), make_float3(b.x, b.y, b.z), make_float3(c.x, c.y, c.z),
              t, tbest, ibest);
  }
}

// Both children of inner node n (four float4 loads): their entries and
// entry distances (TBIG when the ray misses the box).
__device__ __forceinline__ void children(const float *nodes, int n, float3 o, float3 inv, float tmax,
                                         int &e0, int &e1, float &t0, float &t1) {
  const float4 *n4 = reinterpret_cast<const float4 *>(nodes) + 4L * n;
  float4 a = n4[0], b = n4[1], c = n4[2], k = n4[3];
  t0 = box_hit(o, inv, a.x, a.y, a.z, a.w, c.x, c.y, tmax);
  t1 = box_hit(o, inv, b.x, b.y, b.z, b.w, c.z, c.w, tmax);
  e0 = entry(__float_as_int(k.x), __float_as_int(k.z));
  e1 = entry(__float_as_int(k.y), __float_as_int(k.w));
}

// Traces ray r and writes its closest hit.
__device__ __forceinline__ void trace(int r, int W, int H, int G, int B, const float *scene, int *hit) {
  int T = 2 * G * G + B;
  const float *nodes = scene, *tris = scene + 16L * ((T + 1) / 2);
  float3 o, d;
  camera_ray(r, W, H, o, d);
  float3 inv = make_float3(1.0f / d.x, 1.0f / d.y, 1.0f / d.z);
  float tbest = TBIG;
  int ibest = -1;
  int stack[STACK];
  int sp = 0;
  stack[sp++] = DONE;
  int e = 0;  // the root
  while (e != DONE) {
    // Speculative: a lane that reaches a leaf parks it and keeps descending
    // until every active lane of the warp holds a leaf, so the warp then
    // tests leaves together; the cost is node steps past a parked leaf
    // whose hit would have clipped them.
    bool parked = false;
    int parked_e = 0;
    while (e >= 0 && e != DONE) {
      int e0, e1;
      float t0, t1;
      children(nodes, e, o, inv, tbest, e0, e1, t0, t1);
      if (t0 < TBIG && t1 < TBIG) {
        if (t1 < t0) {
          int te = e0;
          e0 = e1;
          e1 = te;
        }
        stack[sp++] = e1;
        e = e0;
      } else if (t0 < TBIG) {
        e = e0;
      } else if (t1 < TBIG) {
        e = e1;
      } else {
        e = stack[--sp];
      }
      if (e < 0 && !parked) {
        parked = true;
        parked_e = e;
        e = stack[--sp];
      }
      // The vote only decides when to stop descending: any outcome is correct.
      if (__all_sync(__activemask(), parked)) break;
    }
    if (parked) leaf(tris, parked_e, o, d, tbest, ibest);
    while (e < 0) {
      leaf(tris, e, o, d, tbest, ibest);
      e = stack[--sp];
    }
  }
  hit[r] = ibest;
}

extern "C" __global__ void __launch_bounds__(BLOCK)
raytrace(int W, int H, int G, int B, const float *scene, int *hit, int *work) {
  int lane = threadIdx.x % 32;
  // Persistent threads: each warp fetches 32 rays at a time from the global
  // counter until none are left (the warp stays converged at the fetch).
  for (;;) {
    int base = 0;
    if (lane == 0) base = atomicAdd(&work[0], 32);
    base = __shfl_sync(FULL, base, 0);
    if (base >= W * H) break;
    int r = base + lane;
    if (r < W * H) {
      trace(r, W, H, G, B, scene, hit);
    }
  }
}
