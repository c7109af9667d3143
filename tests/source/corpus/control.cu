// Every statement form, precedence and casts.
__device__ int classify(int v) {
  switch (v & 3) {
  case 0: return -1;
  case 1:
  case 2: { v = v << 2 | 1; break; }
  default: break;
  }
  int i = 0;
  do { i += 2; } while (i < v);
  while (v > 0) { if (v % 2 == 0) continue; else --v; v--; }
again:
  if (!v) goto again;
  int r = a_or_b(v) ? (int)(float)v : (v > 3 && v < 10 || !(v ^ 5));
  r = (r + 1) * 2 - r / 3 % 4 << 1 >> 2;
  r += sizeof(int) + sizeof r;
  float *fp = (float *)&r;
  const float *cfp = reinterpret_cast<const float *>(fp);
  unsigned u = static_cast<unsigned>(*cfp) , w = -~u;
  int arr[4] = {1, 2, 3, 4};
  float4 f4 = make_float4(1.f, 2.f, 3.f, 4.f);
  float s = f4.x + arr[2] + cfp[0];
  Vec *vp = nullptr;
  s += vp->x;
  i = i++ + ++i;
  r = v = i = 3;
  return r, s;
}
