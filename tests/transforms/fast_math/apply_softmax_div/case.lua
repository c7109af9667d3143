return { direction = "apply", key = "softmax:__fdividef" }
