// The rest of the prelude, one result slot each: vector types and loads,
// fast math, integer intrinsics, more atomics and warp votes, clocks, fences.
extern "C" __global__ void misc(const float4 *v, float *f, int *i, unsigned *u) {
  int t = threadIdx.x;
  if (t == 0) {
    float4 a = __ldg(&v[1]);
    float4 b = make_float4(a.w, a.z, a.y, a.x);
    f[0] = b.x + 10.0f * b.w;                 // v[1].w + 10 v[1].x
    f[1] = __expf(1.0f);
    f[2] = __fdividef(1.0f, 8.0f);
    f[3] = rsqrtf(16.0f);
    f[4] = __saturatef(1.5f) + __saturatef(-2.0f) + __saturatef(0.25f);
    f[5] = fmaf(2.0f, 3.0f, 1.0f);
    f[6] = __logf(__powf(2.0f, 10.0f));
    float s, c;
    __sincosf(0.0f, &s, &c);
    f[7] = s + c;
    f[8] = min(3.5f, 2.0f) + max(1, 7);
    int2 p = make_int2(3, 4);
    dim3 d(5);
    i[0] = p.x * p.y + (int)(d.x * d.y * d.z);
    u[0] = __funnelshift_l(0x80000001u, 0x00000003u, 4);
    u[1] = __funnelshift_r(0x80000001u, 0x00000003u, 4);
    u[2] = __umulhi(0xFFFFFFFFu, 0x10u);
    i[1] = __mul24(-3, 1000);
    u[3] = __sad(3, 10, 100u);
    long long c0 = clock64();
    __threadfence();
    __threadfence_block();
    long long c1 = clock64();
    i[2] = c1 >= c0;
    i[3] = sizeof(float4) == 16 && alignof(float4) == 16 && alignof(float2) == 8 && sizeof(double2) == 16;
    // (-1)*2 + 3*4 + (-128)*1 + 127*(-1) = -245, plus 1000; and the unsigned form
    i[38] = __dp4a((int)0x7F80'03FFu, (int)0xFF01'0402u, 1000);
    u[8] = __dp4a(0x01020304u, 0x01010101u, 5u) + umin(3u, 9u) + (unsigned)llmax(-4LL, 2LL);
    // saturating conversions, as on the GPU
    i[39] = __float2int_rz(3e9f);
    i[40] = __float2int_rn(-3e9f);
    i[41] = __float2int_rd(__int_as_float(0x7FC00000));  // NaN
    i[42] = __float2int_rn(2.5f) * 10 + __float2int_rd(-1.5f);
  }
  __syncthreads();
  atomicAnd(&u[4], ~(1u << t));
  atomicXor(&u[5], 1u << (t % 4));
  atomicDec(&u[6], 1000u);
  int all_same;
  unsigned m = __match_all_sync(0xffffffffu, t / 64, &all_same);
  if (t == 0) i[4] = (int)m, i[5] = all_same;
  i[6 + t] = __reduce_min_sync(0xffffffffu, 100 - t);
  unsigned r = __reduce_and_sync(0xffffffffu, 0xFFu) | __reduce_or_sync(0xffffffffu, 0x100u);
  if (t == 0) u[7] = r;
}
