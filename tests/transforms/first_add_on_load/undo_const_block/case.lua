return { direction = "undo", key = "reduce", why = "reduction v5 (the block constant in the index, the last warp unrolled): back to one element per thread" }
