return { direction = "undo", key = "transpose:tile" }
