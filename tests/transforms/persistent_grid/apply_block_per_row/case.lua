return { direction = "apply", key = "row_sum",
  why = "the row block becomes a loop over rows by gridDim.x, (void)rows goes, grid(GRID_BLOCKS) = 132 * MIN_BLOCKS (the launch bound's residency); block_sum's trailing barrier separates one row's last read of buf from the next row's first write" }
