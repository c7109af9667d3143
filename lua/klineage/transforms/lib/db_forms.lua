-- The two double-buffering steps of the lineages (sgemm v6 -> v7, conv2d
-- v6 -> v7), each as its single- and double-buffered kernel: the body as a
-- template whose roles are the kernel's parameters ($A, $K, ...), the
-- launch bounds as written (the rest of that line included), and the
-- helpers the double-buffered form defines just before the kernel
-- (verbatim: they read no kernel parameter). The templates are the
-- lineage's own kernels: double_buffer recognizes exactly those.
--
--   db_forms.list -> { { name, params, single = form, double = form,
--       extra (text before the kernel's line), introduces = { name... } } }
--   form = { body (template), bounds (text) }
local M = {}

M.list = {
  {
    name = "sgemm", params = { "M", "N", "K", "alpha", "A", "B", "beta", "C" },
    introduces = { "A_LOADS", "B_LOADS", "store_tiles", "a_next", "b_next", "stage", "more" },
    single = { bounds = "__launch_bounds__(THREADS)", body = [[
{
  __shared__ float As[BK][BM];  // transposed: As[k][m]
  __shared__ float Bs[BK][BN];
  int tid = threadIdx.x;
  int warp = tid / 32, lane = tid % 32;
  int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
  int lane_m = lane / LANES_N, lane_n = lane % LANES_N;
  int row0 = warp_m * WM + lane_m * 4;  // first row of the thread's fragments, inside the tile
  int col0 = warp_n * WN + lane_n * 4;
  const float *Ablock = $A + blockIdx.y * BM * $K;
  const float *Bblock = $B + blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  float a_frag[TM], b_frag[TN];

  for (int k0 = 0; k0 < $K; k0 += BK) {
#pragma unroll
    for (int l = 0; l < BM * BK / 4 / THREADS; ++l) {
      int idx = tid + l * THREADS;
      int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
      float4 v = *reinterpret_cast<const float4 *>(&Ablock[r * $K + k0 + c]);
      As[c + 0][r] = v.x;
      As[c + 1][r] = v.y;
      As[c + 2][r] = v.z;
      As[c + 3][r] = v.w;
    }
#pragma unroll
    for (int l = 0; l < BK * BN / 4 / THREADS; ++l) {
      int idx = tid + l * THREADS;
      int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
      *reinterpret_cast<float4 *>(&Bs[r][c]) =
          *reinterpret_cast<const float4 *>(&Bblock[(k0 + r) * $N + c]);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int i = 0; i < TM; i += 4)
        *reinterpret_cast<float4 *>(&a_frag[i]) =
            *reinterpret_cast<const float4 *>(&As[kk][row0 + (i / 4) * WSUB_M]);
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        *reinterpret_cast<float4 *>(&b_frag[j]) =
            *reinterpret_cast<const float4 *>(&Bs[kk][col0 + (j / 4) * WSUB_N]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    int row = blockIdx.y * BM + row0 + (i / 4) * WSUB_M + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      int col = blockIdx.x * BN + col0 + (j / 4) * WSUB_N;
      float4 *dst = reinterpret_cast<float4 *>(&$C[row * $N + col]);
      float4 c = *dst;
      c.x = $alpha * acc[i][j + 0] + $beta * c.x;
      c.y = $alpha * acc[i][j + 1] + $beta * c.y;
      c.z = $alpha * acc[i][j + 2] + $beta * c.z;
      c.w = $alpha * acc[i][j + 3] + $beta * c.w;
      *dst = c;
    }
  }
  (void)$M;
}]] },
    double = { bounds = "__launch_bounds__(THREADS)", body = [[
{
  __shared__ float As[2][BK][BM];  // transposed: As[stage][k][m]
  __shared__ float Bs[2][BK][BN];
  int tid = threadIdx.x;
  int warp = tid / 32, lane = tid % 32;
  int warp_m = warp / WARPS_N, warp_n = warp % WARPS_N;
  int lane_m = lane / LANES_N, lane_n = lane % LANES_N;
  int row0 = warp_m * WM + lane_m * 4;  // first row of the thread's fragments, inside the tile
  int col0 = warp_n * WN + lane_n * 4;
  const float *Ablock = $A + blockIdx.y * BM * $K;
  const float *Bblock = $B + blockIdx.x * BN;
  float acc[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) acc[i][j] = 0.0f;
  float a_frag[TM], b_frag[TN];
  float4 a_next[A_LOADS], b_next[B_LOADS];  // the tile in flight

  // Prologue: stage 0 holds the first tile.
#pragma unroll
  for (int l = 0; l < A_LOADS; ++l) {
    int idx = tid + l * THREADS;
    a_next[l] = *reinterpret_cast<const float4 *>(
        &Ablock[(idx / (BK / 4)) * $K + (idx % (BK / 4)) * 4]);
  }
#pragma unroll
  for (int l = 0; l < B_LOADS; ++l) {
    int idx = tid + l * THREADS;
    b_next[l] = *reinterpret_cast<const float4 *>(
        &Bblock[(idx / (BN / 4)) * $N + (idx % (BN / 4)) * 4]);
  }
  store_tiles(As[0], Bs[0], a_next, b_next, tid);
  __syncthreads();

  int stage = 0;
  for (int k0 = 0; k0 < $K; k0 += BK) {
    bool more = k0 + BK < $K;
    if (more) {
#pragma unroll
      for (int l = 0; l < A_LOADS; ++l) {
        int idx = tid + l * THREADS;
        a_next[l] = *reinterpret_cast<const float4 *>(
            &Ablock[(idx / (BK / 4)) * $K + k0 + BK + (idx % (BK / 4)) * 4]);
      }
#pragma unroll
      for (int l = 0; l < B_LOADS; ++l) {
        int idx = tid + l * THREADS;
        b_next[l] = *reinterpret_cast<const float4 *>(
            &Bblock[(k0 + BK + idx / (BN / 4)) * $N + (idx % (BN / 4)) * 4]);
      }
    }
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
#pragma unroll
      for (int i = 0; i < TM; i += 4)
        *reinterpret_cast<float4 *>(&a_frag[i]) =
            *reinterpret_cast<const float4 *>(&As[stage][kk][row0 + (i / 4) * WSUB_M]);
#pragma unroll
      for (int j = 0; j < TN; j += 4)
        *reinterpret_cast<float4 *>(&b_frag[j]) =
            *reinterpret_cast<const float4 *>(&Bs[stage][kk][col0 + (j / 4) * WSUB_N]);
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] += a_frag[i] * b_frag[j];
    }
    if (more) {
      // The other stage was last read before the previous barrier, so it is free.
      store_tiles(As[stage ^ 1], Bs[stage ^ 1], a_next, b_next, tid);
      __syncthreads();
      stage ^= 1;
    }
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    int row = blockIdx.y * BM + row0 + (i / 4) * WSUB_M + i % 4;
#pragma unroll
    for (int j = 0; j < TN; j += 4) {
      int col = blockIdx.x * BN + col0 + (j / 4) * WSUB_N;
      float4 *dst = reinterpret_cast<float4 *>(&$C[row * $N + col]);
      float4 c = *dst;
      c.x = $alpha * acc[i][j + 0] + $beta * c.x;
      c.y = $alpha * acc[i][j + 1] + $beta * c.y;
      c.z = $alpha * acc[i][j + 2] + $beta * c.z;
      c.w = $alpha * acc[i][j + 3] + $beta * c.w;
      *dst = c;
    }
  }
  (void)$M;
}]] },
    extra = [[
#define A_LOADS (BM * BK / 4 / THREADS)  // float4 per thread per A tile
#define B_LOADS (BK * BN / 4 / THREADS)

// Writes one tile pair from registers into a shared-memory stage; A goes in transposed.
__device__ __forceinline__ void store_tiles(float (*As)[BM], float (*Bs)[BN],
                                            const float4 *a, const float4 *b, int tid) {
#pragma unroll
  for (int l = 0; l < A_LOADS; ++l) {
    int idx = tid + l * THREADS;
    int r = idx / (BK / 4), c = (idx % (BK / 4)) * 4;
    As[c + 0][r] = a[l].x;
    As[c + 1][r] = a[l].y;
    As[c + 2][r] = a[l].z;
    As[c + 3][r] = a[l].w;
  }
#pragma unroll
  for (int l = 0; l < B_LOADS; ++l) {
    int idx = tid + l * THREADS;
    int r = idx / (BN / 4), c = (idx % (BN / 4)) * 4;
    *reinterpret_cast<float4 *>(&Bs[r][c]) = b[l];
  }
}

]],
  },
  {
    name = "conv2d", params = { "N", "C", "K", "H", "W", "x", "w", "y" },
    introduces = { "load_slice", "store_slice", "a_next", "b_next", "stage", "more" },
    single = { bounds = "__launch_bounds__(THREADS)", body = [[
{
  __shared__ __align__(16) float As[BK][BM];  // weights, transposed: As[kk][k]
  __shared__ __align__(16) float Bs[BK][BN];  // im2col slice: Bs[kk][pixel]
  int tid = threadIdx.x;
  int HW = $H * $W, P = $N * HW, CRS = $C * 9;
  int p0 = blockIdx.x * BN, k0 = blockIdx.y * BM;

  // Gather role: one pixel column of the B tile, rows tid / BN + 2 * l.
  int bcol = tid % BN, brow = tid / BN;
  int gp = p0 + bcol;
  bool pvalid = gp < P;
  int gn = pvalid ? gp / HW : 0, ghw = pvalid ? gp % HW : 0;
  int goh = ghw / $W, gow = ghw % $W;
  const float *xn = $x + (long)gn * $C * HW;
  // Weight role: four consecutive reduction indices of one output channel.
  int arow = tid / 2, acol = (tid % 2) * 4;
  bool kvalid = k0 + arow < $K;
  const float *wk = $w + (long)(k0 + arow) * CRS;

  // Compute role: channels ty*4 + {0..3} and 64 + ty*4 + {0..3}, pixels
  // tx*4 + {0..3} and 64 + tx*4 + {0..3}: float4 fragment reads.
  int tx = tid % TX, ty = tid / TX;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  for (int kk0 = 0; kk0 < CRS; kk0 += BK) {
#pragma unroll
    for (int l = 0; l < A_LOADS; ++l) {
      int kk = kk0 + acol + l;
      As[acol + l][arow] = (kvalid && kk < CRS) ? wk[kk] : 0.0f;
    }
#pragma unroll
    for (int l = 0; l < B_LOADS; ++l) {
      int row = brow + 2 * l, kk = kk0 + row;
      int c = kk / 9, rs = kk - c * 9;
      int r = rs / 3, s = rs - r * 3;
      int ih = goh + r - 1, iw = gow + s - 1;
      Bs[row][bcol] = (pvalid && kk < CRS && ih >= 0 && ih < $H && iw >= 0 && iw < $W)
                          ? xn[(long)c * HW + ih * $W + iw] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[8], b[8];
      *reinterpret_cast<float4 *>(&a[0]) = *reinterpret_cast<const float4 *>(&As[kk][ty * 4]);
      *reinterpret_cast<float4 *>(&a[4]) = *reinterpret_cast<const float4 *>(&As[kk][64 + ty * 4]);
      *reinterpret_cast<float4 *>(&b[0]) = *reinterpret_cast<const float4 *>(&Bs[kk][tx * 4]);
      *reinterpret_cast<float4 *>(&b[4]) = *reinterpret_cast<const float4 *>(&Bs[kk][64 + tx * 4]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
    __syncthreads();
  }

  // Each output pixel's offset in $y without its channel term.
  long ybase[8];
  bool pok[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    int p = p0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
    pok[j] = p < P;
    int n = pok[j] ? p / HW : 0, hw = pok[j] ? p % HW : 0;
    ybase[j] = (long)n * $K * HW + hw;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    int k = k0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
    if (k < $K) {
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (pok[j]) $y[ybase[j] + (long)k * HW] = acc[i][j];
    }
  }
}]] },
    double = { bounds = "__launch_bounds__(THREADS, 2)  // at most 128 registers: two blocks per SM", body = [[
{
  __shared__ __align__(16) float As[2][BK][BM];  // weights, transposed: As[stage][kk][k]
  __shared__ __align__(16) float Bs[2][BK][BN];  // im2col slice: Bs[stage][kk][pixel]
  int tid = threadIdx.x;
  int HW = $H * $W, P = $N * HW, CRS = $C * 9;
  int p0 = blockIdx.x * BN, k0 = blockIdx.y * BM;

  // Gather role: one pixel column of the B tile, rows tid / BN + 2 * l.
  int bcol = tid % BN, brow = tid / BN;
  int gp = p0 + bcol;
  bool pvalid = gp < P;
  int gn = pvalid ? gp / HW : 0, ghw = pvalid ? gp % HW : 0;
  int goh = ghw / $W, gow = ghw % $W;
  const float *xn = $x + (long)gn * $C * HW;
  // Weight role: four consecutive reduction indices of one output channel.
  int arow = tid / 2, acol = (tid % 2) * 4;
  bool kvalid = k0 + arow < $K;
  const float *wk = $w + (long)(k0 + arow) * CRS;

  // Compute role: channels ty*4 + {0..3} and 64 + ty*4 + {0..3}, pixels
  // tx*4 + {0..3} and 64 + tx*4 + {0..3}: float4 fragment reads.
  int tx = tid % TX, ty = tid / TX;
  float acc[8][8];
#pragma unroll
  for (int i = 0; i < 8; ++i)
#pragma unroll
    for (int j = 0; j < 8; ++j) acc[i][j] = 0.0f;

  float a_next[A_LOADS], b_next[B_LOADS];  // the slice in flight
  load_slice(0, a_next, b_next, wk, kvalid, acol, xn, pvalid, goh, gow, brow, CRS, $H, $W, HW);
  store_slice(As[0], Bs[0], a_next, b_next, acol, arow, brow, bcol);
  __syncthreads();
  int stage = 0;
  for (int kk0 = 0; kk0 < CRS; kk0 += BK) {
    bool more = kk0 + BK < CRS;
    if (more) load_slice(kk0 + BK, a_next, b_next, wk, kvalid, acol, xn, pvalid, goh, gow, brow, CRS, $H, $W, HW);
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
      float a[8], b[8];
      *reinterpret_cast<float4 *>(&a[0]) = *reinterpret_cast<const float4 *>(&As[stage][kk][ty * 4]);
      *reinterpret_cast<float4 *>(&a[4]) = *reinterpret_cast<const float4 *>(&As[stage][kk][64 + ty * 4]);
      *reinterpret_cast<float4 *>(&b[0]) = *reinterpret_cast<const float4 *>(&Bs[stage][kk][tx * 4]);
      *reinterpret_cast<float4 *>(&b[4]) = *reinterpret_cast<const float4 *>(&Bs[stage][kk][64 + tx * 4]);
#pragma unroll
      for (int i = 0; i < 8; ++i)
#pragma unroll
        for (int j = 0; j < 8; ++j) acc[i][j] += a[i] * b[j];
    }
    if (more) {
      // The other stage was last read before the previous barrier: it is free.
      store_slice(As[stage ^ 1], Bs[stage ^ 1], a_next, b_next, acol, arow, brow, bcol);
      __syncthreads();
      stage ^= 1;
    }
  }

  // Each output pixel's offset in $y without its channel term.
  long ybase[8];
  bool pok[8];
#pragma unroll
  for (int j = 0; j < 8; ++j) {
    int p = p0 + (j < 4 ? tx * 4 + j : 64 + tx * 4 + j - 4);
    pok[j] = p < P;
    int n = pok[j] ? p / HW : 0, hw = pok[j] ? p % HW : 0;
    ybase[j] = (long)n * $K * HW + hw;
  }
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    int k = k0 + (i < 4 ? ty * 4 + i : 64 + ty * 4 + i - 4);
    if (k < $K) {
#pragma unroll
      for (int j = 0; j < 8; ++j)
        if (pok[j]) $y[ybase[j] + (long)k * HW] = acc[i][j];
    }
  }
}]] },
    extra = [[
// Loads the reduction slice [kk0, kk0 + BK) into registers: this thread's
// four weights (zero past K or CRS) and its four gathered inputs (zero in
// the padding, past CRS or past the last pixel).
__device__ __forceinline__ void load_slice(int kk0, float *a, float *b, const float *wk, bool kvalid,
                                           int acol, const float *xn, bool pvalid, int goh, int gow,
                                           int brow, int CRS, int H, int W, int HW) {
#pragma unroll
  for (int l = 0; l < A_LOADS; ++l) {
    int kk = kk0 + acol + l;
    a[l] = (kvalid && kk < CRS) ? wk[kk] : 0.0f;
  }
#pragma unroll
  for (int l = 0; l < B_LOADS; ++l) {
    int kk = kk0 + brow + 2 * l;
    int c = kk / 9, rs = kk - c * 9;
    int r = rs / 3, s = rs - r * 3;
    int ih = goh + r - 1, iw = gow + s - 1;
    b[l] = (pvalid && kk < CRS && ih >= 0 && ih < H && iw >= 0 && iw < W)
               ? xn[(long)c * HW + ih * W + iw] : 0.0f;
  }
}

// Stores a slice from registers into one shared-memory stage.
__device__ __forceinline__ void store_slice(float (*As)[BM], float (*Bs)[BN], const float *a,
                                            const float *b, int acol, int arow, int brow, int bcol) {
#pragma unroll
  for (int l = 0; l < A_LOADS; ++l) As[acol + l][arow] = a[l];
#pragma unroll
  for (int l = 0; l < B_LOADS; ++l) Bs[brow + 2 * l][bcol] = b[l];
}

]],
  },
}

return M
