return { direction = "undo", key = "sgemm:B", alias = {} }
