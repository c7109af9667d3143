// CPU reference for raytrace: the same camera rays and the same
// ray-triangle test as the kernels (explicit fmaf, so no compiler may fuse
// differently), brute force over every triangle; ties go to the smallest t,
// then the smallest index. hit[py * W + px] = triangle index or -1.
#include <math.h>

static void ref_camera_ray(int px, int py, int W, int H, float o[3], float d[3]) {
  float sx = (2.0f * ((float)px + 0.5f)) / (float)W - 1.0f;
  float sy = 1.0f - (2.0f * ((float)py + 0.5f)) / (float)H;
  float aspect = (float)W / (float)H;
  float b = sy * 0.6f;
  o[0] = 0.5f; o[1] = 0.55f; o[2] = -0.35f;
  d[0] = (sx * aspect) * 0.6f;
  d[1] = fmaf(b, 0.8533f, -0.5214f);
  d[2] = fmaf(b, 0.5214f, 0.8533f);
  for (int k = 0; k < 3; ++k)
    if (fabsf(d[k]) < 1e-9f) d[k] = 1e-9f;
}

static void ref_intersect(const float o[3], const float d[3], const float *tri, int index,
                          float *tbest, int *ibest) {
  const float *v0 = tri, *e1 = tri + 4, *e2 = tri + 8;
  float px = fmaf(d[1], e2[2], -(d[2] * e2[1]));
  float py = fmaf(d[2], e2[0], -(d[0] * e2[2]));
  float pz = fmaf(d[0], e2[1], -(d[1] * e2[0]));
  float det = fmaf(e1[0], px, fmaf(e1[1], py, e1[2] * pz));
  if (det == 0.0f) return;
  float inv = 1.0f / det;
  float sx = o[0] - v0[0], sy = o[1] - v0[1], sz = o[2] - v0[2];
  float u = fmaf(sx, px, fmaf(sy, py, sz * pz)) * inv;
  if (u < 0.0f || u > 1.0f) return;
  float qx = fmaf(sy, e1[2], -(sz * e1[1]));
  float qy = fmaf(sz, e1[0], -(sx * e1[2]));
  float qz = fmaf(sx, e1[1], -(sy * e1[0]));
  float v = fmaf(d[0], qx, fmaf(d[1], qy, d[2] * qz)) * inv;
  if (v < 0.0f || u + v > 1.0f) return;
  float t = fmaf(e2[0], qx, fmaf(e2[1], qy, e2[2] * qz)) * inv;
  if (t > 0.0f && (t < *tbest || (t == *tbest && index < *ibest))) {
    *tbest = t;
    *ibest = index;
  }
}

void reference(int W, int H, int G, int B, const float *scene, int *hit, int *work) {
  int T = 2 * G * G + B;
  const float *tris = scene + 16L * ((T + 1) / 2);
  for (int py = 0; py < H; ++py)
    for (int px = 0; px < W; ++px) {
      float o[3], d[3];
      ref_camera_ray(px, py, W, H, o, d);
      float tbest = 1e30f;
      int ibest = -1;
      for (int t = 0; t < T; ++t) ref_intersect(o, d, tris + 12L * t, t, &tbest, &ibest);
      hit[py * W + px] = ibest;
    }
  (void)work;
}
