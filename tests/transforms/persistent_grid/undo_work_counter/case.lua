return { direction = "undo", key = "shade_all", roundtrip = false,
  why = "as raytrace v5_persistent -> v4_ordered: one thread per item, grid cdiv(W * H, BLOCK), lane, FULL and PERSISTENT_BLOCKS go; apply cannot rebuild the counter (its zeroing is no fact of the kernel) and gives the static persistent loop instead" }
