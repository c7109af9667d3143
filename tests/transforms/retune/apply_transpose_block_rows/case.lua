return { direction = "apply", key = "define:BLOCK_ROWS" }
