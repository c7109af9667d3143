return { direction = "undo", key = "reduce:sdata", why = "reduction v6: the unrolled BLOCK tree and the stride math go back to blockDim.x; sdata[BLOCK] stays" }
