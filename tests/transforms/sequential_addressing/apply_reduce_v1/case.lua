return { direction = "apply", key = "reduce:sdata@s" }
