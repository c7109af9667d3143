return { direction = "undo", key = "reduce:v", why = "reduction v8: back to a shared-memory tree over BLOCK (v7 without its last-warp unrolling)" }
