return { direction = "apply", key = "block_sums:v", roundtrip = false,
  why = "undo writes the tree back as the lineage's unrolled compile-time loop (#pragma unroll, int s) over sdata, not the unsigned loop over acc" }
