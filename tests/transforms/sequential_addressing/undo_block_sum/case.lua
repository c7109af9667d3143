return { direction = "undo", key = "block_sum:buf@s" }
