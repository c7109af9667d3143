-- Sparse matrix times dense matrix, C = A B, with A (R x K, NNZ nonzeros)
-- in CSR and B (K x N) and C (R x N) dense, row-major. A held-out task: no
-- lineage under gpu/workloads.
--
-- The structure is built on the host from the gate's rng: every nonzero
-- goes to a row drawn at random (so row lengths vary and some rows are
-- empty), then each row draws that many distinct columns and sorts them.
-- col_idx is built from row_ptr (`after`), so both describe one matrix.

-- row_ptr (R + 1 offsets from 0): the running sums of the rows' counts.
local function offsets(p, rng)
  local count = {}
  for r = 1, p.R do count[r] = 0 end
  for _ = 1, p.NNZ do
    local r = rng:int(1, p.R)
    count[r] = count[r] + 1
  end
  local out, total = { 0 }, 0
  for r = 1, p.R do
    total = total + count[r]
    out[#out + 1] = total
  end
  return out
end

-- col_idx: each row's columns, distinct and in increasing order.
local function columns(p, rng, ctx)
  local ptr = randgen.unpack("i32", ctx.buffers.row_ptr)
  local out = {}
  for r = 1, p.R do
    local first, len = ptr[r], ptr[r + 1] - ptr[r]   -- 0-based start, count
    if len > p.K then error(string.format("row %d has %d nonzeros, more than K = %d columns", r - 1, len, p.K)) end
    local seen, picked = {}, {}
    while #picked < len do
      local c = rng:int(0, p.K - 1)
      if not seen[c] then
        seen[c] = true
        picked[#picked + 1] = c
      end
    end
    table.sort(picked)
    for k = 1, len do out[first + k] = picked[k] end
  end
  return out
end

return {
  name = "spmm_csr",
  kernel = "spmm_csr",
  -- 2^17 rows and columns, 16 nonzeros a row on average, B and C 64 wide:
  -- 16 MiB of structure, 32 MiB each for B and C, and 512 MiB of rows of B
  -- gathered as written
  params = { R = 131072, K = 131072, N = 64, NNZ = 2097152 },
  test_params = {
    { R = 57, K = 40, N = 33, NNZ = 300 },       -- partial 32 x 8 blocks on both edges
    { R = 200, K = 300, N = 64, NNZ = 2000 },    -- whole blocks across, some empty rows
  },
  buffers = {
    row_ptr = { "i32", "R + 1", init = offsets },
    col_idx = { "i32", "NNZ", init = columns, after = { "row_ptr" } },
    vals = { "f32", "NNZ", init = "uniform" },
    B = { "f32", "K*N", init = "uniform" },
    C = { "f32", "R*N", output = true },
  },
  args = { "R", "K", "N", "NNZ", "row_ptr", "col_idx", "vals", "B", "C" },
  alias = {}, -- never launched in place: restrict and ldg may keep its pointers apart
  reference = "reference.c",
  -- An element of C sums some 16 products below 1 (40 at most in
  -- practice): float rounding in any order is a few ulps of max|C| (near
  -- 10); B read column-major, or a nonzero dropped, misses by 0.1 or more.
  tolerance = { rtol = 1e-5, atol = 1e-6 },
  flops = "2*NNZ*N",
  bytes = "4*(R + 1 + 2*NNZ + K*N + R*N)",
}
