return { direction = "apply", key = "softmax:__expf" }
