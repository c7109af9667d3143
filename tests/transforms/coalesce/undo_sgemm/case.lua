return { direction = "undo", key = "sgemm:col,row", why = "sgemm v1 back to v0's row-on-threadIdx.x mapping (only the header comment differs from v0)" }
