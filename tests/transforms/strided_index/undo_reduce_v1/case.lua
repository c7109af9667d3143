return { direction = "undo", key = "reduce:sdata@s" }
