return { direction = "apply", key = "sums", params = { GRID_BLOCKS = 528 },
  why = "a blockDim.x pair load: the loop strides 2 * blockDim.x * gridDim.x; launch and blocks_of become min(GRID_BLOCKS, ...)" }
