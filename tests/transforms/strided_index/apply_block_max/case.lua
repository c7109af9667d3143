return { direction = "apply", key = "block_max:m@s" }
