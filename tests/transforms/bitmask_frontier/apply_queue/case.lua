return { direction = "apply", key = "visited:bits",
  why = "bfs v1_queue: the neighbour claim by atomicCAS on level becomes visit() (bitmask test-and-set), bfs_init marks the source's bit" }
