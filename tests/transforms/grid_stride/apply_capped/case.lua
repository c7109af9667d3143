return { direction = "apply", key = "scale:i", params = { max_blocks = 1056 },
  why = "the guard becomes the loop's bound and the grid is capped at 1056 blocks; undo gives the cdiv grid back" }
