return { direction = "apply", key = "sgemm:stages", why = "sgemm v6 (its operands renamed Am and Bm) becomes v7's two register-staged shared-memory stages" }
