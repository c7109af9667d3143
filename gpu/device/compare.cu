// The gate's output comparison, computed where the outputs are: the host
// comparison (kl.randgen.compare) would first download both buffers, which
// for a 1 GiB softmax output costs more than every kernel of a lineage.
// The semantics are the host's, to the bit:
//   pass 0  max_ref = the largest finite |ref| (float types only);
//   pass 1  with tol = atol + rtol * max_ref computed by the caller in
//           double: an element is bad when either value is NaN or Inf, or
//           |out - ref| > tol (floats), or out != ref (integers); max_abs
//           and max_rel (where ref != 0) are taken over finite pairs.
// Every value is widened to double exactly (f16, bf16 and f32 are exact in
// double), so the maxima equal the host's. The results go to
//   stats[0] max_ref  stats[1] max_abs  stats[2] max_rel   (double bits)
//   stats[3] bad      stats[4] nonfinite stats[5] first bad index (min)
// which the caller zeroes, stats[5] to all ones. Non-negative doubles order
// like their bit patterns, so atomicMax on the bits is a max of the values.

enum { CMP_F32, CMP_F64, CMP_F16, CMP_BF16, CMP_I32, CMP_U32, CMP_I64, CMP_U8 };

__device__ static double widen_f16(unsigned short h) {
  unsigned int sign = (unsigned int)(h & 0x8000) << 16, mant = h & 0x3ff;
  int exp = (h >> 10) & 0x1f;
  unsigned int x;
  if (exp == 0x1f) {
    x = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      x = sign;
    } else {
      int e = -14;
      while (!(mant & 0x400)) mant <<= 1, e--;
      x = sign | ((unsigned int)(e + 127) << 23) | ((mant & 0x3ff) << 13);
    }
  } else {
    x = sign | ((unsigned int)(exp - 15 + 127) << 23) | (mant << 13);
  }
  return (double)__uint_as_float(x);
}

__device__ static double load_float(int type, const void *p, unsigned long long i) {
  switch (type) {
  case CMP_F64: return ((const double *)p)[i];
  case CMP_F32: return (double)((const float *)p)[i];
  case CMP_F16: return widen_f16(((const unsigned short *)p)[i]);
  default: return (double)__uint_as_float((unsigned int)((const unsigned short *)p)[i] << 16);
  }
}

__device__ static long long load_int(int type, const void *p, unsigned long long i) {
  switch (type) {
  case CMP_I32: return ((const int *)p)[i];
  case CMP_U32: return ((const unsigned int *)p)[i];
  case CMP_I64: return ((const long long *)p)[i];
  default: return ((const unsigned char *)p)[i];
  }
}

__device__ static unsigned long long warp_max(unsigned long long v) {
  for (int off = 16; off > 0; off >>= 1) {
    unsigned long long o = __shfl_down_sync(0xffffffffu, v, off);
    v = o > v ? o : v;
  }
  return v;
}

__device__ static unsigned long long warp_min(unsigned long long v) {
  for (int off = 16; off > 0; off >>= 1) {
    unsigned long long o = __shfl_down_sync(0xffffffffu, v, off);
    v = o < v ? o : v;
  }
  return v;
}

__device__ static unsigned long long warp_sum(unsigned long long v) {
  for (int off = 16; off > 0; off >>= 1) v += __shfl_down_sync(0xffffffffu, v, off);
  return v;
}

__device__ static unsigned long long bits(double d) { return (unsigned long long)__double_as_longlong(d); }

extern "C" __global__ void kl_compare(const void *out, const void *ref, unsigned long long n, int type, int pass,
                                      double tol, unsigned long long *stats) {
  const bool is_float = type <= CMP_BF16;
  const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;
  const unsigned long long first = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x;
  if (pass == 0) {
    double max_ref = 0;
    for (unsigned long long i = first; i < n; i += stride) {
      double r = fabs(load_float(type, ref, i));
      if (isfinite(r) && r > max_ref) max_ref = r;
    }
    unsigned long long m = warp_max(bits(max_ref));
    if ((threadIdx.x & 31) == 0 && m) atomicMax(&stats[0], m);
    return;
  }
  double max_abs = 0, max_rel = 0;
  unsigned long long bad = 0, nonfinite = 0, first_bad = ~0ull;
  for (unsigned long long i = first; i < n; i += stride) {
    bool ok;
    if (is_float) {
      double o = load_float(type, out, i), r = load_float(type, ref, i);
      if (!isfinite(o) || !isfinite(r)) {
        nonfinite++;
        ok = false;
      } else {
        double d = fabs(o - r);
        if (d > max_abs) max_abs = d;
        if (r != 0 && d / fabs(r) > max_rel) max_rel = d / fabs(r);
        ok = d <= tol;
      }
    } else {
      long long o = load_int(type, out, i), r = load_int(type, ref, i);
      double d = fabs((double)o - (double)r);
      if (d > max_abs) max_abs = d;
      if (r != 0 && d / fabs((double)r) > max_rel) max_rel = d / fabs((double)r);
      ok = o == r;
    }
    if (!ok) {
      if (bad++ == 0) first_bad = i;  // a thread visits its indices in increasing order
    }
  }
  unsigned long long a = warp_max(bits(max_abs)), r = warp_max(bits(max_rel));
  unsigned long long b = warp_sum(bad), nf = warp_sum(nonfinite), fb = warp_min(first_bad);
  if ((threadIdx.x & 31) == 0) {
    if (a) atomicMax(&stats[1], a);
    if (r) atomicMax(&stats[2], r);
    if (b) atomicAdd(&stats[3], b);
    if (nf) atomicAdd(&stats[4], nf);
    if (fb != ~0ull) atomicMin(&stats[5], fb);
  }
}
