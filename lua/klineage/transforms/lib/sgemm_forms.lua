-- The sgemm lineage's product kernels that smem_tiling and register_blocking
-- rewrite into one another, each as a body template over the roles of a
-- matrix product ($A, $B, $M, $N, $K, $ACC, $ROW, $COL, the tiles $AS and
-- $BS, the k loops $K0 and $KK, the epilogue $EPI that stores an output),
-- plus what the form needs around the body: its constants, launch,
-- `requires` line and __launch_bounds__. A body matches a form when its
-- tokens are the template's with any identifier for each role.
--
--   forms.flat (v1: one output a thread, global loads in the k loop; only
--     body and epilogue), forms.tiled (v2), forms.blocked1 (v3),
--     forms.blocked2 (v4): form =
--     { name, body (template), header (verbatim, or nil: one #define $T),
--       consts (the #define names it owns), names (the local names it
--       introduces), grid(c) / block(c) -> { text... }, requires (bool),
--       bounds (bool: __launch_bounds__(THREADS)), acc (how $EPI reads the
--       accumulator: "$ACC", "$ACC[i]", ...; acc_pat: that as a Lua
--       pattern), loops (the epilogue's loop indices), epilogue(body) -> the epilogue statement node or nil }
--   forms.match(form, body) -> captures | nil (distinct roles, distinct names)
--   forms.text(form, c) -> the body text for captures c
local tiling = require "klineage.transforms.lib.tiling"

local M = {}

M.flat = {
  epilogue = function(body)
    local s = body:children()
    local inner = #s == 3 and s[3].kind == "if" and not s[3]:field("else") and s[3]:field("then")
    if inner and inner.kind == "compound" and #inner:children() == 3 then return inner:children()[3] end
  end,
  body = [[{
  int $COL = blockIdx.x * $T + threadIdx.x;
  int $ROW = blockIdx.y * $T + threadIdx.y;
  if ($ROW < $M && $COL < $N) {
    float $ACC = 0.0f;
    for (int $k = 0; $k < $K; ++$k)
      $ACC += $A[$ROW * $K + $k] * $B[$k * $N + $COL];
    $EPI
  }
}]],
}

M.tiled = {
  name = "v2", consts = {}, names = { "tx", "ty" }, requires = false, bounds = false, acc = "$ACC", loops = {},
  acc_pat = "%f[%w_]$ACC%f[^%w_]",
  grid = function(c) return { "cdiv(" .. c.N .. ", " .. c.T .. ")", "cdiv(" .. c.M .. ", " .. c.T .. ")" } end,
  block = function(c) return { c.T, c.T } end,
  epilogue = function(body)
    local s = body:children()
    if #s == 8 and s[8].kind == "if" and not s[8]:field("else") then return s[8]:field("then") end
  end,
  body = [[{
  __shared__ float $AS[$T][$T];
  __shared__ float $BS[$T][$T];
  int $TX = threadIdx.x, $TY = threadIdx.y;
  int $COL = blockIdx.x * $T + $TX;
  int $ROW = blockIdx.y * $T + $TY;
  float $ACC = 0.0f;
  for (int $K0 = 0; $K0 < $K; $K0 += $T) {
    $AS[$TY][$TX] = ($ROW < $M && $K0 + $TX < $K) ? $A[$ROW * $K + $K0 + $TX] : 0.0f;
    $BS[$TY][$TX] = ($K0 + $TY < $K && $COL < $N) ? $B[($K0 + $TY) * $N + $COL] : 0.0f;
    __syncthreads();
    for (int $KK = 0; $KK < $T; ++$KK)
      $ACC += $AS[$TY][$KK] * $BS[$KK][$TX];
    __syncthreads();  // the next iteration overwrites the tiles
  }
  if ($ROW < $M && $COL < $N)
    $EPI
}]],
}

-- The last loop's body: { int row = ...; [#pragma] for ... { int col ...; EPI } } and the like.
local function last_loop_epilogue(depth)
  return function(body)
    local s = body:children()
    local node = s[#s - 1]
    for _ = 1, depth do
      local b = node and node.kind == "for" and node:field("body")
      if not (b and b.kind == "compound") then return nil end
      local c = b:children()
      node = c[#c]
    end
    return node
  end
end

M.blocked1 = {
  name = "v3", consts = { "BM", "BN", "BK", "TM", "THREADS" }, requires = true, bounds = true, acc = "$ACC[i]", loops = { "i" },
  acc_pat = "%f[%w_]$ACC%s*%[%s*i%s*%]",
  names = { "tid", "thread_col", "thread_row", "a_row", "a_col", "b_row", "b_col", "Ablock", "Bblock", "i", "b" },
  grid = function(c) return { "cdiv(" .. c.N .. ", BN)", "cdiv(" .. c.M .. ", BM)" } end,
  block = function() return { "cdiv(BM * BN, TM)" } end,
  epilogue = last_loop_epilogue(1),
  header = [[
#define BM 64
#define BN 64
#define BK 8
#define TM 8
#define THREADS (BM * BN / TM)

// Each thread loads exactly one element of each tile.
static_assert(BM * BK == THREADS && BK * BN == THREADS, "tile shape must match the block size");
]],
  body = [[{
  __shared__ float $AS[BM][BK];
  __shared__ float $BS[BK][BN];
  int tid = threadIdx.x;
  int thread_col = tid % BN;
  int thread_row = tid / BN;  // owns rows thread_row * TM .. + TM - 1
  int a_row = tid / BK, a_col = tid % BK;
  int b_row = tid / BN, b_col = tid % BN;
  const float *Ablock = $A + blockIdx.y * BM * $K;
  const float *Bblock = $B + blockIdx.x * BN;
  float $ACC[TM];
#pragma unroll
  for (int i = 0; i < TM; ++i) $ACC[i] = 0.0f;

  for (int $K0 = 0; $K0 < $K; $K0 += BK) {
    $AS[a_row][a_col] = Ablock[a_row * $K + $K0 + a_col];
    $BS[b_row][b_col] = Bblock[($K0 + b_row) * $N + b_col];
    __syncthreads();
#pragma unroll
    for (int $KK = 0; $KK < BK; ++$KK) {
      float b = $BS[$KK][thread_col];
#pragma unroll
      for (int i = 0; i < TM; ++i)
        $ACC[i] += $AS[thread_row * TM + i][$KK] * b;
    }
    __syncthreads();
  }
  int $COL = blockIdx.x * BN + thread_col;
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    int $ROW = blockIdx.y * BM + thread_row * TM + i;
    $EPI
  }
  (void)$M;
}]],
}

M.blocked2 = {
  name = "v4", consts = { "BM", "BN", "BK", "TM", "TN", "THREADS" }, requires = true, bounds = true, acc = "$ACC[i][j]",
  loops = { "i", "j" }, acc_pat = "%f[%w_]$ACC%s*%[%s*i%s*%]%s*%[%s*j%s*%]", names = { "tid", "thread_row", "thread_col", "Ablock", "Bblock", "i", "j", "l", "idx", "a_frag", "b_frag" },
  grid = function(c) return { "cdiv(" .. c.N .. ", BN)", "cdiv(" .. c.M .. ", BM)" } end,
  block = function() return { "cdiv(BM * BN, TM * TN)" } end,
  epilogue = last_loop_epilogue(2),
  header = [[
#define BM 128
#define BN 128
#define BK 8
#define TM 8
#define TN 8
#define THREADS (BM * BN / (TM * TN))

static_assert((BM * BK) % THREADS == 0 && (BK * BN) % THREADS == 0,
              "each thread loads a whole number of tile elements");
]],
  body = [[{
  __shared__ float $AS[BM][BK];
  __shared__ float $BS[BK][BN];
  int tid = threadIdx.x;
  int thread_row = tid / (BN / TN);  // owns rows thread_row * TM .. + TM - 1
  int thread_col = tid % (BN / TN);  // owns cols thread_col * TN .. + TN - 1
  const float *Ablock = $A + blockIdx.y * BM * $K;
  const float *Bblock = $B + blockIdx.x * BN;
  float $ACC[TM][TN];
#pragma unroll
  for (int i = 0; i < TM; ++i)
#pragma unroll
    for (int j = 0; j < TN; ++j) $ACC[i][j] = 0.0f;
  float a_frag[TM], b_frag[TN];

  for (int $K0 = 0; $K0 < $K; $K0 += BK) {
#pragma unroll
    for (int l = 0; l < BM * BK / THREADS; ++l) {
      int idx = tid + l * THREADS;
      $AS[idx / BK][idx % BK] = Ablock[(idx / BK) * $K + $K0 + idx % BK];
    }
#pragma unroll
    for (int l = 0; l < BK * BN / THREADS; ++l) {
      int idx = tid + l * THREADS;
      $BS[idx / BN][idx % BN] = Bblock[($K0 + idx / BN) * $N + idx % BN];
    }
    __syncthreads();
#pragma unroll
    for (int $KK = 0; $KK < BK; ++$KK) {
#pragma unroll
      for (int i = 0; i < TM; ++i) a_frag[i] = $AS[thread_row * TM + i][$KK];
#pragma unroll
      for (int j = 0; j < TN; ++j) b_frag[j] = $BS[$KK][thread_col * TN + j];
#pragma unroll
      for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) $ACC[i][j] += a_frag[i] * b_frag[j];
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < TM; ++i) {
    int $ROW = blockIdx.y * BM + thread_row * TM + i;
#pragma unroll
    for (int j = 0; j < TN; ++j) {
      int $COL = blockIdx.x * BN + thread_col * TN + j;
      $EPI
    }
  }
  (void)$M;
}]],
}

function M.text(form, c) return tiling.fill({ form.body }, c) end

-- The template's tokens with each role a pattern word: the template is
-- filled with marker names and parsed, so the pattern is exactly it.
local patterns = {}
local function pattern(form)
  if patterns[form] then return patterns[form] end
  local marked = (form.body:gsub("%$(%a%w*)", function(k) return k == "EPI" and "__kl_EPI;" or "__kl_" .. k end))
  local unit = require("kl.source").parse("void f() " .. marked)
  local words, skip = {}, false
  for _, t in ipairs(tiling.tokens(unit:functions()[1]:body())) do
    if skip then skip = false
    elseif t == "__kl_EPI" then words[#words + 1], skip = "$*EPI", true
    else words[#words + 1] = t:gsub("^__kl_", "$") end
  end
  patterns[form] = table.concat(words, " ")
  return patterns[form]
end

-- Distinct roles must be distinct names, none of them a name the
-- template spells out: otherwise one would shadow another and the kernel
-- would not compute what its form says.
function M.match(form, body)
  local p = pattern(form)
  local c = tiling.match(p, tiling.tokens(body))
  if not c then return nil end
  local seen, prev = {}, nil
  for w in p:gmatch("%S+") do
    if w:match("^[%a_][%w_]*$") and prev ~= "." and prev ~= "->" then seen[w] = true end -- members are no names
    prev = w
  end
  for role, name in pairs(c) do
    if role ~= "EPI" then
      if seen[name] then return nil end
      seen[name] = true
    end
  end
  return c
end

return M
