return { direction = "undo", key = "softmax:cols" }
