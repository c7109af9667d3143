return { direction = "undo", key = "visited:bits",
  why = "bfs v5_bitmask -> v4_hybrid: the three visit() calls become atomicCAS claims, claim/visit and the bits init line go; the result is v4 but for the header comments" }
