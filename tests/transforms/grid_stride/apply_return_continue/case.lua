return { direction = "apply", key = "bfs:v",
  why = "the early return's extra condition becomes `if (...) continue;` and the later return a continue; undo turns them back" }
