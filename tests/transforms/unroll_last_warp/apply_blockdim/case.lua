return { direction = "apply", key = "block_sums:part", why = "a blockDim.x tree of 512 threads: the helper and the >= 64 static_assert are added" }
