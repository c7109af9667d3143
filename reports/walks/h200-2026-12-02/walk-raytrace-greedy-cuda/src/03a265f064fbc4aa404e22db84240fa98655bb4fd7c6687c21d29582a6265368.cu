// v0: the naive baseline: one thread per ray tests every triangle of the scene, with no acceleration structure.
// Closest hit of one camera ray per pixel against the triangles of `scene`
// (layout in workload.lua); hit[r] = triangle index or -1, ties to the
// smallest t, then the smallest index. Ray r is pixel (r % W, r / W).
// @kl launch grid(cdiv(W * H, BLOCK)) block(BLOCK)
#define BLOCK 128
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

extern "C" __global__ void raytrace(int W, int H, int G, int B, const float *scene, int *hit, int *work) {
  int r = blockIdx.x * BLOCK + threadIdx.x;
  if (r >= W * H) return;
  int T = 2 * G * G + B;
  const float *tris = scene + 16L * ((T + 1) / 2);
  float3 o, d;
  camera_ray(r, W, H, o, d);
  float tbest = TBIG;
  int ibest = -1;
  for (int t = 0; t < T; ++t) {
    const float *tri = tris + 12L * t;
    intersect(o, d, make_float3(tri[0], tri[1], tri[2]), make_float3(tri[4], tri[5], tri[6]),
              make_float3(tri[8], tri[9], tri[10]), t, tbest, ibest);
  }
  hit[r] = ibest;
  (void)work;
}
