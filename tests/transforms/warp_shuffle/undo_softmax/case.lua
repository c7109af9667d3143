return { direction = "undo", key = "block_max+block_sum", why = "softmax v6: the helpers reached through cached_row and the kernel, buf[WARPS] grows to BLOCK" }
