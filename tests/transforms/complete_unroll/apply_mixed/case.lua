return { direction = "apply", key = "block_sums:part", why = "blockDim.x next to unsigned operands becomes THREADS; the (int) cast one stays; the comment follows" }
