return { direction = "undo", key = "sgemm:A,B", why = "sgemm v2 back to v1's direct global loads in the k loop (the tile macro keeps its name TILE)" }
