return { direction = "undo", key = "axpy:i", roundtrip = false,
  why = "undo must give the fixed grid up for cdiv(n, BLOCK) (and drops GRID_BLOCKS, read nowhere else); apply keeps the grid it finds, so the inverse has grid(cdiv(n, BLOCK)), not GRID_BLOCKS" }
