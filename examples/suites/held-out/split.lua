-- The held-out suite in two parts (examples/suites/README.md says why).
--
-- tune: the tasks developers may look at when they tune transforms, skills,
-- guards, policies and search (run them, read their reports, change
-- something because of them).
-- test: the tasks kept out of every such decision; they are run only to
-- measure what was already decided, and nothing is changed because of
-- what they show.
--
-- seen: the tasks whose results had already been looked at when the split
-- was drawn (the first 16, evaluated on the H200 in 2026-12 with every
-- policy: README.md, `klineage eval`); they can no longer be held out, so
-- they are all in tune.
--
-- The rule that drew the test part, once, by names only: within each
-- family of n tasks, the tasks not seen, ordered by the 32-bit FNV-1a hash
-- of "klineage held-out split:" followed by the task's name (smallest
-- first); the first ceil(n / 3) of them (all of them, if fewer) are the
-- test part; every other task is in tune. tests/lua/suite_heldout_spec.lua
-- computes the rule again and checks this file against it.
return {
  families = {
    axpby = "elementwise",
    bias_gelu = "elementwise",
    cast_f16 = "elementwise",
    elementwise_chain = "elementwise",

    colabsmax = "reductions",
    colsum = "reductions",
    row_argmax = "reductions",
    row_l2norm = "reductions",

    batchnorm_infer = "normalization",
    layernorm = "normalization",
    rmsnorm = "normalization",

    attention_scores = "contractions",
    batched_gemm = "contractions",
    batched_matvec = "contractions",
    gemv = "contractions",
    matmul_abt = "contractions",

    conv1d = "stencils",
    depthwise_conv2d = "stencils",
    jacobi2d = "stencils",
    maxpool2d = "stencils",
    stencil3d = "stencils",

    embedding_gather = "gathers_scatters",
    histogram = "gathers_scatters",
    index_select = "gathers_scatters",
    permute3d = "gathers_scatters",
    scatter_add = "gathers_scatters",

    cummax_cols = "scans",
    scan_rows = "scans",
    segmented_scan = "scans",

    spmm_csr = "sparse",
    spmv_coo = "sparse",
    spmv_csr = "sparse",

    nbody = "all_pairs",
    nearest_neighbor = "all_pairs",
    pairwise_dist = "all_pairs",
  },
  seen = {
    "attention_scores", "batched_gemm", "bias_gelu", "colsum", "conv1d", "elementwise_chain",
    "embedding_gather", "gemv", "histogram", "jacobi2d", "layernorm", "maxpool2d", "row_argmax",
    "scan_rows", "spmv_csr", "stencil3d",
  },
  tune = {
    "bias_gelu", "elementwise_chain",
    "colsum", "row_argmax",
    "batchnorm_infer", "layernorm",
    "attention_scores", "batched_gemm", "gemv",
    "conv1d", "jacobi2d", "maxpool2d", "stencil3d",
    "embedding_gather", "histogram", "scatter_add",
    "scan_rows", "segmented_scan",
    "spmm_csr", "spmv_csr",
    "nbody", "pairwise_dist",
  },
  test = {
    "axpby", "cast_f16",
    "colabsmax", "row_l2norm",
    "rmsnorm",
    "batched_matvec", "matmul_abt",
    "depthwise_conv2d",
    "index_select", "permute3d",
    "cummax_cols",
    "spmv_coo",
    "nearest_neighbor",
  },
}
