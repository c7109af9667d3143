return { direction = "undo", key = "define:TILE" }
