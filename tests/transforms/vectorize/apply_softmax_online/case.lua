return { direction = "apply", key = "softmax:cols" }
