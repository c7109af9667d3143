return { direction = "undo", key = "reduce", roundtrip = false,
  why = "reduction v6 -> v5 exactly; apply writes the launch and partial_count as min(GRID_BLOCKS, cdiv(n, 2 * BLOCK)) instead of v6's bare GRID_BLOCKS (no more partials than before)" }
