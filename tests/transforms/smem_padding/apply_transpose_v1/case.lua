return { direction = "apply", key = "transpose:tile" }
