return { direction = "undo", key = "normalize:rsqrtf" }
