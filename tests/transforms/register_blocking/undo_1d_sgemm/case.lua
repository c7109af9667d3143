return { direction = "undo", key = "sgemm:acc:1d", why = "sgemm v3 back to v2's one output a thread with 32 x 32 tiles; the requires line goes, v2 takes any size" }
