return { direction = "undo", key = "reduce:sdata", why = "reduction v7: the unrolled BLOCK tree goes back to barriers down to s > 0, the helper and its static_assert go" }
