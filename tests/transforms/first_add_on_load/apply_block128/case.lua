return { direction = "apply", key = "sums", why = "a one-element load at blockDim.x with a grid mirror (blocks_of) in the finish kernel" }
